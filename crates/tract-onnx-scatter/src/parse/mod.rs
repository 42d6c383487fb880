//! Reading an ONNX node: what every builder shares. [`attributes`]
//! (`CheckedNode`) refuses an op below its first version, an attribute its
//! version does not define, a wrong attribute type, a reduction the version
//! does not allow; [`deviation`] holds the exporter deviations accepted
//! with a warning or refused; [`typing`] unifies int64 with TDim. The
//! builders themselves live in their op's home (`crate::ops`), which
//! registers them (`crate::ops::register`).

pub mod attributes;
pub mod deviation;
pub mod typing;

pub use deviation::Deviations;

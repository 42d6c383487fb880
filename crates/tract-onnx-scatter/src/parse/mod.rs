//! Reading an ONNX node: what every builder shares, and the terms the
//! rest of the plugin names nodes in. [`opset`] says which versions of
//! each scatter op exist; [`site`] is the node an error names
//! (`NodeSite`); [`onnx_types`] the ONNX element type a value holds where
//! tract has none (`OnnxElement`: bfloat16, complex). [`attributes`]
//! (`CheckedNode`) refuses an op below its first version, an attribute its
//! version does not define, a wrong attribute type, a reduction the version
//! does not allow; [`deviation`] holds the exporter deviations accepted
//! with a warning or refused; [`data_like`] unifies int64 with TDim. The
//! builders themselves live in their op's home (`crate::ops`), which
//! registers them (`crate::ops::register`).

pub(crate) mod attributes;
pub(crate) mod data_like;
pub(crate) mod deviation;
pub mod onnx_types;
pub mod opset;
pub mod site;

pub use deviation::Deviations;

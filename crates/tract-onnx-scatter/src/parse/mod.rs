//! Reading an ONNX node: what every builder shares. [`attributes`]
//! (`CheckedNode`) refuses an op below its first version, an attribute its
//! version does not define, a wrong attribute type, a reduction the version
//! does not allow; [`deviation`] holds the exporter deviations accepted
//! with a warning or refused; [`typing`] unifies int64 with TDim. The
//! builders themselves live in their op's home (`crate::ops`).

pub mod attributes;
pub mod deviation;
pub mod typing;

pub use deviation::Deviations;

/// Overrides tract's builders with those of every op home
/// ([`crate::ops::HOMES`]). `deviations` decides what the builders do with
/// known exporter deviations ([`deviation`]).
pub fn register(reg: &mut tract_onnx::model::OnnxOpRegister, deviations: Deviations) {
    for home in crate::ops::HOMES {
        (home.register_onnx)(reg, deviations);
    }
}

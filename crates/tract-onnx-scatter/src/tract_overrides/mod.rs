//! Overrides of tract operators outside the scatter family that stop
//! exporters' scatter models before the scatter runs: `If` with a condition
//! known at load ([`constant_if`]) and `Reshape` whose volume only the run
//! decides ([`runtime_reshape`]). On by default in [`crate::onnx()`];
//! `Options { tract_overrides: false, .. }` keeps stock tract's operators.

pub mod constant_if;
pub mod runtime_reshape;

/// Registers the overrides in `reg`.
pub fn register(reg: &mut tract_onnx::model::OnnxOpRegister) {
    reg.insert("If", constant_if::if_then_else);
    reg.insert("Reshape", runtime_reshape::reshape);
}

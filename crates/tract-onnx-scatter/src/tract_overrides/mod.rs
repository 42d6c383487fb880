//! Overrides of tract operators outside the scatter family that stop
//! exporters' scatter models before the scatter runs: `If` with a condition
//! known at load ([`constant_if`]), `Reshape` whose volume only the run
//! decides ([`runtime_reshape`]) and `Concat` of symbolic dims with int64
//! constants beyond the i32 range, which tract's cast wraps
//! ([`exact_tdim_concat`]), `Slice` whose bounds hold a symbol only the
//! run binds ([`run_time_slice_bounds`]), `Unique`, which tract lacks
//! ([`unique`]); ops that read such symbols as
//! numbers bind them first ([`bind_run_symbols`]). On by default in [`crate::onnx()`];
//! `Options { tract_overrides: false, .. }` keeps stock tract's operators.

pub mod bind_run_symbols;
pub mod constant_if;
pub mod data_dependent_constant_of_shape;
pub mod exact_tdim_concat;
pub mod retyped;
pub mod run_symbols;
pub mod run_time_slice_bounds;
pub mod runtime_reshape;
pub mod unique;

/// Registers the overrides in `reg`.
pub fn register(reg: &mut tract_onnx::model::OnnxOpRegister) {
    bind_run_symbols::register(reg);
    reg.insert("If", constant_if::if_then_else);
    reg.insert("Reshape", runtime_reshape::reshape);
    reg.insert("Concat", exact_tdim_concat::concat);
    reg.insert("Slice", run_time_slice_bounds::slice);
    reg.insert("Unique", unique::unique);
    reg.insert(
        "ConstantOfShape",
        data_dependent_constant_of_shape::constant_of_shape,
    );
}

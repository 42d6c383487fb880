//! ONNX scatter ops for tract, exact to the contract in the workspace README:
//! `Scatter` (9, 10), `ScatterElements` (11, 13, 16, 18) and `ScatterND`
//! (11, 13, 16, 18), validated per opset, panic-free, in place when they can.
//! Also `TensorScatter` (24) and OpenVINO's `ScatterElementsUpdate-12` (custom op, any domain).
//!
//! Use [`onnx()`] in place of `tract_onnx::onnx()`, or [`register`] on an
//! existing op register:
//!
//! ```no_run
//! use tract_onnx_scatter::tract_onnx::prelude::*;
//! let model = tract_onnx_scatter::onnx()
//!     .model_for_path("model.onnx")?
//!     .into_optimized()?
//!     .into_runnable()?;
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod nnef;
pub mod onnx;
pub mod ops;
pub mod opset;
pub mod site;

pub use tract_core;
pub use tract_hir;
pub use tract_nnef;
pub use tract_onnx;
pub use tract_onnx_opl;

pub use scatter_kernels;

pub use nnef::{WithScatter, nnef};

/// Overrides tract's `Scatter`, `ScatterElements` and `ScatterND` builders
/// with this crate's.
pub fn register(reg: &mut tract_onnx::model::OnnxOpRegister) {
    onnx::register(reg)
}

/// `tract_onnx::onnx()` with this crate's scatter ops registered.
pub fn onnx() -> tract_onnx::Onnx {
    let mut onnx = tract_onnx::onnx();
    register(&mut onnx.op_register);
    onnx
}

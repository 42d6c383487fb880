//! ONNX scatter ops for tract, exact to the contract in docs/contract.md:
//! `Scatter` (9, 10), `ScatterElements` (11, 13, 16, 18) and `ScatterND`
//! (11, 13, 16, 18), validated per opset, panic-free, in place when they can.
//! Also `TensorScatter` (24) and OpenVINO's `ScatterElementsUpdate-12` (custom op, any domain).
//! And the backward-pass ops `ScatterElementsGrad` / `ScatterNDGrad` (domain
//! `tract_onnx_scatter.training`, version 1; [`ops::ScatterGrad`]).
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
//!
//! Beyond the scatter family, [`onnx()`] overrides these tract operators
//! ([`TractOverride::ALL`]), where tract 0.23.9 stops exporters' models
//! before their scatters run: `If`, `Reshape`, `Concat`, `Slice`, `Cast`,
//! `CastLike`, `ConstantOfShape`, `Expand`, `Squeeze`, `GRU`, `LSTM`, `RNN`,
//! `TopK`, `GlobalLpPool`, and `Unique`, `Loop` and `ReverseSequence`, which tract lacks. [`tract_overrides`] says what
//! each changes and why. Wherever stock tract loads a model, each builds
//! exactly stock's op and facts. [`Options::tract_overrides`] switches any
//! of them off by name:
//!
//! ```
//! use tract_onnx_scatter::{Options, TractOverrides};
//! let without_slice = Options {
//!     tract_overrides: TractOverrides::ALL.without("Slice".parse()?),
//!     ..Options::default()
//! }
//! .onnx();
//! # Ok::<(), anyhow::Error>(())
//! ```

#![deny(missing_docs)]
// The public API is chosen item by item (docs/contract.md, "Public API";
// tests/public_api.rs snapshots it): a `pub` item no user can reach is
// flagged, so what only the crate uses says `pub(crate)`.
#![warn(unreachable_pub)]

pub mod load;
pub mod ops;
mod parse;
pub mod tract_overrides;

pub use parse::{onnx_types, opset, site};

pub use tract_core;
pub use tract_hir;
pub use tract_nnef;
pub use tract_onnx;
pub use tract_onnx_opl;

pub use scatter_kernels;

pub use half;
pub use num_complex;

pub use load::Onnx;
pub use ops::nnef::{WithScatter, nnef};
pub use ops::output_pools;
pub use ops::run::output_pool::OutputPool;
pub use ops::run::tract_threads::TractThreads;
// Not for users: scatter-bench copies its large inputs into the memory a
// scatter's output gets (huge pages advised), as numpy's arrays are, and
// reuses this rather than a copy of it. Listed in tests/public_api.rs.
#[doc(hidden)]
pub use ops::run::fresh_buffer::Unwritten;
pub use parse::Deviations;
pub use tract_overrides::float16::Float16Accumulation;
pub use tract_overrides::{TractOverride, TractOverrides};

/// How the plugin loads ONNX models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    /// Known exporter deviations (a reduction from a later version of the
    /// same op): accepted with a warning (default) or refused.
    pub deviations: Deviations,
    /// Which tract operators outside the scatter family are replaced by
    /// [`tract_overrides`]' (default: all of them, [`TractOverrides::ALL`],
    /// the operators of [`TractOverride::ALL`]). Switch one off by name with
    /// `TractOverrides::ALL.without("Slice".parse()?)`;
    /// [`TractOverrides::NONE`] keeps every stock tract operator.
    pub tract_overrides: TractOverrides,
    /// How float16 ops that accumulate (`Conv`, `ConvTranspose`, `CumSum`,
    /// softmax, normalizations, ...: [`tract_overrides::float16::IN_FLOAT32`])
    /// are computed: in float32 and rounded once to float16, as onnxruntime
    /// computes them (default, [`Float16Accumulation::Float32`]), or in
    /// tract's own float16 arithmetic ([`Float16Accumulation::Stock`]).
    pub float16_accumulation: Float16Accumulation,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            deviations: Deviations::Accept,
            tract_overrides: TractOverrides::ALL,
            float16_accumulation: Float16Accumulation::Float32,
        }
    }
}

impl Options {
    /// Refuses exporter deviations: every node must be valid at its opset.
    pub fn strict() -> Options {
        Options {
            deviations: Deviations::Refuse,
            ..Options::default()
        }
    }

    /// Registers this crate's scatter ops in `reg`, then its overrides of
    /// tract operators (those of [`Options::tract_overrides`]).
    pub fn register(self, reg: &mut tract_onnx::model::OnnxOpRegister) {
        tract_overrides::retyped::fence_stock_builders(reg);
        ops::register(reg, self.deviations);
        self.tract_overrides.register(reg);
        self.float16_accumulation.register(reg);
        reg.insert(
            load::loop_lists::CONCAT_FROM_STACK,
            load::list_reads::concat_from_stack,
        );
        reg.insert(
            load::loop_lists::LENGTH_OF_STACK,
            load::list_reads::length_of_stack,
        );
        reg.insert(
            load::bfloat16::ROUND_TO_BFLOAT16,
            load::bfloat16::round_to_bfloat16_builder,
        );
        reg.insert(
            ops::run::known_bfloat16::KNOWN_BFLOAT16,
            ops::run::known_bfloat16::known_bfloat16_builder,
        );
    }

    /// `tract_onnx::onnx()` with this crate's ops registered, behind the
    /// [`load`]er's rewrites.
    pub fn onnx(self) -> Onnx {
        let mut onnx = tract_onnx::onnx();
        self.register(&mut onnx.op_register);
        Onnx::new(onnx)
    }
}

/// Overrides tract's `Scatter`, `ScatterElements`, `ScatterND` (and adds
/// `TensorScatter`, `ScatterElementsUpdate`, `ScatterElementsGrad`,
/// `ScatterNDGrad`) builders with this crate's, accepting known exporter
/// deviations, and replaces the builders of the tract operators of
/// [`TractOverride::ALL`] ([`tract_overrides`]; [`Options::default`]).
pub fn register(reg: &mut tract_onnx::model::OnnxOpRegister) {
    Options::default().register(reg)
}

/// As [`register`], refusing exporter deviations ([`Options::strict`]).
pub fn register_strict(reg: &mut tract_onnx::model::OnnxOpRegister) {
    Options::strict().register(reg)
}

/// `tract_onnx::onnx()` with this crate's scatter ops registered; known
/// exporter deviations load with a warning.
pub fn onnx() -> Onnx {
    Options::default().onnx()
}

/// `tract_onnx::onnx()` with this crate's scatter ops registered; every
/// node must be valid at its opset, exactly as the ONNX spec says.
pub fn onnx_strict() -> Onnx {
    Options::strict().onnx()
}

// The unit tests that load a model share the integration tests' graph
// builder, written against the public paths (`tract_onnx_scatter::onnx()`).
#[cfg(test)]
extern crate self as tract_onnx_scatter;
#[cfg(test)]
#[path = "test_graph.rs"]
mod graph;

/// The crate's README, whose examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

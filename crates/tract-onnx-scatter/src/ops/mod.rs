//! The ops, one home each, and what they share.
//!
//! A home (`scatter_elements.rs`, `scatter_nd.rs`, `tensor_scatter.rs`,
//! `scatter_elements_update.rs`, `scatter_grad.rs`) holds everything of one op family: its ONNX
//! builders and inference-level op, its typed op, its NNEF form, and whether it pools its
//! output. It declares itself in `HOMES`; the ONNX registration (`register`), the NNEF registry
//! (`crate::ops::nnef::registry`) and the output pool (`as_pooled`) find the ops there and name
//! none of them. What a home declares is an `OpHome` (`op_home`), so no home imports this module.
//!
//! Beside the homes: the run path's machinery (`run`: checks, speed policy, check cache, output
//! buffers, threads), the declutter rewrites (`rewrite`), the ops' values the homes run and the
//! rewrites build (`scatter_ops`), the NNEF registry and its arguments (`nnef`, `nnef_args`),
//! and the mapping of tract's types and dims to the kernels' (`element_dispatch`, `shapes`).
//! None of those names a home.

use tract_hir::internal::*;
use tract_onnx::model::OnnxOpRegister;

use crate::parse::Deviations;
pub(crate) use op_home::OpHome;
use run::output_pool::{OutputPool, PooledOp};

/// Overrides tract's builders with those of every op home ([`HOMES`]).
/// `deviations` decides what the builders do with known exporter
/// deviations ([`crate::parse::deviation`]).
pub(crate) fn register(reg: &mut OnnxOpRegister, deviations: Deviations) {
    for home in HOMES {
        (home.register_onnx)(reg, deviations);
    }
}

/// `PartialEq`, `Eq` and `Hash` for what an op keeps across runs (its
/// output pool, its kept check): a cache, not part of what the op
/// computes, so two ops that differ only in what they keep are the same
/// op (tract's `Op` is `DynEq`: ops are compared, e.g. when models are).
/// A generic cache names its type parameters: `CheckCache<K>`.
macro_rules! equal_as_kept_state {
    ($t:ident $(<$($g:ident),+>)?) => {
        impl$(<$($g),+>)? PartialEq for $t$(<$($g),+>)? {
            fn eq(&self, _other: &Self) -> bool {
                true
            }
        }

        impl$(<$($g),+>)? Eq for $t$(<$($g),+>)? {}

        impl$(<$($g),+>)? std::hash::Hash for $t$(<$($g),+>)? {
            fn hash<H: std::hash::Hasher>(&self, _state: &mut H) {}
        }
    };
}

pub(crate) mod element_dispatch;
pub(crate) mod nnef;
pub(crate) mod nnef_args;
pub(crate) mod op_home;
pub(crate) mod rewrite;
pub(crate) mod run;
pub(crate) mod scatter_elements;
pub(crate) mod scatter_elements_update;
pub(crate) mod scatter_grad;
pub(crate) mod scatter_nd;
pub(crate) mod scatter_ops;
pub(crate) mod shapes;
pub(crate) mod tensor_scatter;

pub use scatter_elements_update::ScatterElementsUpdate;
pub use scatter_grad::ScatterGrad;
pub use scatter_ops::{ScatterElements, ScatterNd};
pub use tensor_scatter::TensorScatter;

/// Every home. Adding an op family: a row of `opset.rs`, its home, and a
/// line here.
pub(crate) const HOMES: &[OpHome] = &[
    scatter_elements::HOME,
    scatter_nd::HOME,
    tensor_scatter::HOME,
    scatter_elements_update::HOME,
    scatter_grad::HOME,
];

/// `op` as a [`PooledOp`] when a home's typed op pools its output.
pub(crate) fn as_pooled(op: &dyn TypedOp) -> Option<&dyn PooledOp> {
    HOMES.iter().find_map(|home| (home.as_pooled)(op))
}

/// The output pools of `model`'s scatter nodes (top-level graph), with the
/// nodes' names: to resize them (`set_capacity`) or free what they retain
/// (`release`). A plan's model is `plan.model()`.
pub fn output_pools(model: &TypedModel) -> Vec<(&str, &OutputPool)> {
    model
        .nodes()
        .iter()
        .filter_map(|n| {
            let pool = as_pooled(n.op.as_ref())?.output_pool()?;
            Some((n.name.as_str(), pool))
        })
        .collect()
}

//! What a home declares of itself for [`super::HOMES`]: how the rest of
//! the crate reaches its op family without naming it.

use tract_hir::internal::*;
use tract_nnef::internal::Registry;
use tract_onnx::model::OnnxOpRegister;

use crate::ops::run::output_pool::PooledOp;
use crate::parse::Deviations;

/// One op family as the rest of the crate reaches it.
pub(crate) struct OpHome {
    /// Inserts the family's ONNX builders, for this deviation mode.
    pub(crate) register_onnx: fn(&mut OnnxOpRegister, Deviations),
    /// Registers its NNEF primitive and dumper; `None`: no NNEF form
    /// (serializing such a node fails with tract's "no dumper" error).
    pub(crate) register_nnef: Option<fn(&mut Registry)>,
    /// `op` as a [`PooledOp`] when it is this family's typed
    /// op and pools its output. tract finds an op by its concrete type
    /// only, so each home answers for its own.
    pub(crate) as_pooled: fn(&dyn TypedOp) -> Option<&dyn PooledOp>,
}

/// `as_pooled` of a home that does not pool its output.
pub(crate) fn never_pooled(_: &dyn TypedOp) -> Option<&dyn PooledOp> {
    None
}

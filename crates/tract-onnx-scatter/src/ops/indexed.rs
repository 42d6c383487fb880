//! What ScatterElements and ScatterND share at load and at run: the
//! checks of a `(data, indices, updates)` scatter in one order, each one
//! before the next, and all of them before the data is taken.
//!
//! The order is the kernels' (plan, then checked indices, then apply):
//! input count, index type, data/updates type, reduction, the op's own
//! type rule, shapes, index values. At load the same checks run on facts
//! (symbolic dims through the kernels' `check_shapes`), so a mistake the
//! facts already show reads as the run would report it.

use scatter_kernels::{IndexValue, ScatterError, UpdateReduction};
use tract_core::internal::*;

use crate::onnx_types::OnnxElement;
use crate::ops::output_pool::{self, PooledOp};
use crate::ops::shapes::{SymDim, all_concrete, sym_dims};
use crate::ops::types::{self, with_index_slice};
use crate::site::NodeSite;

/// A scatter of `(data, indices, updates)` whose checks go through
/// [`output_facts`] at load and [`eval`] at run.
pub trait IndexedScatter: PooledOp {
    /// The kernels' plan for concrete shapes.
    type Plan;

    /// The node the op was built from, named by every error.
    fn site(&self) -> &NodeSite;

    /// The op's reduction, checked against the data type before the
    /// shapes.
    fn reduction(&self) -> UpdateReduction;

    /// The ONNX element type data and updates hold: for complex values,
    /// the plan and its checks see the complex shapes.
    fn onnx_element(&self) -> OnnxElement;

    /// A type rule of this op beyond the reduction's (none by default).
    fn check_op_type(&self, dt: DatumType) -> TractResult<()> {
        let _ = dt;
        Ok(())
    }

    /// The plan's shape rules on dims the facts may not know.
    fn check_fact_shapes(
        &self,
        data: &[SymDim],
        indices: &[SymDim],
        updates: &[SymDim],
    ) -> Result<(), ScatterError>;

    /// The plan for concrete shapes, or the error naming this node.
    fn plan(&self, data: &[usize], indices: &[usize], updates: &[usize])
    -> TractResult<Self::Plan>;

    /// The plan's check of index values.
    fn check_index_values<I: IndexValue>(
        plan: &Self::Plan,
        indices: &[I],
    ) -> Result<(), ScatterError>;

    /// Checks the index values, then scatters `updates` into `data` (in
    /// place when it is exclusively owned) and returns the output.
    /// `indices` are the values of the input `indices_value` (its own
    /// data, or their conversion from symbolic dims).
    fn scatter<I: IndexValue>(
        &self,
        plan: &Self::Plan,
        indices: &[I],
        indices_value: &TValue,
        data: TValue,
        updates: &Tensor,
    ) -> TractResult<Tensor>;
}

/// The output fact of `op` (data's), once the checks on facts accepted the
/// inputs.
pub fn output_facts<S: IndexedScatter>(
    op: &S,
    inputs: &[&TypedFact],
) -> TractResult<TVec<TypedFact>> {
    types::expect_three_inputs(op.site(), inputs.len())?;
    check_facts(op, inputs[0], inputs[1], inputs[2])?;
    Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
}

/// The load-time checks of `op` on its input facts: everything the facts
/// know, constant index values included.
fn check_facts<S: IndexedScatter>(
    op: &S,
    data: &TypedFact,
    indices: &TypedFact,
    updates: &TypedFact,
) -> TractResult<()> {
    let site = op.site();
    types::check_indices_type(site, "indices", indices.datum_type)?;
    check_types(op, data.datum_type, updates.datum_type)?;
    let element = op.onnx_element();
    let (d, i, u) = (sym_dims(data), sym_dims(indices), sym_dims(updates));
    let (d, u) = (
        element.shape(site, "data", &d)?,
        element.shape(site, "updates", &u)?,
    );
    op.check_fact_shapes(d, &i, u)
        .map_err(|e| site.scatter_error(e))?;
    if let Some(shapes) = all_concrete(&[data, indices, updates]) {
        let plan = op.plan(
            element.shape(site, "data", shapes[0])?,
            shapes[1],
            element.shape(site, "updates", shapes[2])?,
        )?;
        // Constant indices are checked now: the error surfaces at load.
        if let Some(konst) = &indices.konst
            && let Some(konst) = types::known_indices(site, "indices", konst)?
        {
            with_index_slice!(konst, |idx| S::check_index_values(&plan, idx))
                .map_err(|e| site.scatter_error(e))?;
        }
    }
    Ok(())
}

/// The run of `op`: its checks in order, then the scatter, the output
/// taken through the op's pool when it has one.
pub fn eval<S: IndexedScatter>(
    op: &S,
    ctx: &EvalContext,
    inputs: TVec<TValue>,
) -> TractResult<TVec<TValue>> {
    let output = output_pool::eval_pooled(op.output_pool(), inputs, |inputs| {
        let site = op.site();
        types::expect_three_inputs(site, inputs.len())?;
        let (data, indices, updates) = args_3!(inputs);
        check_types(op, data.datum_type(), updates.datum_type())?;
        let element = op.onnx_element();
        let plan = op.plan(
            element.shape(site, "data", data.shape())?,
            indices.shape(),
            element.shape(site, "updates", updates.shape())?,
        )?;
        let values = types::plain_indices(site, "indices", &indices, ctx.symbols)?;
        let output = with_index_slice!(values, |idx| op
            .scatter(&plan, idx, &indices, data, &updates)?);
        Ok(output.into_tvalue())
    })?;
    Ok(tvec!(output))
}

/// Data and updates of one type that can do the reduction and the op.
fn check_types<S: IndexedScatter>(op: &S, data: DatumType, updates: DatumType) -> TractResult<()> {
    let site = op.site();
    types::check_same_type(site, data, updates)?;
    types::check_reduction_for(site, data, op.onnx_element(), op.reduction())?;
    op.check_op_type(data)
}

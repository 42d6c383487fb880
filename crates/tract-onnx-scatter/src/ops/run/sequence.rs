//! The run sequence of an indexed scatter (`ScatterElements`, `ScatterND`),
//! written once: inputs, plan, speed policy, check, take, apply, return.
//! An op brings only what differs ([`IndexedScatter`]): its plan (through
//! [`ScatterRules`]), its speed-policy question and its apply.
//!
//! Nothing is written before every input is known valid: the data is taken
//! only once the indices are checked.

use scatter_kernels::{Element, Execution, IndexValue, ScatterError};
use tract_core::internal::*;

use crate::ops::element_dispatch::{
    self, apply_as_onnx_element, dispatch_element, with_index_slice,
};
use crate::ops::run::check_cache::{CheckCache, KeepsChecks};
use crate::ops::run::copy_target::{self, Fused, Taken};
use crate::ops::run::input_checks::{self, ScatterInputs, ScatterRules};
use crate::ops::run::output_pool::PooledOp;
use crate::ops::run::speed_policy::{FusedCopy, PlainCopy};
use crate::ops::run::tract_threads::TractThreads;

/// The checked indices of `S`'s plan.
pub(crate) type Token<'a, S, I> = <<S as ScatterRules>::Plan as KeepsChecks>::Token<'a, I>;

/// How `S`'s plan checks its indices.
pub(crate) type How<'e, S> = <<S as ScatterRules>::Plan as KeepsChecks>::How<'e>;

/// What one call does, as the speed policy decided it before the check.
pub(crate) struct Call<How> {
    /// Whether the check of the indices is kept for their next call.
    pub keeps_check: bool,
    /// How the indices are checked.
    pub how: How,
    /// Whether the copy of shared data is fused with the scatter.
    pub fused_copy: FusedCopy,
    /// How a copy nothing is fused into is made.
    pub plain_copy: PlainCopy,
}

/// What an indexed scatter brings to [`eval`].
pub(crate) trait IndexedScatter: ScatterRules<Plan: KeepsChecks> + PooledOp {
    /// The speed policy's decisions for one call on `data`.
    fn call<'t>(
        &self,
        plan: &Self::Plan,
        data: &TValue,
        indices_held_elsewhere: bool,
        threads: &'t TractThreads,
    ) -> Call<How<'t, Self>>;

    /// Where the check of indices that come back is kept.
    fn check_cache(&self) -> &CheckCache<<Self::Plan as KeepsChecks>::Kept>;

    /// Scatters `updates` into `data` at the checked indices.
    fn apply<T: Element, I: IndexValue>(
        &self,
        checked: &Token<'_, Self, I>,
        data: &mut [T],
        updates: &[T],
        exec: Execution<'_>,
    ) -> Result<(), ScatterError>;

    /// [`IndexedScatter::apply`] on symbolic (TDim) values.
    fn apply_symbolic<I: IndexValue>(
        &self,
        checked: &Token<'_, Self, I>,
        data: &mut [TDim],
        updates: &[TDim],
    ) -> TractResult<()>;
}

/// The eval of `op`: the shared checks, the op's type rule and plan, then
/// the scatter.
pub(crate) fn eval<S: IndexedScatter>(
    op: &S,
    ctx: &EvalContext,
    inputs: TVec<TValue>,
) -> TractResult<TVec<TValue>> {
    let site = op.site();
    let ScatterInputs {
        data,
        indices,
        updates,
        indices_held_elsewhere,
    } = input_checks::scatter_inputs(site, inputs, ctx.symbols, op.onnx_element(), op.reduction())?;
    op.check_op_type(data.datum_type())?;
    let (data_shape, updates_shape) =
        op.onnx_element()
            .data_and_updates_shapes(site, data.shape(), updates.shape())?;
    let plan = op.plan(data_shape, indices.shape(), updates_shape)?;
    let output = with_index_slice!(indices, |values| scatter(
        op,
        &plan,
        values,
        &indices,
        indices_held_elsewhere,
        data,
        &updates
    )?);
    Ok(tvec!(output))
}

/// Checks the index `values` of `indices` (or takes the kept check of
/// indices that came back), takes the output and scatters `updates` into
/// it, each step as the speed policy decided for this call.
fn scatter<S: IndexedScatter, I: IndexValue>(
    op: &S,
    plan: &S::Plan,
    values: &[I],
    indices: &TValue,
    indices_held_elsewhere: bool,
    data: TValue,
    updates: &Tensor,
) -> TractResult<TValue> {
    let site = op.site();
    let threads = TractThreads::current();
    let call = op.call(plan, &data, indices_held_elsewhere, &threads);
    let kept = indices.as_arc_tensor().filter(|_| call.keeps_check);
    let checked = op
        .check_cache()
        .checked(plan, values, kept, call.how)
        .map_err(|e| site.scatter_error(e))?;
    let fused = Fused {
        token: &checked,
        element: op.onnx_element(),
        updates,
        copy: call.fused_copy,
    };
    let (taken, returning) = copy_target::take(
        site,
        "data",
        data,
        op.output_pool(),
        call.plain_copy,
        Some(fused),
    )?;
    let mut output = match taken {
        Taken::Scattered(output) => return Ok(returning.output(output)),
        Taken::Data(data) => data,
    };
    let mut view = output.try_as_plain_ram_mut()?;
    let exec = Execution::on(&threads);
    let done = match apply_as_onnx_element!(op.onnx_element(), site, view, updates, |d, u| op
        .apply(&checked, d, u, exec))
    {
        Some(done) => done,
        None => dispatch_element!(view.datum_type(), site, "data", |T| {
            let d = view.as_slice_mut::<T>()?;
            op.apply(&checked, d, element_dispatch::slice::<T>(updates)?, exec).map_err(|e| site.scatter_error(e))
        }, tdim => {
            let d = view.as_slice_mut::<TDim>()?;
            op.apply_symbolic(&checked, d, element_dispatch::slice::<TDim>(updates)?)
        }),
    };
    done?;
    Ok(returning.output(output))
}

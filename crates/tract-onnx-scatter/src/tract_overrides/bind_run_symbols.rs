//! Constants holding symbols only the run binds, fed to ops that need plain
//! numbers.
//!
//! tract types a value derived from a data-dependent dim (`Shape` of a
//! `Range` or `NonZero` output, say) as a TDim constant holding the
//! symbol. Ops that turn such a value into numbers themselves (`Cast` to
//! float) evaluate it without the session's symbol values and fail: "Undetermined symbol in expression:
//! range" (Piper's `/Cast_3`). For the ops listed in [`crate::tract_overrides`], every
//! such constant input goes through [`BindRunSymbols`] first, which
//! substitutes the run's values, ordered after the nodes binding them. Ops
//! whose inputs hold no such symbol are built exactly as tract builds them.

use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::retyped::{Retyped, Typing};

/// `value` through `op` (its first input; the others, `binders`, only
/// order it after the nodes binding symbols), or `value` itself when
/// nothing binds.
pub(crate) fn wire_after(
    target: &mut TypedModel,
    name: String,
    op: impl TypedOp,
    value: OutletId,
    binders: TVec<OutletId>,
) -> TractResult<OutletId> {
    if binders.is_empty() {
        return Ok(value);
    }
    let mut wires = tvec![value];
    wires.extend(binders);
    Ok(target.wire_node(name, op, &wires)?[0])
}

/// A TDim value with the run's symbol values substituted. Input 0 is the
/// value; further inputs only order the op after the nodes binding them.
/// Never folded at load: the values do not exist before the run.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct BindRunSymbols;

impl Op for BindRunSymbols {
    fn name(&self) -> StaticName {
        "BindRunSymbols".into()
    }

    op_as_typed_op!();
}

impl EvalOp for BindRunSymbols {
    fn eval_out_of_plan(&self, _inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        Ok(None)
    }

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let value = &inputs[0];
        let bound: Vec<TDim> = value
            .try_as_plain_ram()?
            .as_slice::<TDim>()?
            .iter()
            .map(|d| d.eval(ctx.symbols))
            .collect();
        let array = tract_ndarray::ArrayD::from_shape_vec(value.shape(), bound)?;
        Ok(tvec!(Tensor::from(array).into_tvalue()))
    }
}

impl TypedOp for BindRunSymbols {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(
            inputs[0].datum_type == TDim::datum_type(),
            "BindRunSymbols takes TDim, got {:?}",
            inputs[0].datum_type
        );
        Ok(tvec!(TDim::datum_type().fact(inputs[0].shape.clone())))
    }
}

/// The builder registered for `Expand`: tract's, but when its shape is a
/// constant holding run-bound symbols (a `Shape` of a run-time slice,
/// folded at load), its data input first goes through [`AfterBinders`],
/// so the nodes binding those symbols stay in the plan and run first.
/// tract's `MultiBroadcastTo` evaluates the shape with the session's
/// values, but takes only the data as input: without this, the binding
/// node may be pruned as dead ("Undetermined symbol", SLANet's decoder).
pub fn expand(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    Retyped::stock_built("Expand", ctx, node, DataAfterBinders)
}

/// Typing that orders input 0 after the nodes binding the run-bound
/// symbols of the other inputs' constants; then tract's own typing.
#[derive(Debug, Clone)]
pub struct DataAfterBinders;

impl Typing for DataAfterBinders {
    fn to_typed(
        &self,
        stock: &dyn InferenceOp,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let outlets: TVec<OutletId> = node.inputs.iter().map(|i| mapping[i]).collect();
        let binders = match outlets.get(1..) {
            Some(rest) => super::run_symbols::binders(target, rest)?,
            None => tvec![],
        };
        if binders.is_empty() {
            return stock.to_typed(source, node, target, mapping);
        }
        let name = format!("{}.after_binders", node.name);
        let data = wire_after(target, name, AfterBinders, outlets[0], binders)?;
        let mut mapping = mapping.clone();
        mapping.insert(node.inputs[0], data);
        stock.to_typed(source, node, target, &mapping)
    }
}

/// Input 0, unchanged; further inputs only order the op after the nodes
/// binding symbols. Never folded at load.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct AfterBinders;

impl Op for AfterBinders {
    fn name(&self) -> StaticName {
        "AfterBinders".into()
    }

    op_as_typed_op!();
}

impl EvalOp for AfterBinders {
    fn eval_out_of_plan(&self, _inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        Ok(None)
    }

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let value = inputs
            .into_iter()
            .next()
            .context("AfterBinders: no input")?;
        Ok(tvec!(value))
    }
}

impl TypedOp for AfterBinders {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
    }
}

//! Constants computed while loading, bounded before they are computed.
//!
//! tract 0.23.9 computes an op whose inputs are all constants while it loads and optimizes a
//! model, three times over: its analysis evaluates it (`InferenceOp::infer`),
//! `TypedModel::wire_node` evaluates it when every input holds fewer than 16 values, and the
//! `PropConst` pass evaluates it again. The analysis and `PropConst` keep the result only when
//! it is no bigger than the inputs or [`CONST_FOLD_MEM_BUDGET`]; `wire_node` keeps any result.
//! All of them compute it first. So a model of a few bytes (`Expand` of one float to a constant
//! shape of 5 × 10⁹) makes loading fill gigabytes, or run the process out of memory.
//!
//! The plugin's fence ([`Retyped`](super::retyped::Retyped)) weighs the output's facts first:
//! the analysis gives facts only where tract would throw the value away
//! ([`skips_eager_eval`]); the typing holds back the fold of a result past
//! [`MAX_LOAD_TIME_CONSTANT_BYTES`] ([`wire_unfolded`]), so the model computes it when it runs,
//! as ONNX does. Contract: docs/contract.md, "The loader", the row on ops of constants.

use tract_core::ops::array::MultiBroadcastTo;
use tract_core::optim::CONST_FOLD_MEM_BUDGET;
use tract_hir::internal::*;

/// The largest result of constants that loading may compute: past it, the
/// op is computed when the model runs ([`wire_unfolded`]). Large enough
/// for the constants real models fold (attention masks, position tables),
/// small enough that loading a hostile file stays far from a machine's
/// memory.
pub(crate) const MAX_LOAD_TIME_CONSTANT_BYTES: u64 = 256 << 20;

/// The bytes of a tensor of `shape` and `datum_type`, when both are known
/// and the count fits `u64`.
fn bytes(datum_type: DatumType, shape: &[usize]) -> Option<u64> {
    shape
        .iter()
        .try_fold(datum_type.size_of() as u64, |acc, d| {
            acc.checked_mul(*d as u64)
        })
}

/// The bytes of what `fact` says, when its type and shape are concrete.
fn fact_bytes(fact: &InferenceFact) -> Option<u64> {
    let datum_type = fact.datum_type.concretize()?;
    let shape = fact.shape.concretize()?;
    let shape: Vec<usize> = shape
        .iter()
        .map(|d| d.to_usize().ok())
        .collect::<Option<_>>()?;
    bytes(datum_type, &shape)
}

/// The bytes of all of `outputs`, when every fact's size is known.
fn outputs_bytes(outputs: &[InferenceFact]) -> Option<u64> {
    outputs
        .iter()
        .map(fact_bytes)
        .try_fold(0u64, |acc, b| acc.checked_add(b?))
}

/// Whether tract would throw away the value it computes for an op with
/// these facts: every input is a constant, and the outputs' facts show
/// more bytes than the inputs' and than [`CONST_FOLD_MEM_BUDGET`]. An
/// output whose size the facts leave open is not weighed.
pub(crate) fn skips_eager_eval(inputs: &[InferenceFact], outputs: &[InferenceFact]) -> bool {
    if inputs.is_empty() || inputs.iter().any(|i| i.value.concretize().is_none()) {
        return false;
    }
    let input_bytes: u64 = inputs
        .iter()
        .filter_map(|i| i.value.concretize())
        .map(|t| t.len() as u64 * t.datum_type().size_of() as u64)
        .sum();
    outputs_bytes(outputs).is_some_and(|b| b > input_bytes.max(CONST_FOLD_MEM_BUDGET))
}

/// The typed outlets of `node`, wired with one constant input read through a
/// [`RunTimeValue`], when every input is a constant and the outputs' facts
/// show more bytes than the inputs' and [`MAX_LOAD_TIME_CONSTANT_BYTES`];
/// `None` otherwise, and when no input can be held back without changing
/// the outputs' facts.
///
/// Each input is tried in turn on a copy of `target`: the first whose
/// typing gives the outputs the shapes the analysis found, none of them
/// constant, is kept. Only nodes past the budget pay for the copies.
///
/// `wire` types `node` into a model with a given mapping of its inputs.
pub(crate) fn wire_unfolded(
    wire: impl Fn(&mut TypedModel, &HashMap<OutletId, OutletId>) -> TractResult<TVec<OutletId>>,
    source: &InferenceModel,
    node: &InferenceNode,
    target: &mut TypedModel,
    mapping: &HashMap<OutletId, OutletId>,
) -> TractResult<Option<TVec<OutletId>>> {
    let mut input_bytes = 0u64;
    for input in &node.inputs {
        let fact = target.outlet_fact(mapping[input])?;
        let Some(konst) = &fact.konst else {
            return Ok(None);
        };
        input_bytes =
            input_bytes.saturating_add(konst.len() as u64 * konst.datum_type().size_of() as u64);
    }
    let outputs: Vec<InferenceFact> = (0..node.outputs.len())
        .map(|slot| source.outlet_fact(OutletId::new(node.id, slot)).cloned())
        .collect::<TractResult<_>>()?;
    let limit = input_bytes.max(MAX_LOAD_TIME_CONSTANT_BYTES);
    if node.inputs.is_empty() || outputs_bytes(&outputs).is_none_or(|b| b <= limit) {
        return Ok(None);
    }
    for held in &node.inputs {
        let mut trial = target.clone();
        let value = trial.wire_node(
            format!("{}.run_time_value", node.name),
            RunTimeValue,
            &[mapping[held]],
        )?[0];
        let mut held_mapping = mapping.clone();
        held_mapping.insert(*held, value);
        let Ok(wired) = wire(&mut trial, &held_mapping) else {
            continue;
        };
        if same_shapes_not_constant(&trial, &wired, &outputs)? {
            *target = trial;
            return Ok(Some(wired));
        }
    }
    Ok(None)
}

/// Whether the typed `wired` outlets have the concrete shapes `expected`
/// gives, and none of them is a constant.
fn same_shapes_not_constant(
    model: &TypedModel,
    wired: &[OutletId],
    expected: &[InferenceFact],
) -> TractResult<bool> {
    if wired.len() != expected.len() {
        return Ok(false);
    }
    for (outlet, fact) in wired.iter().zip(expected) {
        let typed = model.outlet_fact(*outlet)?;
        let Some(shape) = fact.shape.concretize() else {
            return Ok(false);
        };
        if typed.konst.is_some() || typed.shape.iter().ne(shape.iter()) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `value` broadcast to the constant `shape`, the broadcast reading
/// `value` through a [`RunTimeValue`] when its result is past
/// [`MAX_LOAD_TIME_CONSTANT_BYTES`]: what tract's `ConstantOfShape` wires,
/// minus a fold past the limit.
pub(crate) fn wire_broadcast_constant(
    target: &mut TypedModel,
    name: &str,
    value: Arc<Tensor>,
    shape: &[TDim],
) -> TractResult<TVec<OutletId>> {
    let mut scalar = target.add_const(format!("{name}.scalar"), value.clone())?;
    let dims: Option<Vec<usize>> = shape.iter().map(|d| d.to_usize().ok()).collect();
    let output_bytes = dims.and_then(|dims| bytes(value.datum_type(), &dims));
    if output_bytes.is_some_and(|b| b > MAX_LOAD_TIME_CONSTANT_BYTES) {
        scalar = target.wire_node(format!("{name}.run_time_value"), RunTimeValue, &[scalar])?[0];
    }
    target.wire_node(name, MultiBroadcastTo::new(shape.into()), &[scalar])
}

/// Its input, handed on when the model runs and never before: tract
/// cannot fold the op it feeds while loading. Holds back constants whose
/// folded result is past [`MAX_LOAD_TIME_CONSTANT_BYTES`] ([`wire_unfolded`]).
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct RunTimeValue;

impl Op for RunTimeValue {
    fn name(&self) -> StaticName {
        "RunTimeValue".into()
    }

    op_as_typed_op!();
}

impl EvalOp for RunTimeValue {
    fn eval_out_of_plan(&self, _inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        Ok(None)
    }

    fn forwards_input(&self) -> Option<usize> {
        Some(0)
    }

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let value = inputs
            .into_iter()
            .next()
            .context("RunTimeValue: no input")?;
        Ok(tvec!(value))
    }
}

impl TypedOp for RunTimeValue {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(t: Tensor) -> InferenceFact {
        InferenceFact::from(t)
    }

    fn float_fact(shape: &[usize]) -> InferenceFact {
        InferenceFact::dt_shape(f32::datum_type(), shape)
    }

    #[test]
    fn an_output_past_the_budget_from_constants_skips_the_eager_eval() {
        let inputs = [constant(tensor0(1f32)), constant(tensor1(&[5i64, 1 << 30]))];
        assert!(skips_eager_eval(&inputs, &[float_fact(&[5, 1 << 30])]));
    }

    #[test]
    fn an_output_within_the_budget_is_evaluated_as_tract_does() {
        let inputs = [constant(tensor0(1f32)), constant(tensor1(&[4i64, 1024]))];
        assert!(!skips_eager_eval(&inputs, &[float_fact(&[4, 1024])]));
    }

    #[test]
    fn an_output_no_bigger_than_its_inputs_is_evaluated_as_tract_does() {
        let big = Tensor::zero::<f32>(&[2, 1 << 20]).unwrap();
        assert!(!skips_eager_eval(
            &[constant(big)],
            &[float_fact(&[1 << 21])]
        ));
    }

    #[test]
    fn an_input_that_is_not_constant_is_left_to_tract() {
        let inputs = [float_fact(&[1]), constant(tensor1(&[5i64, 1 << 30]))];
        assert!(!skips_eager_eval(&inputs, &[float_fact(&[5, 1 << 30])]));
    }

    #[test]
    fn an_output_of_unknown_size_is_left_to_tract() {
        let inputs = [constant(tensor0(1f32))];
        assert!(!skips_eager_eval(&inputs, &[InferenceFact::default()]));
    }
}

//! ONNX `TopK` whose `k` is a dim only the run binds.
//!
//! PyTorch's packed-sequence exports sort the lengths with
//! `TopK(lengths, k = Gather(Shape(lengths), 0))`. With a symbolic batch,
//! tract types `k` as a TDim constant holding the symbol (`batch`), and its
//! `Topk` reads `k` with a plain cast to int64 at run, without the
//! session's symbol values: "Undetermined symbol in expression: batch".
//!
//! Contract: where `k` is such a constant, the node is [`TopkAtRun`], which
//! evaluates `k` with the run's symbol values and then runs tract's own
//! `Topk` (same facts: the output dim along `axis` is `k`'s expression).
//! A `k` outside `[0, dim]` (the axis's length) is an error naming the
//! node, `k` and the bound. Every other `TopK` is tract's own.

use tract_hir::internal::*;
use tract_hir::tract_core::ops::array::Topk;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::retyped::{Retyped, Typing};
use super::run_symbols::{konst_symbols, run_values};

/// The builder registered for `TopK`: tract's, typed by [`TopkTyping`].
pub(crate) fn topk(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let axis = node.get_attr_opt::<i64>("axis")?.unwrap_or(-1);
    let largest = node.get_attr_opt::<i64>("largest")?.unwrap_or(1) == 1;
    Retyped::stock_built("TopK", ctx, node, TopkTyping { axis, largest })
}

/// tract's typing, but [`TopkAtRun`] where `k` is a constant holding
/// symbols.
#[derive(Debug, Clone)]
pub(crate) struct TopkTyping {
    /// ONNX `axis` (negative from the end).
    pub(crate) axis: i64,
    /// ONNX `largest`.
    pub(crate) largest: bool,
}

impl Typing for TopkTyping {
    fn to_typed(
        &self,
        stock: &dyn InferenceOp,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let inputs: TVec<OutletId> = node.inputs.iter().map(|i| mapping[i]).collect();
        let symbolic_k = match inputs.get(1) {
            Some(k) => !konst_symbols(target.outlet_fact(*k)?)?.is_empty(),
            None => false,
        };
        if !symbolic_k {
            return stock.to_typed(source, node, target, mapping);
        }
        let rank = target.outlet_fact(inputs[0])?.rank() as i64;
        let name = &node.name;
        let axis = if self.axis < 0 {
            self.axis + rank
        } else {
            self.axis
        };
        ensure!(
            (0..rank).contains(&axis),
            "TopK node '{name}': axis {} of an input of rank {rank}",
            self.axis
        );
        let topk = Topk {
            axis: axis as usize,
            largest: self.largest,
            fallback_k: target.symbols.new_with_prefix("k").into(),
        };
        target.wire_node(
            name,
            TopkAtRun {
                node: name.clone(),
                topk,
            },
            &inputs,
        )
    }
}

/// tract's `Topk` with `k` evaluated with the run's symbol values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TopkAtRun {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// tract's op, which runs once `k` is a number.
    pub(crate) topk: Topk,
}

impl Op for TopkAtRun {
    fn name(&self) -> StaticName {
        "TopkAtRun".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "axis {}, largest {}",
            self.topk.axis, self.topk.largest
        )])
    }

    op_as_typed_op!();
}

impl EvalOp for TopkAtRun {
    // k's symbols take the run's values: nothing to fold at load.
    not_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let node = &self.node;
        let (input, k) = args_2!(inputs);
        let values = run_values(&k, ctx.symbols)
            .with_context(|| format!("TopK node '{node}': reading k"))?;
        let &[k] = values.as_slice() else {
            bail!(
                "TopK node '{node}': k holds {} values, expected 1",
                values.len()
            );
        };
        let dim = *input.shape().get(self.topk.axis).with_context(|| {
            format!(
                "TopK node '{node}': axis {} of an input of rank {}",
                self.topk.axis,
                input.rank()
            )
        })?;
        ensure!(
            usize::try_from(k).is_ok_and(|k| k <= dim),
            "TopK node '{node}': k is {k}, out of range [0, {dim}] (the axis's length)"
        );
        self.topk
            .eval(ctx, tvec![input, tensor1(&[k]).into_tvalue()])
    }
}

impl TypedOp for TopkAtRun {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        self.topk.output_facts(inputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op() -> TopkAtRun {
        TopkAtRun {
            node: "t".into(),
            topk: Topk {
                axis: 0,
                largest: true,
                fallback_k: TDim::from(1),
            },
        }
    }

    #[test]
    fn k_is_evaluated_with_the_run_s_symbol_values() {
        let scope = SymbolScope::default();
        let batch = scope.sym("batch");
        let mut symbols = SymbolValues::default();
        symbols.set(&batch, 3);
        let ctx = EvalContext {
            symbols: &symbols,
            ..EvalContext::out_of_plan()
        };
        let k = tensor1(&[TDim::from(batch)]);
        let out = op()
            .eval(
                &ctx,
                tvec![tensor1(&[2i64, 7, 5]).into_tvalue(), k.into_tvalue()],
            )
            .unwrap();
        assert_eq!(*out[0], tensor1(&[7i64, 5, 2]));
        assert_eq!(*out[1], tensor1(&[1i64, 2, 0]));
    }

    #[test]
    fn a_k_past_the_axis_is_an_error_naming_the_node_k_and_the_bound() {
        let err = op()
            .eval(
                &EvalContext::out_of_plan(),
                tvec![
                    tensor1(&[2f32, 7.]).into_tvalue(),
                    tensor1(&[3i64]).into_tvalue()
                ],
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "TopK node 't': k is 3, out of range [0, 2] (the axis's length)"
        );
    }
}

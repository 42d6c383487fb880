//! ONNX `ReverseSequence` (opset 10), which tract 0.23.9 does not implement, and [`Reverse`],
//! the typed op that runs it and whole-axis reverses.
//!
//! tf2onnx writes every bidirectional Keras layer's backward half, and every `go_backwards`
//! layer, with `ReverseSequence` (the time steps of each batch entry reversed up to its length,
//! the padding after it in place). Contract: docs/contract.md, "ReverseSequence (tract
//! override)".

use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::run_symbols::row_lengths;

/// The builder registered for `ReverseSequence`.
pub(crate) fn reverse_sequence(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let batch_axis = node.get_attr_opt::<i64>("batch_axis")?.unwrap_or(1);
    let time_axis = node.get_attr_opt::<i64>("time_axis")?.unwrap_or(0);
    let name = &node.name;
    ensure!(
        (batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0),
        "ReverseSequence node '{name}': batch_axis {batch_axis} and time_axis {time_axis}; expected 0 and 1 in either order"
    );
    Ok((
        expand(ReverseSequence {
            node: name.clone(),
            time_axis: time_axis as usize,
        }),
        vec![],
    ))
}

/// `ReverseSequence` before typing.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct ReverseSequence {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// 0 or 1; the batch axis is the other.
    pub(crate) time_axis: usize,
}

impl ReverseSequence {
    fn batch_axis(&self) -> usize {
        1 - self.time_axis
    }
}

impl Expansion for ReverseSequence {
    fn name(&self) -> StaticName {
        "ReverseSequence".into()
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 2)?;
        check_output_arity(outputs, 1)?;
        s.equals(&outputs[0].datum_type, &inputs[0].datum_type)?;
        s.equals(&outputs[0].shape, &inputs[0].shape)?;
        s.equals(&inputs[1].rank, 1)?;
        s.equals(&inputs[1].shape[0], &inputs[0].shape[self.batch_axis()])?;
        Ok(())
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let data = model.outlet_fact(inputs[0])?.clone();
        let lens = model.outlet_fact(inputs[1])?.clone();
        let node = &self.node;
        ensure!(
            data.rank() >= 2,
            "ReverseSequence node '{node}': input has rank {}, expected at least 2",
            data.rank()
        );
        ensure!(
            lens.datum_type.is_integer() || lens.datum_type == TDim::datum_type(),
            "ReverseSequence node '{node}': sequence_lens is {:?}, expected int64",
            lens.datum_type
        );
        let time = &data.shape[self.time_axis];
        let whole = match &lens.konst {
            Some(k) => {
                let k = k.cast_to::<TDim>()?;
                let values = k.try_as_plain_ram()?;
                values.as_slice::<TDim>()?.iter().all(|l| l == time)
            }
            None => false,
        };
        let op = Reverse {
            node: node.clone(),
            axis: self.time_axis,
            batch_axis: (!whole).then_some(self.batch_axis()),
        };
        let wires: &[OutletId] = if whole { &inputs[..1] } else { inputs };
        model.wire_node(prefix, op, wires)
    }
}

/// Reverses `axis`; with `batch_axis`, only the first `lengths[b]` steps of
/// each entry `b` of it (input 1 holds the lengths), as `ReverseSequence`.
/// `axis` and `batch_axis` are adjacent (0 and 1 in `ReverseSequence`).
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct Reverse {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// The axis reversed (ReverseSequence's `time_axis`).
    pub(crate) axis: usize,
    /// ReverseSequence's `batch_axis`, whose entries have their own
    /// lengths; `None`: the whole of `axis` is reversed and the op has one
    /// input.
    pub(crate) batch_axis: Option<usize>,
}

impl Reverse {
    /// The lengths of input 1, checked against the time dim `time`.
    fn lengths(
        &self,
        lens: &TValue,
        time: usize,
        symbols: &SymbolValues,
    ) -> TractResult<Vec<usize>> {
        let node = &self.node;
        row_lengths(
            &format!("ReverseSequence node '{node}'"),
            lens,
            symbols,
            time,
            "the time dim",
        )
    }

    fn reversed<T: Datum + Clone>(
        input: &Tensor,
        outer: usize,
        time: usize,
        inner: usize,
        length: &dyn Fn(usize, usize) -> usize,
    ) -> TractResult<Tensor> {
        let mut output = input.clone();
        let src = input.try_as_plain_ram()?;
        let src = src.as_slice::<T>()?;
        let mut dst = output.try_as_plain_ram_mut()?;
        let dst = dst.as_slice_mut::<T>()?;
        // Elements (o, t, i): o over the axes before `axis`, i after it.
        for o in 0..outer {
            for i in 0..inner {
                for t in 0..time {
                    let len = length(o, i);
                    if t >= len {
                        break;
                    }
                    let to = (o * time + t) * inner + i;
                    let from = (o * time + (len - 1 - t)) * inner + i;
                    dst[to] = src[from].clone();
                }
            }
        }
        Ok(output)
    }
}

impl Op for Reverse {
    fn name(&self) -> StaticName {
        "Reverse".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![match self.batch_axis {
            Some(b) => format!("axis {}, lengths along axis {b}", self.axis),
            None => format!("axis {}", self.axis),
        }])
    }

    op_as_typed_op!();
}

impl EvalOp for Reverse {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = &inputs[0];
        let shape = input.shape();
        let node = &self.node;
        ensure!(
            self.axis < shape.len(),
            "ReverseSequence node '{node}': axis {} of an input of rank {}",
            self.axis,
            shape.len()
        );
        let outer: usize = shape[..self.axis].iter().product();
        let time = shape[self.axis];
        let inner: usize = shape[self.axis + 1..].iter().product();
        let output = match self.batch_axis {
            None => {
                let length = |_: usize, _: usize| time;
                dispatch_datum!(Self::reversed(input.datum_type())(
                    input, outer, time, inner, &length
                ))?
            }
            Some(batch_axis) => {
                let lens = inputs
                    .get(1)
                    .context("ReverseSequence: no sequence_lens input")?;
                let batch = shape[batch_axis];
                ensure!(
                    lens.len() == batch,
                    "ReverseSequence node '{node}': sequence_lens has {} values for a batch of {batch}",
                    lens.len()
                );
                let lengths = self.lengths(lens, time, ctx.symbols)?;
                // The batch index of element (o, t, i): batch before time
                // is the last axis of o, after it the first of i.
                let after: usize = shape[batch_axis + 1..].iter().product();
                let before_time = batch_axis < self.axis;
                let length = |o: usize, i: usize| {
                    let b = if before_time {
                        o % batch
                    } else {
                        i / after.max(1) % batch
                    };
                    lengths[b]
                };
                dispatch_datum!(Self::reversed(input.datum_type())(
                    input, outer, time, inner, &length
                ))?
            }
        };
        Ok(tvec!(output.into_tvalue()))
    }
}

impl TypedOp for Reverse {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reverse(time_axis: usize, whole: bool) -> Reverse {
        Reverse {
            node: "r".into(),
            axis: time_axis,
            batch_axis: (!whole).then_some(1 - time_axis),
        }
    }

    fn run(op: &Reverse, input: Tensor, lens: &[i64]) -> TractResult<Tensor> {
        let mut inputs = tvec![input.into_tvalue()];
        if op.batch_axis.is_some() {
            inputs.push(tensor1(lens).into_tvalue());
        }
        Ok(op
            .eval(&EvalContext::out_of_plan(), inputs)?
            .remove(0)
            .into_tensor())
    }

    #[test]
    fn time_major_entries_reverse_up_to_their_length() {
        // [time 4, batch 2, 1]: batch 0 has length 3, batch 1 length 4.
        let x = tensor3(&[[[0i32], [10]], [[1], [11]], [[2], [12]], [[3], [13]]]);
        let y = run(&reverse(0, false), x, &[3, 4]).unwrap();
        assert_eq!(
            y,
            tensor3(&[[[2i32], [13]], [[1], [12]], [[0], [11]], [[3], [10]]])
        );
    }

    #[test]
    fn batch_major_entries_reverse_up_to_their_length() {
        // [batch 2, time 3]: lengths 0 and 2.
        let strings = |rows: [[&str; 3]; 2]| tensor2(&rows.map(|r| r.map(String::from)));
        let x = strings([["a", "b", "c"], ["d", "e", "f"]]);
        let y = run(&reverse(1, false), x, &[0, 2]).unwrap();
        let want = strings([["a", "b", "c"], ["e", "d", "f"]]);
        assert_eq!(y, want);
    }

    #[test]
    fn a_whole_axis_reverse_needs_no_lengths() {
        let x = tensor2(&[[1f32, 2., 3.], [4., 5., 6.]]);
        let y = run(&reverse(1, true), x, &[]).unwrap();
        assert_eq!(y, tensor2(&[[3f32, 2., 1.], [6., 5., 4.]]));
    }

    #[test]
    fn a_length_past_the_time_dim_names_the_node_the_entry_and_the_bound() {
        let x = tensor2(&[[1f32, 2.], [3., 4.]]);
        let err = run(&reverse(0, false), x.clone(), &[1, 3]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ReverseSequence node 'r': sequence_lens[1] is 3, out of range [0, 2] (the time dim)"
        );
        let err = run(&reverse(0, false), x, &[-1, 1]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ReverseSequence node 'r': sequence_lens[0] is -1, out of range [0, 2] (the time dim)"
        );
    }
}

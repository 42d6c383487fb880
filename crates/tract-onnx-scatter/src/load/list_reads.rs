//! Reads of a list a `Loop` built, from the scan output that holds it
//! ([`super::loop_lists`]): its elements of shape `s` (rank `r`) stacked on
//! a new first axis, `[n, s...]`.
//!
//! [`ConcatFromStack`] is `ConcatFromSequence`. ONNX's attributes keep their meaning:
//! with `new_axis = 1` the elements are stacked on a new axis at `axis`
//! (in `[-r-1, r]`), which moves the first axis there; with `new_axis = 0`
//! (the default) they are concatenated along `axis` (in `[-r, r-1]`),
//! which moves the first axis before it and merges the two.

use tract_core::ops::change_axes::AxisOp;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

/// The builder registered for [`super::loop_lists::LENGTH_OF_STACK`]:
/// `SequenceLength`, the stacked values' first dim, read when the model
/// runs (a `Shape` of it would fold to the loop's symbol, which nothing
/// binds when the length is all the model reads).
pub(crate) fn length_of_stack(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    Ok((
        expand(LengthOfStack {
            node: node.name.clone(),
        }),
        vec![],
    ))
}

/// `SequenceLength` of a stacked list: an int64 scalar.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct LengthOfStack {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
}

impl Expansion for LengthOfStack {
    fn name(&self) -> StaticName {
        "SequenceLength".into()
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 1)?;
        check_output_arity(outputs, 1)?;
        s.equals(&outputs[0].datum_type, i64::datum_type())?;
        s.equals(&outputs[0].rank, 0)
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        ensure!(
            model.outlet_fact(inputs[0])?.rank() > 0,
            "SequenceLength node '{}': the stacked list has no first axis",
            self.node
        );
        model.wire_node(prefix, StackLength, inputs)
    }
}

/// The length of its input's first axis, as an int64 scalar, read when the
/// model runs.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct StackLength;

impl Op for StackLength {
    fn name(&self) -> StaticName {
        "StackLength".into()
    }

    op_as_typed_op!();
}

impl EvalOp for StackLength {
    fn eval_out_of_plan(&self, _inputs: TVec<TValue>) -> TractResult<Option<TVec<TValue>>> {
        Ok(None)
    }

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let n = inputs[0].shape().first().copied().unwrap_or(0);
        let n = i64::try_from(n).context("StackLength: a length past i64")?;
        Ok(tvec!(tensor0(n).into_tvalue()))
    }
}

impl TypedOp for StackLength {
    as_op!();

    fn output_facts(&self, _inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(i64::scalar_fact()))
    }
}

/// The builder registered for [`super::loop_lists::CONCAT_FROM_STACK`].
pub(crate) fn concat_from_stack(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let axis: i64 = node.get_attr("axis")?;
    let new_axis = node.get_attr_opt::<i64>("new_axis")?.unwrap_or(0);
    ensure!(
        new_axis == 0 || new_axis == 1,
        "ConcatFromSequence node '{}': new_axis is {new_axis}, expected 0 or 1",
        node.name
    );
    Ok((
        expand(ConcatFromStack {
            node: node.name.clone(),
            axis,
            new_axis: new_axis == 1,
        }),
        vec![],
    ))
}

/// See the module documentation.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct ConcatFromStack {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// ONNX's `axis` as given, possibly negative: in `[-r, r - 1]` for
    /// elements of rank `r`, `[-r - 1, r]` with `new_axis`.
    pub(crate) axis: i64,
    /// ONNX's `new_axis = 1`: the elements are stacked along a new axis
    /// rather than concatenated along an existing one.
    pub(crate) new_axis: bool,
}

impl ConcatFromStack {
    /// Where the stacked axis goes, for elements of rank `r`.
    fn target(&self, r: usize) -> TractResult<usize> {
        let r = r as i64;
        let (low, high) = if self.new_axis {
            (-r - 1, r)
        } else {
            (-r, r - 1)
        };
        ensure!(
            (low..=high).contains(&self.axis),
            "ConcatFromSequence node '{}': axis {} out of range [{low}, {high}] for elements of rank {r}{}",
            self.node,
            self.axis,
            if self.new_axis {
                " with new_axis = 1"
            } else {
                ""
            }
        );
        let span = if self.new_axis { r + 1 } else { r };
        Ok(if self.axis < 0 {
            self.axis + span
        } else {
            self.axis
        } as usize)
    }

    /// The output shape for the stacked input's `dims`.
    fn output_dims(&self, dims: &[TDim]) -> TractResult<TVec<TDim>> {
        ensure!(
            !dims.is_empty(),
            "ConcatFromSequence node '{}': the stacked list has no first axis",
            self.node
        );
        let r = dims.len() - 1;
        let a = self.target(r)?;
        let mut out: TVec<TDim> = dims[1..].into();
        if self.new_axis {
            out.insert(a, dims[0].clone());
        } else {
            ensure!(
                r > 0,
                "ConcatFromSequence node '{}': elements of rank 0 cannot be concatenated (new_axis = 0)",
                self.node
            );
            out[a] = dims[0].clone() * &dims[a + 1];
        }
        Ok(out)
    }
}

impl Expansion for ConcatFromStack {
    fn name(&self) -> StaticName {
        "ConcatFromSequence".into()
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 1)?;
        check_output_arity(outputs, 1)?;
        s.equals(&outputs[0].datum_type, &inputs[0].datum_type)?;
        let drop = if self.new_axis { 0 } else { 1 };
        s.equals(&outputs[0].rank, inputs[0].rank.bex() - drop)?;
        s.given(&inputs[0].shape, move |s, dims| {
            s.equals(
                &outputs[0].shape,
                ShapeFactoid::from(self.output_dims(&dims)?),
            )
        })
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let dims = model.outlet_fact(inputs[0])?.shape.to_tvec();
        self.output_dims(&dims)?;
        let a = self.target(dims.len() - 1)?;
        let mut wire = inputs[0];
        if a != 0 {
            wire = model.wire_node(format!("{prefix}.move"), AxisOp::Move(0, a), &[wire])?[0];
        }
        if !self.new_axis {
            let (n, d) = (dims[0].clone(), dims[a + 1].clone());
            let merged = n.clone() * &d;
            let op = AxisOp::Reshape(a, tvec![n, d], tvec![merged]);
            wire = model.wire_node(format!("{prefix}.merge"), op, &[wire])?[0];
        }
        // new_axis = 1 at axis 0: the stacked values as they are.
        Ok(tvec![wire])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(axis: i64, new_axis: bool) -> ConcatFromStack {
        ConcatFromStack {
            node: "c".into(),
            axis,
            new_axis,
        }
    }

    fn dims(d: &[i64]) -> TVec<TDim> {
        d.iter().map(|&v| v.to_dim()).collect()
    }

    #[test]
    fn stacking_on_a_new_axis_moves_the_first_axis_there() {
        assert_eq!(
            op(1, true).output_dims(&dims(&[5, 2, 6])).unwrap(),
            dims(&[2, 5, 6])
        );
        assert_eq!(
            op(-1, true).output_dims(&dims(&[5, 2, 6])).unwrap(),
            dims(&[2, 6, 5])
        );
        assert_eq!(
            op(0, true).output_dims(&dims(&[5, 2, 6])).unwrap(),
            dims(&[5, 2, 6])
        );
    }

    #[test]
    fn concatenating_merges_the_first_axis_into_the_axis() {
        assert_eq!(
            op(0, false).output_dims(&dims(&[5, 1, 2, 6])).unwrap(),
            dims(&[5, 2, 6])
        );
        assert_eq!(
            op(1, false).output_dims(&dims(&[5, 2, 1])).unwrap(),
            dims(&[2, 5])
        );
        assert_eq!(
            op(-1, false).output_dims(&dims(&[5, 2, 3])).unwrap(),
            dims(&[2, 15])
        );
    }

    #[test]
    fn an_axis_out_of_range_names_the_node_and_the_range() {
        let err = op(3, true).output_dims(&dims(&[5, 2, 6])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ConcatFromSequence node 'c': axis 3 out of range [-3, 2] for elements of rank 2 with new_axis = 1"
        );
        let err = op(-3, false).output_dims(&dims(&[5, 2, 6])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "ConcatFromSequence node 'c': axis -3 out of range [-2, 1] for elements of rank 2"
        );
    }
}

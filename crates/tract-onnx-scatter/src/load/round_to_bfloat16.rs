//! The [`RoundToBfloat16`] op the loader puts wherever a float32 value must become a bfloat16
//! value (`super::bfloat16`): after a bfloat16 graph input, a cast to bfloat16, a node
//! computing bfloat16. Each value is rounded to the nearest bfloat16 value, ties to even
//! ([`Bfloat16InFloat32::round`]); a tensor known to hold bfloat16 values is handed on unread.
//! Contract: docs/contract.md, "bfloat16" (the caller's bfloat16 inputs and what each costs).

use scatter_kernels::Bfloat16InFloat32;
use scatter_kernels::mechanisms::Mechanism;
use tract_hir::internal::*;
use tract_linalg::multithread::par_chunks_mut;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::ops::run::fresh_buffer::Unwritten;
use crate::ops::run::known_bfloat16;

/// The builder registered for [`super::bfloat16::ROUND_TO_BFLOAT16`].
pub(crate) fn round_to_bfloat16_builder(
    _ctx: &ParsingContext,
    _node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    Ok((expand(Rounding), vec![]))
}

/// The inference form of [`RoundToBfloat16`]: one float32 input, an output
/// of its type and shape.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
struct Rounding;

impl Expansion for Rounding {
    fn name(&self) -> StaticName {
        super::bfloat16::ROUND_TO_BFLOAT16.into()
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        known_bfloat16::float32_in_float32_out(s, inputs, outputs)
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        model.wire_node(prefix, RoundToBfloat16, inputs)
    }
}

/// Each float32 value rounded to the nearest bfloat16 value, ties to even
/// (`half::bf16::from_f32`'s rounding). What a call pays depends on the value and on who
/// holds it:
///
/// | the input | what the op does | cost |
/// |---|---|---|
/// | known to hold bfloat16 values (`crate::ops::run::known_bfloat16`: the plugin's own bfloat16 output fed back, a shared tensor checked before) | hands it on | none |
/// | exclusively owned | rounds it in place | one read, one write |
/// | shared, holding bfloat16 values | reads it, hands it on, and remembers it as known | one read, the first time |
/// | shared, holding a value that is no bfloat16 | rounds it into a new tensor | one read, one write (and the read up to the first such value) |
///
/// With the `bfloat16_check` mechanism off
/// ([`scatter_kernels::mechanisms::Mechanism::Bfloat16Check`]) no value is known and none is
/// checked: every value is rounded whole, a shared one copied first and rounded in the copy,
/// as before the check existed.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct RoundToBfloat16;

impl Op for RoundToBfloat16 {
    fn name(&self) -> StaticName {
        super::bfloat16::ROUND_TO_BFLOAT16.into()
    }

    op_as_typed_op!();
}

impl EvalOp for RoundToBfloat16 {
    op_out_of_plan!();

    fn forwards_input(&self) -> Option<usize> {
        Some(0)
    }

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let value = args_1!(inputs);
        ensure!(
            value.datum_type() == f32::datum_type(),
            "{}: input of type {:?}, expected F32 (bfloat16 read as float32)",
            self.name(),
            value.datum_type()
        );
        let check = Mechanism::Bfloat16Check.is_on();
        if check && known_bfloat16::is_known(&value) {
            return Ok(tvec!(value));
        }
        if value.is_exclusive() || !check {
            // Owned: rounded in its own buffer. Shared with the check
            // off: `into_tensor` copies it first.
            let mut owned = value.into_tensor();
            round_in_place(&mut owned)?;
            return Ok(tvec!(owned.into_tvalue()));
        }
        let rounded = {
            let plain = value.try_as_plain_ram()?;
            let values = plain.as_slice::<f32>()?;
            if Bfloat16InFloat32::all_rounded(values) {
                None
            } else {
                let fresh = Unwritten::fresh(f32::datum_type(), value.shape())?;
                Some(fresh.fill::<f32>(|dst| Ok(Bfloat16InFloat32::round_into(values, dst)))?)
            }
        };
        match rounded {
            Some(rounded) => Ok(tvec!(rounded.into_tvalue())),
            None => {
                // Someone else holds it (the caller keeps it): the same
                // tensor passed again is not read again.
                known_bfloat16::mark(&value);
                Ok(tvec!(value))
            }
        }
    }
}

/// Every value of `t` rounded in place, in chunks on tract's executor.
fn round_in_place(t: &mut Tensor) -> TractResult<()> {
    let mut plain = t.try_as_plain_ram_mut()?;
    let values = plain.as_slice_mut::<f32>()?;
    let len = values.len();
    par_chunks_mut(values, 1, len, |_, chunk| {
        Bfloat16InFloat32::round_in_place(chunk);
        Ok(())
    })
}

impl TypedOp for RoundToBfloat16 {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        Ok(tvec!(inputs[0].without_value()))
    }

    fn axes_mapping(
        &self,
        inputs: &[&TypedFact],
        outputs: &[&TypedFact],
    ) -> TractResult<AxesMapping> {
        AxesMapping::natural(inputs, outputs)
    }

    fn change_axes(
        &self,
        model: &TypedModel,
        node: &TypedNode,
        _io: InOut,
        change: &AxisOp,
    ) -> TractResult<Option<AxisChangeConsequence>> {
        Ok(Some(AxisChangeConsequence::new(model, node, None, change)))
    }

    fn slice(
        &self,
        patch: &mut TypedModelPatch,
        _model: &TypedModel,
        node: &TypedNode,
        _prefix: &str,
        inputs: &[OutletId],
        _output_axis: usize,
        _start: &TDim,
        _end: &TDim,
    ) -> TractResult<Option<TVec<OutletId>>> {
        patch.wire_node(&node.name, &node.op, inputs).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(value: TValue) -> TValue {
        let mut out = RoundToBfloat16
            .eval(&EvalContext::out_of_plan(), tvec!(value))
            .unwrap();
        out.remove(0)
    }

    fn bits(t: &Tensor) -> Vec<u32> {
        t.try_as_plain_ram()
            .unwrap()
            .as_slice::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect()
    }

    #[test]
    fn rounding_ties_to_even() {
        let out = run(tensor1(&[1.0f32 + 1.0 / 256.0, 1.0 + 3.0 / 256.0, -0.0]).into_tvalue());
        assert_eq!(
            out.try_as_plain_ram().unwrap().as_slice::<f32>().unwrap(),
            &[1.0, 1.0 + 4.0 / 256.0, -0.0]
        );
    }

    #[test]
    fn a_shared_value_that_is_no_bfloat16_is_rounded_into_a_copy_and_left_as_it_was() {
        let kept = tensor1(&[1.0f32 + 1.0 / 256.0, 2.5]).into_tvalue();
        let before = bits(&kept);
        let out = run(kept.clone());
        assert_eq!(bits(&kept), before);
        assert_eq!(
            out.try_as_plain_ram().unwrap().as_slice::<f32>().unwrap(),
            &[1.0, 2.5]
        );
        assert!(!known_bfloat16::is_known(&kept));
    }

    #[test]
    fn a_shared_value_of_bfloat16_values_is_handed_on_and_known_from_then_on() {
        let kept = tensor1(&[1.0f32, 2.5]).into_tvalue();
        let out = run(kept.clone());
        assert!(
            std::sync::Arc::ptr_eq(out.as_arc_tensor().unwrap(), kept.as_arc_tensor().unwrap()),
            "handed on, not copied"
        );
        assert!(known_bfloat16::is_known(&kept));
    }

    #[test]
    fn an_owned_value_is_rounded_in_its_own_buffer() {
        let t = tensor1(&[1.0f32 + 1.0 / 256.0, 2.5]);
        let address = t
            .try_as_plain_ram()
            .unwrap()
            .as_slice::<f32>()
            .unwrap()
            .as_ptr();
        let out = run(t.into_tvalue());
        let plain = out.try_as_plain_ram().unwrap();
        let values = plain.as_slice::<f32>().unwrap();
        assert_eq!(values, &[1.0, 2.5]);
        assert_eq!(values.as_ptr(), address);
    }

    #[test]
    fn a_value_of_another_type_is_an_error_naming_the_op() {
        let err = RoundToBfloat16
            .eval(
                &EvalContext::out_of_plan(),
                tvec!(tensor1(&[1i64]).into_tvalue()),
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "RoundToBfloat16: input of type I64, expected F32 (bfloat16 read as float32)"
        );
    }
}

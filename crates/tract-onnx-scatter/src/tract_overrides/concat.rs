//! ONNX `Concat` of symbolic dims (TDim) with large int64 constants.
//!
//! tract 0.23.9 casts numbers to TDim through i32 (`Tensor::cast_to_dt`),
//! so any int64 outside the i32 range wraps: `INT64_MAX`, the "to the end"
//! bound every exporter writes in `Slice` ends, becomes -1. Exporters build
//! such ends with `Concat(Shape-derived dims, INT64_MAX)`, which tract types
//! as TDim: the slice then stops one short of the end. Piper's VITS voices
//! (`x[:, :, :length, length - 1:]` in relative attention) fail this way,
//! "Can not broadcast 13 against 12". Here `Concat` keeps tract's rules and
//! converts integer inputs to TDim without wrapping ([`IntegerToTDim`])
//! where tract's cast could wrap (a constant outside the i32 range, or an
//! integer only the run knows); everywhere else it is exactly tract's
//! Concat. Upstream, the fix is to cast integers to TDim through i64 in
//! `Tensor::cast_to_dt`.

use tract_core::ops::array::TypedConcat;
use tract_core::ops::cast::wire_cast;
use tract_hir::internal::*;
use tract_hir::ops::array::Concat;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

/// The builder registered for `Concat`.
pub(crate) fn concat(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let axis: i64 = node.get_attr("axis")?;
    Ok((
        expand(ExactConcat {
            axis,
            stock: Concat::new(axis),
        }),
        vec![],
    ))
}

/// `Concat` with tract's rules and an exact int-to-TDim promotion.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct ExactConcat {
    axis: i64,
    /// tract's Concat, whose rules are used as they are.
    stock: Concat,
}

impl Expansion for ExactConcat {
    fn name(&self) -> StaticName {
        "InferenceConcat".into()
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        self.stock.rules(s, inputs, outputs)
    }

    fn wire(
        &self,
        prefix: &str,
        target: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        ensure!(
            !inputs.is_empty(),
            "Concat node '{prefix}': needs at least one input"
        );
        let facts: TVec<TypedFact> = inputs
            .iter()
            .map(|i| target.outlet_fact(*i).cloned())
            .collect::<TractResult<_>>()?;
        let super_type = DatumType::super_type_for(facts.iter().map(|f| f.datum_type))
            .with_context(|| {
                format!(
                    "Concat node '{prefix}': no common type for {:?}",
                    facts.iter().map(|f| f.datum_type).collect::<Vec<_>>()
                )
            })?;
        let mut exact = false;
        for fact in &facts {
            exact |= super_type == DatumType::TDim && cast_may_wrap(fact)?;
        }
        if !exact {
            // tract's i32 cast is exact here: exactly the plan stock builds.
            return self.stock.wire(prefix, target, inputs);
        }
        let rank = facts[0].rank() as i64;
        let axis = if (0..rank).contains(&self.axis) {
            self.axis as usize
        } else if (-rank..0).contains(&self.axis) {
            (self.axis + rank) as usize
        } else {
            bail!(
                "Concat node '{prefix}': axis {} out of range [-{rank}, {}]",
                self.axis,
                rank - 1
            )
        };
        let mut wires = tvec![];
        for (ix, (&input, fact)) in inputs.iter().zip(&facts).enumerate() {
            let wire = if super_type == DatumType::TDim && fact.datum_type.is_integer() {
                target.wire_node(format!("{prefix}.exact_tdim.{ix}"), IntegerToTDim, &[input])?[0]
            } else {
                wire_cast(prefix, target, &[input], super_type)?[0]
            };
            wires.push(wire);
        }
        target.wire_node(prefix, TypedConcat::new(axis), &wires)
    }
}

/// Integers to TDim without wrapping: values in the i32 range as they are,
/// values beyond it saturated to ±(2^31 - 1). Beyond that range an integer
/// meeting a dim is a bound meaning "to the end" (INT64_MAX, INT64_MIN in
/// Slice), which saturation keeps for every dim under 2^31 elements, while
/// the exact value would overflow tract's symbolic arithmetic (`end - start`
/// on a symbolic dim panics in debug builds, wraps in release).
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct IntegerToTDim;

impl Op for IntegerToTDim {
    fn name(&self) -> StaticName {
        "IntegerToTDim".into()
    }

    op_as_typed_op!();
}

impl EvalOp for IntegerToTDim {
    op_out_of_plan!();

    fn eval(&self, _ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let input = args_1!(inputs);
        let values: Vec<TDim> = if input.datum_type() == DatumType::U64 {
            input
                .try_as_plain_ram()?
                .as_slice::<u64>()?
                .iter()
                .map(|&v| saturated(i64::try_from(v).unwrap_or(i64::MAX)))
                .collect()
        } else {
            let ints = input.cast_to::<i64>()?;
            ints.try_as_plain_ram()?
                .as_slice::<i64>()?
                .iter()
                .map(|&v| saturated(v))
                .collect()
        };
        let array = tract_ndarray::ArrayD::from_shape_vec(input.shape(), values)?;
        Ok(tvec!(Tensor::from(array).into_tvalue()))
    }
}

/// Whether tract's cast of `fact` to TDim (through i32) may wrap: an
/// integer input not known at load, or a constant outside the i32 range.
fn cast_may_wrap(fact: &TypedFact) -> TractResult<bool> {
    if !fact.datum_type.is_integer() {
        return Ok(false);
    }
    let Some(konst) = &fact.konst else {
        return Ok(true);
    };
    if konst.datum_type() == DatumType::U64 {
        let values = konst.try_as_plain_ram()?;
        return Ok(values
            .as_slice::<u64>()?
            .iter()
            .any(|&v| v > i32::MAX as u64));
    }
    let values = konst.cast_to::<i64>()?;
    Ok(values
        .try_as_plain_ram()?
        .as_slice::<i64>()?
        .iter()
        .any(|&v| i32::try_from(v).is_err()))
}

fn saturated(v: i64) -> TDim {
    TDim::Val(v.clamp(-(i32::MAX as i64), i32::MAX as i64))
}

impl TypedOp for IntegerToTDim {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(
            inputs[0].datum_type.is_integer(),
            "IntegerToTDim takes integers, got {:?}",
            inputs[0].datum_type
        );
        Ok(tvec!(TDim::datum_type().fact(inputs[0].shape.clone())))
    }
}

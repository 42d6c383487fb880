//! ONNX `Reshape` whose volume tract cannot prove at load.
//!
//! tract's `Reshape` proves at load that input and output have the same
//! number of elements, and fails when it cannot: jax2onnx filters
//! out-of-range scatter indices with `NonZero` and then reshapes the updates
//! to `[num_valid, window]` (a volume only the run decides), and Piper's
//! VITS voices reshape tensors whose dims tract leaves as unsimplified
//! expressions. Here:
//! - where tract's rules give the output shape and its axis ops can be
//!   built, the result is exactly tract's (same facts, same axis ops);
//! - otherwise the output keeps the shape the target gives (its explicit
//!   dims, data-dependent symbols included, a fresh symbol where only the
//!   run can say), and [`RuntimeReshape`] checks the volume when it runs,
//!   failing with the node, both shapes and both element counts.

use tract_core::ops::change_axes::{compute_shape_with_onnx_rules, to_axis_ops_with_onnx_rules};
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::retyped::MAX_RANK;
use super::run_symbols::{binders, run_values};

/// The builder registered for `Reshape`.
pub(crate) fn reshape(
    _ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    // allowzero exists from opset 14; absent, it is 0.
    let allowzero = node.get_attr_opt::<i64>("allowzero")?.unwrap_or(0) != 0;
    Ok((
        expand(InferReshape {
            node: node.name.clone(),
            allowzero,
        }),
        vec![],
    ))
}

/// The output shape the target spec gives without proving the volume:
/// explicit dims as they are, 0 copied from the input (unless
/// `allowzero`), -1 divided out when the division is exact, else `None`
/// where only the run can tell.
fn shape_without_proof(input: &[TDim], spec: &[TDim], allowzero: bool) -> TVec<Option<TDim>> {
    let mut shape: TVec<Option<TDim>> = spec
        .iter()
        .enumerate()
        .map(|(i, d)| match d.as_i64() {
            Some(0) if !allowzero => input.get(i).cloned(),
            Some(-1) => None,
            Some(v) if v < 0 => None,
            _ => Some(d.clone()),
        })
        .collect();
    let minus_one = spec.iter().position(|d| d.as_i64() == Some(-1));
    if let Some(pos) = minus_one {
        let known: Option<TVec<TDim>> = shape
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != pos)
            .map(|(_, d)| d.clone())
            .collect();
        if let Some(known) = known {
            let (input_vol, known_vol): (TDim, TDim) =
                (input.iter().product(), known.iter().product());
            if let Ok((quotient, 1)) = input_vol.maybe_div(&known_vol) {
                shape[pos] = Some(quotient);
            }
        }
    }
    shape
}

/// `Reshape` before typing.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct InferReshape {
    node: String,
    allowzero: bool,
}

impl Expansion for InferReshape {
    fn name(&self) -> StaticName {
        "Reshape".into()
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
        s.equals(&inputs[1].rank, 1)?;
        s.given(&inputs[1].shape[0], move |s, len| {
            if let Ok(len) = len.to_i64() {
                s.equals(&outputs[0].rank, len)?;
            }
            Ok(())
        })?;
        let allowzero = self.allowzero;
        s.given_2(&inputs[0].shape, &inputs[1].value, move |s, input, spec| {
            let spec = spec.cast_to::<TDim>()?;
            let spec = spec.try_as_plain_ram()?.as_slice::<TDim>()?.to_vec();
            match compute_shape_with_onnx_rules(&input, &spec, allowzero) {
                Ok(shape) => s.equals(&outputs[0].shape, ShapeFactoid::from(shape)),
                Err(_) => {
                    // Unproven volume: keep what the spec says, check at run time.
                    for (i, d) in shape_without_proof(&input, &spec, allowzero)
                        .into_iter()
                        .enumerate()
                    {
                        if let Some(d) = d {
                            s.equals(&outputs[0].shape[i], d)?;
                        }
                    }
                    Ok(())
                }
            }
        })
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let input_shape: TVec<TDim> = model.outlet_fact(inputs[0])?.shape.to_tvec();
        let spec = konst_dims(model.outlet_fact(inputs[1])?)?;
        if let Some(spec) = &spec {
            // tract's own reshape where it can prove it: the same plan as stock.
            if let Ok(ops) = to_axis_ops_with_onnx_rules(&input_shape, spec, self.allowzero)
                && let Ok(wire) = wire_axis_ops(prefix, model, inputs[0], ops)
            {
                return Ok(wire);
            }
        }
        let rank = match &spec {
            Some(spec) => spec.len(),
            None => model
                .outlet_fact(inputs[1])?
                .shape
                .as_concrete()
                .and_then(|s| s.first().copied())
                .context("Reshape: the target shape input must be a 1-D tensor of known length")?,
        };
        if rank > MAX_RANK {
            bail!(
                "Reshape node '{}': a target shape of {rank} dims, more than the {MAX_RANK} a reshape proved at run time may have",
                self.node
            );
        }
        let shape: TVec<TDim> = match &spec {
            Some(spec) => shape_without_proof(&input_shape, spec, self.allowzero)
                .into_iter()
                .map(|d| d.unwrap_or_else(|| model.symbols.new_with_prefix("reshape").into()))
                .collect(),
            None => (0..rank)
                .map(|_| model.symbols.new_with_prefix("reshape").into())
                .collect(),
        };
        // A constant target may hold symbols only the run binds (a NonZero
        // count): the nodes that bind them must run first, so they become
        // extra inputs (read for their order, not their values).
        let mut wires = tvec![inputs[0], inputs[1]];
        wires.extend(binders(model, &[inputs[1]])?);
        model.wire_node(
            prefix,
            RuntimeReshape {
                node: self.node.clone(),
                allowzero: self.allowzero,
                shape,
            },
            &wires,
        )
    }
}

/// The value of a constant target shape, as dims.
fn konst_dims(fact: &TypedFact) -> TractResult<Option<Vec<TDim>>> {
    fact.konst
        .as_ref()
        .map(|k| {
            Ok(k.cast_to::<TDim>()?
                .try_as_plain_ram()?
                .as_slice::<TDim>()?
                .to_vec())
        })
        .transpose()
}

fn wire_axis_ops(
    prefix: &str,
    model: &mut TypedModel,
    input: OutletId,
    ops: TVec<AxisOp>,
) -> TractResult<TVec<OutletId>> {
    let mut wire = tvec!(input);
    for (ix, op) in ops.into_iter().enumerate() {
        wire = model.wire_node(format!("{prefix}.{ix}"), op, &wire)?;
    }
    Ok(wire)
}

/// A reshape whose volume is checked when it runs. `shape` is the output
/// fact (symbols where only the run can tell); the target comes from the
/// second input (int64, or symbolic dims evaluated with the run's symbols),
/// with ONNX's rules for 0 and -1. Further inputs only order the op after
/// the nodes that bind those symbols.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct RuntimeReshape {
    /// The ONNX node's name, for errors.
    pub(crate) node: String,
    /// ONNX's `allowzero` (opset 14; absent, false): a 0 in the target is
    /// a dim of 0, not a copy of the input's dim.
    pub(crate) allowzero: bool,
    /// The output fact's dims.
    pub(crate) shape: TVec<TDim>,
}

impl RuntimeReshape {
    /// The output dims for `input` and the target `spec`, or why not.
    pub(crate) fn target(&self, input: &[usize], spec: &[i64]) -> TractResult<TVec<usize>> {
        let fail = |why: String| {
            format_err!(
                "Reshape node '{}': input of shape {input:?} cannot be reshaped to {spec:?}: {why}",
                self.node
            )
        };
        let volume: usize = input.iter().product();
        let mut dims: TVec<usize> = tvec![];
        let mut infer = None;
        for (i, &d) in spec.iter().enumerate() {
            match d {
                -1 if infer.is_none() => {
                    infer = Some(i);
                    dims.push(1);
                }
                -1 => return Err(fail("more than one dimension is -1".into())),
                0 if self.allowzero => dims.push(0),
                0 => dims.push(*input.get(i).ok_or_else(|| {
                    fail(format!(
                        "0 at position {i} copies an input dimension, but the input has rank {}",
                        input.len()
                    ))
                })?),
                d if d < 0 => {
                    return Err(fail(format!(
                        "dimension {i} is {d}; only -1 may be negative"
                    )));
                }
                d => dims.push(
                    usize::try_from(d)
                        .map_err(|_| fail(format!("dimension {i} = {d} is too large")))?,
                ),
            }
        }
        let known = dims
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| fail("the target's element count overflows".into()))?;
        if let Some(pos) = infer {
            if self.allowzero && spec.contains(&0) {
                return Err(fail("with allowzero, 0 and -1 may not both appear".into()));
            }
            if known == 0 || !volume.is_multiple_of(known) {
                return Err(fail(format!(
                    "the {volume} input elements do not divide into the other dimensions' {known}"
                )));
            }
            dims[pos] = volume / known;
        } else if known != volume {
            return Err(fail(format!(
                "{volume} input elements, {known} in the target"
            )));
        }
        Ok(dims)
    }
}

impl Op for RuntimeReshape {
    fn name(&self) -> StaticName {
        "RuntimeReshape".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "to {:?}, volume checked at run time",
            self.shape
        )])
    }

    op_as_typed_op!();
}

impl EvalOp for RuntimeReshape {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, mut inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        ensure!(
            inputs.len() >= 2,
            "Reshape node '{}': expects 2 inputs",
            self.node
        );
        inputs.truncate(2);
        let (input, spec) = args_2!(inputs);
        let spec = run_values(&spec, ctx.symbols)
            .with_context(|| format!("Reshape node '{}': target shape", self.node))?;
        let dims = self.target(input.shape(), &spec)?;
        let mut output = input.into_tensor();
        // Same element count: only the shape changes, no copy.
        output.set_shape(&dims)?;
        Ok(tvec!(output.into_tvalue()))
    }
}

impl TypedOp for RuntimeReshape {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        ensure!(
            inputs.len() >= 2,
            "Reshape node '{}': expects 2 inputs",
            self.node
        );
        Ok(tvec!(inputs[0].datum_type.fact(self.shape.clone())))
    }

    /// Once the spec is a constant whose volume tract can prove (e.g. after
    /// symbols were concretized), tract's own axis ops take over.
    fn declutter(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        rule_if_some!(spec = konst_dims(model.outlet_fact(node.inputs[1])?)?);
        let input: TVec<TDim> = model.outlet_fact(node.inputs[0])?.shape.to_tvec();
        rule_if_let!(Ok(ops) = to_axis_ops_with_onnx_rules(&input, &spec, self.allowzero));
        let mut patch = TypedModelPatch::default();
        let tap = patch.tap_model(model, node.inputs[0])?;
        let wire = wire_axis_ops(&node.name, &mut patch, tap, ops)?;
        if patch.outlet_fact(wire[0])?.shape != model.outlet_fact(node.id.into())?.shape {
            return Ok(None);
        }
        patch.shunt_outside(model, node.id.into(), wire[0])?;
        Ok(Some(patch))
    }
}

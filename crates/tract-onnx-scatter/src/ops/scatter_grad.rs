//! The home of the backward-pass ops `ScatterElementsGrad` and
//! `ScatterNDGrad` (domain `tract_onnx_scatter.training`, version 1): the
//! builders and the inference-level op, and the typed op. No NNEF form, no
//! output pool.
//!
//! Inputs `(data, indices, updates, grad_output)`, outputs `(grad_data,
//! grad_updates)`; attributes `axis` (ScatterElementsGrad only),
//! `reduction`, `include_self`, `lda_coeff`. The semantics are the
//! kernels' (`scatter_kernels::scatter_elements_grad`, `scatter_nd_grad`);
//! the contract is the "Gradient ops" table in docs/contract.md.

use half::f16;
use scatter_kernels::{
    BlockSort, ElementsPlan, Execution, GradCalc, GradElement, GradSpec, GradToken, NdPlan,
    Reduction, ScatterError,
};
use tract_hir::internal::*;
use tract_onnx::model::OnnxOpRegister;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::ops::element_dispatch::{self, with_index_slice};
use crate::ops::op_home::OpHome;
use crate::ops::run::fresh_buffer::fresh_uninit;
use crate::ops::scatter_elements::ScatterElements;
use crate::ops::scatter_nd::ScatterNd;
use crate::ops::shapes::sym_dims;
use crate::parse::attributes::CheckedNode;
use crate::parse::deviation::Deviations;
use crate::parse::opset::ScatterOp;
use crate::parse::site::NodeSite;

/// Which forward op is differentiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GradKind<Axis = usize> {
    /// ScatterElements along `axis` (normalized in the typed op).
    Elements {
        /// The forward's `axis`: as written (`i64`) before typing,
        /// normalized to `[0, r - 1]` (`usize`) in the typed op.
        axis: Axis,
    },
    /// ScatterND.
    Nd,
}

/// This family as [`crate::ops::HOMES`] lists it.
pub(crate) const HOME: OpHome = OpHome {
    register_onnx,
    register_nnef: None,
    as_pooled: crate::ops::op_home::never_pooled,
};

fn register_onnx(reg: &mut OnnxOpRegister, deviations: Deviations) {
    // The training domain's ops: no opset versions, no deviations.
    let _ = deviations;
    reg.insert("ScatterElementsGrad", scatter_elements_grad);
    reg.insert("ScatterNDGrad", scatter_nd_grad);
}

/// `(grad_data, grad_updates)` of the forward scatter (`kind`, with
/// `spec`'s reduction and include_self) at `(data, indices, updates)`,
/// given `grad_output`, both multiplied by `lda_coeff`
/// ([`scatter_kernels::scatter_elements_grad`]).
///
/// Contract (checked at build time as far as the facts allow, the rest at
/// run time, always before the outputs are allocated): everything the
/// forward op checks on `(data, indices, updates)`, with the same messages;
/// data float16, float or double; grad_output of data's type and shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterGrad {
    /// The node it was built from, named by every error.
    pub(crate) site: NodeSite,
    /// The forward op differentiated, its axis normalized.
    pub(crate) kind: GradKind,
    /// The forward's reduction and `include_self`.
    pub(crate) spec: GradSpec,
    /// The factor both gradients are multiplied by.
    pub(crate) lda_coeff: LdaCoeff,
}

/// The `lda_coeff` attribute: finite (the builder refuses NaN and
/// infinities), so comparing and hashing its bits is an equivalence, and
/// the ops holding it derive both.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LdaCoeff(pub(crate) f32);

impl PartialEq for LdaCoeff {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for LdaCoeff {}

impl std::hash::Hash for LdaCoeff {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// The `info` line of a gradient op, typed or not.
pub(crate) fn info_line<A: std::fmt::Display>(
    kind: &GradKind<A>,
    spec: &GradSpec,
    lda_coeff: LdaCoeff,
) -> String {
    format!(
        "{}reduction: {} include_self: {} lda_coeff: {}",
        match kind {
            GradKind::Elements { axis } => format!("axis: {axis} "),
            GradKind::Nd => String::new(),
        },
        spec.reduction,
        spec.include_self,
        lda_coeff.0
    )
}

/// The element types with gradients, in the order messages list them.
const GRAD_TYPES: &str = "float16, float, double";

fn check_arity(site: &NodeSite, n: usize) -> TractResult<()> {
    if n != 4 {
        bail!(site.error(format!(
            "expects 4 inputs (data, indices, updates, grad_output), got {n}"
        )));
    }
    Ok(())
}

fn check_float(site: &NodeSite, dt: DatumType) -> TractResult<()> {
    if !matches!(dt, DatumType::F16 | DatumType::F32 | DatumType::F64) {
        bail!(site.error(format!(
            "type: data has element type {}, which has no gradient (supported: {GRAD_TYPES})",
            element_dispatch::onnx_type(dt)
        )));
    }
    Ok(())
}

fn check_grad_output_type(site: &NodeSite, data: DatumType, grad: DatumType) -> TractResult<()> {
    if data != grad {
        bail!(site.error(format!(
            "type: grad_output has element type {} but data has {}; they must be the same (no promotion)",
            element_dispatch::onnx_type(grad),
            element_dispatch::onnx_type(data)
        )));
    }
    Ok(())
}

impl ScatterGrad {
    /// The forward op whose checks this op repeats on (data, indices, updates).
    fn forward_facts(
        &self,
        data: &TypedFact,
        indices: &TypedFact,
        updates: &TypedFact,
    ) -> TractResult<()> {
        match self.kind {
            GradKind::Elements { axis } => {
                let forward = ScatterElements {
                    reduction: self.spec.reduction,
                    ..ScatterElements::onnx(self.site.clone(), axis, Reduction::None)
                };
                forward.output_facts(&[data, indices, updates])?;
            }
            GradKind::Nd => {
                // ScatterND has no `mean`: the kernel refuses it at run
                // time (`GradToken::grad`). Its other rules do not depend
                // on the reduction for float data, which can do them all.
                let reduction = self.spec.reduction.onnx().unwrap_or(Reduction::None);
                ScatterNd::onnx(self.site.clone(), reduction)
                    .output_facts(&[data, indices, updates])?;
            }
        }
        Ok(())
    }

    fn check_facts(
        &self,
        data: &TypedFact,
        indices: &TypedFact,
        updates: &TypedFact,
        grad_output: &TypedFact,
    ) -> TractResult<()> {
        let site = &self.site;
        check_float(site, data.datum_type)?;
        self.forward_facts(data, indices, updates)?;
        check_grad_output_type(site, data.datum_type, grad_output.datum_type)?;
        scatter_kernels::check_grad_output_shape(&sym_dims(data), &sym_dims(grad_output))
            .map_err(|e| site.scatter_error(e))?;
        Ok(())
    }

    /// Runs the kernel for `T`, writing into the freshly allocated outputs.
    #[allow(clippy::too_many_arguments)]
    fn typed<T: GradElement + Datum, K: GradToken>(
        &self,
        token: &K,
        data: &Tensor,
        updates: &Tensor,
        grad_output: &Tensor,
        lda_coeff: T,
        grad_data: &mut Tensor,
        grad_updates: &mut Tensor,
    ) -> TractResult<()> {
        let d = element_dispatch::slice::<T>(data)?;
        let u = element_dispatch::slice::<T>(updates)?;
        let g = element_dispatch::slice::<T>(grad_output)?;
        let mut gd = grad_data.try_as_plain_ram_mut()?;
        let mut gu = grad_updates.try_as_plain_ram_mut()?;
        token
            .grad(
                d,
                u,
                g,
                self.spec,
                lda_coeff,
                gd.as_slice_mut::<T>()?,
                gu.as_slice_mut::<T>()?,
            )
            .map_err(|e| self.site.scatter_error(e))
    }

    /// With `add`, `include_self` and `lda_coeff = 1`, `grad_data` is
    /// `grad_output` itself: returned as the same value, no copy (tensors
    /// are immutable, so sharing is safe), only `grad_updates` computed.
    fn passes_grad_output_through(&self) -> bool {
        self.spec.reduction == Reduction::Add && self.spec.include_self && self.lda_coeff.0 == 1.0
    }

    /// Indices are checked (`token`): allocate the outputs and fill them.
    /// The kernels write every element of both, so the outputs start
    /// uninitialized (with huge-page advice): no zeroing pass, no zeroed
    /// pages faulted in before the real writes.
    fn run<K: GradToken>(
        &self,
        token: &K,
        data: &Tensor,
        updates: &Tensor,
        grad_output: &TValue,
    ) -> TractResult<TVec<TValue>> {
        let dt = data.datum_type();
        check_float(&self.site, dt)?;
        // Safety: `typed` and `updates_only` write every element of the
        // outputs or fail, and a failure drops them unread.
        let mut gu = unsafe { fresh_uninit(dt, updates.shape())? };
        if self.passes_grad_output_through() {
            match dt {
                DatumType::F16 => self.updates_only::<f16, K>(token, grad_output, &mut gu)?,
                DatumType::F32 => self.updates_only::<f32, K>(token, grad_output, &mut gu)?,
                _ => self.updates_only::<f64, K>(token, grad_output, &mut gu)?,
            }
            return Ok(tvec!(grad_output.clone(), gu.into_tvalue()));
        }
        // Safety: `typed` writes every element of `gd` or fails, and a
        // failure drops it unread.
        let mut gd = unsafe { fresh_uninit(dt, data.shape())? };
        let lda = self.lda_coeff.0;
        match dt {
            DatumType::F16 => self.typed(
                token,
                data,
                updates,
                grad_output,
                f16::from_f32(lda),
                &mut gd,
                &mut gu,
            )?,
            DatumType::F32 => {
                self.typed(token, data, updates, grad_output, lda, &mut gd, &mut gu)?
            }
            _ => self.typed(
                token,
                data,
                updates,
                grad_output,
                lda as f64,
                &mut gd,
                &mut gu,
            )?,
        }
        Ok(tvec!(gd.into_tvalue(), gu.into_tvalue()))
    }

    /// `grad_updates` alone, `lda_coeff` being 1.
    fn updates_only<T: GradElement + Datum, K: GradToken>(
        &self,
        token: &K,
        grad_output: &Tensor,
        grad_updates: &mut Tensor,
    ) -> TractResult<()> {
        let g = element_dispatch::slice::<T>(grad_output)?;
        let mut gu = grad_updates.try_as_plain_ram_mut()?;
        token
            .grad_updates_of_add(g, T::from_calc(T::Calc::ONE), gu.as_slice_mut::<T>()?)
            .map_err(|e| self.site.scatter_error(e))
    }

    fn eval_grad(&self, inputs: TVec<TValue>, symbols: &SymbolValues) -> TractResult<TVec<TValue>> {
        let site = &self.site;
        check_arity(site, inputs.len())?;
        let (data, indices, updates, grad_output) = args_4!(inputs);
        check_float(site, data.datum_type())?;
        crate::ops::run::input_checks::check_same_type(
            site,
            data.datum_type(),
            updates.datum_type(),
        )?;
        crate::ops::run::input_checks::check_indices_type(site, "indices", indices.datum_type())?;
        check_grad_output_type(site, data.datum_type(), grad_output.datum_type())?;
        let indices =
            crate::ops::run::input_checks::plain_indices(site, "indices", &indices, symbols)?;
        let map = |e: ScatterError| site.scatter_error(e);
        match self.kind {
            GradKind::Elements { axis } => {
                let plan =
                    ElementsPlan::new(data.shape(), indices.shape(), updates.shape(), axis as i64)
                        .map_err(map)?;
                self.check_grad_output_shape(&data, &grad_output)?;
                with_index_slice!(indices, |idx| {
                    let token = plan.check_indices(idx, Execution::SERIAL).map_err(map)?;
                    self.run(&token, &data, &updates, &grad_output)
                })
            }
            GradKind::Nd => {
                let plan =
                    NdPlan::new(data.shape(), indices.shape(), updates.shape()).map_err(map)?;
                self.check_grad_output_shape(&data, &grad_output)?;
                with_index_slice!(indices, |idx| {
                    let token = plan
                        .check_indices(idx, Execution::SERIAL, BlockSort::Off)
                        .map_err(map)?;
                    self.run(&token, &data, &updates, &grad_output)
                })
            }
        }
    }

    fn check_grad_output_shape(&self, data: &Tensor, grad_output: &Tensor) -> TractResult<()> {
        scatter_kernels::check_grad_output_shape(data.shape(), grad_output.shape())
            .map_err(|e| self.site.scatter_error(e))
    }
}

impl Op for ScatterGrad {
    fn name(&self) -> StaticName {
        self.site.op.onnx_name().into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![info_line(&self.kind, &self.spec, self.lda_coeff)])
    }

    op_as_typed_op!();
}

impl EvalOp for ScatterGrad {
    op_out_of_plan!();

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        self.eval_grad(inputs, ctx.symbols)
    }
}

impl TypedOp for ScatterGrad {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        check_arity(&self.site, inputs.len())?;
        self.check_facts(inputs[0], inputs[1], inputs[2], inputs[3])?;
        let dt = inputs[0].datum_type;
        Ok(tvec!(
            dt.fact(inputs[0].shape.clone()),
            dt.fact(inputs[2].shape.clone())
        ))
    }

    fn cost(&self, inputs: &[&TypedFact]) -> TractResult<TVec<(Cost, TDim)>> {
        Ok(tvec!((
            Cost::Buffer(inputs[0].datum_type),
            inputs[0].shape.volume() + inputs[2].shape.volume()
        )))
    }
}

// The ONNX builder and the inference-level op.

/// The ONNX domain of the gradient ops.
pub(crate) const TRAINING_DOMAIN: &str = "tract_onnx_scatter.training";
/// The version of [`TRAINING_DOMAIN`] this crate implements.
pub(crate) const TRAINING_DOMAIN_VERSION: i64 = 1;

/// The `ScatterElementsGrad` builder.
pub(crate) fn scatter_elements_grad(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(ScatterOp::ScatterElementsGrad, ctx, node)
}

/// The `ScatterNDGrad` builder.
pub(crate) fn scatter_nd_grad(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(ScatterOp::ScatterNdGrad, ctx, node)
}

fn build(
    op: ScatterOp,
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    // No exporter writes these ops: no deviation is ever accepted.
    let checked = CheckedNode::new(op, ctx, node, Deviations::Refuse)?;
    let site = checked.site.clone();
    check_domain_version(&site, ctx, node)?;
    checked.expect_inputs(&["data", "indices", "updates", "grad_output"], &[])?;
    let reduction = checked.update_reduction()?;
    let include_self = match checked.int("include_self")? {
        None | Some(1) => true,
        Some(0) => false,
        Some(v) => bail!(site.error(format!("attribute 'include_self' must be 0 or 1, got {v}"))),
    };
    let lda_coeff = match checked.float("lda_coeff")? {
        None => 1.0,
        Some(v) if v.is_finite() => v,
        Some(v) => bail!(site.error(format!(
            "attribute 'lda_coeff' must be a finite float, got {v}"
        ))),
    };
    let kind = match op {
        ScatterOp::ScatterElementsGrad => GradKind::Elements {
            axis: checked.int("axis")?.unwrap_or(0),
        },
        _ => GradKind::Nd,
    };
    Ok((
        expand(InferScatterGrad {
            site,
            kind,
            spec: GradSpec {
                reduction,
                include_self,
            },
            lda_coeff: LdaCoeff(lda_coeff),
        }),
        vec![],
    ))
}

/// A node of the training domain must be read as version 1: a model that
/// imports another version of the domain is refused (the node's domain
/// decides; nodes of another domain, e.g. the default, are not checked).
fn check_domain_version(
    site: &NodeSite,
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<()> {
    if node.domain != TRAINING_DOMAIN {
        return Ok(());
    }
    let imported = ctx
        .model
        .opset_import
        .iter()
        .find(|o| o.domain == TRAINING_DOMAIN)
        .map(|o| o.version);
    match imported {
        Some(v) if v != TRAINING_DOMAIN_VERSION => bail!(site.error(format!(
            "domain '{TRAINING_DOMAIN}' version {v} is not supported; this plugin implements version {TRAINING_DOMAIN_VERSION}"
        ))),
        _ => Ok(()),
    }
}

/// A gradient op before typing: the axis may still be negative.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct InferScatterGrad {
    /// The node it was built from, named by every error.
    pub(crate) site: NodeSite,
    /// ScatterElementsGrad's axis as written (not yet normalized).
    pub(crate) kind: GradKind<i64>,
    /// The forward's reduction and `include_self`, as the attributes give
    /// them.
    pub(crate) spec: GradSpec,
    /// The `lda_coeff` attribute.
    pub(crate) lda_coeff: LdaCoeff,
}

impl Expansion for InferScatterGrad {
    fn name(&self) -> StaticName {
        self.site.op.onnx_name().into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![info_line(&self.kind, &self.spec, self.lda_coeff)])
    }

    fn nboutputs(&self) -> TractResult<usize> {
        Ok(2)
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 4)?;
        check_output_arity(outputs, 2)?;
        s.equals(&outputs[0].shape, &inputs[0].shape)?;
        s.equals(&outputs[1].shape, &inputs[2].shape)?;
        s.equals(&outputs[0].datum_type, &inputs[0].datum_type)?;
        s.equals(&outputs[1].datum_type, &inputs[0].datum_type)?;
        Ok(())
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let kind = match self.kind {
            GradKind::Elements { axis } => {
                let rank = model.outlet_fact(inputs[0])?.rank();
                GradKind::Elements {
                    axis: crate::ops::run::input_checks::elements_axis(&self.site, axis, rank)?,
                }
            }
            GradKind::Nd => GradKind::Nd,
        };
        let op = ScatterGrad {
            site: self.site.clone(),
            kind,
            spec: self.spec,
            lda_coeff: self.lda_coeff,
        };
        model.wire_node(prefix, op, inputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::opset::ScatterOp;
    use scatter_kernels::UpdateReduction;

    fn op(
        kind: GradKind,
        reduction: impl Into<UpdateReduction>,
        include_self: bool,
    ) -> ScatterGrad {
        let op = match kind {
            GradKind::Elements { .. } => ScatterOp::ScatterElementsGrad,
            GradKind::Nd => ScatterOp::ScatterNdGrad,
        };
        ScatterGrad {
            site: NodeSite::new(op, "g", None),
            kind,
            spec: GradSpec {
                reduction: reduction.into(),
                include_self,
            },
            lda_coeff: LdaCoeff(0.5),
        }
    }

    fn eval(op: &ScatterGrad, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        op.eval(&EvalContext::out_of_plan(), inputs)
    }

    #[test]
    fn add_with_self_and_unit_coefficient_passes_grad_output_through_uncopied() {
        for (kind, indices) in [
            (GradKind::Elements { axis: 0 }, tensor1(&[2i64, -1])),
            (GradKind::Nd, tensor2(&[[2i64], [-1]])),
        ] {
            let op = ScatterGrad {
                lda_coeff: LdaCoeff(1.0),
                ..op(kind, Reduction::Add, true)
            };
            let updates = tensor1(&[5f32, 6.]);
            let grad_output = tensor1(&[1f32, 2., 3., 4.]).into_tvalue();
            let out = eval(
                &op,
                tvec!(
                    tensor1(&[0f32; 4]).into_tvalue(),
                    indices.clone().into_tvalue(),
                    updates.into_tvalue(),
                    grad_output.clone(),
                ),
            )
            .unwrap();
            assert!(std::ptr::eq::<Tensor>(&*out[0], &*grad_output), "{kind:?}");
            assert_eq!(*out[1], tensor1(&[3f32, 4.]), "{kind:?}");
            // Any other coefficient computes grad_data.
            let scaled = eval(
                &ScatterGrad {
                    lda_coeff: LdaCoeff(2.0),
                    ..op.clone()
                },
                tvec!(
                    tensor1(&[0f32; 4]).into_tvalue(),
                    indices.clone().into_tvalue(),
                    tensor1(&[5f32, 6.]).into_tvalue(),
                    grad_output.clone(),
                ),
            )
            .unwrap();
            assert_eq!(*scaled[0], tensor1(&[2f32, 4., 6., 8.]));
            assert_eq!(*scaled[1], tensor1(&[6f32, 8.]));
        }
    }

    #[test]
    fn f16_and_f64_run_and_keep_their_type() {
        let op = op(GradKind::Elements { axis: 0 }, Reduction::Mul, true);
        let out = eval(
            &op,
            tvec!(
                tensor1(&[2f64, 3.]).into_tvalue(),
                tensor1(&[0i32]).into_tvalue(),
                tensor1(&[5f64]).into_tvalue(),
                tensor1(&[1f64, 1.]).into_tvalue(),
            ),
        )
        .unwrap();
        // out[0] = 2 * 5: d/d data = 5, d/d update = 2; unwritten 1; x 0.5.
        assert_eq!(*out[0], tensor1(&[2.5f64, 0.5]));
        assert_eq!(*out[1], tensor1(&[1f64]));
        let h = |v: f32| half::f16::from_f32(v);
        let out = eval(
            &op,
            tvec!(
                tensor1(&[h(2.), h(3.)]).into_tvalue(),
                tensor1(&[0i64]).into_tvalue(),
                tensor1(&[h(5.)]).into_tvalue(),
                tensor1(&[h(1.), h(1.)]).into_tvalue(),
            ),
        )
        .unwrap();
        assert_eq!(*out[0], tensor1(&[h(2.5), h(0.5)]));
        assert_eq!(*out[1], tensor1(&[h(1.)]));
    }

    #[test]
    fn run_time_errors_name_the_op_and_come_before_any_output() {
        let nd = op(GradKind::Nd, Reduction::Add, false);
        let good = || {
            tvec!(
                tensor1(&[1f32, 2., 3.]).into_tvalue(),
                tensor2(&[[1i64]]).into_tvalue(),
                tensor1(&[1f32]).into_tvalue(),
            )
        };
        let mut inputs = good();
        inputs.push(tensor1(&[1f32, 2.]).into_tvalue());
        let err = eval(&nd, inputs).unwrap_err().to_string();
        assert_eq!(
            err,
            "ScatterNDGrad node 'g': shape: grad_output has shape [2], expected [3] (the shape of data)"
        );
        let mut inputs = good();
        inputs.push(tensor1(&[1f64, 2., 3.]).into_tvalue());
        let err = eval(&nd, inputs).unwrap_err().to_string();
        assert!(
            err.contains("grad_output has element type double but data has float"),
            "{err}"
        );
        let err = eval(&nd, good()).unwrap_err().to_string();
        assert!(err.contains("expects 4 inputs"), "{err}");
        let inputs = tvec!(
            tensor1(&[1i32, 2, 3]).into_tvalue(),
            tensor2(&[[1i64]]).into_tvalue(),
            tensor1(&[1i32]).into_tvalue(),
            tensor1(&[1i32, 2, 3]).into_tvalue(),
        );
        let err = eval(&nd, inputs).unwrap_err().to_string();
        assert!(err.contains("has no gradient"), "{err}");
    }

    #[test]
    fn two_output_facts_shaped_like_data_and_updates() {
        let op = op(GradKind::Elements { axis: 1 }, UpdateReduction::Mean, false);
        let data = f32::fact([2, 4]);
        let indices = i64::fact([2, 3]);
        let updates = f32::fact([2, 3]);
        let facts = op
            .output_facts(&[&data, &indices, &updates, &data])
            .unwrap();
        assert_eq!(facts.len(), 2);
        assert_eq!(
            (facts[0].datum_type, &facts[0].shape),
            (DatumType::F32, &data.shape)
        );
        assert_eq!(
            (facts[1].datum_type, &facts[1].shape),
            (DatumType::F32, &updates.shape)
        );
    }
}

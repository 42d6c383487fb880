//! The home of ONNX `Scatter` (9, 10) and `ScatterElements` (11, 13, 16,
//! 18): the builders and the inference-level op, the typed op (which also
//! serves OpenVINO `ScatterElementsUpdate` with a constant axis, through
//! `use_init_val`/`mean`), its NNEF form, and its output pool.

use scatter_kernels::{
    CheckedElementsIndices, Element, ElementsPlan, Execution, IndexValue, Reduction, ScatterError,
    UpdateReduction,
};
use tract_hir::internal::*;
use tract_nnef::internal::*;
use tract_onnx::model::OnnxOpRegister;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::ops::element_dispatch;
use crate::ops::nnef_args::{data_indices_updates, elements_site, inputs3, reduction};
use crate::ops::op_home::OpHome;
use crate::ops::rewrite::axis_changes;
use crate::ops::run::check_cache::ElementsCheckCache;
use crate::ops::run::input_checks::{self, ScatterRules};
use crate::ops::run::output_pool::{self, OutputPool};
use crate::ops::run::sequence::{self, Call, IndexedScatter};
use crate::ops::run::speed_policy;
use crate::ops::run::tract_threads::TractThreads;
use crate::ops::shapes::SymDim;
use crate::parse::attributes::CheckedNode;
use crate::parse::data_like;
use crate::parse::deviation::{Accepting, DeviationMode, Deviations, Refusing};
use crate::parse::onnx_types::OnnxElement;
use crate::parse::opset::ScatterOp;
use crate::parse::site::NodeSite;

/// This family as [`crate::ops::HOMES`] lists it.
pub(crate) const HOME: OpHome = OpHome {
    register_onnx,
    register_nnef: Some(register_nnef),
    as_pooled: output_pool::downcast_pooled::<ScatterElements>,
};

fn register_onnx(reg: &mut OnnxOpRegister, deviations: Deviations) {
    reg.insert(
        "Scatter",
        deviations.pick(scatter::<Refusing>, scatter::<Accepting>),
    );
    reg.insert(
        "ScatterElements",
        deviations.pick(scatter_elements::<Refusing>, scatter_elements::<Accepting>),
    );
}

pub(crate) use crate::ops::scatter_ops::ScatterElements;

impl ScatterElements {
    /// Symbolic (TDim) data folds from the data value only: OpenVINO's
    /// `use_init_val = 0` has no symbolic counterpart here.
    fn check_symbolic_support(&self, dt: DatumType) -> TractResult<()> {
        if dt == DatumType::TDim && !self.use_init_val && self.reduction != Reduction::None {
            bail!(self.site.error(format!(
                "type: use_init_val = 0 with reduction '{}' is not supported for symbolic (TDim) data",
                self.reduction
            )));
        }
        Ok(())
    }
}

impl ScatterElements {
    /// The ONNX reduction this op's semantics are, when they are ONNX's:
    /// no reduction (the last update wins whatever `use_init_val`), or
    /// one other than `mean` with `use_init_val`; `None` for OpenVINO's
    /// own cases.
    fn onnx_semantics(&self) -> Option<Reduction> {
        match self.reduction {
            UpdateReduction::Onnx(r) if self.use_init_val || r == Reduction::None => Some(r),
            _ => None,
        }
    }
}

impl Op for ScatterElements {
    fn name(&self) -> StaticName {
        "ScatterElements".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        let mut info = vec![format!("axis: {} reduction: {}", self.axis, self.reduction)];
        if !self.use_init_val {
            info.push("use_init_val: false".into());
        }
        Ok(info)
    }

    op_as_typed_op!();
}

impl EvalOp for ScatterElements {
    op_out_of_plan!();

    // The run sequence of the family: ops/run/sequence.rs.
    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        sequence::eval(self, ctx, inputs)
    }
}

impl IndexedScatter for ScatterElements {
    fn call<'t>(
        &self,
        plan: &ElementsPlan,
        data: &TValue,
        indices_held_elsewhere: bool,
        threads: &'t TractThreads,
    ) -> Call<Execution<'t>> {
        let call = speed_policy::scatter_elements(
            self.onnx_semantics(),
            self.onnx_element,
            plan,
            data,
            indices_held_elsewhere,
            threads,
        );
        Call {
            keeps_check: call.keeps_check,
            how: Execution::on(threads),
            fused_copy: call.fused_copy,
            plain_copy: call.plain_copy,
        }
    }

    fn check_cache(&self) -> &ElementsCheckCache {
        &self.check_cache
    }

    fn apply<T: Element, I: IndexValue>(
        &self,
        checked: &CheckedElementsIndices<'_, I>,
        data: &mut [T],
        updates: &[T],
        exec: Execution<'_>,
    ) -> Result<(), ScatterError> {
        checked.apply_update(data, updates, self.reduction, self.use_init_val, exec)
    }

    fn apply_symbolic<I: IndexValue>(
        &self,
        checked: &CheckedElementsIndices<'_, I>,
        data: &mut [TDim],
        updates: &[TDim],
    ) -> TractResult<()> {
        let reduction = input_checks::symbolic_reduction(&self.site, self.reduction)?;
        checked
            .apply_with(data, updates, element_dispatch::tdim_combiner(reduction))
            .map_err(|e| self.site.scatter_error(e))
    }
}

impl ScatterRules for ScatterElements {
    type Plan = ElementsPlan;

    fn site(&self) -> &NodeSite {
        &self.site
    }

    fn reduction(&self) -> UpdateReduction {
        self.reduction
    }

    fn onnx_element(&self) -> OnnxElement {
        self.onnx_element
    }

    fn check_op_type(&self, dt: DatumType) -> TractResult<()> {
        self.check_symbolic_support(dt)
    }

    fn check_fact_shapes(
        &self,
        data: &[SymDim],
        indices: &[SymDim],
        updates: &[SymDim],
    ) -> Result<(), ScatterError> {
        ElementsPlan::check_shapes(data, indices, updates, Some(self.axis as i64)).map(drop)
    }

    fn plan(
        &self,
        data: &[usize],
        indices: &[usize],
        updates: &[usize],
    ) -> TractResult<ElementsPlan> {
        ElementsPlan::new(data, indices, updates, self.axis as i64)
            .map_err(|e| self.site.scatter_error(e))
    }

    fn check_index_values<I: IndexValue>(
        plan: &ElementsPlan,
        indices: &[I],
    ) -> Result<(), ScatterError> {
        plan.check_indices(indices, Execution::SERIAL).map(drop)
    }
}

impl output_pool::PooledOp for ScatterElements {
    fn output_pool(&self) -> Option<&OutputPool> {
        self.output_pool.as_ref()
    }
}

impl TypedOp for ScatterElements {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        input_checks::output_facts(self, inputs)
    }

    /// A transpose pair around the op folds away
    /// (`crate::ops::rewrite::transpose_fold`); a broadcast row index makes it a
    /// row scatter (`crate::ops::rewrite::broadcast_rows`). Empty indices write
    /// nothing: the op is the identity on data.
    fn declutter(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        // The rewrites below see the pair axis of complex data as an axis
        // of the scatter's.
        rule_if!(self.onnx_element != OnnxElement::Complex);
        // A transpose pair around the scatter: drop both.
        if let Some(patch) =
            crate::ops::rewrite::transpose_fold::fold_scatter_elements(self, model, node)?
        {
            return Ok(Some(patch));
        }
        // A row index broadcast along the features (GNN message passing):
        // a row scatter.
        if let Some(patch) = crate::ops::rewrite::broadcast_rows::rewrite(self, model, node)? {
            return Ok(Some(patch));
        }
        let indices = model.outlet_fact(node.inputs[1])?;
        rule_if!(indices.shape.iter().any(|d| *d == TDim::Val(0)));
        crate::ops::rewrite::block_assignment::shunt_to_data(model, node)
    }

    fn codegen(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        output_pool::pool_if_terminal(model, node, self.output_pool.is_some(), |pool| {
            ScatterElements {
                output_pool: Some(pool),
                ..self.clone()
            }
        })
    }

    fn cost(&self, inputs: &[&TypedFact]) -> TractResult<TVec<(Cost, TDim)>> {
        // One read-modify-write per update, plus the data copy when shared.
        Ok(tvec!((
            Cost::Buffer(inputs[0].datum_type),
            inputs[2].shape.volume()
        )))
    }
    /// Which axes of data, indices, updates and output are one axis
    /// (`axis_changes::elements_axes_mapping`).
    fn axes_mapping(
        &self,
        inputs: &[&TypedFact],
        outputs: &[&TypedFact],
    ) -> TractResult<AxesMapping> {
        // Complex data and updates have a pair axis the indices lack.
        if self.onnx_element == OnnxElement::Complex {
            return AxesMapping::disconnected(inputs, outputs);
        }
        axis_changes::elements_axes_mapping(self.axis, inputs)
    }

    /// A move of any wire moves all four, `axis` following it
    /// (`axis_changes::elements_change`).
    fn change_axes(
        &self,
        model: &TypedModel,
        node: &TypedNode,
        _io: InOut,
        change: &AxisOp,
    ) -> TractResult<Option<AxisChangeConsequence>> {
        rule_if!(node.inputs.len() == 3);
        // The pair axis of complex data stays last.
        rule_if!(self.onnx_element != OnnxElement::Complex);
        let rank = model.outlet_fact(node.inputs[0])?.rank();
        rule_if_some!(moved = axis_changes::elements_change(self.axis, rank, change));
        let substitute_op = (moved.attribute != self.axis)
            .then(|| Box::new(self.with_axis(moved.attribute)) as Box<dyn TypedOp>);
        Ok(Some(AxisChangeConsequence {
            substitute_op,
            wire_changes: moved.wires,
        }))
    }
}

// The ONNX builder and the inference-level op.

/// The `Scatter` builder; `M` says what it does with exporter deviations.
pub(crate) fn scatter<M: DeviationMode>(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(ScatterOp::Scatter, ctx, node, M::DEVIATIONS)
}

/// The `ScatterElements` builder; `M` as for [`scatter`].
pub(crate) fn scatter_elements<M: DeviationMode>(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(ScatterOp::ScatterElements, ctx, node, M::DEVIATIONS)
}

fn build(
    op: ScatterOp,
    ctx: &ParsingContext,
    node: &NodeProto,
    deviations: Deviations,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let node = CheckedNode::new(op, ctx, node, deviations)?;
    node.expect_inputs(&["data", "indices", "updates"], &[])?;
    let axis = node.int("axis")?.unwrap_or(0);
    let reduction = node.onnx_reduction()?;
    let onnx_element = node.onnx_element()?;
    Ok((
        expand(data_like::DataLike(InferScatterElements {
            site: node.site,
            axis,
            reduction,
            onnx_element,
        })),
        vec![],
    ))
}

/// ScatterElements before typing: the axis may still be negative.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct InferScatterElements {
    /// The node it was built from, named by every error.
    pub(crate) site: NodeSite,
    /// ONNX's `axis` attribute as given (default 0), in `[-r, r - 1]`;
    /// checked against the data's rank at typing.
    pub(crate) axis: i64,
    /// The `reduction` attribute, already checked against the opset.
    pub(crate) reduction: Reduction,
    /// As [`ScatterElements::onnx_element`].
    pub(crate) onnx_element: OnnxElement,
}

impl data_like::DataLikeScatter for InferScatterElements {
    const INPUTS: usize = 3;

    fn site(&self) -> &NodeSite {
        &self.site
    }

    fn info(&self) -> String {
        format!("axis: {} reduction: {}", self.axis, self.reduction)
    }

    fn wire_typed(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        // Complex data: the axis counts the complex tensor's axes, not
        // the pair axis.
        let rank = self.onnx_element.rank(model.outlet_fact(inputs[0])?.rank());
        let axis = input_checks::elements_axis(&self.site, self.axis, rank)?;
        let op = ScatterElements {
            onnx_element: self.onnx_element,
            ..ScatterElements::onnx(self.site.clone(), axis, self.reduction)
        };
        model.wire_node(prefix, op, inputs)
    }
}

// The NNEF form.

/// The NNEF primitive of [`ScatterElements`].
pub(crate) const SCATTER_ELEMENTS: &str = "tract_onnx_scatter_elements";

/// Registers the NNEF primitive [`SCATTER_ELEMENTS`] and its dumper.
fn register_nnef(registry: &mut Registry) {
    registry.register_dumper(dump_scatter_elements);
    registry
        .register_primitive(
            SCATTER_ELEMENTS,
            &[
                TypeName::Scalar.tensor().named("input"),
                TypeName::Integer.tensor().named("indices"),
                TypeName::Scalar.tensor().named("updates"),
                TypeName::Integer.named("axis"),
                TypeName::String.named("reduction").default("none"),
                TypeName::Logical.named("use_init_val").default(true),
                TypeName::String.named("onnx_op").default("ScatterElements"),
                TypeName::String.named("onnx_element").default("native"),
            ],
            &[("output", TypeName::Scalar.tensor())],
            load_scatter_elements,
        )
        .with_doc("ONNX ScatterElements (or Scatter, or OpenVINO ScatterElementsUpdate with onnx_op set accordingly).");
}

fn dump_scatter_elements(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &ScatterElements,
) -> TractResult<Option<Arc<RValue>>> {
    let [data, indices, updates] = inputs3(ast, node)?;
    let mut attributes = vec![
        ("axis", numeric(op.axis)),
        ("reduction", string(op.reduction.as_str())),
    ];
    if !op.use_init_val {
        attributes.push(("use_init_val", logical(false)));
    }
    if op.site.op != ScatterOp::ScatterElements {
        attributes.push(("onnx_op", string(op.site.op.onnx_name())));
    }
    if op.onnx_element != OnnxElement::Native {
        attributes.push(("onnx_element", string(op.onnx_element.as_str())));
    }
    Ok(Some(invocation(
        SCATTER_ELEMENTS,
        &[data, indices, updates],
        &attributes,
    )))
}

fn load_scatter_elements(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<Value> {
    let [data, indices, updates] = data_indices_updates(builder, invocation)?;
    let axis: i64 = invocation.named_arg_as(builder, "axis")?;
    let reduction_name: String = invocation.named_arg_as(builder, "reduction")?;
    let use_init_val: bool = invocation.named_arg_as(builder, "use_init_val")?;
    let site = elements_site(builder, invocation, SCATTER_ELEMENTS)?;
    let onnx_element = crate::ops::nnef_args::onnx_element(builder, invocation, &site)?;
    let rank = onnx_element.rank(builder.model.outlet_fact(data)?.rank());
    let axis = input_checks::elements_axis(&site, axis, rank)?;
    let reduction = reduction(&site, &reduction_name)?;
    builder.wire(
        ScatterElements {
            site,
            axis,
            reduction,
            use_init_val,
            onnx_element,
            output_pool: None,
            check_cache: ElementsCheckCache::default(),
        },
        &[data, indices, updates],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::run::speed_policy::FusedCopy;
    use crate::parse::opset::ScatterOp;

    fn op(axis: usize, reduction: Reduction) -> ScatterElements {
        ScatterElements::onnx(
            NodeSite::new(ScatterOp::ScatterElements, "se", Some(18)),
            axis,
            reduction,
        )
    }

    /// 64 x 8192 f32 data (2 MiB), indices of `indices_shape`.
    fn case(indices_shape: [usize; 2]) -> (Tensor, Tensor, Tensor) {
        let data_shape = [64usize, 8192];
        let data: Vec<f32> = (0..64 * 8192)
            .map(|i| ((i * 7) % 1000) as f32 * 0.01)
            .collect();
        let n = indices_shape[0] * indices_shape[1];
        let cols = indices_shape[1] as i64;
        // By column only, 16 values, half negative: every element written
        // is written many times, in an order the result depends on.
        let indices: Vec<i64> = (0..n as i64).map(|i| (i % cols * 37) % 16 - 8).collect();
        let updates: Vec<f32> = (0..n)
            .map(|i| ((i * 13) % 101) as f32 * 0.3 - 15.0)
            .collect();
        (
            Tensor::from_shape(&data_shape, &data).unwrap(),
            Tensor::from_shape(&indices_shape, &indices).unwrap(),
            Tensor::from_shape(&indices_shape, &updates).unwrap(),
        )
    }

    fn eval(op: &ScatterElements, data: TValue, indices: &Tensor, updates: &Tensor) -> Tensor {
        op.eval(
            &EvalContext::out_of_plan(),
            tvec!(
                data,
                indices.clone().into_tvalue(),
                updates.clone().into_tvalue()
            ),
        )
        .unwrap()
        .remove(0)
        .into_tensor()
    }

    #[test]
    fn shared_large_data_is_copied_as_it_scatters_with_the_in_place_result() {
        // Axis 1: 64 slabs of 32 KiB. (Axis 0's slab is the whole data.)
        for (axis, indices_shape) in [(1, [64, 256]), (1, [17, 9000])] {
            for reduction in [
                Reduction::None,
                Reduction::Add,
                Reduction::Mul,
                Reduction::Max,
                Reduction::Min,
            ] {
                let op = op(axis, reduction);
                let (data, indices, updates) = case(indices_shape);
                let plan =
                    ElementsPlan::new(data.shape(), indices.shape(), updates.shape(), axis as i64)
                        .unwrap();
                let call = speed_policy::scatter_elements(
                    op.onnx_semantics(),
                    op.onnx_element,
                    &plan,
                    &data,
                    false,
                    &scatter_kernels::Serial,
                );
                assert_eq!(
                    call.fused_copy,
                    FusedCopy::Always(reduction),
                    "{axis} {reduction:?}"
                );
                let shared = data.clone().into_tvalue();
                let fused = eval(&op, shared.clone(), &indices, &updates);
                let in_place = eval(&op, data.clone().into_tvalue(), &indices, &updates);
                let bits = |t: &Tensor| {
                    let v = t.try_as_plain_ram().unwrap();
                    v.as_slice::<f32>()
                        .unwrap()
                        .iter()
                        .map(|x| x.to_bits())
                        .collect::<Vec<_>>()
                };
                assert_eq!(bits(&fused), bits(&in_place), "axis {axis} {reduction:?}");
                assert_eq!(*shared, data, "the caller's data is untouched");
            }
        }
    }

    #[test]
    fn small_data_and_axis_zero_copy_then_scatter() {
        let (data, indices, _) = case([3, 8192]);
        let plan = ElementsPlan::new(data.shape(), indices.shape(), indices.shape(), 0).unwrap();
        let fused = |op: ScatterElements, plan, data| {
            speed_policy::scatter_elements(
                op.onnx_semantics(),
                op.onnx_element,
                plan,
                data,
                false,
                &scatter_kernels::Serial,
            )
            .fused_copy
        };
        assert_eq!(fused(op(0, Reduction::Add), &plan, &data), FusedCopy::Never);
        let small = Tensor::zero::<f32>(&[4, 4]).unwrap();
        let plan = ElementsPlan::new(&[4, 4], &[4, 1], &[4, 1], 1).unwrap();
        assert_eq!(
            fused(op(1, Reduction::Add), &plan, &small),
            FusedCopy::Never
        );
    }

    #[test]
    fn shared_bfloat16_data_is_copied_as_it_scatters_with_half_s_bf16_result_bit_for_bit() {
        use crate::parse::onnx_types::OnnxElement;
        use half::bf16;
        // 64 x 8192 float32 holding bfloat16 values (2 MiB): the copy is
        // fused, slab by slab, and the owned data is scattered into in
        // place asking ahead. Updates hold sums that tie, the largest
        // finite value (sums that overflow), subnormals, infinities, NaN.
        let hard: [u16; 8] = [
            0x3b80, 0x7f7f, 0xff7f, 0x0001, 0x807f, 0x7f80, 0xff80, 0x7fc0,
        ];
        let (data, indices, updates) = case([64, 256]);
        let narrow = |t: &Tensor| -> Vec<bf16> {
            let v = t.try_as_plain_ram().unwrap();
            let v = v.as_slice::<f32>().unwrap();
            v.iter()
                .enumerate()
                .map(|(i, x)| match i % 41 {
                    0 => bf16::from_bits(hard[(i / 41) % hard.len()]),
                    _ => bf16::from_f32(*x),
                })
                .collect()
        };
        let (narrow_data, narrow_updates) = (narrow(&data), narrow(&updates));
        let wide = |v: &[bf16], shape: &[usize]| {
            let v: Vec<f32> = v.iter().map(|x| x.to_f32()).collect();
            Tensor::from_shape(shape, &v).unwrap()
        };
        let data = wide(&narrow_data, data.shape());
        let updates = wide(&narrow_updates, updates.shape());
        let index_values: Vec<i64> = {
            let v = indices.try_as_plain_ram().unwrap();
            v.as_slice::<i64>().unwrap().to_vec()
        };
        for reduction in [Reduction::Add, Reduction::Mul] {
            let mut op = op(1, reduction);
            op.onnx_element = OnnxElement::Bfloat16;
            let plan =
                ElementsPlan::new(data.shape(), indices.shape(), updates.shape(), 1).unwrap();
            let call = speed_policy::scatter_elements(
                op.onnx_semantics(),
                op.onnx_element,
                &plan,
                &data,
                false,
                &scatter_kernels::Serial,
            );
            assert_eq!(call.fused_copy, FusedCopy::Always(reduction));
            let shared = data.clone().into_tvalue();
            let fused = eval(&op, shared.clone(), &indices, &updates);
            let in_place = eval(&op, data.clone().into_tvalue(), &indices, &updates);
            // half's own arithmetic, in the order of the indices.
            let mut reference = narrow_data.clone();
            let checked = plan
                .check_indices(&index_values, scatter_kernels::Execution::SERIAL)
                .unwrap();
            checked
                .apply_with(&mut reference, &narrow_updates, |a, u| {
                    *a = if reduction == Reduction::Add {
                        *a + *u
                    } else {
                        *a * *u
                    }
                })
                .unwrap();
            let expected: Vec<u32> = reference.iter().map(|x| x.to_f32().to_bits()).collect();
            let bits = |t: &Tensor| {
                let v = t.try_as_plain_ram().unwrap();
                v.as_slice::<f32>()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            };
            assert!(bits(&fused) == expected, "fused copy, {reduction:?}");
            assert!(bits(&in_place) == expected, "in place, {reduction:?}");
            assert_eq!(*shared, data, "the caller's data is untouched");
        }
    }
}

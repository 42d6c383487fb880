//! The home of ONNX `ScatterND` (11, 13, 16, 18): the builder and the
//! inference-level op, the typed op, its NNEF form, and its output pool.

use scatter_kernels::{
    BlockSort, CheckedNdIndices, Element, Execution, IndexValue, NdPlan, Reduction, ScatterError,
    UpdateReduction,
};
use tract_hir::internal::*;
use tract_nnef::internal::*;
use tract_onnx::model::OnnxOpRegister;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::ops::element_dispatch;
use crate::ops::nnef_args::{data_indices_updates, inputs3, onnx_reduction};
use crate::ops::op_home::OpHome;
use crate::ops::rewrite::axis_changes;
use crate::ops::run::check_cache::{NdCheck, NdCheckCache};
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
    as_pooled: output_pool::downcast_pooled::<ScatterNd>,
};

fn register_onnx(reg: &mut OnnxOpRegister, deviations: Deviations) {
    reg.insert(
        "ScatterND",
        deviations.pick(scatter_nd::<Refusing>, scatter_nd::<Accepting>),
    );
}

pub(crate) use crate::ops::scatter_ops::ScatterNd;

impl Op for ScatterNd {
    fn name(&self) -> StaticName {
        "ScatterND".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        let mut info = vec![format!("reduction: {}", self.reduction)];
        if let Some(perm) = &self.layout {
            info.push(format!("on data transposed by {perm:?}, in place"));
        }
        Ok(info)
    }

    op_as_typed_op!();
}

impl EvalOp for ScatterNd {
    op_out_of_plan!();

    // The run sequence of the family: ops/run/sequence.rs.
    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        sequence::eval(self, ctx, inputs)
    }
}

impl IndexedScatter for ScatterNd {
    fn call<'t>(
        &self,
        plan: &NdPlan,
        data: &TValue,
        indices_held_elsewhere: bool,
        threads: &'t TractThreads,
    ) -> Call<NdCheck<'t>> {
        let call = speed_policy::scatter_nd(
            self.reduction,
            self.onnx_element,
            plan,
            data,
            indices_held_elsewhere,
            threads,
        );
        Call {
            keeps_check: call.keeps_check,
            how: NdCheck {
                exec: Execution::on(threads).with_schedule(call.check_schedule),
                block_sort: call.block_sort,
                split: call.sort_for_split.then(|| Execution::on(threads)),
                element_bytes: call.element_bytes,
            },
            fused_copy: call.fused_copy,
            plain_copy: call.plain_copy,
        }
    }

    fn check_cache(&self) -> &NdCheckCache {
        &self.check_cache
    }

    fn apply<T: Element, I: IndexValue>(
        &self,
        checked: &CheckedNdIndices<'_, I>,
        data: &mut [T],
        updates: &[T],
        exec: Execution<'_>,
    ) -> Result<(), ScatterError> {
        checked.apply(data, updates, self.reduction, exec).map(drop)
    }

    fn apply_symbolic<I: IndexValue>(
        &self,
        checked: &CheckedNdIndices<'_, I>,
        data: &mut [TDim],
        updates: &[TDim],
    ) -> TractResult<()> {
        checked
            .apply_with(
                data,
                updates,
                element_dispatch::tdim_combiner(self.reduction),
            )
            .map_err(|e| self.site.scatter_error(e))
    }
}

impl ScatterRules for ScatterNd {
    type Plan = NdPlan;

    fn site(&self) -> &NodeSite {
        &self.site
    }

    fn reduction(&self) -> UpdateReduction {
        self.reduction.into()
    }

    fn onnx_element(&self) -> OnnxElement {
        self.onnx_element
    }

    fn check_fact_shapes(
        &self,
        data: &[SymDim],
        indices: &[SymDim],
        updates: &[SymDim],
    ) -> Result<(), ScatterError> {
        // With a `layout` the plan sees the data transposed by it.
        let Some(perm) = &self.layout else {
            return NdPlan::check_shapes(data, indices, updates).map(drop);
        };
        NdPlan::check_layout(data, perm)?;
        let view: TVec<SymDim> = perm.iter().map(|&p| data[p]).collect();
        NdPlan::check_shapes(&view, indices, updates).map(drop)
    }

    fn plan(&self, data: &[usize], indices: &[usize], updates: &[usize]) -> TractResult<NdPlan> {
        match &self.layout {
            None => NdPlan::new(data, indices, updates),
            Some(perm) => NdPlan::permuted(data, perm, indices, updates),
        }
        .map_err(|e| self.site.scatter_error(e))
    }

    fn check_index_values<I: IndexValue>(plan: &NdPlan, indices: &[I]) -> Result<(), ScatterError> {
        plan.check_indices(indices, Execution::SERIAL, BlockSort::Off)
            .map(drop)
    }
}

impl output_pool::PooledOp for ScatterNd {
    fn output_pool(&self) -> Option<&OutputPool> {
        self.output_pool.as_ref()
    }
}

impl TypedOp for ScatterNd {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        input_checks::output_facts(self, inputs)
    }

    /// A transpose and its inverse around the op fold into `layout`
    /// (`crate::ops::rewrite::transpose_fold`). No index tuple writes nothing: the
    /// op is the identity on data. A constant block assignment becomes
    /// Slice/Concat (`crate::ops::rewrite::block_assignment`).
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
            crate::ops::rewrite::transpose_fold::fold_scatter_nd(self, model, node)?
        {
            return Ok(Some(patch));
        }
        rule_if!(self.layout.is_none());
        let indices = model.outlet_fact(node.inputs[1])?;
        let rank = indices.rank();
        if rank >= 1 && indices.shape[..rank - 1].iter().any(|d| *d == TDim::Val(0)) {
            return crate::ops::rewrite::block_assignment::shunt_to_data(model, node);
        }
        // Constant indices enumerating a block: Slice/Concat.
        crate::ops::rewrite::block_assignment::rewrite(self, model, node)
    }

    fn codegen(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        output_pool::pool_if_terminal(model, node, self.output_pool.is_some(), |pool| ScatterNd {
            output_pool: Some(pool),
            ..self.clone()
        })
    }

    fn cost(&self, inputs: &[&TypedFact]) -> TractResult<TVec<(Cost, TDim)>> {
        Ok(tvec!((
            Cost::Buffer(inputs[0].datum_type),
            inputs[2].shape.volume()
        )))
    }
    /// Which axes of data, indices, updates and output are one axis
    /// (`axis_changes::nd_axes_mapping`).
    fn axes_mapping(
        &self,
        inputs: &[&TypedFact],
        _outputs: &[&TypedFact],
    ) -> TractResult<AxesMapping> {
        axis_changes::nd_axes_mapping(self.layout.as_deref(), inputs)
    }

    /// The moves tract's `ChangeAxes` pass may bring through the op
    /// (`axis_changes::nd_change`): slice axes with the updates, the rest
    /// into `layout`.
    fn change_axes(
        &self,
        model: &TypedModel,
        node: &TypedNode,
        io: InOut,
        change: &AxisOp,
    ) -> TractResult<Option<AxisChangeConsequence>> {
        // The pair axis of complex data stays last.
        rule_if!(self.onnx_element != OnnxElement::Complex);
        let facts = model.node_input_facts(node.id)?;
        rule_if_some!(geometry = axis_changes::NdAxes::of(&facts));
        rule_if_some!(
            moved = axis_changes::nd_change(self.layout.as_deref(), geometry, io, change)
        );
        let substitute_op = (moved.attribute != self.layout)
            .then(|| Box::new(self.with_layout(moved.attribute)) as Box<dyn TypedOp>);
        Ok(Some(AxisChangeConsequence {
            substitute_op,
            wire_changes: moved.wires,
        }))
    }
}

// The ONNX builder and the inference-level op.

/// The builder; `M` says what it does with exporter deviations.
pub(crate) fn scatter_nd<M: DeviationMode>(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let node = CheckedNode::new(ScatterOp::ScatterNd, ctx, node, M::DEVIATIONS)?;
    node.expect_inputs(&["data", "indices", "updates"], &[])?;
    let reduction = node.onnx_reduction()?;
    let onnx_element = node.onnx_element()?;
    Ok((
        expand(data_like::DataLike(InferScatterNd {
            site: node.site,
            reduction,
            onnx_element,
        })),
        vec![],
    ))
}

/// ScatterND before typing.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct InferScatterNd {
    /// The node it was built from, named by every error.
    pub(crate) site: NodeSite,
    /// The `reduction` attribute, already checked against the opset.
    pub(crate) reduction: Reduction,
    /// As [`ScatterNd::onnx_element`].
    pub(crate) onnx_element: OnnxElement,
}

impl data_like::DataLikeScatter for InferScatterNd {
    const INPUTS: usize = 3;

    fn site(&self) -> &NodeSite {
        &self.site
    }

    fn info(&self) -> String {
        format!("reduction: {}", self.reduction)
    }

    fn wire_typed(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let op = ScatterNd {
            onnx_element: self.onnx_element,
            ..ScatterNd::onnx(self.site.clone(), self.reduction)
        };
        model.wire_node(prefix, op, inputs)
    }
}

// The NNEF form.

/// The NNEF primitive of [`ScatterNd`].
pub(crate) const SCATTER_ND: &str = "tract_onnx_scatter_nd";

/// Registers the NNEF primitive [`SCATTER_ND`] and its dumper.
fn register_nnef(registry: &mut Registry) {
    registry.register_dumper(dump_scatter_nd);
    registry
        .register_primitive(
            SCATTER_ND,
            &[
                TypeName::Scalar.tensor().named("input"),
                TypeName::Integer.tensor().named("indices"),
                TypeName::Scalar.tensor().named("updates"),
                TypeName::String.named("reduction").default("none"),
                TypeName::Integer.array().named("layout").default(false),
                TypeName::String.named("onnx_element").default("native"),
            ],
            &[("output", TypeName::Scalar.tensor())],
            load_scatter_nd,
        )
        .with_doc("ONNX ScatterND. With `layout` (a permutation), the scatter applies to")
        .with_doc("`transpose(input, layout)` and the output keeps the input's layout.");
}

fn dump_scatter_nd(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &ScatterNd,
) -> TractResult<Option<Arc<RValue>>> {
    let [data, indices, updates] = inputs3(ast, node)?;
    let mut attributes = vec![("reduction", string(op.reduction.as_str()))];
    if let Some(perm) = &op.layout {
        attributes.push(("layout", tract_nnef::ser::ints(perm)));
    }
    if op.onnx_element != OnnxElement::Native {
        attributes.push(("onnx_element", string(op.onnx_element.as_str())));
    }
    Ok(Some(invocation(
        SCATTER_ND,
        &[data, indices, updates],
        &attributes,
    )))
}

fn load_scatter_nd(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<Value> {
    let [data, indices, updates] = data_indices_updates(builder, invocation)?;
    let reduction_name: String = invocation.named_arg_as(builder, "reduction")?;
    let site = NodeSite::new(ScatterOp::ScatterNd, builder.generate_node_name(), None);
    let reduction = onnx_reduction(&site, &reduction_name)?;
    // Absent, `layout` is its declared default `false`: a plain ScatterND.
    let layout = match invocation.get_named_arg_as::<Value>(builder, "layout")? {
        None | Some(Value::Bool(false)) => None,
        Some(v) => Some(v.to::<TVec<usize>>(builder)?),
    };
    let onnx_element = crate::ops::nnef_args::onnx_element(builder, invocation, &site)?;
    builder.wire(
        ScatterNd {
            layout,
            onnx_element,
            ..ScatterNd::onnx(site, reduction)
        },
        &[data, indices, updates],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::run::speed_policy::FusedCopy;
    use crate::parse::opset::ScatterOp;

    fn op(reduction: Reduction) -> ScatterNd {
        ScatterNd::onnx(
            NodeSite::new(ScatterOp::ScatterNd, "snd", Some(18)),
            reduction,
        )
    }

    /// data [16, 256, 64] f32 (1 MiB, slices of 64 KiB); rows 3, -1
    /// (twice), 0 and 3 again overwritten.
    fn case() -> (Tensor, Tensor, Tensor) {
        let data: Vec<f32> = (0..16 * 256 * 64).map(|i| (i % 977) as f32 * 0.5).collect();
        let updates: Vec<f32> = (0..5 * 256 * 64).map(|i| -(i as f32) * 0.25).collect();
        (
            Tensor::from_shape(&[16, 256, 64], &data).unwrap(),
            tensor2(&[[3i64], [-1], [0], [-1], [3]]),
            Tensor::from_shape(&[5, 256, 64], &updates).unwrap(),
        )
    }

    fn eval(op: &ScatterNd, data: TValue, indices: &Tensor, updates: &Tensor) -> Tensor {
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
    fn shared_large_data_is_copied_around_overwritten_slices_with_the_in_place_result() {
        let (data, indices, updates) = case();
        let plan = NdPlan::new(data.shape(), indices.shape(), updates.shape()).unwrap();
        for reduction in [Reduction::None, Reduction::Add] {
            let op = op(reduction);
            let call = speed_policy::scatter_nd(
                reduction,
                OnnxElement::Native,
                &plan,
                &data.clone().into_tvalue(),
                false,
                &scatter_kernels::Serial,
            );
            let expected = match reduction {
                Reduction::None => FusedCopy::Always(reduction),
                _ => FusedCopy::WhenSorted(reduction),
            };
            assert_eq!(call.fused_copy, expected);
            let shared = data.clone().into_tvalue();
            let copied = eval(&op, shared.clone(), &indices, &updates);
            let in_place = eval(&op, data.clone().into_tvalue(), &indices, &updates);
            assert_eq!(copied, in_place, "{reduction:?}");
            assert_eq!(*shared, data, "the caller's data is untouched");
        }
    }

    #[test]
    fn small_slices_are_copied_then_overwritten() {
        let (data, _, _) = case();
        let indices = tensor2(&[[3i64, 1]]);
        let updates = Tensor::zero::<f32>(&[1, 64]).unwrap();
        let plan = NdPlan::new(data.shape(), indices.shape(), updates.shape()).unwrap();
        let sorted = plan
            .check_indices(
                &[3i64, 1],
                Execution::on(&scatter_kernels::Serial),
                BlockSort::ForElementBytes(4),
            )
            .unwrap();
        assert!(!sorted.is_sorted());
        let call = speed_policy::scatter_nd(
            Reduction::None,
            OnnxElement::Native,
            &plan,
            &data.clone().into_tvalue(),
            false,
            &scatter_kernels::Serial,
        );
        assert_eq!(call.fused_copy, FusedCopy::WhenSorted(Reduction::None));
    }
}

//! The home of ONNX `ScatterND` (11, 13, 16, 18): the builder and the
//! inference-level op, the typed op, its NNEF form, and its output pool.

use scatter_kernels::{IndexValue, NdPlan, Reduction, Schedule, SortedNdIndices};
use tract_hir::internal::*;
use tract_nnef::internal::*;
use tract_onnx::model::OnnxOpRegister;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::nnef::{data_indices_updates, inputs3, reduction};
use crate::ops::OpHome;
use crate::ops::axis_changes;
use crate::ops::copy_target::{self, CopyPolicy, Taken};
use crate::ops::output_pool::{self, OutputPool};
use crate::ops::shapes::{all_concrete, sym_dims};
use crate::ops::tract_threads::TractThreads;
use crate::ops::types::{self, dispatch_element, with_index_slice};
use crate::opset::ScatterOp;
use crate::parse::attributes::CheckedNode;
use crate::parse::deviation::Deviations;
use crate::parse::typing;
use crate::site::NodeSite;

/// This family as [`crate::ops::HOMES`] lists it.
pub const HOME: OpHome = OpHome {
    register_onnx,
    register_nnef: Some(register_nnef),
    as_pooled: output_pool::downcast_pooled::<ScatterNd>,
};

fn register_onnx(reg: &mut OnnxOpRegister, deviations: Deviations) {
    reg.insert(
        "ScatterND",
        deviations.pick(scatter_nd::<true>, scatter_nd::<false>),
    );
}

/// `output = data`, then for every index tuple `t` (row-major over
/// `indices.shape[:-1]`), the slice `data[t]` combined with its update slice.
///
/// Contract (checked at build time as far as the facts allow, the rest at
/// run time, always before any write): data rank `r >= 1`; indices rank
/// `q >= 1` with `k = indices.shape[-1] <= r`; `updates.shape ==
/// indices.shape[:-1] ++ data.shape[k:]`; each tuple component in
/// `[-d, d - 1]` for its own data dim `d`; data and updates of one type that
/// can do `reduction`. Runs in place when the data input is exclusive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScatterNd {
    pub site: NodeSite,
    pub reduction: Reduction,
    /// `Some(perm)`: the data input is stored untransposed, the scatter
    /// applies to `transpose(data, perm)` (shapes, indices and messages are
    /// in that view) and the output keeps data's stored layout, i.e. the
    /// op is `Transpose(perm) → ScatterND → inverse Transpose` without the
    /// transposes ([`crate::ops::transpose_fold`]). `None`: plain ScatterND.
    pub layout: Option<TVec<usize>>,
    /// Set at codegen when the output is a model output and nothing else:
    /// where the output buffer comes from when data is shared
    /// ([`crate::ops::output_pool`]). An execution detail: `None` until
    /// codegen, not serialized, ignored by equality.
    pub output_pool: Option<OutputPool>,
}

impl ScatterNd {
    /// A plain ONNX ScatterND.
    pub fn onnx(site: NodeSite, reduction: Reduction) -> ScatterNd {
        ScatterNd {
            site,
            reduction,
            layout: None,
            output_pool: None,
        }
    }

    /// The data fact as the scatter sees it: transposed by `layout`.
    fn view_fact(&self, data: &TypedFact) -> TractResult<TypedFact> {
        let Some(perm) = &self.layout else {
            return Ok(data.clone());
        };
        NdPlan::check_layout(&sym_dims(data), perm).map_err(|e| self.site.error(e))?;
        let shape: TVec<TDim> = perm.iter().map(|&p| data.shape[p].clone()).collect();
        Ok(data.datum_type.fact(shape))
    }

    fn plan(&self, data: &[usize], indices: &[usize], updates: &[usize]) -> TractResult<NdPlan> {
        match &self.layout {
            None => NdPlan::new(data, indices, updates),
            Some(perm) => NdPlan::permuted(data, perm, indices, updates),
        }
        .map_err(|e| self.site.error(e))
    }

    fn check_facts(
        &self,
        data: &TypedFact,
        indices: &TypedFact,
        updates: &TypedFact,
    ) -> TractResult<()> {
        let site = &self.site;
        types::check_indices_type(site, "indices", indices.datum_type)?;
        types::check_same_type(site, data.datum_type, updates.datum_type)?;
        types::check_reduction_for(site, data.datum_type, self.reduction)?;
        // The plan's rules on what the facts know: the run's words for a
        // mistake already visible.
        let (d, i, u) = (sym_dims(data), sym_dims(indices), sym_dims(updates));
        NdPlan::check_shapes(&d, &i, &u).map_err(|e| site.error(e))?;
        if let Some(shapes) = all_concrete(&[data, indices, updates]) {
            let plan = NdPlan::new(shapes[0], shapes[1], shapes[2]).map_err(|e| site.error(e))?;
            if let Some(konst) = &indices.konst
                && let Some(konst) = types::known_indices(site, "indices", konst)?
            {
                with_index_slice!(konst, |idx| plan.check_indices(idx).map(drop))
                    .map_err(|e| site.error(e))?;
            }
        }
        Ok(())
    }

    fn scatter<I: IndexValue>(
        &self,
        plan: &NdPlan,
        indices: &[I],
        data: TValue,
        updates: &Tensor,
    ) -> TractResult<Tensor> {
        let site = &self.site;
        let element_bytes = data.datum_type().size_of();
        // Large random-index scatters get their updates sorted by
        // destination block in the pass that checks them.
        let sorted = plan
            .check_indices_sorted(indices, element_bytes, &Schedule::DEFAULT)
            .map_err(|e| site.error(e))?;
        // Validated: now take the data, without a copy when exclusive.
        let pool = self.output_pool.as_ref();
        let fuse = |data: &Tensor| self.fuses_the_copy(plan, &sorted, data);
        let mut data = match copy_target::take_or_fuse(
            site,
            data,
            pool,
            &sorted,
            updates,
            self.reduction,
            fuse,
        )? {
            Taken::Done(output) => return Ok(output),
            Taken::ScatterInto(data) => data,
        };
        let mut view = data.try_as_plain_ram_mut()?;
        let done = dispatch_element!(view.datum_type(), site, "data", |T| {
            let d = view.as_slice_mut::<T>()?;
            sorted.apply_par(d, types::slice::<T>(updates)?, self.reduction, &TractThreads::current()).map_err(|e| site.error(e))
        }, tdim => {
            let d = view.as_slice_mut::<TDim>()?;
            sorted.checked().apply_with(d, types::slice::<TDim>(updates)?, types::tdim_combiner(self.reduction)).map_err(|e| site.error(e))
        });
        done?;
        Ok(data)
    }
}

impl ScatterNd {
    /// Whether shared `data` is copied as the scatter writes
    /// ([`SortedNdIndices::apply_copying_par`]) rather than first: for a
    /// type it covers, when the updates were sorted by destination block
    /// (each block is copied just before its updates land), or, with no
    /// reduction, around large row-major slices the updates overwrite
    /// whole.
    fn fuses_the_copy<I: IndexValue>(
        &self,
        plan: &NdPlan,
        sorted: &SortedNdIndices<I>,
        data: &Tensor,
    ) -> bool {
        let size = data.datum_type().size_of();
        let around_slices = self.reduction == Reduction::None
            && data.len().saturating_mul(size) >= CopyPolicy::ND_FROM
            && plan.slice_len().saturating_mul(size) >= CopyPolicy::ND_SLICE
            && sorted.checked().copies_around_slices();
        copy_target::COPYING_TYPES.contains(&data.datum_type())
            && (sorted.is_sorted() || around_slices)
    }
}

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

    fn eval(&self, ctx: &EvalContext, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let output = output_pool::eval_pooled(self.output_pool.as_ref(), inputs, |i| {
            self.eval_scatter(i, ctx.symbols)
        })?;
        Ok(tvec!(output))
    }
}

impl ScatterNd {
    /// The op on `inputs`, its output taken as [`copy_target::take_output`] says.
    fn eval_scatter(&self, inputs: TVec<TValue>, symbols: &SymbolValues) -> TractResult<TValue> {
        let site = &self.site;
        types::expect_three_inputs(site, inputs.len())?;
        let (data, indices, updates) = args_3!(inputs);
        types::check_same_type(site, data.datum_type(), updates.datum_type())?;
        types::check_reduction_for(site, data.datum_type(), self.reduction)?;
        let plan = self.plan(data.shape(), indices.shape(), updates.shape())?;
        let indices = types::plain_indices(site, "indices", &indices, symbols)?;
        let output = with_index_slice!(indices, |idx| self.scatter(&plan, idx, data, &updates)?);
        Ok(output.into_tvalue())
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
        types::expect_three_inputs(&self.site, inputs.len())?;
        self.check_facts(&self.view_fact(inputs[0])?, inputs[1], inputs[2])?;
        Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
    }

    /// A transpose and its inverse around the op fold into `layout`
    /// ([`crate::ops::transpose_fold`]). No index tuple writes nothing: the
    /// op is the identity on data. A constant block assignment becomes
    /// Slice/Concat ([`crate::ops::block_assignment`]).
    fn declutter(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        // A transpose pair around the scatter: drop both.
        if let Some(patch) = crate::ops::transpose_fold::fold_scatter_nd(self, model, node)? {
            return Ok(Some(patch));
        }
        rule_if!(self.layout.is_none());
        let indices = model.outlet_fact(node.inputs[1])?;
        let rank = indices.rank();
        if rank >= 1 && indices.shape[..rank - 1].iter().any(|d| *d == TDim::Val(0)) {
            return crate::ops::block_assignment::shunt_to_data(model, node);
        }
        // Constant indices enumerating a block: Slice/Concat.
        crate::ops::block_assignment::rewrite(self, model, node)
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
    /// ([`axis_changes::nd_axes_mapping`]).
    fn axes_mapping(
        &self,
        inputs: &[&TypedFact],
        _outputs: &[&TypedFact],
    ) -> TractResult<AxesMapping> {
        axis_changes::nd_axes_mapping(self.layout.as_deref(), inputs)
    }

    /// The moves tract's `ChangeAxes` pass may bring through the op
    /// ([`axis_changes::nd_change`]): slice axes with the updates, the rest
    /// into `layout`.
    fn change_axes(
        &self,
        model: &TypedModel,
        node: &TypedNode,
        io: InOut,
        change: &AxisOp,
    ) -> TractResult<Option<AxisChangeConsequence>> {
        let facts = model.node_input_facts(node.id)?;
        rule_if_some!(geometry = axis_changes::NdAxes::of(&facts));
        rule_if_some!(
            moved = axis_changes::nd_change(self.layout.as_deref(), geometry, io, change)
        );
        let substitute_op = (moved.attribute != self.layout).then(|| {
            Box::new(ScatterNd {
                layout: moved.attribute,
                ..self.clone()
            }) as Box<dyn TypedOp>
        });
        Ok(Some(AxisChangeConsequence {
            substitute_op,
            wire_changes: moved.wires,
        }))
    }
}

// The ONNX builder and the inference-level op.

/// The builder; `STRICT` refuses exporter deviations ([`Deviations`]).
pub fn scatter_nd<const STRICT: bool>(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let node = CheckedNode::new(
        ScatterOp::ScatterNd,
        ctx,
        node,
        Deviations::strict_if(STRICT),
    )?;
    node.expect_inputs(&["data", "indices", "updates"], &[])?;
    let reduction = node.onnx_reduction()?;
    Ok((
        expand(InferScatterNd {
            site: node.site,
            reduction,
        }),
        vec![],
    ))
}

/// ScatterND before typing.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct InferScatterNd {
    pub site: NodeSite,
    pub reduction: Reduction,
}

impl Expansion for InferScatterNd {
    fn name(&self) -> StaticName {
        "ScatterND".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!("reduction: {}", self.reduction)])
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 3)?;
        check_output_arity(outputs, 1)?;
        typing::data_like_output(s, &self.site, &inputs[0], &inputs[2], &outputs[0])
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let (data, updates) =
            typing::wire_unified(prefix, &self.site, model, inputs[0], inputs[2])?;
        let op = crate::ops::ScatterNd::onnx(self.site.clone(), self.reduction);
        model.wire_node(prefix, op, &[data, inputs[1], updates])
    }
}

// The NNEF form.

/// The NNEF primitive of [`ScatterNd`].
pub const SCATTER_ND: &str = "tract_onnx_scatter_nd";

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
    let reduction = reduction(&site, &reduction_name)?;
    // Absent, `layout` is its declared default `false`: a plain ScatterND.
    let layout = match invocation.get_named_arg_as::<Value>(builder, "layout")? {
        None | Some(Value::Bool(false)) => None,
        Some(v) => Some(v.to::<TVec<usize>>(builder)?),
    };
    builder.wire(
        ScatterNd {
            layout,
            ..ScatterNd::onnx(site, reduction)
        },
        &[data, indices, updates],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opset::ScatterOp;

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
        op.eval_scatter(
            tvec!(
                data,
                indices.clone().into_tvalue(),
                updates.clone().into_tvalue()
            ),
            &SymbolValues::default(),
        )
        .unwrap()
        .into_tensor()
    }

    #[test]
    fn shared_large_data_is_copied_around_overwritten_slices_with_the_in_place_result() {
        let (data, indices, updates) = case();
        let plan = NdPlan::new(data.shape(), indices.shape(), updates.shape()).unwrap();
        let idx = indices.try_as_plain_ram().unwrap();
        let sorted = plan
            .check_indices_sorted(idx.as_slice::<i64>().unwrap(), 4, &Schedule::DEFAULT)
            .unwrap();
        for reduction in [Reduction::None, Reduction::Add] {
            let op = op(reduction);
            assert_eq!(
                op.fuses_the_copy(&plan, &sorted, &data),
                reduction == Reduction::None
            );
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
            .check_indices_sorted(&[3i64, 1], 4, &Schedule::DEFAULT)
            .unwrap();
        assert!(!sorted.is_sorted());
        assert!(!op(Reduction::None).fuses_the_copy(&plan, &sorted, &data));
    }
}

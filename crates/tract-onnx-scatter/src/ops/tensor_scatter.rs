//! The home of ONNX `TensorScatter` (24), in-place KV-cache writes: the
//! builder and the inference-level op, the typed op, its NNEF form, and its
//! output pool.

use scatter_kernels::{Execution, TensorScatterMode, TensorScatterPlan};
use tract_hir::internal::*;
use tract_nnef::internal::*;
use tract_onnx::model::OnnxOpRegister;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::ops::element_dispatch::{self, dispatch_element};
use crate::ops::nnef_args::input;
use crate::ops::op_home::OpHome;
use crate::ops::run::copy_target::{self, Taken};
use crate::ops::run::fresh_buffer::NoFusion;
use crate::ops::run::input_checks;
use crate::ops::run::output_pool::{self, OutputPool};
use crate::ops::run::speed_policy;
use crate::ops::run::tract_threads::TractThreads;
use crate::ops::shapes::{all_concrete, sym_dims};
use crate::parse::attributes::CheckedNode;
use crate::parse::deviation::Deviations;
use crate::parse::opset::ScatterOp;
use crate::parse::site::NodeSite;

/// This family as [`crate::ops::HOMES`] lists it.
pub(crate) const HOME: OpHome = OpHome {
    register_onnx,
    register_nnef: Some(register_nnef),
    as_pooled: output_pool::downcast_pooled::<TensorScatter>,
};

fn register_onnx(reg: &mut OnnxOpRegister, deviations: Deviations) {
    // Opset 24 only: no exporter deviation to accept.
    let _ = deviations;
    reg.insert("TensorScatter", tensor_scatter);
}

/// `present = past_cache`, then for every prefix before `axis` (its first
/// component is the batch entry `b`) and every `s < update.shape[axis]`:
/// `present[prefix, w_b + s, ..] = update[prefix, s, ..]`, wrapping modulo
/// `past_cache.shape[axis]` in circular mode; `w_b = write_indices[b]`, or 0
/// when the third input is absent.
///
/// Contract (checked at build time as far as the facts allow, the rest at
/// run time, always before any write): past_cache of rank `r >= 2`; `axis`
/// in `[1, r - 1]`; update of rank `r`, equal to past_cache in shape except
/// along `axis`, where it is no longer; write_indices int64 of shape
/// `[batch]`; in linear mode `0 <= w_b <= past_cache.shape[axis] -
/// update.shape[axis]` (not checked when update has no position along
/// `axis`: nothing is written). Runs in place when past_cache is exclusively
/// owned: O(update) work, no copy of the cache.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorScatter {
    /// The node it was built from, named by every error.
    pub(crate) site: NodeSite,
    /// Normalized: `1 <= axis < rank`.
    pub(crate) axis: usize,
    /// Where a write past the end of `axis` goes: an error (`linear`) or
    /// around (`circular`).
    pub(crate) mode: TensorScatterMode,
    /// Set at codegen when the output is a model output and nothing else:
    /// where the output buffer comes from when data is shared
    /// ([`crate::ops::run::output_pool`]). An execution detail: `None` until
    /// codegen, not serialized, ignored by equality.
    pub(crate) output_pool: Option<OutputPool>,
}

/// Element types `T` of `dt` accepted for past_cache and update.
fn check_element(site: &NodeSite, dt: DatumType) -> TractResult<()> {
    dispatch_element!(dt, site, "past_cache", |T| {
        let _: Option<T> = None;
        Ok(())
    }, tdim => { Ok(()) })
}

fn check_types(
    site: &NodeSite,
    cache: DatumType,
    update: DatumType,
    write: Option<DatumType>,
) -> TractResult<()> {
    check_element(site, cache)?;
    if cache != update {
        bail!(site.error(format!(
            "type: update has element type {} but past_cache has {}; they must be the same (no promotion)", crate::ops::element_dispatch::onnx_type(update), crate::ops::element_dispatch::onnx_type(cache)
        )));
    }
    if let Some(dt) = write
        && !matches!(dt, DatumType::I64 | DatumType::TDim)
    {
        bail!(site.error(format!(
            "type: write_indices has element type {}, expected int64",
            crate::ops::element_dispatch::onnx_type(dt)
        )));
    }
    Ok(())
}

impl TensorScatter {
    fn check_facts(&self, inputs: &[&TypedFact]) -> TractResult<()> {
        let site = &self.site;
        let (cache, update, write) = (inputs[0], inputs[1], inputs.get(2).copied());
        check_types(
            site,
            cache.datum_type,
            update.datum_type,
            write.map(|w| w.datum_type),
        )?;
        // The plan's rules on what the facts know: the run's words for a
        // mistake already visible.
        let (c, u) = (sym_dims(cache), sym_dims(update));
        let w = write.map(sym_dims);
        TensorScatterPlan::check_shapes(&c, &u, w.as_deref(), self.axis as i64)
            .map_err(|e| site.scatter_error(e))?;
        // `Some` when every given input's shape is concrete.
        let write_shape = match write {
            Some(w) => w.shape.as_concrete().map(Some),
            None => Some(None),
        };
        if let (Some(shapes), Some(write_shape)) = (all_concrete(&[cache, update]), write_shape) {
            let plan = TensorScatterPlan::new(shapes[0], shapes[1], write_shape, self.axis as i64)
                .map_err(|e| site.scatter_error(e))?;
            // Constant write indices are checked now: the error surfaces at load.
            if let Some(konst) = write.and_then(|w| w.konst.as_ref())
                && let Some(konst) = input_checks::known_indices(site, "write_indices", konst)?
            {
                plan.check_write_indices(Some(element_dispatch::slice::<i64>(&konst)?), self.mode)
                    .map_err(|e| site.scatter_error(e))?;
            }
        }
        Ok(())
    }
}

impl Op for TensorScatter {
    fn name(&self) -> StaticName {
        "TensorScatter".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "axis: {} mode: {}",
            self.axis,
            self.mode.as_str()
        )])
    }

    op_as_typed_op!();
}

fn check_arity(site: &NodeSite, n: usize) -> TractResult<()> {
    if !(2..=3).contains(&n) {
        bail!(site.error(format!(
            "expects inputs (past_cache, update) and optionally (write_indices), got {n}"
        )));
    }
    Ok(())
}

impl EvalOp for TensorScatter {
    op_out_of_plan!();

    /// The checks, then the output, then the write: nothing is written
    /// before every input is known valid.
    fn eval(&self, ctx: &EvalContext, mut inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        let site = &self.site;
        check_arity(site, inputs.len())?;
        let write = if inputs.len() == 3 {
            inputs.pop()
        } else {
            None
        };
        let (cache, update) = args_2!(inputs);
        check_types(
            site,
            cache.datum_type(),
            update.datum_type(),
            write.as_ref().map(|w| w.datum_type()),
        )?;
        let write = write
            .as_ref()
            .map(|w| input_checks::plain_indices(site, "write_indices", w, ctx.symbols))
            .transpose()?;
        let plan = TensorScatterPlan::new(
            cache.shape(),
            update.shape(),
            write.as_ref().map(|w| w.shape()),
            self.axis as i64,
        )
        .map_err(|e| site.scatter_error(e))?;
        let starts = write
            .as_ref()
            .map(|w| element_dispatch::slice::<i64>(w))
            .transpose()?;
        let checked = plan
            .check_write_indices(starts, self.mode)
            .map_err(|e| self.site.scatter_error(e))?;
        // Validated: now take the cache, without a copy when exclusive.
        let threads = TractThreads::current();
        let plain = speed_policy::plain_copy(&threads);
        let pool = self.output_pool.as_ref();
        let (taken, returning) =
            copy_target::take::<NoFusion>(site, "past_cache", cache, pool, plain, None)?;
        let (Taken::Data(mut present) | Taken::Scattered(mut present)) = taken;
        let mut view = present.try_as_plain_ram_mut()?;
        let done = dispatch_element!(view.datum_type(), site, "past_cache", |T| {
            let cache = view.as_slice_mut::<T>()?;
            checked.apply(cache, element_dispatch::slice::<T>(&update)?, Execution::on(&threads)).map_err(|e| site.scatter_error(e))
        }, tdim => {
            let cache = view.as_slice_mut::<TDim>()?;
            checked.apply(cache, element_dispatch::slice::<TDim>(&update)?, Execution::SERIAL).map_err(|e| site.scatter_error(e))
        });
        done?;
        Ok(tvec!(returning.output(present)))
    }
}

/// `axis` as a position in `[1, rank - 1]`, or the kernels' "rank"/"axis"
/// error for this node.
pub(crate) fn axis_position(site: &NodeSite, axis: i64, rank: usize) -> TractResult<usize> {
    scatter_kernels::tensor_scatter_axis(axis, rank).map_err(|e| site.scatter_error(e))
}

impl output_pool::PooledOp for TensorScatter {
    fn output_pool(&self) -> Option<&OutputPool> {
        self.output_pool.as_ref()
    }
}

impl TypedOp for TensorScatter {
    as_op!();

    fn output_facts(&self, inputs: &[&TypedFact]) -> TractResult<TVec<TypedFact>> {
        check_arity(&self.site, inputs.len())?;
        self.check_facts(inputs)?;
        Ok(tvec!(inputs[0].datum_type.fact(inputs[0].shape.clone())))
    }

    fn codegen(
        &self,
        model: &TypedModel,
        node: &TypedNode,
    ) -> TractResult<Option<TypedModelPatch>> {
        output_pool::pool_if_terminal(model, node, self.output_pool.is_some(), |pool| {
            TensorScatter {
                output_pool: Some(pool),
                ..self.clone()
            }
        })
    }

    fn cost(&self, inputs: &[&TypedFact]) -> TractResult<TVec<(Cost, TDim)>> {
        // One copy per updated element, plus the cache copy when shared.
        Ok(tvec!((
            Cost::Buffer(inputs[0].datum_type),
            inputs[1].shape.volume()
        )))
    }
}

// The ONNX builder and the inference-level op.

/// The builder of ONNX `TensorScatter` (opset 24): inputs `past_cache`,
/// `update`, optional `write_indices`; attributes `axis` (default -2) and
/// `mode` (`linear`, the default, or `circular`). An error names the node,
/// the attribute and its value.
pub(crate) fn tensor_scatter(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let node = CheckedNode::new(ScatterOp::TensorScatter, ctx, node, Deviations::Refuse)?;
    node.expect_inputs(&["past_cache", "update"], &["write_indices"])?;
    let mode = match node.string("mode")? {
        None => TensorScatterMode::Linear,
        Some(value) => TensorScatterMode::from_onnx(&value).ok_or_else(|| {
            node.site.error(format!(
                "attribute 'mode' value {value:?} is not allowed by {}; allowed: linear, circular",
                node.version.label()
            ))
        })?,
    };
    let axis = node.int("axis")?.unwrap_or(-2);
    Ok((
        expand(InferTensorScatter {
            site: node.site,
            axis,
            mode,
        }),
        vec![],
    ))
}

/// TensorScatter before typing: the axis may still be negative.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub(crate) struct InferTensorScatter {
    /// The node it was built from, named by every error.
    pub(crate) site: NodeSite,
    /// ONNX's `axis` attribute as given (default -2), in `[-r, r - 1]` and
    /// not the batch axis; checked against the rank at typing.
    pub(crate) axis: i64,
    /// The `mode` attribute.
    pub(crate) mode: TensorScatterMode,
}

impl Expansion for InferTensorScatter {
    fn name(&self) -> StaticName {
        "TensorScatter".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "axis: {} mode: {}",
            self.axis,
            self.mode.as_str()
        )])
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        if inputs.len() != 2 && inputs.len() != 3 {
            bail!(self.site.error(format!(
                "expects inputs (past_cache, update) and optionally (write_indices), got {}",
                inputs.len()
            )));
        }
        check_output_arity(outputs, 1)?;
        s.equals(&outputs[0].datum_type, &inputs[0].datum_type)?;
        s.equals(&outputs[0].shape, &inputs[0].shape)
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let rank = model.outlet_fact(inputs[0])?.rank();
        let axis = axis_position(&self.site, self.axis, rank)?;
        let op = TensorScatter {
            site: self.site.clone(),
            axis,
            mode: self.mode,
            output_pool: None,
        };
        model.wire_node(prefix, op, inputs)
    }
}

// The NNEF form.

/// The NNEF primitive of [`TensorScatter`].
pub(crate) const TENSOR_SCATTER: &str = "tract_onnx_tensor_scatter";

/// Registers the NNEF primitive [`TENSOR_SCATTER`] and its dumper.
fn register_nnef(registry: &mut Registry) {
    registry.register_dumper(dump_tensor_scatter);
    registry
        .register_primitive(
            TENSOR_SCATTER,
            &[
                TypeName::Scalar.tensor().named("past_cache"),
                TypeName::Scalar.tensor().named("update"),
                TypeName::Integer
                    .tensor()
                    .named("write_indices")
                    .default(false),
                TypeName::Integer.named("axis"),
                TypeName::String.named("mode").default("linear"),
            ],
            &[("output", TypeName::Scalar.tensor())],
            load_tensor_scatter,
        )
        .with_doc("ONNX TensorScatter (opset 24); write_indices is optional (false when absent).");
}

fn dump_tensor_scatter(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &TensorScatter,
) -> TractResult<Option<Arc<RValue>>> {
    let past_cache = input(ast, node, 0)?;
    let update = input(ast, node, 1)?;
    let mut attributes = vec![];
    match node.inputs.len() {
        2 => (),
        3 => attributes.push(("write_indices", (*input(ast, node, 2)?).clone())),
        n => bail!(op.site.error(format!(
            "expects 2 or 3 inputs (past_cache, update, write_indices), got {n}"
        ))),
    }
    attributes.push(("axis", numeric(op.axis)));
    attributes.push(("mode", string(op.mode.as_str())));
    Ok(Some(invocation(
        TENSOR_SCATTER,
        &[past_cache, update],
        &attributes,
    )))
}

fn load_tensor_scatter(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<Value> {
    let past_cache: OutletId = invocation.named_arg_as(builder, "past_cache")?;
    let update: OutletId = invocation.named_arg_as(builder, "update")?;
    let write_indices: Option<OutletId> =
        invocation.optional_named_arg_as(builder, "write_indices")?;
    let axis: i64 = invocation.named_arg_as(builder, "axis")?;
    let mode_name: String = invocation.named_arg_as(builder, "mode")?;
    let site = NodeSite::new(ScatterOp::TensorScatter, builder.generate_node_name(), None);
    let mode = TensorScatterMode::from_onnx(&mode_name).ok_or_else(|| {
        site.error(format!(
            "mode '{mode_name}' is unknown; expected one of: linear, circular"
        ))
    })?;
    let rank = builder.model.outlet_fact(past_cache)?.rank();
    let axis = axis_position(&site, axis, rank)?;
    let mut inputs = vec![past_cache, update];
    inputs.extend(write_indices);
    builder.wire(
        TensorScatter {
            site,
            axis,
            mode,
            output_pool: None,
        },
        &inputs,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::opset::ScatterOp;

    #[test]
    fn an_axis_error_names_the_node_and_the_kernels_rule() {
        let site = NodeSite::new(ScatterOp::TensorScatter, "ts", Some(24));
        assert_eq!(axis_position(&site, -2, 4).unwrap(), 2);
        let err = axis_position(&site, 0, 3).unwrap_err().to_string();
        assert!(
            err.starts_with("TensorScatter node 'ts' (opset 24): axis 0"),
            "{err}"
        );
        let err = axis_position(&site, -1, 1).unwrap_err().to_string();
        assert!(err.contains("rank: past_cache has rank 1"), "{err}");
    }

    fn op(axis: usize, mode: TensorScatterMode) -> TensorScatter {
        TensorScatter {
            site: NodeSite::new(ScatterOp::TensorScatter, "ts", Some(24)),
            axis,
            mode,
            output_pool: None,
        }
    }

    fn run(op: &TensorScatter, inputs: TVec<Tensor>) -> TractResult<Tensor> {
        let inputs = inputs.into_iter().map(|t| t.into_tvalue()).collect();
        Ok(op
            .eval(&EvalContext::out_of_plan(), inputs)?
            .remove(0)
            .into_tensor())
    }

    fn cache() -> Tensor {
        tensor3(&[[[0f32], [0.], [0.], [0.]], [[0.], [0.], [0.], [0.]]])
    }

    #[test]
    fn linear_mode_writes_each_batch_row_at_its_own_start() {
        let update = tensor3(&[[[1f32], [2.]], [[3.], [4.]]]);
        let out = run(
            &op(1, TensorScatterMode::Linear),
            tvec!(cache(), update, tensor1(&[1i64, 2])),
        )
        .unwrap();
        assert_eq!(
            out,
            tensor3(&[[[0f32], [1.], [2.], [0.]], [[0.], [0.], [3.], [4.]]])
        );
    }

    #[test]
    fn an_exclusively_owned_cache_is_written_in_place() {
        let cache = cache().into_tvalue();
        let before = element_dispatch::slice::<f32>(&cache).unwrap().as_ptr();
        let update = tensor3(&[[[1f32]], [[2.]]]).into_tvalue();
        let op = op(1, TensorScatterMode::Linear);
        let out = op
            .eval(&EvalContext::out_of_plan(), tvec!(cache, update))
            .unwrap()
            .remove(0);
        assert_eq!(
            element_dispatch::slice::<f32>(&out).unwrap().as_ptr(),
            before
        );
    }

    #[test]
    fn absent_write_indices_write_at_the_start() {
        let update = tensor3(&[[[1f32]], [[2.]]]);
        let out = run(&op(1, TensorScatterMode::Linear), tvec!(cache(), update)).unwrap();
        assert_eq!(
            out,
            tensor3(&[[[1f32], [0.], [0.], [0.]], [[2.], [0.], [0.], [0.]]])
        );
    }

    #[test]
    fn circular_mode_wraps_past_the_end() {
        let update = tensor3(&[[[1f32], [2.]], [[3.], [4.]]]);
        let out = run(
            &op(1, TensorScatterMode::Circular),
            tvec!(cache(), update, tensor1(&[3i64, 9])),
        )
        .unwrap();
        assert_eq!(
            out,
            tensor3(&[[[2f32], [0.], [0.], [1.]], [[0.], [3.], [4.], [0.]]])
        );
    }

    #[test]
    fn linear_write_past_the_end_is_out_of_bounds_and_names_the_node() {
        let update = tensor3(&[[[1f32], [2.]], [[3.], [4.]]]);
        let err = run(
            &op(1, TensorScatterMode::Linear),
            tvec!(cache(), update, tensor1(&[0i64, 3])),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.starts_with("TensorScatter node 'ts' (opset 24): "),
            "{msg}"
        );
        assert!(msg.contains("out of bounds"), "{msg}");
    }

    #[test]
    fn an_empty_update_accepts_any_start() {
        let update = Tensor::zero::<f32>(&[2, 0, 1]).unwrap();
        let out = run(
            &op(1, TensorScatterMode::Linear),
            tvec!(cache(), update, tensor1(&[9i64, -1])),
        )
        .unwrap();
        assert_eq!(out, cache());
    }

    #[test]
    fn int32_write_indices_are_a_type_error() {
        let update = tensor3(&[[[1f32]], [[2.]]]);
        let err = run(
            &op(1, TensorScatterMode::Linear),
            tvec!(cache(), update, tensor1(&[0i32, 0])),
        )
        .unwrap_err();
        assert!(err.to_string().contains("type: write_indices"), "{err}");
    }

    #[test]
    fn strings_and_symbolic_integers_are_copied() {
        let cache = tensor2(&[["a".to_string(), "b".to_string(), "c".to_string()]]);
        let out = run(
            &op(1, TensorScatterMode::Linear),
            tvec!(cache, tensor2(&[["z".to_string()]]), tensor1(&[2i64])),
        )
        .unwrap();
        assert_eq!(
            out,
            tensor2(&[["a".to_string(), "b".to_string(), "z".to_string()]])
        );
        let cache = tensor2(&[[TDim::Val(1), TDim::Val(2)]]);
        let out = run(
            &op(1, TensorScatterMode::Circular),
            tvec!(cache, tensor2(&[[TDim::Val(7)]]), tensor1(&[3i64])),
        )
        .unwrap();
        assert_eq!(out, tensor2(&[[TDim::Val(1), TDim::Val(7)]]));
    }

    #[test]
    fn facts_refuse_a_constant_out_of_bounds_write_index_at_load() {
        let o = op(1, TensorScatterMode::Linear);
        let cache = f32::fact([2, 4, 1]);
        let update = f32::fact([2, 2, 1]);
        let good = TypedFact::try_from(&tensor1(&[0i64, 2]).into_arc_tensor()).unwrap();
        assert!(o.output_facts(&[&cache, &update, &good]).is_ok());
        let bad = TypedFact::try_from(&tensor1(&[0i64, 3]).into_arc_tensor()).unwrap();
        let err = o.output_facts(&[&cache, &update, &bad]).unwrap_err();
        assert!(err.to_string().contains("out of bounds"), "{err}");
    }

    #[test]
    fn facts_check_symbolic_shapes_as_far_as_they_are_known() {
        let o = op(2, TensorScatterMode::Linear);
        let s = SymbolScope::default().sym("S");
        let cache = f32::fact(&[TDim::Val(1), TDim::Val(2), s.to_dim(), TDim::Val(4)]);
        let update = f32::fact([1, 2, 1, 4]);
        assert!(o.output_facts(&[&cache, &update]).is_ok());
        let wrong = f32::fact([1, 3, 1, 4]);
        assert!(
            o.output_facts(&[&cache, &wrong])
                .unwrap_err()
                .to_string()
                .contains("shape")
        );
        let wrong_rank = f32::fact([1, 2, 1]);
        assert!(
            o.output_facts(&[&cache, &wrong_rank])
                .unwrap_err()
                .to_string()
                .contains("rank")
        );
    }
}

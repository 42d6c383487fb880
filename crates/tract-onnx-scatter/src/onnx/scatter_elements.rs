//! ONNX `Scatter` (9, 10) and `ScatterElements` (11, 13, 16, 18): builders
//! and the inference-level op.

use scatter_kernels::Reduction;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::onnx::attributes::CheckedNode;
use crate::onnx::deviation::Deviations;
use crate::onnx::typing;
use crate::opset::ScatterOp;
use crate::site::NodeSite;

/// The `Scatter` builder; `STRICT` refuses exporter deviations ([`Deviations`]).
pub fn scatter<const STRICT: bool>(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(ScatterOp::Scatter, ctx, node, Deviations::strict_if(STRICT))
}

/// The `ScatterElements` builder; `STRICT` as for [`scatter`].
pub fn scatter_elements<const STRICT: bool>(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    build(
        ScatterOp::ScatterElements,
        ctx,
        node,
        Deviations::strict_if(STRICT),
    )
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
    Ok((
        expand(InferScatterElements {
            site: node.site,
            axis,
            reduction,
        }),
        vec![],
    ))
}

/// ScatterElements before typing: the axis may still be negative.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct InferScatterElements {
    pub site: NodeSite,
    pub axis: i64,
    pub reduction: Reduction,
}

impl Expansion for InferScatterElements {
    fn name(&self) -> StaticName {
        self.site.op.onnx_name().into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "axis: {} reduction: {}",
            self.axis, self.reduction
        )])
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
        let rank = model.outlet_fact(inputs[0])?.rank();
        let axis = crate::ops::scatter_elements::axis_position(&self.site, self.axis, rank)?;
        let (data, updates) =
            typing::wire_unified(prefix, &self.site, model, inputs[0], inputs[2])?;
        let op = crate::ops::ScatterElements::onnx(self.site.clone(), axis, self.reduction);
        model.wire_node(prefix, op, &[data, inputs[1], updates])
    }
}

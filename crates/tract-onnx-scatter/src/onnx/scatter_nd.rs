//! ONNX `ScatterND` (11, 13, 16, 18): builder and the inference-level op.

use scatter_kernels::Reduction;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::onnx::attributes::CheckedNode;
use crate::onnx::deviation::Deviations;
use crate::onnx::typing;
use crate::opset::ScatterOp;
use crate::site::NodeSite;

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

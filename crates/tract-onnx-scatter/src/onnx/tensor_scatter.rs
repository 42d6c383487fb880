//! ONNX `TensorScatter` (24): builder and the inference-level op.

use scatter_kernels::TensorScatterMode;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::onnx::attributes::CheckedNode;
use crate::onnx::deviation::Deviations;
use crate::opset::ScatterOp;
use crate::site::NodeSite;

pub fn tensor_scatter(
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
pub struct InferTensorScatter {
    pub site: NodeSite,
    pub axis: i64,
    pub mode: TensorScatterMode,
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
        let axis = crate::ops::tensor_scatter::axis_position(&self.site, self.axis, rank)?;
        let op = crate::ops::TensorScatter {
            site: self.site.clone(),
            axis,
            mode: self.mode,
            output_pool: None,
        };
        model.wire_node(prefix, op, inputs)
    }
}

//! ONNX `TensorScatter` (24): builder and the inference-level op.

use scatter_kernels::{TensorScatterMode, TensorScatterPlan};
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

/// `axis` as a position in `[1, rank - 1]`, or the kernels' "rank"/"axis"
/// error, word for word.
pub fn normalize_axis(site: &NodeSite, axis: i64, rank: usize) -> TractResult<usize> {
    // With all-ones shapes the only errors a plan can raise are the rank and
    // axis ones: the kernel stays the one place that words them.
    let ones = vec![1; rank];
    TensorScatterPlan::new(&ones, &ones, None, axis)
        .map(|plan| plan.axis())
        .map_err(|e| site.error(e))
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
        let axis = normalize_axis(&self.site, self.axis, rank)?;
        let op = crate::ops::TensorScatter {
            site: self.site.clone(),
            axis,
            mode: self.mode,
            output_pool: None,
        };
        model.wire_node(prefix, op, inputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> NodeSite {
        NodeSite::new(ScatterOp::TensorScatter, "ts", Some(24))
    }

    #[test]
    fn negative_axes_count_from_the_end() {
        assert_eq!(normalize_axis(&site(), -2, 4).unwrap(), 2);
        assert_eq!(normalize_axis(&site(), -1, 3).unwrap(), 2);
        assert_eq!(normalize_axis(&site(), 1, 3).unwrap(), 1);
    }

    #[test]
    fn the_batch_axis_and_out_of_range_axes_are_axis_errors() {
        for (axis, rank) in [(0, 3), (-3, 3), (3, 3), (-4, 3)] {
            let err = normalize_axis(&site(), axis, rank).unwrap_err().to_string();
            assert!(
                err.starts_with("TensorScatter node 'ts' (opset 24): axis"),
                "{err}"
            );
        }
    }

    #[test]
    fn rank_one_past_cache_is_a_rank_error() {
        let err = normalize_axis(&site(), -1, 1).unwrap_err().to_string();
        assert!(err.contains("rank: past_cache has rank 1"), "{err}");
    }
}

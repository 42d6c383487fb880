//! OpenVINO `ScatterElementsUpdate-12` as an ONNX custom op (any domain):
//! builder and the inference-level op.

use scatter_kernels::Reduction;
use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use crate::onnx::attributes::CheckedNode;
use crate::onnx::deviation::Deviations;
use crate::onnx::typing;
use crate::opset::ScatterOp;
use crate::site::NodeSite;

/// OpenVINO's reduction names, in the order messages list them.
const REDUCTIONS: [(&str, Reduction); 6] = [
    ("none", Reduction::None),
    ("sum", Reduction::Add),
    ("prod", Reduction::Mul),
    ("min", Reduction::Min),
    ("max", Reduction::Max),
    ("mean", Reduction::Mean),
];

pub fn scatter_elements_update(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let node = CheckedNode::new(
        ScatterOp::ScatterElementsUpdate,
        ctx,
        node,
        Deviations::Refuse,
    )?;
    node.expect_inputs(&["data", "indices", "updates", "axis"], &[])?;
    let reduction = match node.string("reduction")? {
        None => Reduction::None,
        Some(value) => REDUCTIONS
            .iter()
            .find(|(name, _)| *name == value)
            .map(|(_, r)| *r)
            .ok_or_else(|| {
                let allowed: Vec<&str> = REDUCTIONS.iter().map(|(name, _)| *name).collect();
                node.site.error(format!(
                    "reduction '{value}' is not allowed by {}; allowed: {}",
                    node.version.label(),
                    allowed.join(", ")
                ))
            })?,
    };
    let use_init_val = match node.int("use_init_val")? {
        None | Some(1) => true,
        Some(0) => false,
        Some(v) => bail!(
            node.site
                .error(format!("attribute 'use_init_val' must be 0 or 1, got {v}"))
        ),
    };
    Ok((
        expand(InferScatterElementsUpdate {
            site: node.site,
            reduction,
            use_init_val,
        }),
        vec![],
    ))
}

/// ScatterElementsUpdate before typing: the axis is the fourth input.
#[derive(Debug, Clone, Hash, PartialEq, Eq)]
pub struct InferScatterElementsUpdate {
    pub site: NodeSite,
    pub reduction: Reduction,
    pub use_init_val: bool,
}

impl Expansion for InferScatterElementsUpdate {
    fn name(&self) -> StaticName {
        "ScatterElementsUpdate".into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![format!(
            "reduction: {} use_init_val: {}",
            self.reduction, self.use_init_val
        )])
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, 4)?;
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
        let op = crate::ops::ScatterElementsUpdate {
            site: self.site.clone(),
            reduction: self.reduction,
            use_init_val: self.use_init_val,
        };
        let axis = model.outlet_fact(inputs[3])?.konst.clone();
        // A constant axis holding a symbol only the run binds stays an input.
        let known = |axis: &Arc<Tensor>| {
            crate::ops::types::known_indices(&self.site, "axis", axis).map(|k| k.is_some())
        };
        if let Some(axis) = axis.filter(|a| known(a).unwrap_or(true)) {
            let rank = model.outlet_fact(data)?.rank();
            model.wire_node(
                prefix,
                op.with_axis(&axis, rank, &SymbolValues::default())?,
                &[data, inputs[1], updates],
            )
        } else {
            model.wire_node(prefix, op, &[data, inputs[1], updates, inputs[3]])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::pb::{AttributeProto, attribute_proto::AttributeType};

    fn build(attrs: Vec<AttributeProto>) -> TractResult<InferScatterElementsUpdate> {
        let onnx = crate::onnx();
        let ctx = ParsingContext {
            onnx_operator_set_version: 18,
            framework: &onnx,
            model: &Default::default(),
            parent_graphs: vec![],
            model_dir: None,
            template: InferenceModel::default(),
        };
        let node = NodeProto {
            op_type: "ScatterElementsUpdate".into(),
            name: "seu".into(),
            input: ["data", "indices", "updates", "axis"]
                .map(String::from)
                .to_vec(),
            output: vec!["out".into()],
            attribute: attrs,
            ..Default::default()
        };
        let (op, _) = scatter_elements_update(&ctx, &node)?;
        let op = op
            .as_op()
            .downcast_ref::<Box<dyn Expansion>>()
            .expect("an expansion");
        let op = tract_core::downcast_rs::Downcast::as_any(&**op);
        Ok(op
            .downcast_ref::<InferScatterElementsUpdate>()
            .expect("this expansion")
            .clone())
    }

    fn string(name: &str, value: &str) -> AttributeProto {
        AttributeProto {
            name: name.into(),
            r#type: AttributeType::String as i32,
            s: value.as_bytes().to_vec(),
            ..Default::default()
        }
    }

    fn int(name: &str, value: i64) -> AttributeProto {
        AttributeProto {
            name: name.into(),
            r#type: AttributeType::Int as i32,
            i: value,
            ..Default::default()
        }
    }

    #[test]
    fn openvino_reduction_names_map_to_the_kernel_reductions() {
        assert_eq!(build(vec![]).unwrap().reduction, Reduction::None);
        assert!(build(vec![]).unwrap().use_init_val);
        assert_eq!(
            build(vec![string("reduction", "sum")]).unwrap().reduction,
            Reduction::Add
        );
        assert_eq!(
            build(vec![string("reduction", "prod")]).unwrap().reduction,
            Reduction::Mul
        );
        let op = build(vec![string("reduction", "mean"), int("use_init_val", 0)]).unwrap();
        assert_eq!((op.reduction, op.use_init_val), (Reduction::Mean, false));
    }

    #[test]
    fn onnx_reduction_names_are_refused_with_the_allowed_list() {
        let err = build(vec![string("reduction", "add")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("reduction 'add'") && err.contains("none, sum, prod, min, max, mean"),
            "{err}"
        );
    }

    #[test]
    fn use_init_val_must_be_zero_or_one() {
        let err = build(vec![int("use_init_val", 2)]).unwrap_err().to_string();
        assert!(err.contains("use_init_val") && err.contains('2'), "{err}");
    }
}

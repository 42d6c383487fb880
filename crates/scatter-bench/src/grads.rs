//! The gradient rows (issue 14): one `ScatterElementsGrad` or
//! `ScatterNDGrad` node of the plugin's training domain on the forward
//! workload's data, indices and updates (the same seeds, the forward's
//! reduction, `include_self` 1, `lda_coeff` 1) plus a seeded random
//! `grad_output` of data's shape. onnxruntime cannot run the domain and
//! stock tract lacks the ops: PyTorch's autograd backward of the same
//! forward is the comparison (`xtask/bench_torch_grad.py`).

use anyhow::{Context, Result};
use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::case::{Case, Gradient, Ownership, Source};
use crate::workloads::{Rng, ScatterOp, Workload, value_info, workload};

/// The rows, in table order: `<forward workload>_grad`.
pub const NAMES: [&str; 3] = ["se_add_axis1_grad", "snd_rows_grad", "snd_kv_cache_grad"];

/// The plugin's training domain and its version.
pub const DOMAIN: &str = "tract_onnx_scatter.training";
pub const DOMAIN_VERSION: i64 = 1;

/// `grad_output`'s seed per row (the forward workloads use 1 to 11).
fn seed(name: &str) -> Option<u64> {
    Some(match name {
        "se_add_axis1_grad" => 12,
        "snd_rows_grad" => 13,
        "snd_kv_cache_grad" => 14,
        _ => return None,
    })
}

/// The grad op of a forward op.
fn grad_op(op: ScatterOp) -> Option<&'static str> {
    match op {
        ScatterOp::ScatterElements => Some("ScatterElementsGrad"),
        ScatterOp::ScatterNd => Some("ScatterNDGrad"),
        ScatterOp::TensorScatter => None,
    }
}

/// The forward workload of row `name` (one of [`NAMES`]).
pub fn forward(name: &str) -> Option<Workload> {
    seed(name)?;
    workload(name.strip_suffix("_grad")?)
}

/// What row `name` differentiates.
pub fn gradient(w: &Workload) -> Gradient {
    Gradient {
        op: w.op,
        axis: w.axis,
        reduction: w.reduction,
        include_self: true,
        lda_coeff: 1.0,
    }
}

/// The one-node model: graph inputs `data`, `indices`, `updates`,
/// `grad_output`; outputs `grad_data`, `grad_updates`; every attribute
/// written (`axis` for ScatterElementsGrad only).
pub fn model_proto(name: &str, w: &Workload, g: &Gradient) -> Result<ModelProto> {
    let op = grad_op(w.op).with_context(|| format!("{name}: no gradient op for {:?}", w.op))?;
    let mut attribute = vec![];
    if w.op == ScatterOp::ScatterElements {
        attribute.push(AttributeProto {
            name: "axis".into(),
            r#type: AttributeType::Int as i32,
            i: g.axis,
            ..Default::default()
        });
    }
    attribute.push(AttributeProto {
        name: "reduction".into(),
        r#type: AttributeType::String as i32,
        s: g.reduction.as_bytes().to_vec(),
        ..Default::default()
    });
    attribute.push(AttributeProto {
        name: "include_self".into(),
        r#type: AttributeType::Int as i32,
        i: g.include_self as i64,
        ..Default::default()
    });
    attribute.push(AttributeProto {
        name: "lda_coeff".into(),
        r#type: AttributeType::Float as i32,
        f: g.lda_coeff,
        ..Default::default()
    });
    let inputs = ["data", "indices", "updates", "grad_output"];
    let graph = GraphProto {
        name: name.into(),
        input: vec![
            value_info("data", &w.data_shape, DataType::Float),
            value_info("indices", &w.indices_shape, DataType::Int64),
            value_info("updates", &w.updates_shape, DataType::Float),
            value_info("grad_output", &w.data_shape, DataType::Float),
        ],
        output: vec![
            value_info("grad_data", &w.data_shape, DataType::Float),
            value_info("grad_updates", &w.updates_shape, DataType::Float),
        ],
        node: vec![NodeProto {
            input: inputs.map(String::from).to_vec(),
            output: vec!["grad_data".into(), "grad_updates".into()],
            name: "scatter_grad".into(),
            op_type: op.into(),
            domain: DOMAIN.into(),
            attribute,
            ..Default::default()
        }],
        ..Default::default()
    };
    Ok(ModelProto {
        ir_version: 8,
        opset_import: vec![
            OperatorSetIdProto {
                domain: String::new(),
                version: 18,
            },
            OperatorSetIdProto {
                domain: DOMAIN.into(),
                version: DOMAIN_VERSION,
            },
        ],
        producer_name: "scatter-bench".into(),
        graph: Some(graph),
        ..Default::default()
    })
}

/// The case of row `name` (one of [`NAMES`]). No owned mode: the grad op
/// writes into none of its inputs, so there is nothing to move in.
pub fn case(name: &str) -> Result<Case> {
    let w = forward(name).with_context(|| format!("no gradient row named {name:?}"))?;
    let g = gradient(&w);
    let bytes = model_proto(name, &w, &g)?.encode_to_vec();
    let mut rng = Rng::new(seed(name).expect("forward() checked the name"));
    let grad_output = tensor1(&rng.f32s(w.data.len())).into_shape(&w.data_shape)?;
    let mut case = Case::from_workload(&w)?;
    case.name = name.into();
    case.source = Source::Bytes(bytes);
    case.input_names.push("grad_output".into());
    case.output_names = vec!["grad_data".into(), "grad_updates".into()];
    case.inputs.push(grad_output);
    case.ownership = Ownership::None;
    // Off the forward rows' geomeans and copy-bound target: the gradient
    // table and its own target line report these rows.
    case.copy_bound = false;
    case.summarized = false;
    case.gradient = Some(g);
    Ok(case)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_take_the_forward_inputs_and_reduction() {
        for name in NAMES {
            let case = case(name).unwrap();
            let w = forward(name).unwrap();
            assert_eq!(
                case.input_names,
                ["data", "indices", "updates", "grad_output"]
            );
            assert_eq!(case.inputs[0], w.data_tensor().unwrap(), "{name}");
            assert_eq!(case.inputs[1], w.indices_tensor().unwrap(), "{name}");
            assert_eq!(case.inputs[2], w.updates_tensor().unwrap(), "{name}");
            assert_eq!(case.inputs[3].shape(), &w.data_shape[..], "{name}");
            let g = case.gradient.as_ref().unwrap();
            assert_eq!(g.reduction, w.reduction, "{name}");
            assert_eq!(case.ownership, Ownership::None);
        }
        assert_eq!(
            case("se_add_axis1_grad")
                .unwrap()
                .gradient
                .unwrap()
                .reduction,
            "add"
        );
    }

    /// The plugin computes what the rows mean: for add (include_self 1)
    /// grad_data is grad_output; for none, grad_output with the written
    /// elements zeroed; grad_updates is grad_output gathered where each
    /// update went.
    #[test]
    fn the_plugin_runs_the_rows_as_pytorch_defines_them() {
        use crate::runner::{Mode, Runner};
        for name in ["se_add_axis1_grad", "snd_kv_cache_grad"] {
            let case = case(name).unwrap();
            let w = forward(name).unwrap();
            let runner = Runner::new(&case, &tract_onnx_scatter::onnx()).unwrap();
            assert!(!runner.supports(Mode::Owned));
            let inputs = (0..4).map(|i| runner.input(i).clone()).collect();
            let out = runner.plan().run(inputs).unwrap();
            let grad = case.inputs[3].try_as_plain_ram().unwrap();
            let grad = grad.as_slice::<f32>().unwrap();
            let gd = out[0].try_as_plain_ram().unwrap();
            let gd = gd.as_slice::<f32>().unwrap();
            let gu = out[1].try_as_plain_ram().unwrap();
            let gu = gu.as_slice::<f32>().unwrap();
            // The data element each update element lands on, row-major.
            let targets: Vec<usize> = match w.op {
                ScatterOp::ScatterElements => {
                    let (rows, cols) = (w.indices_shape[0], w.indices_shape[1]);
                    let width = w.data_shape[1];
                    assert_eq!(w.axis, 1);
                    (0..rows * cols)
                        .map(|e| (e / cols) * width + w.indices[e] as usize)
                        .collect()
                }
                _ => {
                    let k = *w.indices_shape.last().unwrap();
                    let slice: usize = w.data_shape[k..].iter().product();
                    w.indices
                        .chunks(k)
                        .flat_map(|t| {
                            let row = t
                                .iter()
                                .zip(&w.data_shape)
                                .fold(0, |acc, (&i, &d)| acc * d + i as usize);
                            (0..slice).map(move |s| row * slice + s)
                        })
                        .collect()
                }
            };
            let mut expected = grad.to_vec();
            if w.reduction == "none" {
                for &t in &targets {
                    expected[t] = 0.0;
                }
            }
            assert!(gd == &expected[..], "{name}: grad_data");
            let gathered: Vec<f32> = targets.iter().map(|&t| grad[t]).collect();
            assert!(gu == &gathered[..], "{name}: grad_updates");
        }
    }

    #[test]
    fn the_model_is_one_node_of_the_training_domain() {
        let w = forward("snd_rows_grad").unwrap();
        let model = model_proto("snd_rows_grad", &w, &gradient(&w)).unwrap();
        let graph = model.graph.unwrap();
        assert_eq!(graph.node.len(), 1);
        assert_eq!(graph.node[0].op_type, "ScatterNDGrad");
        assert_eq!(graph.node[0].domain, DOMAIN);
        assert!(
            model
                .opset_import
                .iter()
                .any(|o| o.domain == DOMAIN && o.version == 1)
        );
        let attrs: Vec<&str> = graph.node[0]
            .attribute
            .iter()
            .map(|a| a.name.as_str())
            .collect();
        assert_eq!(attrs, ["reduction", "include_self", "lda_coeff"]);
    }
}

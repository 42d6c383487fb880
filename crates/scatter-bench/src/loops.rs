//! The `Loop` rows (issue 22), models built in memory:
//!
//! - `loop_decode_256`: a decode loop of 256 steps, step `i` writing the
//!   row `row * i` (1×512) into row `i` of a 256×512 buffer with ScatterND
//!   (inputs `M` int64 scalar, `buf0` f32 [256, 512], `row` f32 [1, 512]).
//!   The buffer is loop-carried: the plugin moves it through the body, so
//!   each step costs the row, not the buffer.
//! - `loop_empty_body`: 1000 iterations of a body that passes its carried
//!   value through (`Identity`): the per-iteration overhead.

use anyhow::{Result, bail};
use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::case::{Case, Ownership, Source};
use crate::workloads::value_info;

/// The rows' names, in table order.
pub const NAMES: [&str; 2] = ["loop_decode_256", "loop_empty_body"];

/// Steps of the decode loop, and its row width.
pub const DECODE_STEPS: usize = 256;
pub const ROW: usize = 512;

/// Iterations of the empty-body loop.
pub const EMPTY_ITERATIONS: i64 = 1000;

fn node(op: &str, inputs: &[&str], output: &str, attribute: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        name: output.into(),
        op_type: op.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        attribute,
        ..Default::default()
    }
}

fn int_attr(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i,
        ..Default::default()
    }
}

/// `Loop(M, "", carried)` around `body`; the loop's output is `out`.
fn loop_model(body: GraphProto, inputs: Vec<(&str, &[usize], DataType)>, out: &[usize]) -> Vec<u8> {
    let mut loop_inputs = vec!["M".to_string(), String::new()];
    loop_inputs.push(inputs[1].0.to_string());
    let lp = NodeProto {
        name: "loop".into(),
        op_type: "Loop".into(),
        input: loop_inputs,
        output: vec!["out".into()],
        attribute: vec![AttributeProto {
            name: "body".into(),
            r#type: AttributeType::Graph as i32,
            g: Some(body),
            ..Default::default()
        }],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 16,
        }],
        graph: Some(GraphProto {
            name: "loop".into(),
            node: vec![lp],
            input: inputs
                .iter()
                .map(|(n, s, t)| value_info(n, s, *t))
                .collect(),
            output: vec![value_info("out", out, DataType::Float)],
            ..Default::default()
        }),
        ..Default::default()
    };
    model.encode_to_vec()
}

/// The body of `loop_decode_256`: `buf[i] = row * i`, cond passed through.
fn decode_body() -> GraphProto {
    let axes = TensorProto {
        name: "axes".into(),
        dims: vec![1],
        data_type: DataType::Int64 as i32,
        int64_data: vec![0],
        ..Default::default()
    };
    GraphProto {
        name: "body".into(),
        node: vec![
            node("Unsqueeze", &["i", "axes"], "i1", vec![]),
            node("Unsqueeze", &["i1", "axes"], "idx", vec![]),
            node(
                "Cast",
                &["i"],
                "fi",
                vec![int_attr("to", DataType::Float as i64)],
            ),
            node("Mul", &["row", "fi"], "upd", vec![]),
            node("ScatterND", &["buf_in", "idx", "upd"], "buf_out", vec![]),
            node("Identity", &["cond_in"], "cond_out", vec![]),
        ],
        initializer: vec![axes],
        input: vec![
            value_info("i", &[], DataType::Int64),
            value_info("cond_in", &[], DataType::Bool),
            value_info("buf_in", &[DECODE_STEPS, ROW], DataType::Float),
        ],
        output: vec![
            value_info("cond_out", &[], DataType::Bool),
            value_info("buf_out", &[DECODE_STEPS, ROW], DataType::Float),
        ],
        ..Default::default()
    }
}

/// The body of `loop_empty_body`: everything passed through.
fn empty_body() -> GraphProto {
    GraphProto {
        name: "body".into(),
        node: vec![
            node("Identity", &["cond_in"], "cond_out", vec![]),
            node("Identity", &["x_in"], "x_out", vec![]),
        ],
        input: vec![
            value_info("i", &[], DataType::Int64),
            value_info("cond_in", &[], DataType::Bool),
            value_info("x_in", &[1], DataType::Float),
        ],
        output: vec![
            value_info("cond_out", &[], DataType::Bool),
            value_info("x_out", &[1], DataType::Float),
        ],
        ..Default::default()
    }
}

/// The case of row `name` (one of [`NAMES`]).
pub fn case(name: &str) -> Result<Case> {
    let (bytes, inputs) = match name {
        "loop_decode_256" => (
            loop_model(
                decode_body(),
                vec![
                    ("M", &[], DataType::Int64),
                    ("buf0", &[DECODE_STEPS, ROW], DataType::Float),
                    ("row", &[1, ROW], DataType::Float),
                ],
                &[DECODE_STEPS, ROW],
            ),
            vec![
                tensor0(DECODE_STEPS as i64),
                Tensor::zero::<f32>(&[DECODE_STEPS, ROW])?,
                Tensor::from_shape(&[1, ROW], &vec![1f32; ROW])?,
            ],
        ),
        "loop_empty_body" => (
            loop_model(
                empty_body(),
                vec![("M", &[], DataType::Int64), ("x0", &[1], DataType::Float)],
                &[1],
            ),
            vec![tensor0(EMPTY_ITERATIONS), tensor1(&[0f32])],
        ),
        _ => bail!("unknown loop row {name:?} (known: {NAMES:?})"),
    };
    let (input_names, output_names) = crate::case::graph_names(&bytes)?;
    Ok(Case {
        name: name.into(),
        source: Source::Bytes(bytes),
        input_names,
        output_names,
        inputs,
        feedback: vec![],
        // The owned mode moves a copy of the buffer made before the call.
        ownership: if name == "loop_decode_256" {
            Ownership::CopiedBeforeEachCall
        } else {
            Ownership::None
        },
        position: None,
        typed_from_inputs: false,
        has_copy_floor: false,
        copy_bound: false,
        summarized: false,
        gradient: None,
        extras: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{Mode, Runner};

    #[test]
    fn the_decode_loop_writes_row_times_step_into_every_row() {
        let case = case("loop_decode_256").unwrap();
        let runner = Runner::new(&case, &tract_onnx_scatter::onnx()).unwrap();
        let inputs = (0..case.inputs.len())
            .map(|i| runner.input(i).clone())
            .collect();
        let out = runner.plan().run(inputs).unwrap().remove(0);
        let out = out.to_plain_array_view::<f32>().unwrap();
        for ((step, _), &v) in out.indexed_iter().map(|(i, v)| ((i[0], i[1]), v)) {
            assert_eq!(v, step as f32);
        }
    }

    #[test]
    fn both_rows_run_in_every_mode_they_support() {
        for name in NAMES {
            let case = case(name).unwrap();
            let mut runner = Runner::new(&case, &tract_onnx_scatter::onnx()).unwrap();
            let modes: Vec<Mode> = Mode::ALL
                .into_iter()
                .filter(|m| runner.supports(*m))
                .collect();
            for mode in modes {
                runner.prepare(mode).unwrap();
                runner.run(mode).unwrap();
            }
        }
    }
}

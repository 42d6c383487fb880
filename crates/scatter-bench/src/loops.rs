//! The `Loop` rows (issue 22), models built in memory: a decode loop writing one row per step
//! ([`DECODE`], and [`DECODE_16X`] into a buffer 16× larger), an empty body's per-iteration
//! overhead ([`EMPTY`]) and a greedy decoder with an `If` break flag ([`GREEDY`]).
//!
//! The buffer is input 0: the owned mode moves a copy of it made before the call, so the loop
//! owns it from its first step.

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

/// The decode loop into a buffer of as many rows as steps: 256 steps, step `i` writing the
/// row `row * i` (1×512) into row `i` of a 256×512 buffer with ScatterND (inputs `buf0` f32
/// [256, 512], `M` int64 scalar, `row` f32 [1, 512]). The buffer is loop-carried: the plugin
/// moves it through the body, so each step costs the row, not the buffer.
pub const DECODE: &str = "loop_decode_256_steps_256x512_buf";
/// The same steps into a buffer [`BIG_BUFFER_FACTOR`]× larger (4096×512; rows 256.. stay as
/// given). Written in place, its time is the 256×512 row's; copied per step, 16× it (the
/// target line compares the two).
pub const DECODE_16X: &str = "loop_decode_256_steps_4096x512_buf";
/// The per-iteration overhead: 1000 iterations of a body that passes its carried value
/// through (`Identity`).
pub const EMPTY: &str = "loop_empty_body_1000_iters";

/// The greedy decoder with a run-time `If` break flag: paddle2onnx-style
/// (`models/greedy_decoder_if.onnx`, written by
/// `onnx-testdata/control-flow/gen/paddle_style.py`), 64 steps of a 64-unit state over 256
/// tokens, each writing its token and score with ScatterElements and deciding whether to go
/// on with an `If` whose condition only the run knows (an end token no step meets).
pub const GREEDY: &str = "loop_greedy_decoder_if";

/// The rows' names, in table order.
pub const NAMES: [&str; 4] = [DECODE, DECODE_16X, EMPTY, GREEDY];

/// Steps of the decode loop, and its row width.
pub const DECODE_STEPS: usize = 256;
pub const ROW: usize = 512;

/// How many times [`DECODE_16X`]'s buffer is [`DECODE`]'s.
pub const BIG_BUFFER_FACTOR: usize = 16;

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

/// `Loop(M, "", carried)` around `body`, where the carried value is the
/// graph's input 0; the loop's output is `out`.
fn loop_model(body: GraphProto, inputs: Vec<(&str, &[usize], DataType)>, out: &[usize]) -> Vec<u8> {
    let loop_inputs = vec!["M".to_string(), String::new(), inputs[0].0.to_string()];
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

/// The body of the decode rows: `buf[i] = row * i` into a buffer of
/// `rows` rows, cond passed through.
fn decode_body(rows: usize) -> GraphProto {
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
            value_info("buf_in", &[rows, ROW], DataType::Float),
        ],
        output: vec![
            value_info("cond_out", &[], DataType::Bool),
            value_info("buf_out", &[rows, ROW], DataType::Float),
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
    if name == GREEDY {
        let path = crate::exported::dir().join("greedy_decoder_if.onnx");
        let mut rng = crate::workloads::Rng::new(29);
        let h0: Vec<f32> = (0..64).map(|_| rng.f32() * 2.0 - 1.0).collect();
        return Case::from_file(name, &path, vec![Tensor::from_shape(&[1, 64], &h0)?]);
    }
    let decode = |rows: usize| -> Result<(Vec<u8>, Vec<Tensor>)> {
        Ok((
            loop_model(
                decode_body(rows),
                vec![
                    ("buf0", &[rows, ROW], DataType::Float),
                    ("M", &[], DataType::Int64),
                    ("row", &[1, ROW], DataType::Float),
                ],
                &[rows, ROW],
            ),
            vec![
                Tensor::zero::<f32>(&[rows, ROW])?,
                tensor0(DECODE_STEPS as i64),
                Tensor::from_shape(&[1, ROW], &vec![1f32; ROW])?,
            ],
        ))
    };
    let (bytes, inputs) = match name {
        DECODE => decode(DECODE_STEPS)?,
        DECODE_16X => decode(DECODE_STEPS * BIG_BUFFER_FACTOR)?,
        EMPTY => (
            loop_model(
                empty_body(),
                vec![("x0", &[1], DataType::Float), ("M", &[], DataType::Int64)],
                &[1],
            ),
            vec![tensor1(&[0f32]), tensor0(EMPTY_ITERATIONS)],
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
        ownership: if name != EMPTY {
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
    fn the_decode_loops_write_row_times_step_into_the_first_256_rows() {
        for (name, rows) in [
            (DECODE, DECODE_STEPS),
            (DECODE_16X, DECODE_STEPS * BIG_BUFFER_FACTOR),
        ] {
            let case = case(name).unwrap();
            let runner = Runner::new(&case, &tract_onnx_scatter::onnx()).unwrap();
            let inputs = (0..case.inputs.len())
                .map(|i| runner.input(i).clone())
                .collect();
            let out = runner.plan().run(inputs).unwrap().remove(0);
            assert_eq!(out.shape(), [rows, ROW]);
            let out = out.to_plain_array_view::<f32>().unwrap();
            for ((row, _), &v) in out.indexed_iter().map(|(i, v)| ((i[0], i[1]), v)) {
                let expected = if row < DECODE_STEPS { row as f32 } else { 0. };
                assert_eq!(v, expected, "{name} row {row}");
            }
        }
    }

    /// The owned mode moves the buffer in: the loop writes into the very
    /// allocation the caller staged, with no copy of it.
    #[test]
    fn a_buffer_moved_in_as_the_owned_mode_does_is_written_in_place() {
        let case = case(DECODE_16X).unwrap();
        assert_eq!(case.ownership, Ownership::CopiedBeforeEachCall);
        let runner = Runner::new(&case, &tract_onnx_scatter::onnx()).unwrap();
        // The owned mode's staged copy: input 0, exclusively owned.
        let buf = runner.input(0).clone().into_tensor();
        let before = buf.as_ptr::<f32>().unwrap() as usize;
        let inputs = tvec![
            buf.into_tvalue(),
            runner.input(1).clone(),
            runner.input(2).clone()
        ];
        let out = runner.plan().run(inputs).unwrap().remove(0);
        assert_eq!(out.as_ptr::<f32>().unwrap() as usize, before);
    }

    #[test]
    fn every_row_runs_in_every_mode_it_supports() {
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

//! bfloat16 models through `onnx()`: read as float32 holding bfloat16
//! values, rounded where ONNX computes a bfloat16 value
//! (`tract_onnx_scatter::load::bfloat16`).

#[path = "support/model_builder.rs"]
mod model_builder;

use model_builder::*;
use tract_onnx_scatter::tract_onnx::pb::TensorProto;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::prelude::*;

/// `x` rounded to bfloat16, ties to even, written from the bits (not with
/// the `half` crate the loader uses). NaN is not fed here.
fn round_bf16(x: f32) -> f32 {
    let bits = x.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000;
    f32::from_bits(rounded)
}

fn bf16_bits(x: f32) -> i32 {
    (x.to_bits() >> 16) as i32
}

/// Values on each side of a bfloat16 tie, and some that are already
/// bfloat16 values.
fn awkward_values() -> Vec<f32> {
    vec![
        1.0 + 1.0 / 256.0,
        1.0 + 3.0 / 256.0,
        -(1.0 + 1.0 / 256.0),
        std::f32::consts::PI,
        1e-3,
        65504.0,
        1.5,
        -0.0,
    ]
}

fn run(m: &OneNode, inputs: TVec<TValue>) -> Vec<f32> {
    let out = m.run(inputs).unwrap();
    out[0]
        .to_plain_array_view::<f32>()
        .unwrap()
        .iter()
        .copied()
        .collect()
}

fn same_bits(got: &[f32], expected: &[f32]) {
    let got: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
    let expected: Vec<u32> = expected.iter().map(|v| v.to_bits()).collect();
    assert_eq!(got, expected);
}

#[test]
fn a_cast_to_bfloat16_rounds_to_nearest_even() {
    let m = OneNode::new("Cast", 13)
        .attr(attr_int("to", DataType::Bfloat16 as i64))
        .value(input("x", DataType::Float, &[8]))
        .output_elem(DataType::Bfloat16);
    let x = awkward_values();
    let got = run(&m, tvec![tensor1(&x).into_tvalue()]);
    same_bits(&got, &x.iter().map(|v| round_bf16(*v)).collect::<Vec<_>>());
}

#[test]
fn a_bfloat16_input_is_rounded_where_it_enters() {
    let m = OneNode::new("Cast", 13)
        .attr(attr_int("to", DataType::Float as i64))
        .value(input("x", DataType::Bfloat16, &[8]));
    let x = awkward_values();
    let got = run(&m, tvec![tensor1(&x).into_tvalue()]);
    same_bits(&got, &x.iter().map(|v| round_bf16(*v)).collect::<Vec<_>>());
}

#[test]
fn a_bfloat16_add_rounds_its_float32_sum_once() {
    let w = awkward_values()
        .iter()
        .map(|v| round_bf16(*v))
        .collect::<Vec<_>>();
    let m = OneNode::new("Add", 14)
        .value(input("x", DataType::Bfloat16, &[8]))
        .value(Value::Init(Box::new(TensorProto {
            name: "w".into(),
            dims: vec![8],
            data_type: DataType::Bfloat16 as i32,
            int32_data: w.iter().map(|v| bf16_bits(*v)).collect(),
            ..Default::default()
        })))
        .output_elem(DataType::Bfloat16);
    let x: Vec<f32> = [0.5f32, 1.0 / 256.0, 2.0, -1.0, 1.0, 1.0, 1.0 / 512.0, 7.0]
        .iter()
        .map(|v| round_bf16(*v))
        .collect();
    let got = run(&m, tvec![tensor1(&x).into_tvalue()]);
    let expected: Vec<f32> = x.iter().zip(&w).map(|(a, b)| round_bf16(a + b)).collect();
    same_bits(&got, &expected);
    // Some sums are not bfloat16 values: the test tells rounding from none.
    assert!(x.iter().zip(&w).any(|(a, b)| a + b != round_bf16(a + b)));
}

#[test]
fn a_bfloat16_scatter_without_reduction_moves_the_values() {
    let m = OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Bfloat16, &[4]))
        .value(init_i64("indices", &[2], &[3, -4]))
        .value(input("updates", DataType::Bfloat16, &[2]))
        .output_elem(DataType::Bfloat16);
    let got = run(
        &m,
        tvec![
            tensor1(&[1.0f32, 2.0, 3.0, 4.0]).into_tvalue(),
            tensor1(&[0.5f32, -8.0]).into_tvalue()
        ],
    );
    same_bits(&got, &[-8.0, 2.0, 3.0, 0.5]);
}

#[test]
fn a_bfloat16_scatter_that_adds_is_an_error_naming_the_node() {
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_string("reduction", "add"))
        .value(input("data", DataType::Bfloat16, &[4]))
        .value(init_i64("indices", &[2], &[3, 3]))
        .value(input("updates", DataType::Bfloat16, &[2]))
        .output_elem(DataType::Bfloat16);
    let err = m.load().unwrap_err();
    assert_eq!(
        err.root_cause().to_string(),
        "the main graph: node 'scatter_node' (ScatterElements): reduction 'add' on bfloat16 data rounds after every update, which this version does not do; reductions none, max and min are supported"
    );
}

#[test]
fn a_bfloat16_initializer_shorter_than_its_dims_is_an_error_naming_it() {
    let m = OneNode::new("Identity", 13)
        .value(Value::Init(Box::new(TensorProto {
            name: "w".into(),
            dims: vec![3],
            data_type: DataType::Bfloat16 as i32,
            int32_data: vec![1],
            ..Default::default()
        })))
        .output_elem(DataType::Bfloat16);
    let err = m.load().unwrap_err();
    assert_eq!(
        err.root_cause().to_string(),
        "the main graph: initializer 'w': bfloat16 dims [3] take 3 values, int32_data holds 1"
    );
}

/// The bfloat16 corpus (onnx's reference evaluator, PyTorch exports),
/// gated by `onnx-testdata/expected-failures.toml`.
#[test]
fn the_bfloat16_corpus_passes_but_its_expected_failures() {
    integration_tests::golden::check_bfloat16();
}

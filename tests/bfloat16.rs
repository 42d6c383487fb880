//! bfloat16 models through `onnx()`: read as float32 holding bfloat16
//! values, rounded where ONNX computes a bfloat16 value
//! (`tract_onnx_scatter::load::bfloat16`).

use crate::model_builder;

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

/// 1 + four updates of 2^-8 at one place: each sum 1 + 2^-8 rounds back to 1
/// in bfloat16 (8 significant bits), so ONNX's per-update rounding gives 1
/// where one rounding of the float32 sum would give 1.015625.
#[test]
fn a_bfloat16_scatter_that_adds_rounds_after_every_update() {
    let tiny = 1.0f32 / 256.0;
    for (op, indices, shape) in [
        (
            "ScatterElements",
            init_i64("indices", &[4], &[0, 0, 0, 0]),
            vec![4],
        ),
        (
            "ScatterND",
            init_i64("indices", &[4, 1], &[0, 0, 0, 0]),
            vec![4],
        ),
    ] {
        let m = OneNode::new(op, 18)
            .attr(attr_string("reduction", "add"))
            .value(input("data", DataType::Bfloat16, &[4]))
            .value(indices)
            .value(input("updates", DataType::Bfloat16, &shape))
            .output_elem(DataType::Bfloat16);
        let got = run(
            &m,
            tvec![
                tensor1(&[1.0f32, 2.0, 3.0, 4.0]).into_tvalue(),
                tensor1(&[tiny; 4]).into_tvalue()
            ],
        );
        same_bits(&got, &[1.0, 2.0, 3.0, 4.0]);
    }
}

/// 1.296875 (a bfloat16 value) times itself three times, rounded to
/// bfloat16 after each product, is 2.8125; the float32 product rounded once
/// is 2.828125.
#[test]
fn a_bfloat16_scatter_that_multiplies_rounds_after_every_update() {
    let step = 1.296875f32;
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_string("reduction", "mul"))
        .value(input("data", DataType::Bfloat16, &[2]))
        .value(init_i64("indices", &[3], &[1, 1, 1]))
        .value(input("updates", DataType::Bfloat16, &[3]))
        .output_elem(DataType::Bfloat16);
    let got = run(
        &m,
        tvec![
            tensor1(&[5.0f32, step]).into_tvalue(),
            tensor1(&[step; 3]).into_tvalue()
        ],
    );
    let mut want = step;
    for _ in 0..3 {
        want = round_bf16(want * step);
    }
    assert_ne!(
        want,
        round_bf16(step.powi(4)),
        "the case tells the roundings apart"
    );
    same_bits(&got, &[5.0, want]);
}

#[test]
fn a_bfloat16_scatter_elements_update_that_sums_is_an_error_naming_the_node() {
    let m = OneNode::new("ScatterElementsUpdate", 18)
        .attr(attr_string("reduction", "sum"))
        .value(input("data", DataType::Bfloat16, &[4]))
        .value(init_i64("indices", &[2], &[3, 3]))
        .value(input("updates", DataType::Bfloat16, &[2]))
        .value(init_i64("axis", &[], &[0]))
        .output_elem(DataType::Bfloat16);
    let err = m.load().unwrap_err();
    assert_eq!(
        err.root_cause().to_string(),
        "the main graph: node 'scatter_node' (ScatterElementsUpdate): reduction 'sum' on bfloat16 data is not supported; reductions none, max and min are"
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

/// A ScatterND writing one row of a `[4, 8]` cache of `elem`: the
/// KV-cache update of a decoder step, its output fed back as the next
/// call's data. The position is an input, as a decoder's is (constant
/// indices would let tract rewrite the scatter into slices).
fn kv_cache_step_of(elem: DataType) -> OneNode {
    OneNode::new("ScatterND", 18)
        .value(input("data", elem, &[4, 8]))
        .value(input("indices", DataType::Int64, &[1, 1]))
        .value(input("updates", elem, &[1, 8]))
        .output_elem(elem)
}

fn kv_cache_step() -> OneNode {
    kv_cache_step_of(DataType::Bfloat16)
}

/// The row [`kv_cache_step`] writes.
fn row_2() -> TValue {
    tensor2(&[[2i64]]).into_tvalue()
}

fn values(t: &Tensor) -> Vec<f32> {
    t.to_plain_array_view::<f32>()
        .unwrap()
        .iter()
        .copied()
        .collect()
}

fn address(t: &Tensor) -> *const f32 {
    t.try_as_plain_ram()
        .unwrap()
        .as_slice::<f32>()
        .unwrap()
        .as_ptr()
}

#[test]
fn an_owned_bfloat16_cache_fed_back_is_written_in_place() {
    let plan = kv_cache_step().compile().unwrap();
    let mut state = plan.spawn().unwrap();
    let mut cache: Vec<f32> = (0..32).map(|i| i as f32 * 0.5).collect();
    let updates = tensor2(&[[1.5f32; 8]]).into_tvalue();
    let mut data = Tensor::from_shape(&[4, 8], &cache).unwrap().into_tvalue();
    for step in 0..3 {
        let before = address(&data);
        let out = state.run(tvec![data, row_2(), updates.clone()]).unwrap();
        let out = out.into_iter().next().unwrap();
        assert_eq!(address(&out), before, "step {step}: written in place");
        cache[16..24].fill(1.5);
        same_bits(&values(&out), &cache);
        data = out;
    }
}

#[test]
fn a_bfloat16_output_written_by_the_caller_is_rounded_when_it_comes_back() {
    let plan = kv_cache_step().compile().unwrap();
    let mut state = plan.spawn().unwrap();
    let updates = tensor2(&[[1.5f32; 8]]).into_tvalue();
    let data = Tensor::zero::<f32>(&[4, 8]).unwrap().into_tvalue();
    let out = state.run(tvec![data, row_2(), updates.clone()]).unwrap();
    // The caller takes the output back (no copy: it holds it alone) and
    // writes values that are no bfloat16 values into it.
    let mut written = out.into_iter().next().unwrap().into_tensor();
    let awkward = awkward_values();
    written
        .try_as_plain_ram_mut()
        .unwrap()
        .as_slice_mut::<f32>()
        .unwrap()[..8]
        .copy_from_slice(&awkward);
    let out = state
        .run(tvec![written.into_tvalue(), row_2(), updates])
        .unwrap();
    let got = values(&out[0]);
    same_bits(
        &got[..8],
        &awkward.iter().map(|v| round_bf16(*v)).collect::<Vec<_>>(),
    );
}

#[test]
fn a_kept_input_that_is_no_bfloat16_is_rounded_on_every_call_and_left_as_it_was() {
    let plan = kv_cache_step().compile().unwrap();
    let mut data: Vec<f32> = awkward_values();
    data.extend(awkward_values().iter().map(|v| v * 3.0));
    data.extend(vec![0.0; 16]);
    let kept = Tensor::from_shape(&[4, 8], &data).unwrap().into_tvalue();
    let updates = tensor2(&[[1.5f32; 8]]).into_tvalue();
    let mut expected: Vec<f32> = data.iter().map(|v| round_bf16(*v)).collect();
    expected[16..24].fill(1.5);
    for _call in 0..2 {
        let out = plan
            .run(tvec![kept.clone(), row_2(), updates.clone()])
            .unwrap();
        same_bits(&values(&out[0]), &expected);
        same_bits(&values(&kept), &data);
    }
}

/// The bfloat16 corpus (onnx's reference evaluator, PyTorch exports),
/// gated by `onnx-testdata/expected-failures.toml`.
#[test]
fn the_bfloat16_corpus_passes_but_its_expected_failures() {
    integration_tests::golden::check_bfloat16();
}

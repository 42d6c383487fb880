//! complex64 / complex128 models through `onnx()`: read as float pairs on a
//! trailing axis of 2 (`tract_onnx_scatter::load::complex`).

use crate::model_builder;

use model_builder::*;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::prelude::*;

/// `x` given as complex pairs `[re, im]`.
fn pairs(shape: &[usize], parts: &[f32]) -> TValue {
    let mut dims = shape.to_vec();
    dims.push(2);
    Tensor::from_shape(&dims, parts).unwrap().into_tvalue()
}

#[test]
fn a_complex_scatter_nd_adds_both_parts() {
    let m = OneNode::new("ScatterND", 18)
        .attr(attr_string("reduction", "add"))
        .value(input("data", DataType::Complex64, &[3]))
        .value(init_i64("indices", &[2, 1], &[2, 2]))
        .value(input("updates", DataType::Complex64, &[2]))
        .output_elem(DataType::Complex64);
    let out = m
        .run(tvec![
            pairs(&[3], &[1.0, 1.0, 2.0, 2.0, 3.0, 3.0]),
            pairs(&[2], &[0.5, -1.0, 0.25, 4.0]),
        ])
        .unwrap();
    let out = out[0].to_plain_array_view::<f32>().unwrap();
    assert_eq!(out.shape(), &[3, 2]);
    assert_eq!(
        out.iter().copied().collect::<Vec<_>>(),
        [1.0, 1.0, 2.0, 2.0, 3.75, 6.0]
    );
}

#[test]
fn a_complex_scatter_elements_moves_whole_elements_on_a_negative_axis() {
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_int("axis", -1))
        .value(input("data", DataType::Complex128, &[1, 3]))
        .value(init_i64("indices", &[1, 2], &[-1, 0]))
        .value(input("updates", DataType::Complex128, &[1, 2]))
        .output_elem(DataType::Complex128);
    let data = Tensor::from_shape(&[1, 3, 2], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let updates = Tensor::from_shape(&[1, 2, 2], &[7.0f64, 8.0, 9.0, 10.0]).unwrap();
    let out = m
        .run(tvec![data.into_tvalue(), updates.into_tvalue()])
        .unwrap();
    let out = out[0].to_plain_array_view::<f64>().unwrap();
    assert_eq!(
        out.iter().copied().collect::<Vec<_>>(),
        [9.0, 10.0, 3.0, 4.0, 7.0, 8.0]
    );
}

#[test]
fn a_complex_scatter_that_multiplies_multiplies_complex_numbers_in_update_order() {
    // (1 + i) * (2 - i) * i = (3 + i) * i = -1 + 3i; element 0 untouched.
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_string("reduction", "mul"))
        .value(input("data", DataType::Complex64, &[2]))
        .value(init_i64("indices", &[2], &[1, 1]))
        .value(input("updates", DataType::Complex64, &[2]))
        .output_elem(DataType::Complex64);
    let out = m
        .run(tvec![
            pairs(&[2], &[7.0, 8.0, 1.0, 1.0]),
            pairs(&[2], &[2.0, -1.0, 0.0, 1.0]),
        ])
        .unwrap();
    let out = out[0].to_plain_array_view::<f32>().unwrap();
    assert_eq!(
        out.iter().copied().collect::<Vec<_>>(),
        [7.0, 8.0, -1.0, 3.0]
    );
}

#[test]
fn a_complex_scatter_s_axis_counts_the_complex_axes_not_the_pair_axis() {
    // Complex data of rank 1: axis 1 is past its rank, though the float
    // pairs have a second axis.
    let m = OneNode::new("ScatterElements", 18)
        .attr(attr_int("axis", 1))
        .value(input("data", DataType::Complex64, &[3]))
        .value(init_i64("indices", &[1], &[0]))
        .value(input("updates", DataType::Complex64, &[1]))
        .output_elem(DataType::Complex64);
    let err = m.compile().unwrap_err();
    insta::assert_snapshot!(format!("{err:#}"));
}

#[test]
fn a_complex_scatter_nd_s_index_tuple_longer_than_the_complex_rank_is_named() {
    // Complex data [3]: a tuple of 2 would address the pair axis.
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Complex64, &[3]))
        .value(init_i64("indices", &[1, 2], &[0, 1]))
        .value(input("updates", DataType::Complex64, &[1]))
        .output_elem(DataType::Complex64);
    let err = m.compile().unwrap_err();
    insta::assert_snapshot!(format!("{err:#}"));
}

#[test]
fn a_complex_scatter_s_out_of_range_index_names_the_complex_dim() {
    let m = OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Complex128, &[3]))
        .value(init_i64("indices", &[1], &[3]))
        .value(input("updates", DataType::Complex128, &[1]))
        .output_elem(DataType::Complex128);
    let err = m.compile().unwrap_err();
    insta::assert_snapshot!(format!("{err:#}"));
}

#[test]
fn a_complex_scatter_that_takes_the_max_is_an_error_naming_the_node() {
    let m = OneNode::new("ScatterND", 18)
        .attr(attr_string("reduction", "max"))
        .value(input("data", DataType::Complex64, &[3]))
        .value(init_i64("indices", &[1, 1], &[0]))
        .value(input("updates", DataType::Complex64, &[1]))
        .output_elem(DataType::Complex64);
    let err = m.load().unwrap_err();
    assert_eq!(
        err.root_cause().to_string(),
        "the main graph: node 'scatter_node' (ScatterND): reduction 'max' on complex data: complex numbers have no order (supported: none, add, mul)"
    );
}

#[test]
fn a_complex_value_reaching_an_op_without_complex_support_is_an_error_naming_it() {
    let m = OneNode::new("Add", 14)
        .value(input("a", DataType::Complex64, &[3]))
        .value(input("b", DataType::Complex64, &[3]))
        .output_elem(DataType::Complex64);
    let err = m.load().unwrap_err();
    let message = err.root_cause().to_string();
    assert!(
        message.starts_with("the main graph: node 'scatter_node' (Add): reads a complex value;"),
        "{message}"
    );
}

/// The complex corpus (onnx's reference evaluator), gated by
/// `onnx-testdata/expected-failures.toml`.
#[test]
fn the_complex_corpus_passes_but_its_expected_failures() {
    integration_tests::golden::check_complex();
}

/// The loader's mark of a complex scatter is an attribute a model could
/// carry itself: on float data without the pair axis, or with a value
/// the loader never sets, it is an error naming the node, not a panic.
#[test]
fn a_model_that_marks_its_own_scatter_complex_gets_an_error_naming_the_node() {
    let marked = |elem_type: i64| {
        OneNode::new("ScatterND", 18)
            .attr(attr_int("tract_onnx_scatter.elem_type", elem_type))
            .value(input("data", DataType::Float, &[2, 3]))
            .value(init_i64("indices", &[1, 1], &[0]))
            .value(input("updates", DataType::Float, &[1, 3]))
            .output_elem(DataType::Float)
    };
    let no_pairs = marked(DataType::Complex64 as i64).compile().unwrap_err();
    insta::assert_snapshot!(format!("{no_pairs:#}"));
    let unknown = marked(99).load().unwrap_err();
    insta::assert_snapshot!(format!("{unknown:#}"));
}

/// `x` of complex dims `[2, 3]`, values `k + 10k i` in row-major order.
fn numbered_2x3() -> TValue {
    let parts: Vec<f32> = (0..6).flat_map(|k| [k as f32, 10.0 * k as f32]).collect();
    pairs(&[2, 3], &parts)
}

#[test]
fn a_complex_tile_repeats_whole_elements() {
    let m = OneNode::new("Tile", 13)
        .value(input("x", DataType::Complex64, &[2, 3]))
        .value(init_i64("repeats", &[2], &[1, 2]))
        .output_elem(DataType::Complex64);
    let out = m.run(tvec![numbered_2x3()]).unwrap();
    let out = out[0].to_plain_array_view::<f32>().unwrap();
    assert_eq!(out.shape(), &[2, 6, 2]);
    let re: Vec<f32> = out.iter().step_by(2).copied().collect();
    assert_eq!(re, [0., 1., 2., 0., 1., 2., 3., 4., 5., 3., 4., 5.]);
    let im: Vec<f32> = out.iter().skip(1).step_by(2).copied().collect();
    assert_eq!(im, re.iter().map(|r| r * 10.0).collect::<Vec<_>>());
}

#[test]
fn a_complex_flatten_keeps_each_element_whole() {
    let m = OneNode::new("Flatten", 13)
        .attr(attr_int("axis", -1))
        .value(input("x", DataType::Complex128, &[1, 2, 3]))
        .output_elem(DataType::Complex128);
    let parts: Vec<f64> = (0..6).flat_map(|k| [k as f64, -(k as f64)]).collect();
    let x = Tensor::from_shape(&[1, 2, 3, 2], &parts).unwrap();
    let out = m.run(tvec![x.into_tvalue()]).unwrap();
    let out = out[0].to_plain_array_view::<f64>().unwrap();
    // axis -1 of complex [1, 2, 3]: [1 * 2, 3], each element (re, im).
    assert_eq!(out.shape(), &[2, 3, 2]);
    assert_eq!(out.iter().copied().collect::<Vec<_>>(), parts);
}

#[test]
fn a_complex_split_on_a_negative_axis_splits_the_complex_axis() {
    let m = OneNode::new("Split", 13)
        .attr(attr_int("axis", -1))
        .value(input("x", DataType::Complex64, &[2, 3]))
        .value(init_i64("split", &[1], &[3]))
        .output_elem(DataType::Complex64);
    let out = m.run(tvec![numbered_2x3()]).unwrap();
    // One part of the whole axis: the input, pairs intact.
    assert_eq!(out[0].shape(), &[2, 3, 2]);
    assert_eq!(out[0].clone().into_tensor(), numbered_2x3().into_tensor());
}

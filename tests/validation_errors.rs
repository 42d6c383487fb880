//! Every distinct validation error the plugin produces through `onnx()`, one
//! case each, as insta snapshots of the error chain (outermost context
//! first, joined with " | "). Each test also pins the stage the error
//! surfaces at: model load (`model_for_read`), typing/optimisation
//! (`into_optimized`), or run time.

use crate::model_builder;

use model_builder::*;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::prelude::*;

// ---------------------------------------------------------------------------
// Models.
// ---------------------------------------------------------------------------

/// `op` on data f32 [3, 3], indices int64 [2, 3], updates f32 [2, 3]
/// (ScatterND: indices [2, 1], updates [2, 3]).
fn model(op: &str, opset: i64) -> OneNode {
    let (indices, updates): (&[i64], &[i64]) = if op == "ScatterND" {
        (&[2, 1], &[2, 3])
    } else {
        (&[2, 3], &[2, 3])
    };
    shaped(op, opset, DataType::Float, &[3, 3], indices, updates)
}

fn shaped(
    op: &str,
    opset: i64,
    elem: DataType,
    data: &[i64],
    indices: &[i64],
    updates: &[i64],
) -> OneNode {
    OneNode::new(op, opset)
        .output_elem(elem)
        .value(input("data", elem, data))
        .value(input("indices", DataType::Int64, indices))
        .value(input("updates", elem, updates))
}

fn symbolic(op: &str, opset: i64, data: Vec<Dim>, indices: Vec<Dim>, updates: Vec<Dim>) -> OneNode {
    OneNode::new(op, opset)
        .value(input_sym("data", DataType::Float, data))
        .value(input_sym("indices", DataType::Int64, indices))
        .value(input_sym("updates", DataType::Float, updates))
}

fn set_elem(m: &mut OneNode, ix: usize, to: DataType) {
    match &mut m.values[ix] {
        Value::Input { elem, .. } => *elem = to,
        Value::Init(_) => panic!("input {ix} is an initializer"),
    }
}

// ---------------------------------------------------------------------------
// Stages.
// ---------------------------------------------------------------------------

/// The chain of the error `model_for_read` gives.
fn load_error(m: &OneNode) -> String {
    match no_panic("load", || m.load()) {
        Ok(_) => panic!(
            "{} at opset {} loaded, expected an error at load",
            m.op_type, m.opset
        ),
        Err(e) => chain(&e),
    }
}

/// The chain of the error typing/optimising gives, on a model that loads.
fn compile_error(m: &OneNode) -> String {
    let model = m
        .load()
        .unwrap_or_else(|e| panic!("expected the model to load: {}", chain(&e)));
    match no_panic("compile", || {
        model.into_optimized().and_then(|t| t.into_runnable())
    }) {
        Ok(_) => panic!(
            "{} at opset {} compiled, expected an error",
            m.op_type, m.opset
        ),
        Err(e) => chain(&e),
    }
}

/// The chain of the error running gives, on a model that compiles.
fn run_error(m: &OneNode, inputs: TVec<TValue>) -> String {
    let runnable = m
        .compile()
        .unwrap_or_else(|e| panic!("expected the model to compile: {}", chain(&e)));
    match no_panic("run", || runnable.run(inputs)) {
        Ok(out) => panic!("ran and gave {:?}, expected an error", out[0]),
        Err(e) => chain(&e),
    }
}

fn run(m: &OneNode, inputs: TVec<TValue>) -> Tensor {
    let out = no_panic("run", || m.run(inputs))
        .unwrap_or_else(|e| panic!("expected a run: {}", chain(&e)));
    out[0].clone().into_tensor()
}

fn data() -> TValue {
    tensor2(&[[1f32, 2., 3.], [4., 5., 6.], [7., 8., 9.]]).into_tvalue()
}

// ---------------------------------------------------------------------------
// Op versions: at load.
// ---------------------------------------------------------------------------

#[test]
fn scatter_nd_at_opset_10_does_not_exist_yet() {
    snap!(
        "scatter_nd_below_first_version",
        load_error(&model("ScatterND", 10))
    );
}

#[test]
fn scatter_elements_at_opset_10_does_not_exist_yet() {
    snap!(
        "scatter_elements_below_first_version",
        load_error(&model("ScatterElements", 10))
    );
}

#[test]
fn scatter_at_opset_8_does_not_exist_yet() {
    snap!(
        "scatter_below_first_version",
        load_error(&model("Scatter", 8))
    );
}

#[test]
fn scatter_at_opset_11_is_deprecated_in_favour_of_scatter_elements() {
    snap!("scatter_deprecated", load_error(&model("Scatter", 11)));
}

// ---------------------------------------------------------------------------
// Attributes: at load.
// ---------------------------------------------------------------------------

#[test]
fn reduction_on_scatter_elements_13_is_an_undefined_attribute() {
    let m = model("ScatterElements", 13)
        .attr(attr_string("reduction", "add"))
        .strict(true);
    snap!(
        "undefined_attribute_reduction_scatter_elements_13",
        load_error(&m)
    );
}

#[test]
fn reduction_on_scatter_9_is_an_undefined_attribute() {
    let m = model("Scatter", 9).attr(attr_string("reduction", "none"));
    snap!("undefined_attribute_reduction_scatter_9", load_error(&m));
}

#[test]
fn foo_on_scatter_nd_18_is_an_undefined_attribute() {
    let m = model("ScatterND", 18).attr(attr_int("foo", 7));
    snap!("undefined_attribute_foo_scatter_nd_18", load_error(&m));
}

#[test]
fn a_reduction_given_twice_is_refused_instead_of_reading_the_first() {
    let m = model("ScatterElements", 18)
        .attr(attr_string("reduction", "add"))
        .attr(attr_string("reduction", "foo"));
    snap!("repeated_attribute_reduction", load_error(&m));
}

#[test]
fn axis_on_scatter_nd_13_is_an_undefined_attribute_and_it_has_no_attributes() {
    let m = model("ScatterND", 13).attr(attr_int("axis", 0));
    snap!("undefined_attribute_axis_scatter_nd_13", load_error(&m));
}

#[test]
fn reduction_max_at_opset_16_is_not_allowed_in_strict_mode() {
    let m = model("ScatterElements", 16)
        .attr(attr_string("reduction", "max"))
        .strict(true);
    snap!("disallowed_reduction_max_at_16", load_error(&m));
}

#[test]
fn reduction_foo_at_opset_18_is_not_allowed() {
    let m = model("ScatterND", 18).attr(attr_string("reduction", "foo"));
    snap!("disallowed_reduction_foo_at_18", load_error(&m));
}

#[test]
fn reduction_mean_at_opset_18_is_not_an_onnx_reduction() {
    let m = model("ScatterElements", 18).attr(attr_string("reduction", "mean"));
    snap!("disallowed_reduction_mean_at_18", load_error(&m));
}

#[test]
fn axis_given_as_a_string_is_an_attribute_type_error() {
    let m = model("ScatterElements", 13).attr(attr_string("axis", "1"));
    snap!("attribute_wrong_type_axis_string", load_error(&m));
}

#[test]
fn reduction_given_as_an_int_is_an_attribute_type_error() {
    let m = model("ScatterND", 18).attr(attr_int("reduction", 1));
    snap!("attribute_wrong_type_reduction_int", load_error(&m));
}

#[test]
fn reduction_that_is_not_utf8_is_an_attribute_error() {
    let mut attr = attr_string("reduction", "");
    attr.s = vec![0xff, 0xfe];
    let m = model("ScatterElements", 18).attr(attr);
    snap!("attribute_reduction_not_utf8", load_error(&m));
}

// ---------------------------------------------------------------------------
// Inputs: at load.
// ---------------------------------------------------------------------------

#[test]
fn two_inputs_is_an_input_count_error() {
    let m = model("ScatterElements", 13).node_inputs(&["data", "indices"]);
    snap!("wrong_input_count", load_error(&m));
}

#[test]
fn an_empty_indices_input_name_is_a_missing_required_input() {
    let m = model("ScatterND", 13).node_inputs(&["data", "", "updates"]);
    snap!("empty_required_input", load_error(&m));
}

// ---------------------------------------------------------------------------
// Axis: at typing.
// ---------------------------------------------------------------------------

#[test]
fn axis_2_on_rank_2_data_is_out_of_range_at_load() {
    let m = model("ScatterElements", 13).attr(attr_int("axis", 2));
    snap!("axis_out_of_range_positive", compile_error(&m));
}

#[test]
fn axis_minus_3_on_rank_2_data_is_out_of_range_at_load() {
    let m = model("Scatter", 10).attr(attr_int("axis", -3));
    snap!("axis_out_of_range_negative", compile_error(&m));
}

#[test]
fn rank_0_data_has_no_valid_axis() {
    let m = shaped("ScatterElements", 18, DataType::Float, &[], &[], &[]);
    snap!("axis_rank_0_data", compile_error(&m));
}

// ---------------------------------------------------------------------------
// Ranks: at typing (concrete shapes and symbolic ones, one kernel rule).
// ---------------------------------------------------------------------------

#[test]
fn rank_1_indices_on_rank_2_data_is_a_rank_error() {
    let m = shaped("ScatterElements", 13, DataType::Float, &[3, 3], &[3], &[3]);
    snap!("rank_elements_indices_concrete", compile_error(&m));
}

#[test]
fn rank_1_indices_on_symbolic_rank_2_data_is_a_rank_error() {
    let m = symbolic(
        "ScatterElements",
        13,
        vec!["N".into(), 3.into()],
        vec![3.into()],
        vec![3.into()],
    );
    snap!("rank_elements_indices_symbolic", compile_error(&m));
}

#[test]
fn rank_1_updates_with_rank_2_indices_on_symbolic_data_is_the_runs_updates_shape_error() {
    let m = symbolic(
        "ScatterElements",
        13,
        vec!["N".into(), 3.into()],
        vec![2.into(), 3.into()],
        vec![6.into()],
    );
    snap!("rank_elements_updates_symbolic", compile_error(&m));
}

#[test]
fn rank_0_data_is_a_scatter_nd_rank_error() {
    let m = shaped("ScatterND", 18, DataType::Float, &[], &[1, 0], &[1]);
    snap!("rank_nd_data_0", compile_error(&m));
}

#[test]
fn rank_0_indices_is_a_scatter_nd_rank_error() {
    let m = shaped("ScatterND", 18, DataType::Float, &[3, 3], &[], &[3, 3]);
    snap!("rank_nd_indices_0_concrete", compile_error(&m));
}

#[test]
fn rank_0_indices_on_symbolic_data_is_a_scatter_nd_rank_error() {
    let m = symbolic(
        "ScatterND",
        18,
        vec!["N".into(), 3.into()],
        vec![],
        vec!["N".into(), 3.into()],
    );
    snap!("rank_nd_indices_0_symbolic", compile_error(&m));
}

#[test]
fn index_tuples_longer_than_the_data_rank_are_a_scatter_nd_error() {
    let m = shaped("ScatterND", 18, DataType::Float, &[3, 3], &[2, 3], &[2]);
    snap!("nd_k_greater_than_rank_concrete", compile_error(&m));
}

#[test]
fn index_tuples_longer_than_the_symbolic_data_rank_are_a_scatter_nd_error() {
    let m = symbolic(
        "ScatterND",
        18,
        vec!["N".into(), 3.into()],
        vec![2.into(), 3.into()],
        vec![2.into()],
    );
    snap!("nd_k_greater_than_rank_symbolic", compile_error(&m));
}

// ---------------------------------------------------------------------------
// Shapes: at typing.
// ---------------------------------------------------------------------------

#[test]
fn updates_shaped_unlike_indices_is_a_shape_error() {
    let m = shaped(
        "ScatterElements",
        13,
        DataType::Float,
        &[3, 3],
        &[2, 3],
        &[3, 2],
    );
    snap!("shape_updates_not_indices_concrete", compile_error(&m));
}

#[test]
fn updates_shaped_unlike_indices_on_symbolic_data_is_a_shape_error() {
    let m = symbolic(
        "ScatterElements",
        13,
        vec!["N".into(), 3.into()],
        vec![2.into(), 3.into()],
        vec![3.into(), 2.into()],
    );
    snap!("shape_updates_not_indices_symbolic", compile_error(&m));
}

#[test]
fn indices_longer_than_data_off_the_axis_is_a_shape_error() {
    let m = shaped(
        "ScatterElements",
        13,
        DataType::Float,
        &[3, 3],
        &[4, 3],
        &[4, 3],
    )
    .attr(attr_int("axis", 1));
    snap!("shape_non_axis_dim_concrete", compile_error(&m));
}

#[test]
fn indices_longer_than_symbolic_data_off_the_axis_is_a_shape_error() {
    let m = symbolic(
        "ScatterElements",
        13,
        vec![3.into(), "N".into()],
        vec![4.into(), 3.into()],
        vec![4.into(), 3.into()],
    )
    .attr(attr_int("axis", 1));
    snap!("shape_non_axis_dim_symbolic", compile_error(&m));
}

#[test]
fn scatter_nd_updates_not_indices_prefix_plus_data_suffix_is_a_shape_error() {
    let m = shaped("ScatterND", 18, DataType::Float, &[3, 3], &[2, 1], &[2, 2]);
    snap!("shape_nd_updates_concrete", compile_error(&m));
}

#[test]
fn scatter_nd_updates_not_indices_prefix_plus_symbolic_data_suffix_is_a_shape_error() {
    let m = symbolic(
        "ScatterND",
        18,
        vec!["N".into(), 3.into()],
        vec![2.into(), 1.into()],
        vec![2.into(), 2.into()],
    );
    snap!("shape_nd_updates_symbolic", compile_error(&m));
}

// ---------------------------------------------------------------------------
// Types: at typing.
// ---------------------------------------------------------------------------

#[test]
fn f32_data_with_f64_updates_is_a_type_error() {
    let mut m = model("ScatterElements", 18);
    set_elem(&mut m, 2, DataType::Double);
    snap!("type_data_updates_mismatch", compile_error(&m));
}

#[test]
fn float_indices_are_a_type_error() {
    let mut m = model("ScatterND", 18);
    set_elem(&mut m, 1, DataType::Float);
    snap!("type_float_indices", compile_error(&m));
}

#[test]
fn string_data_cannot_do_reduction_mul() {
    let m = model("ScatterElements", 18).attr(attr_string("reduction", "mul"));
    let mut m = m;
    set_elem(&mut m, 0, DataType::String);
    set_elem(&mut m, 2, DataType::String);
    m.output_elem = DataType::String;
    snap!("reduction_unsupported_for_string", compile_error(&m));
}

#[test]
fn bool_data_with_reduction_add_is_legal_and_ors() {
    let mut m = shaped(
        "ScatterElements",
        18,
        DataType::Bool,
        &[2, 2],
        &[1, 2],
        &[1, 2],
    )
    .attr(attr_string("reduction", "add"));
    m.output_elem = DataType::Bool;
    let out = run(
        &m,
        tvec!(
            tensor2(&[[false, true], [false, false]]).into(),
            tensor2(&[[1i64, 0]]).into(),
            tensor2(&[[true, false]]).into()
        ),
    );
    assert_eq!(out, tensor2(&[[false, true], [true, false]]));
}

#[test]
fn string_data_with_reduction_add_is_legal_and_concatenates() {
    let mut m = shaped("ScatterND", 18, DataType::String, &[2], &[2, 1], &[2])
        .attr(attr_string("reduction", "add"));
    m.output_elem = DataType::String;
    let s = |v: &[&str]| tensor1(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let out = run(
        &m,
        tvec!(
            s(&["a", "b"]).into(),
            tensor2(&[[1i64], [1]]).into(),
            s(&["c", "d"]).into()
        ),
    );
    assert_eq!(out, s(&["a", "bcd"]));
}

// ---------------------------------------------------------------------------
// Index values: at load when constant, else at run time.
// ---------------------------------------------------------------------------

#[test]
fn constant_scatter_elements_indices_out_of_bounds_fail_at_load_not_at_run() {
    let m = OneNode::new("ScatterElements", 18)
        .value(input("data", DataType::Float, &[3, 3]))
        .value(init_i64("indices", &[2, 3], &[1, 0, 2, 0, 3, 1]))
        .value(input("updates", DataType::Float, &[2, 3]));
    snap!("constant_indices_out_of_bounds_elements", compile_error(&m));
}

#[test]
fn constant_scatter_nd_indices_out_of_bounds_fail_at_load_not_at_run() {
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[3, 3]))
        .value(init_i64("indices", &[2, 1], &[0, -4]))
        .value(input("updates", DataType::Float, &[2, 3]));
    snap!("constant_indices_out_of_bounds_nd", compile_error(&m));
}

#[test]
fn a_scatter_elements_index_out_of_bounds_fails_at_run_time() {
    let m = model("ScatterElements", 18);
    let updates = tensor2(&[[1f32, 1., 1.], [2., 2., 2.]]);
    let err = run_error(
        &m,
        tvec!(
            data(),
            tensor2(&[[1i64, 0, 2], [0, 2, 3]]).into(),
            updates.into()
        ),
    );
    snap!("run_time_out_of_bounds_elements", err);
}

#[test]
fn a_scatter_nd_index_out_of_bounds_fails_at_run_time() {
    let m = model("ScatterND", 18);
    let updates = tensor2(&[[1f32, 1., 1.], [2., 2., 2.]]);
    let err = run_error(
        &m,
        tvec!(data(), tensor2(&[[0i64], [-4]]).into(), updates.into()),
    );
    snap!("run_time_out_of_bounds_nd", err);
}

#[test]
fn a_negative_scatter_nd_index_counts_from_the_end() {
    let m = model("ScatterND", 18);
    let updates = tensor2(&[[10f32, 11., 12.], [20., 21., 22.]]);
    let out = run(
        &m,
        tvec!(data(), tensor2(&[[-1i64], [0]]).into(), updates.into()),
    );
    assert_eq!(
        out,
        tensor2(&[[20f32, 21., 22.], [4., 5., 6.], [10., 11., 12.]])
    );
}

#[test]
fn a_negative_constant_scatter_nd_index_counts_from_the_end() {
    let m = OneNode::new("ScatterND", 18)
        .value(input("data", DataType::Float, &[3, 3]))
        .value(init_i64("indices", &[1, 1], &[-3]))
        .value(input("updates", DataType::Float, &[1, 3]));
    let out = run(&m, tvec!(data(), tensor2(&[[0f32, 0., 0.]]).into()));
    assert_eq!(out, tensor2(&[[0f32, 0., 0.], [4., 5., 6.], [7., 8., 9.]]));
}

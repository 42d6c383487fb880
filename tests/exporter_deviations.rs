//! Known exporter deviations (a reduction that only a later version of the
//! same op defines): `onnx()` loads them with the later version's semantics
//! and exactly one `log::warn!` per node; `onnx_strict()` refuses them with
//! the opset error. Warning text and strict error are insta snapshots.

use crate::log_capture;
use crate::model_builder;

use log_capture::warnings_of;
use model_builder::*;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::prelude::*;

/// ScatterElements axis 1 on data [2, 3]: row 0 writes column 1 twice.
fn elements(opset: i64, reduction: &str) -> OneNode {
    OneNode::new("ScatterElements", opset)
        .attr(attr_int("axis", 1))
        .attr(attr_string("reduction", reduction))
        .value(input("data", DataType::Float, &[2, 3]))
        .value(input("indices", DataType::Int64, &[2, 2]))
        .value(input("updates", DataType::Float, &[2, 2]))
}

fn elements_inputs() -> TVec<TValue> {
    tvec!(
        tensor2(&[[1.0f32, 5.0, 3.0], [4.0, 2.0, 6.0]]).into(),
        tensor2(&[[1i64, 1], [0, 2]]).into(),
        tensor2(&[[7.0f32, -1.0], [0.5, 9.0]]).into()
    )
}

/// ScatterND on data [3, 2], rows 2 and 2 again.
fn nd(opset: i64, reduction: &str) -> OneNode {
    OneNode::new("ScatterND", opset)
        .attr(attr_string("reduction", reduction))
        .value(input("data", DataType::Float, &[3, 2]))
        .value(input("indices", DataType::Int64, &[2, 1]))
        .value(input("updates", DataType::Float, &[2, 2]))
}

fn nd_inputs() -> TVec<TValue> {
    tvec!(
        tensor2(&[[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]]).into(),
        tensor2(&[[2i64], [-1]]).into(),
        tensor2(&[[9.0f32, 0.0], [4.0, 7.0]]).into()
    )
}

fn run(m: &OneNode, inputs: TVec<TValue>) -> Tensor {
    let out = m
        .run(inputs)
        .unwrap_or_else(|e| panic!("{} at opset {}: {}", m.op_type, m.opset, chain(&e)));
    out[0].clone().into_tensor()
}

#[test]
fn scatter_elements_max_at_opset_16_loads_with_version_18_semantics_and_one_warning() {
    for opset in [16, 17] {
        let (out, warnings) = warnings_of(|| run(&elements(opset, "max"), elements_inputs()));
        assert_eq!(out, tensor2(&[[1.0f32, 7.0, 3.0], [4.0, 2.0, 9.0]]));
        assert_eq!(warnings.len(), 1, "opset {opset}: {warnings:?}");
        assert!(warnings[0].contains(&format!("opset {opset}")));
    }
}

#[test]
fn scatter_elements_min_at_opset_16_loads_with_version_18_semantics() {
    let (out, warnings) = warnings_of(|| run(&elements(16, "min"), elements_inputs()));
    assert_eq!(out, tensor2(&[[1.0f32, -1.0, 3.0], [0.5, 2.0, 6.0]]));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

#[test]
fn scatter_nd_max_and_min_at_opset_16_as_tf2onnx_writes_them() {
    let (max, w_max) = warnings_of(|| run(&nd(16, "max"), nd_inputs()));
    assert_eq!(max, tensor2(&[[1.0f32, 2.0], [3.0, 4.0], [9.0, 7.0]]));
    let (min, w_min) = warnings_of(|| run(&nd(16, "min"), nd_inputs()));
    assert_eq!(min, tensor2(&[[1.0f32, 2.0], [3.0, 4.0], [4.0, 0.0]]));
    assert_eq!((w_max.len(), w_min.len()), (1, 1));
}

#[test]
fn a_reduction_at_opset_13_loads_with_version_16_semantics() {
    let m = OneNode::new("ScatterND", 13)
        .attr(attr_string("reduction", "add"))
        .value(input("data", DataType::Float, &[3, 2]))
        .value(input("indices", DataType::Int64, &[2, 1]))
        .value(input("updates", DataType::Float, &[2, 2]));
    let (out, warnings) = warnings_of(|| run(&m, nd_inputs()));
    assert_eq!(out, tensor2(&[[1.0f32, 2.0], [3.0, 4.0], [18.0, 13.0]]));
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("ScatterND-16"), "{}", warnings[0]);
}

#[test]
fn a_node_valid_at_its_opset_logs_nothing() {
    let (_, warnings) = warnings_of(|| run(&elements(18, "max"), elements_inputs()));
    assert!(warnings.is_empty(), "{warnings:?}");
    let (_, warnings) = warnings_of(|| run(&nd(16, "add"), nd_inputs()));
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn deviation_warning_names_node_opset_deviation_and_semantics() {
    let (_, warnings) = warnings_of(|| elements(16, "max").load().map(drop));
    assert_eq!(warnings.len(), 1);
    snap!("deviation_warning_scatter_elements_max_at_16", &warnings[0]);
    let (_, warnings) = warnings_of(|| nd(16, "min").load().map(drop));
    snap!("deviation_warning_scatter_nd_min_at_16", &warnings[0]);
}

#[test]
fn strict_mode_refuses_the_deviation_with_the_opset_error() {
    let err = elements(16, "max")
        .strict(true)
        .load()
        .map(drop)
        .unwrap_err();
    snap!("deviation_refused_in_strict_mode", chain(&err));
    let err = nd(17, "min").strict(true).load().map(drop).unwrap_err();
    assert!(
        chain(&err).contains("reduction 'min' is not allowed by ScatterND-16"),
        "{}",
        chain(&err)
    );
}

#[test]
fn a_reduction_no_version_allows_is_the_same_error_in_both_modes() {
    let compat = chain(&elements(16, "foo").load().map(drop).unwrap_err());
    let strict = chain(
        &elements(16, "foo")
            .strict(true)
            .load()
            .map(drop)
            .unwrap_err(),
    );
    assert_eq!(compat, strict);
    assert!(
        compat.contains("'foo'") && compat.contains("ScatterElements-16"),
        "{compat}"
    );
}

#[test]
fn an_attribute_no_version_defines_stays_an_error_in_compat_mode() {
    let m = elements(16, "max").attr(attr_int("foo", 1));
    let err = chain(&m.load().map(drop).unwrap_err());
    assert!(err.contains("'foo'"), "{err}");
    // Scatter-9 has no later version: ScatterElements replaces it.
    let m = OneNode::new("Scatter", 9)
        .attr(attr_string("reduction", "add"))
        .value(input("data", DataType::Float, &[2, 3]))
        .value(input("indices", DataType::Int64, &[2, 2]))
        .value(input("updates", DataType::Float, &[2, 2]));
    let err = chain(&m.load().map(drop).unwrap_err());
    assert!(
        err.contains("'reduction'") && err.contains("Scatter-9"),
        "{err}"
    );
}

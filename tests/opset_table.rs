//! The opset contract table, row by row: one-node ONNX models built in
//! memory for every op × opset × `reduction` attribute, loaded through
//! `tract_onnx_scatter::onnx_strict()`. Legal rows run and match a naive
//! reference; illegal rows fail at model load with a message naming the op,
//! the node, the opset and the offending attribute or value.
//!
//! Then the same rows through `onnx()`, which also accepts exporter
//! deviations: an illegal row that a later version of the same op accepts
//! (max/min at 16 and 17, a reduction at 11 to 15) runs with that
//! version's semantics; every other illegal row fails exactly as in strict.

use crate::model_builder;

use model_builder::*;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::prelude::*;

const OPS: [&str; 3] = ["Scatter", "ScatterElements", "ScatterND"];
const OPSETS: std::ops::RangeInclusive<i64> = 8..=24;
/// `None`: the `reduction` attribute is absent.
const REDUCTIONS: [Option<&str>; 7] = [
    None,
    Some("none"),
    Some("add"),
    Some("mul"),
    Some("max"),
    Some("min"),
    Some("foo"),
];

// ---------------------------------------------------------------------------
// The contract: ScatterElements and ScatterND at every opset from 18 up to
// `opset::NEWEST_OPSET` (24) are their version 18.
// ---------------------------------------------------------------------------

/// What the op version in force at an opset defines.
struct Version {
    since: i64,
    attributes: &'static [&'static str],
    reductions: &'static [&'static str],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Legal,
    /// The op does not exist yet at this opset.
    BeforeFirstVersion {
        first: i64,
    },
    /// `Scatter` at opset >= 11.
    Deprecated,
    /// The version does not define the `reduction` attribute.
    UndefinedAttribute,
    /// The version defines `reduction` but not this value.
    DisallowedValue,
}

const NONE_ADD_MUL: &[&str] = &["none", "add", "mul"];
const ALL_FIVE: &[&str] = &["none", "add", "mul", "max", "min"];

fn version(op: &str, opset: i64) -> Result<Version, Verdict> {
    let v = |since, attributes, reductions| {
        Ok(Version {
            since,
            attributes,
            reductions,
        })
    };
    match (op, opset) {
        ("Scatter", ..=8) => Err(Verdict::BeforeFirstVersion { first: 9 }),
        ("Scatter", 9..=10) => v(9, &["axis"], &[]),
        ("Scatter", 11..) => Err(Verdict::Deprecated),
        ("ScatterElements" | "ScatterND", ..=10) => Err(Verdict::BeforeFirstVersion { first: 11 }),
        ("ScatterElements", 11..=12) => v(11, &["axis"], &[]),
        ("ScatterElements", 13..=15) => v(13, &["axis"], &[]),
        ("ScatterElements", 16..=17) => v(16, &["axis", "reduction"], NONE_ADD_MUL),
        ("ScatterElements", 18..) => v(18, &["axis", "reduction"], ALL_FIVE),
        ("ScatterND", 11..=12) => v(11, &[], &[]),
        ("ScatterND", 13..=15) => v(13, &[], &[]),
        ("ScatterND", 16..=17) => v(16, &["reduction"], NONE_ADD_MUL),
        ("ScatterND", 18..) => v(18, &["reduction"], ALL_FIVE),
        _ => unreachable!("unknown op {op}"),
    }
}

fn verdict(op: &str, opset: i64, reduction: Option<&str>) -> Verdict {
    let version = match version(op, opset) {
        Ok(v) => v,
        Err(verdict) => return verdict,
    };
    match reduction {
        None => Verdict::Legal,
        Some(_) if !version.attributes.contains(&"reduction") => Verdict::UndefinedAttribute,
        Some(r) if version.reductions.contains(&r) => Verdict::Legal,
        Some(_) => Verdict::DisallowedValue,
    }
}

/// The verdict through `onnx()`: a row that only a later version of the
/// same op accepts is legal there (the later version's semantics are the
/// reference's: it only depends on the reduction's name).
fn compat_verdict(op: &str, opset: i64, reduction: Option<&str>) -> Verdict {
    match verdict(op, opset, reduction) {
        v @ (Verdict::UndefinedAttribute | Verdict::DisallowedValue) => {
            let later_accepts = (opset + 1..=*OPSETS.end()).any(|later| {
                version(op, later).is_ok() && verdict(op, later, reduction) == Verdict::Legal
            });
            if later_accepts { Verdict::Legal } else { v }
        }
        v => v,
    }
}

// ---------------------------------------------------------------------------
// The models and their naive reference.
// ---------------------------------------------------------------------------

const DATA: [[f32; 3]; 3] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];

/// ScatterElements / Scatter, axis 1; each row writes one column twice so
/// reductions accumulate.
const ELEMENTS_INDICES: [[i64; 3]; 2] = [[1, 0, 1], [2, 2, 0]];
const ELEMENTS_UPDATES: [[f32; 3]; 2] = [[10.0, -1.0, 0.5], [-3.0, 20.0, 6.5]];

/// ScatterND: whole rows, row 2 written twice.
const ND_INDICES: [[i64; 1]; 3] = [[2], [0], [2]];
const ND_UPDATES: [[f32; 3]; 3] = [[10.0, -1.0, 0.5], [-3.0, 20.0, 6.5], [2.0, 2.0, -2.0]];

fn combine(reduction: Option<&str>, acc: f32, update: f32) -> f32 {
    match reduction.unwrap_or("none") {
        "none" => update,
        "add" => acc + update,
        "mul" => acc * update,
        "max" => acc.max(update),
        "min" => acc.min(update),
        other => unreachable!("no reference for reduction {other}"),
    }
}

fn expected(op: &str, reduction: Option<&str>) -> [[f32; 3]; 3] {
    let mut out = DATA;
    if op == "ScatterND" {
        for (tuple, row) in ND_INDICES.iter().zip(ND_UPDATES) {
            for (j, u) in row.into_iter().enumerate() {
                let acc = &mut out[tuple[0] as usize][j];
                *acc = combine(reduction, *acc, u);
            }
        }
    } else {
        for i in 0..2 {
            for j in 0..3 {
                let acc = &mut out[i][ELEMENTS_INDICES[i][j] as usize];
                *acc = combine(reduction, *acc, ELEMENTS_UPDATES[i][j]);
            }
        }
    }
    out
}

fn model(op: &str, opset: i64, reduction: Option<&str>) -> OneNode {
    let mut m = OneNode::new(op, opset).value(input("data", DataType::Float, &[3, 3]));
    if op == "ScatterND" {
        m = m
            .value(input("indices", DataType::Int64, &[3, 1]))
            .value(input("updates", DataType::Float, &[3, 3]));
    } else {
        m = m
            .attr(attr_int("axis", 1))
            .value(input("indices", DataType::Int64, &[2, 3]))
            .value(input("updates", DataType::Float, &[2, 3]));
    }
    if let Some(r) = reduction {
        m = m.attr(attr_string("reduction", r));
    }
    m
}

fn run_inputs(op: &str) -> TVec<TValue> {
    if op == "ScatterND" {
        tvec!(
            tensor2(&DATA).into(),
            tensor2(&ND_INDICES).into(),
            tensor2(&ND_UPDATES).into()
        )
    } else {
        tvec!(
            tensor2(&DATA).into(),
            tensor2(&ELEMENTS_INDICES).into(),
            tensor2(&ELEMENTS_UPDATES).into()
        )
    }
}

/// Checks one row, through `onnx_strict()` when `strict`, else `onnx()`;
/// `Err` describes how it broke the contract.
fn check_row(op: &str, opset: i64, reduction: Option<&str>, strict: bool) -> Result<(), String> {
    let mode = if strict { "strict" } else { "compat" };
    let row = format!("{op} opset {opset} reduction {reduction:?} ({mode})");
    let m = model(op, opset, reduction).strict(strict);
    let verdict = if strict {
        verdict(op, opset, reduction)
    } else {
        compat_verdict(op, opset, reduction)
    };
    if verdict == Verdict::Legal {
        let outputs = no_panic(&row, || m.run(run_inputs(op)))
            .map_err(|e| format!("{row}: legal but failed: {}", chain(&e)))?;
        let got = outputs[0]
            .to_plain_array_view::<f32>()
            .map_err(|e| format!("{row}: {e}"))?
            .to_owned();
        let want = tensor2(&expected(op, reduction));
        let want = want.to_plain_array_view::<f32>().unwrap();
        if got != want {
            return Err(format!("{row}: got {got:?}, expected {want:?}"));
        }
        return Ok(());
    }
    // Illegal: the builder refuses it, i.e. model_for_read fails.
    let err = match no_panic(&row, || m.load()) {
        Ok(_) => return Err(format!("{row}: {verdict:?} but the model loaded")),
        Err(e) => chain(&e),
    };
    let mut must_name = vec![
        op.to_string(),
        format!("'{NODE}'"),
        format!("opset {opset}"),
    ];
    match verdict {
        Verdict::Legal => unreachable!(),
        Verdict::BeforeFirstVersion { first } => must_name.push(format!("opset {first}")),
        Verdict::Deprecated => must_name.extend(["deprecated".into(), "ScatterElements".into()]),
        Verdict::UndefinedAttribute => {
            let v = version(op, opset).unwrap();
            must_name.push("'reduction'".into());
            must_name.push(format!("{:?}", reduction.unwrap()));
            must_name.push(format!("{op}-{}", v.since));
            must_name.extend(v.attributes.iter().map(|a| a.to_string()));
        }
        Verdict::DisallowedValue => {
            let v = version(op, opset).unwrap();
            must_name.push(format!("'{}'", reduction.unwrap()));
            must_name.push(format!("{op}-{}", v.since));
            must_name.push(v.reductions.join(", "));
        }
    }
    let missing: Vec<_> = must_name
        .iter()
        .filter(|s| !err.contains(s.as_str()))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{row}: {verdict:?}: message {err:?} does not name {missing:?}"
        ));
    }
    Ok(())
}

fn check_op(op: &str, strict: bool) {
    let mut failures = vec![];
    let mut rows = 0;
    for opset in OPSETS {
        for reduction in REDUCTIONS {
            rows += 1;
            if let Err(e) = check_row(op, opset, reduction, strict) {
                failures.push(e);
            }
        }
    }
    assert_eq!(rows, 17 * 7);
    assert!(
        failures.is_empty(),
        "{} of {rows} rows broke the contract:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_scatter_row_of_the_opset_table_loads_runs_or_fails_as_the_contract_says() {
    check_op("Scatter", true);
}

#[test]
fn every_scatter_elements_row_of_the_opset_table_loads_runs_or_fails_as_the_contract_says() {
    check_op("ScatterElements", true);
}

#[test]
fn every_scatter_nd_row_of_the_opset_table_loads_runs_or_fails_as_the_contract_says() {
    check_op("ScatterND", true);
}

#[test]
fn every_scatter_row_behaves_the_same_in_compat_mode() {
    check_op("Scatter", false);
}

#[test]
fn every_scatter_elements_row_in_compat_mode_accepts_later_version_reductions_only() {
    check_op("ScatterElements", false);
}

#[test]
fn every_scatter_nd_row_in_compat_mode_accepts_later_version_reductions_only() {
    check_op("ScatterND", false);
}

#[test]
fn compat_mode_makes_exactly_the_later_version_rows_legal() {
    // ScatterElements and ScatterND: at 11..=15, none/add/mul/max/min (5
    // values × 5 opsets); at 16, 17: max and min (2 × 2). "foo" stays illegal.
    let gained = |op| {
        OPSETS
            .flat_map(|o| REDUCTIONS.map(move |r| (o, r)))
            .filter(|(o, r)| {
                verdict(op, *o, *r) != Verdict::Legal
                    && compat_verdict(op, *o, *r) == Verdict::Legal
            })
            .count()
    };
    assert_eq!(gained("Scatter"), 0);
    assert_eq!(gained("ScatterElements"), 5 * 5 + 2 * 2);
    assert_eq!(gained("ScatterND"), 5 * 5 + 2 * 2);
}

#[test]
fn the_table_in_this_test_has_the_expected_number_of_legal_rows() {
    // Scatter: 2 opsets × absent; ScatterElements: 5 × absent + 2 × 4 + 7 × 6;
    // ScatterND the same.
    let legal = |op| {
        OPSETS
            .flat_map(|o| REDUCTIONS.map(move |r| (o, r)))
            .filter(|(o, r)| verdict(op, *o, *r) == Verdict::Legal)
            .count()
    };
    assert_eq!(legal("Scatter"), 2);
    assert_eq!(legal("ScatterElements"), 5 + 2 * 4 + 7 * 6);
    assert_eq!(legal("ScatterND"), 5 + 2 * 4 + 7 * 6);
}

// ---------------------------------------------------------------------------
// Attributes, inputs and types outside the table.
// ---------------------------------------------------------------------------

/// The newest legal opset of each op.
fn newest(op: &str) -> i64 {
    if op == "Scatter" { 10 } else { 18 }
}

fn load_error(m: &OneNode) -> String {
    match no_panic("load", || m.load()) {
        Ok(_) => panic!(
            "{} at opset {} loaded, expected an error",
            m.op_type, m.opset
        ),
        Err(e) => chain(&e),
    }
}

fn compile_error(m: &OneNode) -> String {
    match no_panic("compile", || m.compile()) {
        Ok(_) => panic!(
            "{} at opset {} compiled, expected an error",
            m.op_type, m.opset
        ),
        Err(e) => chain(&e),
    }
}

fn assert_names(err: &str, parts: &[&str]) {
    for p in parts {
        assert!(err.contains(p), "error {err:?} does not contain {p:?}");
    }
}

#[test]
fn an_unknown_attribute_foo_on_each_op_is_a_load_error_naming_foo() {
    for op in OPS {
        let opset = newest(op);
        let err = load_error(&model(op, opset, None).attr(attr_int("foo", 1)));
        assert_names(&err, &[op, NODE, &format!("opset {opset}"), "'foo'"]);
    }
}

#[test]
fn axis_given_as_a_string_attribute_is_a_load_error_naming_axis() {
    for op in ["Scatter", "ScatterElements"] {
        let mut m = model(op, newest(op), None);
        m.attributes = vec![attr_string("axis", "1")];
        let err = load_error(&m);
        assert_names(&err, &[op, NODE, "'axis'", "int", "\"1\""]);
    }
}

#[test]
fn axis_given_as_a_float_attribute_is_a_load_error_naming_axis() {
    let mut m = model("ScatterElements", 13, None);
    m.attributes = vec![attr_float("axis", 1.0)];
    assert_names(&load_error(&m), &["ScatterElements", NODE, "'axis'", "int"]);
}

#[test]
fn reduction_given_as_an_int_attribute_is_a_load_error_naming_reduction() {
    for op in ["ScatterElements", "ScatterND"] {
        let m = model(op, 18, None).attr(attr_int("reduction", 1));
        assert_names(&load_error(&m), &[op, NODE, "'reduction'", "string"]);
    }
}

#[test]
fn two_inputs_instead_of_three_is_a_load_error_for_each_op() {
    for op in OPS {
        let m = model(op, newest(op), None).node_inputs(&["data", "indices"]);
        assert_names(&load_error(&m), &[op, NODE, "got 2"]);
    }
}

#[test]
fn four_inputs_instead_of_three_is_a_load_error_for_each_op() {
    for op in OPS {
        let m = model(op, newest(op), None).node_inputs(&["data", "indices", "updates", "data"]);
        assert_names(&load_error(&m), &[op, NODE, "got 4"]);
    }
}

#[test]
fn an_empty_required_input_name_is_a_load_error_for_each_op() {
    for op in OPS {
        let m = model(op, newest(op), None).node_inputs(&["data", "", "updates"]);
        assert_names(&load_error(&m), &[op, NODE, "indices"]);
    }
}

#[test]
fn float_indices_are_a_type_error_before_run_time() {
    for op in OPS {
        let mut m = model(op, newest(op), None);
        if let Value::Input { elem, .. } = &mut m.values[1] {
            *elem = DataType::Float;
        }
        assert_names(&compile_error(&m), &[op, NODE, "type", "indices"]);
    }
}

#[test]
fn data_f32_with_updates_f64_is_a_type_error_before_run_time() {
    for op in OPS {
        let mut m = model(op, newest(op), None);
        if let Value::Input { elem, .. } = &mut m.values[2] {
            *elem = DataType::Double;
        }
        assert_names(&compile_error(&m), &[op, NODE, "type", "double", "float"]);
    }
}

#[test]
fn int32_indices_are_legal_and_give_the_same_result_as_int64() {
    for op in OPS {
        let mut m = model(op, newest(op), Some("add").filter(|_| op != "Scatter"));
        if let Value::Input { elem, .. } = &mut m.values[1] {
            *elem = DataType::Int32;
        }
        let mut inputs = run_inputs(op);
        inputs[1] = inputs[1]
            .cast_to::<i32>()
            .unwrap()
            .into_owned()
            .into_tvalue();
        let out = m
            .run(inputs)
            .unwrap_or_else(|e| panic!("{op}: {}", chain(&e)));
        let reduction = if op == "Scatter" { None } else { Some("add") };
        assert_eq!(*out[0], tensor2(&expected(op, reduction)), "{op}");
    }
}

// ---------------------------------------------------------------------------
// Run time: index values only known when the model runs.
// ---------------------------------------------------------------------------

fn run_error(op: &str, indices: Tensor) -> String {
    let m = model(op, newest(op), None);
    let mut inputs = run_inputs(op);
    inputs[1] = indices.into_tvalue();
    let runnable = m
        .compile()
        .unwrap_or_else(|e| panic!("{op}: {}", chain(&e)));
    match no_panic(op, || runnable.run(inputs)) {
        Ok(out) => panic!(
            "{op}: ran and gave {:?}, expected an out-of-bounds error",
            out[0]
        ),
        Err(e) => chain(&e),
    }
}

#[test]
fn an_index_past_the_end_is_a_run_time_out_of_bounds_error_naming_node_and_value() {
    let err = run_error("ScatterElements", tensor2(&[[1i64, 0, 1], [2, 3, 0]]));
    assert_names(
        &err,
        &["ScatterElements", NODE, "out of bounds", "= 3", "[-3, 2]"],
    );
    let err = run_error("Scatter", tensor2(&[[1i64, 0, 1], [2, 2, 7]]));
    assert_names(&err, &["Scatter", NODE, "out of bounds", "= 7"]);
    let err = run_error("ScatterND", tensor2(&[[2i64], [5], [0]]));
    assert_names(
        &err,
        &["ScatterND", NODE, "out of bounds", "= 5", "[-3, 2]"],
    );
}

#[test]
fn an_index_below_minus_the_dimension_is_a_run_time_out_of_bounds_error() {
    let err = run_error("ScatterElements", tensor2(&[[1i64, -4, 1], [2, 2, 0]]));
    assert_names(&err, &["ScatterElements", NODE, "out of bounds", "= -4"]);
    let err = run_error("ScatterND", tensor2(&[[2i64], [-4], [0]]));
    assert_names(&err, &["ScatterND", NODE, "out of bounds", "= -4"]);
}

#[test]
fn extreme_index_values_are_out_of_bounds_errors_not_panics() {
    for v in [i64::MIN, i64::MAX, i64::MIN + 1] {
        for op in OPS {
            let indices = if op == "ScatterND" {
                tensor2(&[[0i64], [v], [1]])
            } else {
                tensor2(&[[0i64, v, 1], [2, 2, 0]])
            };
            let err = run_error(op, indices);
            assert_names(&err, &[op, NODE, "out of bounds", &format!("= {v}")]);
        }
    }
}

#[test]
fn negative_indices_count_from_the_end_of_the_axis() {
    for op in OPS {
        let mut inputs = run_inputs(op);
        let negated = if op == "ScatterND" {
            tensor2(&ND_INDICES.map(|t| t.map(|i| i - 3)))
        } else {
            tensor2(&ELEMENTS_INDICES.map(|r| r.map(|i| i - 3)))
        };
        inputs[1] = negated.into_tvalue();
        let out = model(op, newest(op), None)
            .run(inputs)
            .unwrap_or_else(|e| panic!("{op}: {}", chain(&e)));
        assert_eq!(*out[0], tensor2(&expected(op, None)), "{op}");
    }
}

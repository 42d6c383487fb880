//! The exporter corpus (`onnx-testdata/exporters/`): models written by
//! PyTorch's TorchScript and dynamo exporters, tf2onnx, jax2onnx and
//! paddle2onnx, with
//! the framework's eager outputs as expected values. Run through `onnx()`
//! as users load them, honouring onnx-testdata/expected-failures.toml; and
//! through `onnx_strict()`, which must refuse exactly the nodes `onnx()`
//! accepts as exporter deviations.

use crate::log_capture;

use integration_tests::golden::{check_exporter, layout};
use log_capture::warnings_of;
use onnx_golden::suite::list_tests;
use tract_onnx::prelude::*;

const EXPORTERS: &[&str] = &[
    "jax2onnx",
    "paddle2onnx",
    "tf2onnx",
    "torch",
    "torch-models",
];

#[test]
fn torch_exports_match_pytorch_eager() {
    check_exporter("torch");
}

/// Multi-layer models (GNN stacks, sequence models) with symbolic dims.
#[test]
fn torch_model_exports_match_pytorch_eager() {
    check_exporter("torch-models");
}

#[test]
fn tf2onnx_exports_match_tensorflow_eager() {
    check_exporter("tf2onnx");
}

#[test]
fn jax2onnx_exports_match_jax_eager() {
    check_exporter("jax2onnx");
}

#[test]
fn paddle2onnx_exports_match_paddle_eager() {
    check_exporter("paddle2onnx");
}

/// A generated exporter directory without a test above would go unchecked.
#[test]
fn every_exporter_suite_has_a_test() {
    let suites: Vec<String> = layout()
        .exporter_suites()
        .expect("exporter suites")
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(suites, EXPORTERS);
}

#[test]
fn strict_mode_refuses_exactly_the_nodes_compat_mode_accepts_as_deviations() {
    let strict = tract_onnx_scatter::onnx_strict();
    let compat = tract_onnx_scatter::onnx();
    let mut deviations = vec![];
    let mut problems = vec![];
    for suite in layout().exporter_suites().expect("exporter suites") {
        for (name, dir) in list_tests(&suite, None).expect("listing") {
            let model = dir.join("model.onnx");
            let case = format!("{}/{name}", suite.name);
            let (compat_result, warnings) = warnings_of(|| compat.model_for_path(&model).map(drop));
            let strict_result = strict.model_for_path(&model).map(drop);
            let deviated: Vec<&String> = warnings
                .iter()
                .filter(|w| w.contains("exporter deviation"))
                .collect();
            match (deviated.is_empty(), &compat_result, &strict_result) {
                (false, Ok(()), Err(e)) => {
                    let e = format!("{e:?}");
                    if e.contains("is not allowed by") || e.contains("is not defined by") {
                        deviations.push(case);
                    } else {
                        problems.push(format!("{case}: strict refused with another error: {e}"));
                    }
                }
                (false, _, _) => problems.push(format!(
                    "{case}: warned {deviated:?} but compat {:?} / strict {:?}",
                    compat_result.as_ref().err(),
                    strict_result.as_ref().err()
                )),
                (true, Ok(()), Ok(())) => {}
                (true, Err(c), Err(s)) if format!("{c:?}") == format!("{s:?}") => {}
                (true, c, s) => problems.push(format!(
                    "{case}: no deviation warned, yet compat {:?} and strict {:?} differ",
                    c.as_ref().err(),
                    s.as_ref().err()
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The corpus holds the deviations the issue names: TorchScript's
    // ScatterElements max/min and tf2onnx's ScatterND max/min at 16 and 17.
    for needle in ["torch/scatter_reduce_amax_self__ts16", "tf2onnx/"] {
        assert!(
            deviations.iter().any(|d| d.starts_with(needle)),
            "no deviation case {needle}: {deviations:?}"
        );
    }
}

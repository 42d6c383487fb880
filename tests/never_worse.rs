//! The "never worse than stock" gate, as `cargo xtask conformance` applies
//! it: on every model of every suite, `tract_onnx_scatter::onnx()` and stock
//! `tract_onnx::onnx()`, with the declared input facts and with facts
//! pinned to the data. The plugin is worse when stock passes and it does
//! not, when it panics where stock does not, or when both fail and it stops
//! in an earlier phase, or at an earlier node of the same phase.

use integration_tests::golden::{all_ops_suite, check_never_worse, conformance_suites, layout};
use onnx_golden::fetch::Source;

#[test]
fn official_and_extended_suites_are_never_worse_than_stock() {
    check_never_worse(
        &conformance_suites(),
        &tract_onnx_scatter::onnx(),
        &tract_onnx::onnx(),
    );
}

#[test]
fn exporter_suites_are_never_worse_than_stock() {
    let suites = layout().exporter_suites().expect("exporter suites");
    check_never_worse(&suites, &tract_onnx_scatter::onnx(), &tract_onnx::onnx());
}

#[test]
fn recurrent_suites_are_never_worse_than_stock() {
    let suites = layout().recurrent_suites().expect("recurrent suites");
    check_never_worse(&suites, &tract_onnx_scatter::onnx(), &tract_onnx::onnx());
}

#[test]
fn autograd_suite_is_never_worse_than_stock() {
    check_never_worse(
        &[layout().autograd_suite()],
        &tract_onnx_scatter::onnx(),
        &tract_onnx::onnx(),
    );
}

/// With value_info ignored for both, as the real-model suite runs them.
#[test]
fn real_models_are_never_worse_than_stock() {
    let suite = layout()
        .real_model_suite(&Source::resolve(None))
        .unwrap_or_else(|e| panic!("real models unavailable: {e:#}"));
    check_never_worse(
        &[suite],
        &tract_onnx_scatter::onnx().with_ignore_value_info(true),
        &tract_onnx::onnx().with_ignore_value_info(true),
    );
}

#[test]
fn every_official_node_test_is_never_worse_than_stock() {
    check_never_worse(
        &[all_ops_suite()],
        &tract_onnx_scatter::onnx(),
        &tract_onnx::onnx(),
    );
}

//! The recurrent suites (`onnx-testdata/recurrent/`): Keras RNN layers
//! through tf2onnx, scripted and exported PyTorch loops through both
//! exporters, JAX `lax.scan`/`while_loop` through jax2onnx. Every case
//! with a `Loop` or `Scan` passes through `onnx()` with the input facts the
//! models declare and with facts pinned to the data. So does every case of
//! the control-flow suites (`onnx-testdata/control-flow/`).

use integration_tests::golden::{check_control_flow, check_recurrent};

#[test]
fn keras_and_tensorflow_loops_through_tf2onnx() {
    check_recurrent("tf2onnx");
}

#[test]
fn pytorch_loops_through_both_exporters() {
    check_recurrent("torch");
}

#[test]
fn jax_scans_and_loops_through_jax2onnx() {
    check_recurrent("jax2onnx");
}

#[test]
fn control_flow_patterns_pass_in_both_input_modes() {
    let suites = check_control_flow();
    assert!(
        suites.iter().any(|s| s == "control-flow/if-onnx"),
        "no control-flow/if-onnx suite among {suites:?}"
    );
}

//! The workspace's integration tests, one test binary: each `tests/<name>.rs`
//! is a module of it (as rust-analyzer's `tests/slow-tests` are), so tract
//! is linked once rather than once per file. Run one file's tests with
//! `cargo test --test integration <name>::`.
//!
//! The tests share one process: one logger (`log_capture`), and a test
//! that changes process-wide state (the working directory, the `Loop`
//! iteration limit) runs in a child process of its own (`own_process`).

#[macro_use]
#[path = "support/snap.rs"]
mod snap;

// The plugin's unit tests build graphs with it too: it lives in the crate.
#[path = "../crates/tract-onnx-scatter/src/test_graph.rs"]
mod graph;
#[path = "support/log_capture.rs"]
mod log_capture;
#[path = "support/model_builder.rs"]
mod model_builder;
#[path = "support/own_process.rs"]
mod own_process;
#[path = "support/transposed.rs"]
mod transposed;

mod architecture_invariants;
mod bfloat16;
mod broadcast_rows;
mod complex;
mod docs_drift;
mod drop_in_trust;
mod exporter_corpus;
mod exporter_deviations;
mod exporter_plan_quality;
mod fuzz_replay;
mod golden_suite;
mod hostile_inputs;
mod import_graph;
mod never_worse;
mod onnx_loop;
mod opset_table;
mod optimizations;
mod overrides_match_stock;
mod public_api;
mod readme;
mod real_graphs;
mod real_models;
mod recurrent;
mod recurrent_ops;
mod scatter_grad;
mod symbolic;
mod threads;
mod tract_overrides;
mod training_example;
mod transpose_fold;
mod transpose_fold_chains;
mod validation_errors;

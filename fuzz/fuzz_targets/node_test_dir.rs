//! `node_test_dir`: node-test directories through onnx-golden. The logic is `fuzz/logic/node_test_dir.rs`, which
//! `tests/fuzz_replay.rs` runs on every committed seed and regression.

#![no_main]

#[path = "../logic/node_test_dir.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| logic::run(bytes));

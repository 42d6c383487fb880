//! `tensor_files`: the command line's tensor readers. The logic is `fuzz/logic/tensor_files.rs`, which
//! `tests/fuzz_replay.rs` runs on every committed seed and regression.

#![no_main]

#[path = "../logic/tensor_files.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| logic::run(bytes));

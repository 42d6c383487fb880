//! `model_bytes`: raw ModelProto bytes of any registered op. The logic is `fuzz/logic/model_bytes.rs`, which
//! `tests/fuzz_replay.rs` runs on every committed seed and regression.

#![no_main]

#[path = "../logic/model_bytes.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| logic::run(bytes));

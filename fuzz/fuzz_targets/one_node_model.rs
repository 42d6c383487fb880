//! `one_node_model`: one-node scatter models through `onnx()`. The logic is `fuzz/logic/one_node_model.rs`, which
//! `tests/fuzz_replay.rs` runs on every committed seed and regression.

#![no_main]

#[path = "../logic/one_node_model.rs"]
mod logic;

#[path = "../logic/panic_hook.rs"]
mod panic_hook;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    panic_hook::let_caught_panics_unwind();
    logic::run(bytes)
});

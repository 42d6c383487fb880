//! `grad_ops`: the gradient ops as one-node models. The logic is `fuzz/logic/grad_ops.rs`, which
//! `tests/fuzz_replay.rs` runs on every committed seed and regression.

#![no_main]

#[path = "../logic/grad_ops.rs"]
mod logic;

#[path = "../logic/panic_hook.rs"]
mod panic_hook;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    panic_hook::let_caught_panics_unwind();
    logic::run(bytes)
});

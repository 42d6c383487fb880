//! libFuzzer's panic hook (set by libfuzzer-sys) aborts on every panic,
//! also one the code under test catches: the plugin's fences around
//! tract's ops (`tract_overrides::retyped::fenced`) and onnx-golden's
//! `panic_guard` turn tract's panics into errors, as users get them. Each
//! target restores the default hook once, so a caught panic unwinds to its
//! fence; a panic that escapes the target still aborts (libfuzzer-sys
//! catches it around the target and aborts), and is a crash.

/// Restores the default panic hook, once per process.
pub fn let_caught_panics_unwind() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| drop(std::panic::take_hook()));
}

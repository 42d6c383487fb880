//! Tensor-file target: the command line's tensor readers
//! (`crates/tract-scatter-cli/src/tensors.rs`, included here with `#[path]`:
//! the binary crate has no library) on arbitrary bytes written to a
//! temporary file. The first byte picks the extension, `.npy`, `.npz` or
//! `.pb`; the rest is the file. `read_tensor` (`.npy`, `.pb`, and the
//! refusal of `.npz`) or `read_npz` must answer `Ok` or `Err`, never panic,
//! and never allocate past the tensor size limit: the limit is lowered to
//! [`FUZZ_MAX_TENSOR_BYTES`] (64 MiB), so an allocation libFuzzer's
//! `-malloc_limit_mb=1024` catches is one the limit let through. A tensor
//! read is summarized as `tract-scatter run` prints it.
//!
//! The body of the `tensor_files` fuzz target ([`run`]), shared with the
//! replay test (`tests/fuzz_replay.rs`).

#[allow(dead_code)]
#[path = "../../crates/tract-scatter-cli/src/tensors.rs"]
mod tensors;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The tensor size limit (`--max-tensor-bytes`) while fuzzing.
pub const FUZZ_MAX_TENSOR_BYTES: u64 = 64 << 20;

/// The extensions the first byte picks from.
pub const EXTENSIONS: [&str; 3] = ["npy", "npz", "pb"];

/// A file path of its own for each call (replay tests run in parallel).
fn scratch_file(ext: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "scatter-fuzz-tensor-{}-{n}.{ext}",
        std::process::id()
    ))
}

/// The input of the target for `file` read as `ext` (how seeds are written).
#[allow(dead_code)] // the replay test writes seeds with it
pub fn input(ext: &str, file: &[u8]) -> Vec<u8> {
    let kind = EXTENSIONS.iter().position(|e| *e == ext).unwrap_or(0) as u8;
    let mut out = vec![kind];
    out.extend_from_slice(file);
    out
}

/// The `.npz` file `tract-scatter run --output` would write for `named`
/// (how seeds are written).
#[allow(dead_code)] // the replay test writes seeds with it
pub fn npz_file(named: &[(String, tract_onnx_scatter::tract_onnx::prelude::Tensor)]) -> Vec<u8> {
    let path = scratch_file("npz");
    tensors::write_npz(&path, named, &Default::default()).expect("writing an .npz");
    let bytes = std::fs::read(&path).expect("reading it back");
    let _ = std::fs::remove_file(&path);
    bytes
}

/// One input of the `tensor_files` target: `Ok` or `Err`, never a panic.
pub fn run(bytes: &[u8]) {
    let _ = outcome(bytes);
}

/// What one input comes to: `None` for an empty input, else the tensors
/// read (each summarized) or the reader's error.
pub fn outcome(bytes: &[u8]) -> Option<anyhow::Result<usize>> {
    let (&kind, file) = bytes.split_first()?;
    tensors::MAX_TENSOR_BYTES.store(FUZZ_MAX_TENSOR_BYTES, Ordering::Relaxed);
    let ext = EXTENSIONS[kind as usize % EXTENSIONS.len()];
    let path = scratch_file(ext);
    std::fs::write(&path, file).ok()?;
    let read = if ext == "npz" {
        tensors::read_npz(&path)
    } else {
        tensors::read_tensor(&path).map(|t| vec![(String::new(), t)])
    };
    let _ = std::fs::remove_file(&path);
    Some(read.map(|named| {
        for (_, t) in &named {
            let _ = tensors::summary(t);
        }
        named.len()
    }))
}

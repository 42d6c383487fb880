//! The engine under test, abstracted so the harness can drive tract (with or
//! without plugins) and, in its own tests, synthetic frameworks.

use crate::outcome::Phase;
use anyhow::{Result, ensure};
use serde::Serialize;
use std::path::Path;
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid as _;

/// How the model is prepared before running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `into_typed()?.into_decluttered()?`
    Decluttered,
    /// `into_typed()?.into_optimized()?`
    Optimized,
}

/// Something that can load an ONNX model, prepare it and run it.
///
/// Contract: call `enter(phase)` when entering each phase, so that an error
/// or a panic is attributed to the right one; return the outputs in graph
/// order. `inputs` are the non-initializer graph inputs, in graph order;
/// `None` means "load and prepare only, do not run" (error tests without a
/// data set), and then no outputs are returned.
pub trait Framework {
    /// Loads the model at `model_path`, prepares it in `mode` and runs it on
    /// `inputs`, calling `enter` as each phase begins; returns the outputs in
    /// graph order (see the trait's contract).
    fn run(
        &self,
        model_path: &Path,
        inputs: Option<&[Tensor]>,
        mode: Mode,
        enter: &mut dyn FnMut(Phase),
    ) -> Result<Vec<Tensor>>;
}

impl<F> Framework for F
where
    F: Fn(&Path, Option<&[Tensor]>, Mode, &mut dyn FnMut(Phase)) -> Result<Vec<Tensor>>,
{
    fn run(
        &self,
        model_path: &Path,
        inputs: Option<&[Tensor]>,
        mode: Mode,
        enter: &mut dyn FnMut(Phase),
    ) -> Result<Vec<Tensor>> {
        self(model_path, inputs, mode, enter)
    }
}

/// Which input facts a model is typed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputFacts {
    /// As the model declares them: symbolic dims stay symbols until the run
    /// binds them, as a user loading the file gets it.
    Declared,
    /// Refined with each data set's types and shapes before typing.
    Pinned,
}

impl InputFacts {
    /// Both kinds, declared first.
    pub const BOTH: [InputFacts; 2] = [InputFacts::Declared, InputFacts::Pinned];
}

impl std::fmt::Display for InputFacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InputFacts::Declared => "declared",
            InputFacts::Pinned => "pinned",
        })
    }
}

/// What the harness needs of a tract ONNX framework: a model from a file.
/// `tract_onnx::Onnx` and any framework wrapping it (a plugin's loader)
/// implement it through tract's `Framework` trait.
pub trait LoadOnnx: Send + Sync {
    /// The inference model of the ONNX file at `path`, as the framework loads it.
    fn load(&self, path: &Path) -> TractResult<InferenceModel>;
}

impl<F> LoadOnnx for F
where
    F: tract_onnx::prelude::Framework<tract_onnx::pb::ModelProto, InferenceModel>,
{
    fn load(&self, path: &Path) -> TractResult<InferenceModel> {
        self.model_for_path(path)
    }
}

/// A tract ONNX framework (`tract_onnx::onnx()` or a plugin-extended one),
/// typing models with declared or pinned input facts.
pub struct Tract<'a> {
    /// The loader: `tract_onnx::onnx()` or a plugin-extended one.
    pub onnx: &'a dyn LoadOnnx,
    /// Which input facts the model is typed with.
    pub input_facts: InputFacts,
}

impl<'a> Tract<'a> {
    /// Input facts refined with the data's types and shapes.
    pub fn pinned(onnx: &'a dyn LoadOnnx) -> Tract<'a> {
        Tract {
            onnx,
            input_facts: InputFacts::Pinned,
        }
    }

    /// Input facts as the model declares them.
    pub fn declared(onnx: &'a dyn LoadOnnx) -> Tract<'a> {
        Tract {
            onnx,
            input_facts: InputFacts::Declared,
        }
    }
}

impl Framework for Tract<'_> {
    fn run(
        &self,
        model_path: &Path,
        inputs: Option<&[Tensor]>,
        mode: Mode,
        enter: &mut dyn FnMut(Phase),
    ) -> Result<Vec<Tensor>> {
        enter(Phase::Load);
        let mut model = self.onnx.load(model_path)?;
        let inputs = inputs.unwrap_or_default();
        let run = !inputs.is_empty() || model.input_outlets()?.is_empty();
        let sources = model.input_outlets()?.len();
        ensure!(
            sources == inputs.len() || inputs.is_empty(),
            "the model has {sources} non-initializer inputs but the data set has {} input files",
            inputs.len()
        );
        if self.input_facts == InputFacts::Pinned {
            pin_input_facts(&mut model, inputs)?;
        }
        enter(Phase::Analyse);
        model.analyse(false)?;
        enter(Phase::Typing);
        let typed = model.into_typed()?;
        let prepared = match mode {
            Mode::Decluttered => {
                enter(Phase::Declutter);
                typed.into_decluttered()?
            }
            Mode::Optimized => {
                enter(Phase::Optimize);
                typed.into_optimized()?
            }
        };
        if !run {
            return Ok(vec![]);
        }
        enter(Phase::Run);
        let runnable = prepared.into_runnable()?;
        let outputs = runnable.run(inputs.iter().cloned().map(|t| t.into_tvalue()).collect())?;
        Ok(outputs.into_iter().map(|v| v.into_tensor()).collect())
    }
}

/// Refines the declared input facts with the data's type and shape:
/// symbolic dims take the data's values, contradictions are errors.
fn pin_input_facts(model: &mut InferenceModel, inputs: &[Tensor]) -> Result<()> {
    for (ix, input) in inputs.iter().enumerate() {
        let data = InferenceFact::dt_shape_from_tensor(input);
        let declared = model.input_fact(ix)?.clone();
        let fact = match declared.unify(&data) {
            Ok(fact) => fact,
            // tract does not unify a symbol with a value: check what the
            // declaration fixes (type, rank, concrete dims), keep the data's.
            Err(e) => {
                let dt_ok = declared
                    .datum_type
                    .concretize()
                    .is_none_or(|dt| dt == input.datum_type());
                let dims_ok = declared.shape.concretize().is_none_or(|dims| {
                    dims.len() == input.rank()
                        && dims
                            .iter()
                            .zip(input.shape())
                            .all(|(d, &v)| d.to_i64().is_err() || d.to_i64().ok() == Some(v as i64))
                });
                ensure!(dt_ok && dims_ok, "input {ix}: {e:#}");
                data
            }
        };
        model.set_input_fact(ix, fact)?;
    }
    Ok(())
}

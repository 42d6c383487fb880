//! The `gtcrn_frame` workload: the real GTCRN streaming speech-enhancement
//! model (`onnx-testdata/real-models/gtcrn/model.onnx`, 18 ScatterND in the
//! file), one streaming frame per call. Inputs `mix` and the three caches
//! come from `test_data_set_0`; the three cache outputs are fed back as the
//! next frame's caches.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use prost::Message;
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::pb::{ModelProto, TensorProto};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::ort::workspace_root;

/// The workload's name in the table.
pub const NAME: &str = "gtcrn_frame";

/// The GTCRN model file, its graph input and output names, and the first
/// frame's inputs (in graph input order).
pub struct Gtcrn {
    pub model_path: PathBuf,
    pub input_names: Vec<String>,
    pub output_names: Vec<String>,
    pub inputs: Vec<Tensor>,
}

/// `onnx-testdata/real-models/gtcrn`.
pub fn dir() -> PathBuf {
    workspace_root().join("onnx-testdata/real-models/gtcrn")
}

impl Gtcrn {
    /// Reads the model's input/output names and `test_data_set_0/input_*.pb`.
    pub fn load() -> Result<Gtcrn> {
        let model_path = dir().join("model.onnx");
        let bytes =
            std::fs::read(&model_path).with_context(|| format!("reading {model_path:?}"))?;
        let graph = ModelProto::decode(&bytes[..])?
            .graph
            .context("model has no graph")?;
        let initializers: Vec<&str> = graph.initializer.iter().map(|i| i.name.as_str()).collect();
        let input_names: Vec<String> = graph
            .input
            .iter()
            .map(|i| i.name.clone())
            .filter(|n| !initializers.contains(&n.as_str()))
            .collect();
        let output_names = graph.output.iter().map(|o| o.name.clone()).collect();
        let set = dir().join("test_data_set_0");
        let inputs = (0..input_names.len())
            .map(|i| {
                let path = set.join(format!("input_{i}.pb"));
                let bytes = std::fs::read(&path).with_context(|| format!("reading {path:?}"))?;
                let proto = TensorProto::decode(&bytes[..])?;
                tract_onnx::tensor::load_tensor(
                    &tract_onnx::data_resolver::FopenDataResolver,
                    &proto,
                    None,
                )
                .with_context(|| format!("decoding {path:?}"))
            })
            .collect::<Result<Vec<Tensor>>>()?;
        if inputs.len() != 4 {
            bail!("GTCRN: expected 4 inputs (mix + 3 caches), got {input_names:?}");
        }
        Ok(Gtcrn {
            model_path,
            input_names,
            output_names,
            inputs,
        })
    }

    /// Bytes of all the inputs of one frame (the `data` column).
    pub fn input_bytes(&self) -> usize {
        self.inputs
            .iter()
            .map(|t| t.len() * t.datum_type().size_of())
            .sum()
    }
}

/// A planned GTCRN with its state, the frame input and the current caches.
pub struct GtcrnRunner {
    state: TypedSimpleState,
    mix: TValue,
    caches: Vec<TValue>,
}

impl GtcrnRunner {
    /// Loads, optimizes and plans the model with `onnx`.
    pub fn new(g: &Gtcrn, onnx: &tract_onnx::Onnx) -> TractResult<GtcrnRunner> {
        let plan = onnx
            .model_for_path(&g.model_path)?
            .into_optimized()?
            .into_runnable()?;
        Ok(GtcrnRunner {
            state: plan.spawn()?,
            mix: g.inputs[0].clone().into_tvalue(),
            caches: g.inputs[1..]
                .iter()
                .map(|t| t.clone().into_tvalue())
                .collect(),
        })
    }

    fn feed(&mut self, outputs: TVec<TValue>) {
        self.caches = outputs.into_iter().skip(1).collect();
    }

    /// One frame, the caches moved in (exclusively owned) and the cache
    /// outputs kept as the next frame's caches.
    pub fn run_exclusive(&mut self) -> TractResult<()> {
        let mut inputs = tvec![self.mix.clone()];
        inputs.extend(self.caches.drain(..));
        let outputs = self.state.run(inputs)?;
        self.feed(outputs);
        Ok(())
    }

    /// One frame, the caller keeping a reference to the caches during the
    /// run; the cache outputs are then fed back.
    pub fn run_shared(&mut self) -> TractResult<()> {
        let mut inputs = tvec![self.mix.clone()];
        inputs.extend(self.caches.iter().cloned());
        let outputs = self.state.run(inputs)?;
        self.feed(outputs);
        Ok(())
    }
}

//! The exported-model rows: small models that PyTorch's two ONNX exporters
//! wrote from the same module (`crates/scatter-bench/models/*.onnx`,
//! committed, not regenerated here), so the table compares what each
//! exporter's graph costs:
//!
//! - `kv_step_*`: `cache[:, :, pos] = k` on a f32 [1, 32, 2048, 128] KV cache
//!   (inputs `cache`, `pos` int64 [1] = [7], `k` f32 [1, 32, 1, 128]).
//!   TorchScript (opset 17): one `ScatterElements` on axis 2 with expanded
//!   indices. Dynamo (opset 20): `Transpose -> ScatterND -> Transpose`,
//!   which the plugin folds into one scatter on the untransposed cache.
//!   The output is the next step's cache (fed back when exclusive).
//! - `yolo_head_*`: YOLOv5's detection-head decode on `x` f32
//!   [1, 3, 80, 80, 85]: `y = sigmoid(x)`, then the slice assignments
//!   `y[..., 0:2] = ...` and `y[..., 2:4] = ...` (ScatterND in both
//!   exports), reshaped to [1, 19200, 85].
//!
//! Also the pieces every model-file workload (GTCRN too) shares: the file's
//! input and output names ([`ModelFile`]) and a runner over its inputs
//! ([`ModelRunner`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use prost::Message;
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::pb::ModelProto;
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::workloads::Rng;

/// The rows' names, in table order.
pub const NAMES: [&str; 4] = [
    "kv_step_torchscript",
    "kv_step_dynamo",
    "yolo_head_torchscript",
    "yolo_head_dynamo",
];

/// Each pair's name stem (`<stem>_torchscript`, `<stem>_dynamo`) and its
/// target: dynamo at most this many times the TorchScript export, in
/// every plugin mode.
pub const PAIRS: [(&str, f64); 2] = [("kv_step", 2.0), ("yolo_head", 1.5)];

/// The position every KV step writes.
pub const KV_POS: i64 = 7;

/// An ONNX file: its path, its graph inputs (initializers left out) and
/// outputs, in graph order (tract's input and output order).
#[derive(Debug, Clone)]
pub struct ModelFile {
    pub path: PathBuf,
    pub input_names: Vec<String>,
    pub output_names: Vec<String>,
}

impl ModelFile {
    pub fn read(path: &Path) -> Result<ModelFile> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {path:?}"))?;
        let graph = ModelProto::decode(&bytes[..])?
            .graph
            .with_context(|| format!("{path:?} has no graph"))?;
        let initializers: Vec<&str> = graph.initializer.iter().map(|i| i.name.as_str()).collect();
        Ok(ModelFile {
            path: path.to_path_buf(),
            input_names: graph
                .input
                .iter()
                .map(|i| i.name.clone())
                .filter(|n| !initializers.contains(&n.as_str()))
                .collect(),
            output_names: graph.output.iter().map(|o| o.name.clone()).collect(),
        })
    }
}

/// A planned model file with its inputs and a persistent state, ready to be
/// run repeatedly. `feedback` pairs `(output, input)`: that output becomes
/// that input of the next run (moved in by [`ModelRunner::run_exclusive`]).
pub struct ModelRunner {
    state: TypedSimpleState,
    inputs: Vec<Option<TValue>>,
    feedback: Vec<(usize, usize)>,
}

impl ModelRunner {
    /// Loads, optimizes and plans `path` with `onnx` (the plugin's
    /// `tract_onnx_scatter::onnx()` or stock `tract_onnx::onnx()`).
    pub fn new(
        path: &Path,
        inputs: &[Tensor],
        feedback: Vec<(usize, usize)>,
        onnx: &tract_onnx::Onnx,
    ) -> TractResult<ModelRunner> {
        Self::planned(onnx.model_for_path(path)?, inputs, feedback)
    }

    /// As [`ModelRunner::new`], the model typed with the inputs' shapes
    /// (and without the file's value_info, which would repeat the declared
    /// symbols on intermediate values).
    pub fn with_input_shapes(
        path: &Path,
        inputs: &[Tensor],
        onnx: &tract_onnx::Onnx,
    ) -> TractResult<ModelRunner> {
        let mut model = onnx
            .clone()
            .with_ignore_value_info(true)
            .model_for_path(path)?;
        for (ix, t) in inputs.iter().enumerate() {
            model =
                model.with_input_fact(ix, InferenceFact::dt_shape(t.datum_type(), t.shape()))?;
        }
        Self::planned(model, inputs, vec![])
    }

    fn planned(
        model: InferenceModel,
        inputs: &[Tensor],
        feedback: Vec<(usize, usize)>,
    ) -> TractResult<ModelRunner> {
        let plan = model.into_optimized()?.into_runnable()?;
        Ok(ModelRunner {
            state: plan.spawn()?,
            inputs: inputs
                .iter()
                .map(|t| Some(t.clone().into_tvalue()))
                .collect(),
            feedback,
        })
    }

    /// Input `i` (after a run that fed it back, the last output).
    pub fn input(&self, i: usize) -> &TValue {
        self.inputs[i]
            .as_ref()
            .expect("fed-back inputs are put back after every run")
    }

    /// The caller keeps every input (clones go in): an op writing into one
    /// must copy it. Returns the outputs; nothing is fed back.
    pub fn run_shared(&mut self) -> TractResult<TVec<TValue>> {
        let inputs = (0..self.inputs.len())
            .map(|i| self.input(i).clone())
            .collect();
        self.state.run(inputs)
    }

    /// The fed-back inputs are moved in (exclusively owned, so an op can
    /// write in place), the others cloned; the outputs are fed back.
    pub fn run_exclusive(&mut self) -> TractResult<()> {
        let inputs = (0..self.inputs.len())
            .map(|i| {
                if self.feedback.iter().any(|&(_, input)| input == i) {
                    self.inputs[i].take().expect("put back after every run")
                } else {
                    self.input(i).clone()
                }
            })
            .collect();
        let outputs = self.state.run(inputs)?;
        self.feed(outputs);
        Ok(())
    }

    /// Puts the fed-back `outputs` in place of their inputs.
    pub fn feed(&mut self, outputs: TVec<TValue>) {
        let mut outputs: Vec<Option<TValue>> = outputs.into_iter().map(Some).collect();
        for &(output, input) in &self.feedback {
            self.inputs[input] = outputs[output].take();
        }
    }
}

/// `input_<i>.pb` for `i < count` in a node-test data set directory.
pub fn read_inputs(set: &Path, count: usize) -> Result<Vec<Tensor>> {
    (0..count)
        .map(|i| {
            let path = set.join(format!("input_{i}.pb"));
            let bytes = std::fs::read(&path).with_context(|| format!("reading {path:?}"))?;
            let proto = tract_onnx::pb::TensorProto::decode(&bytes[..])?;
            tract_onnx::tensor::load_tensor(
                &tract_onnx::data_resolver::FopenDataResolver,
                &proto,
                None,
            )
            .with_context(|| format!("decoding {path:?}"))
        })
        .collect()
}

/// One exported model with its inputs.
pub struct Exported {
    pub name: &'static str,
    pub model: ModelFile,
    /// In graph input order; input 0 is the data (`cache`, `x`), f32.
    pub inputs: Vec<Tensor>,
    /// Output 0 is the next step's input 0 (the KV cache).
    pub feeds_back: bool,
}

/// A graph input: f32 random from the model's seed, or fixed int64 values
/// (shape `[len]`).
enum Input {
    F32(&'static [usize]),
    I64(&'static [i64]),
}

const KV_INPUTS: [(&str, Input); 3] = [
    ("cache", Input::F32(&[1, 32, 2048, 128])),
    ("pos", Input::I64(&[KV_POS])),
    ("k", Input::F32(&[1, 32, 1, 128])),
];

const YOLO_INPUTS: [(&str, Input); 1] = [("x", Input::F32(&[1, 3, 80, 80, 85]))];

/// `crates/scatter-bench/models`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models")
}

impl Exported {
    /// Reads the model of row `name` (one of [`NAMES`]) and builds its
    /// inputs (the same for both exports of a pair).
    pub fn load(name: &str) -> Result<Exported> {
        let name = *NAMES
            .iter()
            .find(|n| **n == name)
            .with_context(|| format!("unknown exported model {name:?} (known: {NAMES:?})"))?;
        let (file, inputs, seed, feeds_back): (_, &[(&str, Input)], _, _) = match name {
            "kv_step_torchscript" => ("kv_index_copy_torchscript", &KV_INPUTS, 10, true),
            "kv_step_dynamo" => ("kv_index_copy_dynamo", &KV_INPUTS, 10, true),
            "yolo_head_torchscript" => ("yolov5_head_torchscript", &YOLO_INPUTS, 11, false),
            "yolo_head_dynamo" => ("yolov5_head_dynamo", &YOLO_INPUTS, 11, false),
            _ => unreachable!("every name of NAMES has a model"),
        };
        let model = ModelFile::read(&dir().join(format!("{file}.onnx")))?;
        let expected: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
        if model.input_names != expected {
            bail!(
                "{name}: {:?} has inputs {:?}, expected {expected:?}",
                model.path,
                model.input_names
            );
        }
        let mut rng = Rng::new(seed);
        let inputs = inputs
            .iter()
            .map(|(_, input)| match input {
                Input::F32(shape) => tensor1(&rng.f32s(shape.iter().product())).into_shape(shape),
                Input::I64(values) => Ok(tensor1(values)),
            })
            .collect::<TractResult<Vec<Tensor>>>()?;
        Ok(Exported {
            name,
            model,
            inputs,
            feeds_back,
        })
    }

    /// Output 0 feeds input 0 when the model feeds back.
    pub fn feedback(&self) -> Vec<(usize, usize)> {
        if self.feeds_back {
            vec![(0, 0)]
        } else {
            vec![]
        }
    }

    /// The data input (`cache`, `x`).
    pub fn data(&self) -> Result<&[f32]> {
        self.inputs[0].try_as_plain_ram()?.as_slice::<f32>()
    }

    pub fn runner(&self, onnx: &tract_onnx::Onnx) -> TractResult<ModelRunner> {
        ModelRunner::new(&self.model.path, &self.inputs, self.feedback(), onnx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin_output(name: &str) -> Tensor {
        let e = Exported::load(name).unwrap();
        let mut runner = e.runner(&tract_onnx_scatter::onnx()).unwrap();
        runner.run_shared().unwrap().remove(0).into_tensor()
    }

    /// Both exports of a pair compute the same thing on the same inputs.
    #[test]
    fn exports_agree() {
        for (stem, _) in PAIRS {
            let torchscript = plugin_output(&format!("{stem}_torchscript"));
            let dynamo = plugin_output(&format!("{stem}_dynamo"));
            assert_eq!(torchscript, dynamo, "{stem}");
        }
    }

    /// A KV step writes k at `KV_POS`, in place when exclusive.
    #[test]
    fn kv_step_writes_k() {
        for name in ["kv_step_torchscript", "kv_step_dynamo"] {
            let e = Exported::load(name).unwrap();
            let mut runner = e.runner(&tract_onnx_scatter::onnx()).unwrap();
            runner.run_exclusive().unwrap();
            let out = runner.input(0).to_plain_array_view::<f32>().unwrap();
            let k = e.inputs[2].to_plain_array_view::<f32>().unwrap();
            let cache = e.inputs[0].to_plain_array_view::<f32>().unwrap();
            for ((h, p, d), &value) in out.indexed_iter().map(|(i, v)| ((i[1], i[2], i[3]), v)) {
                let expected = if p == KV_POS as usize {
                    k[[0, h, 0, d]]
                } else {
                    cache[[0, h, p, d]]
                };
                assert_eq!(value, expected, "{name} head {h} position {p} dim {d}");
            }
        }
    }
}

//! A benchmark row as every engine sees it: a model, its inputs, and how a
//! caller feeds it from one call to the next. The one-node scatter
//! workloads ([`crate::workloads`](mod@crate::workloads)), their gradients ([`crate::grads`]),
//! GTCRN ([`crate::gtcrn`]), the exported models ([`crate::exported`]) and
//! Piper ([`crate::piper`]) each build one; the runner ([`crate::runner`])
//! and the Python side ([`crate::ort`]: onnxruntime, PyTorch autograd)
//! read nothing else.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use prost::Message;
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::pb::ModelProto;
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::workloads::{Extras, ScatterOp, Workload};

/// An ONNX framework a case loads with: the plugin's
/// (`tract_onnx_scatter::onnx()`) or stock tract's (`tract_onnx::onnx()`).
pub trait Loader: Framework<ModelProto, InferenceModel> + Clone {
    /// The same framework, reading no `value_info`.
    fn with_ignore_value_info(self, ignore: bool) -> Self;
}

impl Loader for tract_onnx::Onnx {
    fn with_ignore_value_info(self, ignore: bool) -> Self {
        tract_onnx::Onnx::with_ignore_value_info(self, ignore)
    }
}

impl Loader for tract_onnx_scatter::Onnx {
    fn with_ignore_value_info(self, ignore: bool) -> Self {
        tract_onnx_scatter::Onnx::with_ignore_value_info(self, ignore)
    }
}

/// Where the model comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Built in memory (the one-node workloads).
    Bytes(Vec<u8>),
    File(PathBuf),
}

/// How the *owned* mode hands the model an exclusively owned data input
/// on every call (the mode where an op may write in place).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ownership {
    /// The case's `feedback` outputs are moved back in as their inputs
    /// (every mode feeds them back; only this one moves them).
    FedBack,
    /// Output 0 is moved back in as input 0: a one-node scatter whose
    /// output is the next call's data, as a KV cache is.
    OutputAsData,
    /// Input 0 is copied before each call, outside the timed call, and the
    /// copy moved in.
    CopiedBeforeEachCall,
    /// Input 1 (the indices) is copied before each call, outside the timed
    /// call, and the copy moved in; data and updates stay the caller's.
    IndicesCopiedBeforeEachCall,
    /// No owned mode (the row shows n/a).
    None,
}

/// What a gradient row differentiates, for PyTorch's side (which builds
/// the forward from it and times autograd's backward): the forward
/// scatter's op, axis and reduction, `include_self` and `lda_coeff` as the
/// grad node's attributes say.
#[derive(Debug, Clone, PartialEq)]
pub struct Gradient {
    pub op: ScatterOp,
    /// `ScatterElements` only.
    pub axis: i64,
    /// ONNX spelling (`none`, `add`, `mul`, `max`, `min`, `mean`).
    pub reduction: &'static str,
    pub include_self: bool,
    pub lda_coeff: f32,
}

/// One row of the bench.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub source: Source,
    /// Graph inputs (initializers left out) and outputs, in graph order.
    pub input_names: Vec<String>,
    pub output_names: Vec<String>,
    pub inputs: Vec<Tensor>,
    /// `(output, input)`: after each call that output replaces that input
    /// (the caches of a streaming model).
    pub feedback: Vec<(usize, usize)>,
    pub ownership: Ownership,
    /// An int64 `[1]` input set to `call % limit` before each call (outside
    /// the timed call): a KV write at a position known only at run time.
    pub position: Option<(usize, i64)>,
    /// Typed from the inputs' shapes, the file's value_info ignored.
    pub typed_from_inputs: bool,
    /// Input 0 is the f32 data whose copy is the floor of a shared-data
    /// run (the memcpy and fresh copy columns); otherwise they are n/a.
    pub has_copy_floor: bool,
    /// Time dominated by the copy of data when data is shared.
    pub copy_bound: bool,
    /// Counted in the geomean row (the one-node workloads and GTCRN).
    pub summarized: bool,
    /// A gradient row (inputs `data`, `indices`, `updates`,
    /// `grad_output`): timed against PyTorch's backward, not onnxruntime.
    pub gradient: Option<Gradient>,
    /// Thread counts, floor, PyTorch's GNN ops, fresh data each call.
    pub extras: Extras,
}

impl Case {
    /// A one-node workload: inputs `data`, `indices`, `updates`.
    pub fn from_workload(w: &Workload) -> Result<Case> {
        let bytes = w.model_bytes();
        let (input_names, output_names) = graph_names(&bytes)?;
        if input_names != ["data", "indices", "updates"] {
            bail!("{}: graph inputs {input_names:?}", w.name);
        }
        Ok(Case {
            name: w.name.into(),
            source: Source::Bytes(bytes),
            input_names,
            output_names,
            inputs: vec![w.data_tensor()?, w.indices_tensor()?, w.updates_tensor()?],
            feedback: vec![],
            ownership: if w.extras.fresh_each_call {
                Ownership::CopiedBeforeEachCall
            } else if w.extras.new_indices_each_call {
                Ownership::IndicesCopiedBeforeEachCall
            } else {
                Ownership::OutputAsData
            },
            position: None,
            typed_from_inputs: false,
            has_copy_floor: true,
            copy_bound: w.copy_bound,
            // Not in the geomeans: the fresh-cache and new-indices rows
            // repeat other rows, the GNN rows have their own table.
            summarized: !w.extras.gnn
                && !w.extras.fresh_each_call
                && !w.extras.new_indices_each_call
                && !w.extras.bfloat16,
            gradient: None,
            extras: w.extras,
        })
    }

    /// A model file with its inputs, every field else at its plainest
    /// (the callers set what differs).
    pub fn from_file(name: &str, path: &Path, inputs: Vec<Tensor>) -> Result<Case> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {path:?}"))?;
        let (input_names, output_names) = graph_names(&bytes)?;
        if input_names.len() != inputs.len() {
            bail!(
                "{name}: {path:?} has inputs {input_names:?}, {} tensors given",
                inputs.len()
            );
        }
        Ok(Case {
            name: name.into(),
            source: Source::File(path.to_path_buf()),
            input_names,
            output_names,
            inputs,
            feedback: vec![],
            ownership: Ownership::None,
            position: None,
            typed_from_inputs: false,
            has_copy_floor: false,
            copy_bound: false,
            summarized: false,
            gradient: None,
            extras: Extras::default(),
        })
    }

    /// Bytes of input 0 when it is the copied data, else of every input.
    pub fn data_bytes(&self) -> usize {
        let bytes = |t: &Tensor| t.len() * t.datum_type().size_of();
        if self.has_copy_floor {
            bytes(&self.inputs[0])
        } else {
            self.inputs.iter().map(bytes).sum()
        }
    }

    /// Input 0 as f32, when the case has a copy floor.
    pub fn copy_floor_data(&self) -> Result<Option<&[f32]>> {
        if !self.has_copy_floor {
            return Ok(None);
        }
        Ok(Some(self.inputs[0].try_as_plain_ram()?.as_slice::<f32>()?))
    }

    /// Input 0 (f32 data), 1 (int64 indices) and 2 (f32 updates) of a
    /// one-node workload, for its floor ([`crate::floor`]).
    pub fn floor_inputs(&self) -> Result<(&[f32], &[i64], &[f32])> {
        let [data, indices, updates] = &self.inputs[..] else {
            bail!("{}: a floor needs data, indices and updates", self.name);
        };
        Ok((
            data.try_as_plain_ram()?.as_slice::<f32>()?,
            indices.try_as_plain_ram()?.as_slice::<i64>()?,
            updates.try_as_plain_ram()?.as_slice::<f32>()?,
        ))
    }

    /// The model as `onnx` loads it (not yet optimized).
    pub fn model<L: Loader>(&self, onnx: &L) -> TractResult<InferenceModel> {
        let onnx = if self.typed_from_inputs {
            onnx.clone().with_ignore_value_info(true)
        } else {
            onnx.clone()
        };
        let mut model = match &self.source {
            Source::Bytes(bytes) => onnx.model_for_read(&mut &bytes[..])?,
            Source::File(path) => onnx.model_for_path(path)?,
        };
        if self.typed_from_inputs {
            for (ix, t) in self.inputs.iter().enumerate() {
                model = model
                    .with_input_fact(ix, InferenceFact::dt_shape(t.datum_type(), t.shape()))?;
            }
        }
        Ok(model)
    }

    /// The model's bytes (for onnxruntime's copy).
    pub fn model_bytes(&self) -> Result<Vec<u8>> {
        match &self.source {
            Source::Bytes(bytes) => Ok(bytes.clone()),
            Source::File(path) => std::fs::read(path).with_context(|| format!("reading {path:?}")),
        }
    }
}

/// The graph's input names (initializers left out) and output names.
pub(crate) fn graph_names(bytes: &[u8]) -> Result<(Vec<String>, Vec<String>)> {
    let graph = ModelProto::decode(bytes)?
        .graph
        .context("the model has no graph")?;
    let initializers: Vec<&str> = graph.initializer.iter().map(|i| i.name.as_str()).collect();
    let inputs = graph
        .input
        .iter()
        .map(|i| i.name.clone())
        .filter(|n| !initializers.contains(&n.as_str()))
        .collect();
    let outputs = graph.output.iter().map(|o| o.name.clone()).collect();
    Ok((inputs, outputs))
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

/// How many inputs (initializers left out) the ONNX file at `path` has.
pub fn input_count(path: &Path) -> Result<usize> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {path:?}"))?;
    Ok(graph_names(&bytes)?.0.len())
}

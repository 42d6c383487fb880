//! A planned [`Case`] run the three ways a caller runs a tract model
//! ([`Mode`]).

use std::sync::Arc;

use anyhow::{Context, ensure};

use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::case::{Case, Loader, Ownership};
use tract_onnx_scatter::Unwritten;
use tract_onnx_scatter::scatter_kernels::write_copy;

/// How the caller calls tract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `plan.run(inputs)` on every call (a fresh state each time, as the
    /// README's example and tract's examples do), the caller keeping its tensors:
    /// clones go in.
    OneShot,
    /// `state.run(inputs)` on a state spawned once, the caller keeping its
    /// tensors.
    Persistent,
    /// `state.run(inputs)` with the data input moved in (exclusively
    /// owned), as [`Ownership`] says.
    Owned,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::OneShot, Mode::Persistent, Mode::Owned];

    pub fn name(self) -> &'static str {
        match self {
            Mode::OneShot => "one-shot",
            Mode::Persistent => "persistent",
            Mode::Owned => "owned",
        }
    }

    pub fn parse(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// A planned case, its state and the caller's current inputs.
pub struct Runner {
    plan: Arc<TypedSimplePlan>,
    state: TypedSimpleState,
    inputs: Vec<Option<TValue>>,
    feedback: Vec<(usize, usize)>,
    ownership: Ownership,
    position: Option<(usize, i64)>,
    calls: i64,
    /// The untimed copy the next owned call moves in
    /// ([`Ownership::CopiedBeforeEachCall`],
    /// [`Ownership::IndicesCopiedBeforeEachCall`]).
    staged: Option<TValue>,
    /// One output of every scatter node of the model.
    scatter_output_bytes: usize,
}

/// The bytes of one output of every scatter node of `model` (outputs of
/// unknown size count 0).
fn scatter_output_bytes(model: &TypedModel) -> usize {
    model
        .nodes()
        .iter()
        .filter(|n| n.op.name().starts_with("Scatter") || n.op.name() == "TensorScatter")
        .flat_map(|n| &n.outputs)
        .filter_map(|o| {
            let volume = o.fact.shape.as_concrete()?.iter().product::<usize>();
            volume.checked_mul(o.fact.datum_type.size_of())
        })
        .sum()
}

impl Runner {
    /// Loads, optimizes and plans `case` with `onnx` (the plugin's
    /// `tract_onnx_scatter::onnx()` or stock `tract_onnx::onnx()`).
    pub fn new<L: Loader>(case: &Case, onnx: &L) -> TractResult<Runner> {
        let typed = case.model(onnx)?.into_typed()?;
        // Before decluttering, which folds some scatters into other ops
        // (the TorchScript YOLOv5 head's ScatterND, in both engines).
        let scatter_output_bytes = scatter_output_bytes(&typed);
        let plan = typed.into_optimized()?.into_runnable()?;
        Ok(Runner {
            scatter_output_bytes,
            state: plan.spawn()?,
            plan,
            inputs: case
                .inputs
                .iter()
                .map(|t| Some(t.clone().into_tvalue()))
                .collect(),
            feedback: case.feedback.clone(),
            ownership: case.ownership,
            position: case.position,
            calls: 0,
            staged: None,
        })
    }

    pub fn plan(&self) -> &Arc<TypedSimplePlan> {
        &self.plan
    }

    /// One output of every scatter node of the model, counted before
    /// decluttering: the memory the plugin may hold beyond stock tract.
    pub fn scatter_output_bytes(&self) -> usize {
        self.scatter_output_bytes
    }

    /// Moves every plain input of 4 MiB and more to memory advised to use
    /// transparent huge pages, as numpy allocates arrays of that size (the
    /// onnxruntime column's inputs): a copy then reads its source without
    /// a TLB miss every 4 KiB.
    pub fn advise_huge_page_inputs(&mut self) -> TractResult<()> {
        for input in self.inputs.iter_mut().flatten() {
            let dt = input.datum_type();
            let bytes = input.len() * dt.size_of();
            if !dt.is_copy() || bytes < 4 << 20 {
                continue;
            }
            let src = input.try_as_plain_ram()?;
            let moved = Unwritten::fresh(dt, input.shape())?.fill_bytes(|dst| {
                ensure!(dst.len() == src.as_bytes().len(), "input of another size");
                Ok(write_copy(dst, src.as_bytes()))
            })?;
            *input = moved.into_tvalue();
        }
        Ok(())
    }

    /// Whether `mode` applies to this case (owned needs an [`Ownership`]).
    pub fn supports(&self, mode: Mode) -> bool {
        mode != Mode::Owned || self.ownership != Ownership::None
    }

    /// The caller's input `i` (after a call that fed it back, the output).
    pub fn input(&self, i: usize) -> &TValue {
        self.inputs[i]
            .as_ref()
            .expect("moved inputs are put back after every call")
    }

    /// The caller's work before a call, outside the timed call: the next
    /// position, the copy an owned call moves in.
    pub fn prepare(&mut self, mode: Mode) -> TractResult<()> {
        if let Some((input, limit)) = self.position {
            self.inputs[input] = Some(tensor1(&[self.calls.rem_euclid(limit)]).into_tvalue());
        }
        self.calls = self.calls.wrapping_add(1);
        if let (Mode::Owned, Some(i)) = (mode, self.copied_before_each_call()) {
            self.staged = Some(self.input(i).clone().into_tensor().into_tvalue());
        }
        Ok(())
    }

    /// The input an owned call moves in a copy of, made before the call.
    fn copied_before_each_call(&self) -> Option<usize> {
        match self.ownership {
            Ownership::CopiedBeforeEachCall => Some(0),
            Ownership::IndicesCopiedBeforeEachCall => Some(1),
            _ => None,
        }
    }

    /// Whether input `i` is moved in by an owned call.
    fn moved(&self, i: usize) -> bool {
        match self.ownership {
            Ownership::FedBack => self.feedback.iter().any(|&(_, input)| input == i),
            Ownership::OutputAsData => i == 0,
            Ownership::CopiedBeforeEachCall | Ownership::IndicesCopiedBeforeEachCall => {
                self.copied_before_each_call() == Some(i)
            }
            Ownership::None => false,
        }
    }

    /// One call in `mode` (after [`Runner::prepare`]); the outputs are fed
    /// back or dropped, as a caller would.
    pub fn run(&mut self, mode: Mode) -> TractResult<()> {
        ensure!(self.supports(mode), "no owned mode for this case");
        let inputs = (0..self.inputs.len())
            .map(|i| match mode {
                Mode::Owned if self.moved(i) => match self.copied_before_each_call() {
                    Some(_) => self.staged.take().context("prepare() stages the copy"),
                    None => self.inputs[i].take().context("put back after every call"),
                },
                _ => Ok(self.input(i).clone()),
            })
            .collect::<TractResult<TVec<TValue>>>()?;
        let outputs = match mode {
            Mode::OneShot => self.plan.run(inputs)?,
            Mode::Persistent | Mode::Owned => self.state.run(inputs)?,
        };
        let mut outputs: Vec<Option<TValue>> = outputs.into_iter().map(Some).collect();
        for &(output, input) in &self.feedback {
            self.inputs[input] = outputs[output].take();
        }
        if mode == Mode::Owned && self.ownership == Ownership::OutputAsData {
            self.inputs[0] = outputs[0].take();
        }
        Ok(())
    }
}

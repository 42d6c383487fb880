//! Benchmarks of the scatter plugin: workload definitions ([`workloads`]),
//! in-memory ONNX model builders, the real GTCRN model per frame
//! ([`gtcrn`]), models of PyTorch's exporters and the runner of model
//! files ([`exported`]), a timing loop ([`timing`]), the
//! onnxruntime side ([`ort`]) and the report table ([`report`]).
//!
//! `cargo xtask bench` runs the `scatter-bench` binary in release mode;
//! `cargo bench -p scatter-bench` runs the divan benches of the plugin.

pub mod exported;
pub mod gtcrn;
pub mod ort;
pub mod piper;
pub mod report;
pub mod timing;
pub mod workloads;

use tract_onnx_scatter::tract_onnx::prelude::*;

pub use workloads::{NAMES, STOCK_NAMES, ScatterOp, Workload, workload, workloads};

/// A planned model with its inputs and a persistent state, ready to be run
/// repeatedly.
pub struct Runner {
    state: TypedSimpleState,
    data: Option<TValue>,
    indices: TValue,
    updates: TValue,
}

impl Runner {
    /// Plans `workload` with `onnx` and prepares its inputs.
    pub fn new(
        workload: &Workload,
        onnx: &tract_onnx_scatter::tract_onnx::Onnx,
    ) -> TractResult<Runner> {
        let plan = workload.compile(onnx)?;
        Ok(Runner {
            state: plan.spawn()?,
            data: Some(workload.data_tensor()?.into_tvalue()),
            indices: workload.indices_tensor()?.into_tvalue(),
            updates: workload.updates_tensor()?.into_tvalue(),
        })
    }

    fn data(&self) -> &TValue {
        self.data
            .as_ref()
            .expect("data is put back after every run")
    }

    /// The caller keeps its reference to data: the op must copy it.
    pub fn run_shared(&mut self) -> TractResult<TValue> {
        let inputs = tvec![
            self.data().clone(),
            self.indices.clone(),
            self.updates.clone()
        ];
        Ok(self.state.run(inputs)?.remove(0))
    }

    /// Data is moved in, and the output becomes the next run's data (a
    /// KV cache updated step after step): an op that scatters in place
    /// costs O(updates).
    pub fn run_exclusive(&mut self) -> TractResult<()> {
        let data = self.data.take().expect("data is put back after every run");
        let inputs = tvec![data, self.indices.clone(), self.updates.clone()];
        let mut outputs = self.state.run(inputs)?;
        self.data = Some(outputs.remove(0));
        Ok(())
    }

    /// The current data value (after `run_exclusive`, the last output).
    pub fn current_data(&self) -> &Tensor {
        self.data()
    }
}

/// Copies `src` into the warm `dst`: the floor of any op that must copy
/// its data input.
#[inline(never)]
pub fn memcpy(dst: &mut [f32], src: &[f32]) {
    dst.copy_from_slice(src);
}

//! `tract-scatter run MODEL`: run once, print or save the outputs.

use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::Failed;
use crate::cli::RunArgs;
use crate::model::{Prepared, prepare};
use crate::tensors::{summary_as, write_npz};

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let prepared = prepare(&args.model, &args.inputs)?;
    let held = crate::model::held_types(&args.model.model)?;
    let (input_names, _) = &prepared.loaded_names;
    for (name, value) in input_names.iter().zip(&prepared.inputs) {
        println!(
            "input  {name}: {}",
            summary_as(value, held.get(name).copied())
        );
    }
    let outputs = run_once(&prepared, &args.model.model.display().to_string())?;
    match &args.output {
        Some(path) => {
            write_npz(path, &outputs, &held)?;
            println!("wrote {} output(s) to {}", outputs.len(), path.display());
        }
        None => {
            for (name, value) in &outputs {
                println!(
                    "output {name}: {}",
                    summary_as(value, held.get(name).copied())
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs the plan once on its inputs; the outputs by name. A run-time error
/// is the model's failure (exit 1), not a usage error.
/// A panic of tract's is such a failure too; on random inputs the message
/// says so.
pub fn run_once(prepared: &Prepared, model: &str) -> Result<Vec<(String, Tensor)>> {
    let outputs = checked_run(prepared, model, || {
        prepared.plan.run(prepared.inputs.clone())
    })?;
    Ok(prepared
        .loaded_names
        .1
        .iter()
        .cloned()
        .zip(outputs.into_iter().map(|v| v.into_tensor()))
        .collect())
}

/// `call`, a run of `prepared`'s plan: an error or a panic is the model's
/// failure (exit 1) naming the model, and the random inputs it ran on.
pub fn checked_run<T>(
    prepared: &Prepared,
    model: &str,
    call: impl FnOnce() -> TractResult<T>,
) -> Result<T> {
    let result = match onnx_golden::panic_guard::catch(call) {
        Ok(result) => result,
        Err(panic) => Err(anyhow!("tract panicked: {}", panic.replace('\n', " "))),
    };
    let result = result.with_context(|| format!("running {model}"));
    match &prepared.random {
        Some(random) => result.with_context(|| {
            format!(
                "on {random}: random values may be out of what the model accepts (an index out of range): give real inputs"
            )
        }),
        None => result,
    }
    .map_err(|e| Failed(e).into())
}

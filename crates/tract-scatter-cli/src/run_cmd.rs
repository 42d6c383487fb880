//! `tract-scatter run MODEL`: run once, print or save the outputs.

use std::process::ExitCode;

use anyhow::{Context, Result};
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
pub fn run_once(prepared: &Prepared, model: &str) -> Result<Vec<(String, Tensor)>> {
    let outputs = prepared
        .plan
        .run(prepared.inputs.clone())
        .with_context(|| format!("running {model}"))
        .map_err(Failed)?;
    Ok(prepared
        .loaded_names
        .1
        .iter()
        .cloned()
        .zip(outputs.into_iter().map(|v| v.into_tensor()))
        .collect())
}

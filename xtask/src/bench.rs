//! `cargo xtask bench`: builds `scatter-bench` in release mode and runs it
//! (plugin and stock tract in every calling mode, each in its own process
//! for its peak RSS; warm and fresh copies; onnxruntime when a Python with
//! onnxruntime is found, PyTorch autograd on the gradient rows when one
//! with torch is), printing the markdown tables and target lines.

use anyhow::{Result, bail};
use std::path::Path;
use std::process::{Command, ExitCode};

use crate::args::Args;

/// Options, all forwarded to the `scatter-bench` binary.
const VALUE_OPTIONS: [&str; 6] = [
    "--filter",
    "--budget-ms",
    "--python",
    "--torch-python",
    "--output",
    "--pool-capacity",
];
/// `--no-ort true` / `--no-torch true` / `--no-stock true` /
/// `--huge-page-inputs true`: the xtask parser takes values only.
const FLAG_OPTIONS: [&str; 4] = ["--no-ort", "--no-torch", "--no-stock", "--huge-page-inputs"];

pub fn run(mut args: Args) -> Result<ExitCode> {
    let mut forwarded: Vec<String> = vec![];
    for name in VALUE_OPTIONS {
        if let Some(value) = args.take(name) {
            forwarded.push(name.into());
            forwarded.push(value);
        }
    }
    for name in FLAG_OPTIONS {
        match args.take(name).as_deref() {
            None | Some("false") => {}
            Some("true") => forwarded.push(name.into()),
            Some(other) => bail!("{name} takes true or false, got {other:?}"),
        }
    }
    args.finish()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        .args(["run", "--release", "--quiet", "-p", "scatter-bench", "--"])
        .args(&forwarded)
        .status()?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

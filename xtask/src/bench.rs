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
const VALUE_OPTIONS: [&str; 8] = [
    "--filter",
    "--baseline",
    "--baseline-env",
    "--budget-ms",
    "--python",
    "--torch-python",
    "--output",
    "--pool-capacity",
];
/// `--no-ort true` / `--no-torch true` / `--no-stock true` /
/// `--huge-page-inputs true`: the xtask parser takes values only.
const FLAG_OPTIONS: [&str; 4] = ["--no-ort", "--no-torch", "--no-stock", "--huge-page-inputs"];

/// glibc's malloc thresholds at their dynamic maximum (mmap 32 MiB, trim
/// twice that), what a long-running process reaches once it has freed a
/// large block. Left dynamic, they depend on what each process freed while
/// loading and optimizing its model, which decides whether a call's
/// tensors below 32 MiB come back as reused heap or as fresh pages that
/// fault every 4 KiB: two exports with the same plan then differ up to 5×
/// (docs/performance.md, exported models). Pinned, every engine's process (plugin,
/// stock, onnxruntime) starts where a warmed-up one ends.
const PINNED_MALLOC: &str =
    "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864";

pub fn run(mut args: Args) -> Result<ExitCode> {
    let pin_malloc = match args.take("--malloc").as_deref() {
        None | Some("pinned") => std::env::var_os("GLIBC_TUNABLES").is_none(),
        Some("dynamic") => false,
        Some(other) => bail!("--malloc takes pinned or dynamic, got {other:?}"),
    };
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
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args(["run", "--release", "--quiet", "-p", "scatter-bench", "--"])
        .args(&forwarded);
    if pin_malloc {
        command.env("GLIBC_TUNABLES", PINNED_MALLOC);
    }
    let status = command.status()?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

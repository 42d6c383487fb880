//! `tract-scatter compare MODEL`: outputs against a reference, with
//! onnx-golden's comparison rules and tolerances.

use std::process::ExitCode;

use anyhow::{Result, bail};
use onnx_golden::compare::{Tolerance, compare_with};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::cli::CompareArgs;
use crate::model::{prepare, read_data_set};
use crate::run_cmd::run_once;
use crate::tensors::{as_f64, read_npz};

pub fn run(args: CompareArgs) -> Result<ExitCode> {
    if args.rtol < 0.0 || args.atol < 0.0 || args.rtol.is_nan() || args.atol.is_nan() {
        bail!(
            "--rtol {} --atol {}: tolerances must be non-negative numbers",
            args.rtol,
            args.atol
        );
    }
    let prepared = prepare(&args.model, &args.inputs)?;
    let output_names = prepared.loaded_names.1.clone();
    // The references, by output index.
    let references: Vec<Tensor> = match (&args.reference, &args.inputs.data_set) {
        (Some(npz), _) => {
            let mut arrays = read_npz(npz)?;
            let mut refs = vec![];
            for name in &output_names {
                let Some(ix) = arrays.iter().position(|(n, _)| n == name) else {
                    bail!(
                        "{}: no array named {name:?} (the model's outputs: {}; the archive's arrays: {})",
                        npz.display(),
                        output_names.join(", "),
                        arrays
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                };
                refs.push(arrays.swap_remove(ix).1);
            }
            refs
        }
        (None, Some(dir)) => {
            let refs = read_data_set(dir, "output")?;
            if refs.len() != output_names.len() {
                bail!(
                    "{} has {} output_<i>.pb file(s) but the model has {} output(s): {}",
                    dir.display(),
                    refs.len(),
                    output_names.len(),
                    output_names.join(", ")
                );
            }
            refs
        }
        (None, None) => {
            bail!("compare needs a reference: --reference FILE.npz or --data-set DIR")
        }
    };
    let outputs = run_once(&prepared, &args.model.model.display().to_string())?;
    let tolerance = Tolerance {
        rtol: args.rtol,
        atol: args.atol,
    };
    let mut mismatches = 0;
    for ((name, got), expected) in outputs.iter().zip(&references) {
        let verdict = compare_with(got, expected, tolerance);
        let stats = errors(got, expected, tolerance)
            .map(|e| e.to_string())
            .unwrap_or_default();
        match verdict {
            Ok(()) => println!("output {name}: ok{stats}"),
            Err(why) => {
                mismatches += 1;
                println!("output {name}: MISMATCH: {why}{stats}");
            }
        }
    }
    println!(
        "rtol {} atol {}: {} of {} output(s) match",
        args.rtol,
        args.atol,
        outputs.len() - mismatches,
        outputs.len()
    );
    if mismatches == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(crate::FAILED))
    }
}

/// Error statistics of one output against its reference.
struct Errors {
    max_abs: f64,
    max_rel: f64,
    /// The element with the largest |got - expected| / (atol + rtol |expected|).
    worst: Vec<usize>,
    worst_got: f64,
    worst_expected: f64,
}

impl std::fmt::Display for Errors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            " (max abs err {:.3e}, max rel err {:.3e}, worst at {:?}: got {} expected {})",
            self.max_abs, self.max_rel, self.worst, self.worst_got, self.worst_expected
        )
    }
}

/// Statistics when both tensors are numeric and of the same shape.
fn errors(got: &Tensor, expected: &Tensor, tolerance: Tolerance) -> Option<Errors> {
    if got.shape() != expected.shape() || got.len() == 0 {
        return None;
    }
    let (g, e) = (as_f64(got)?, as_f64(expected)?);
    let mut stats = Errors {
        max_abs: 0.0,
        max_rel: 0.0,
        worst: vec![],
        worst_got: g[0],
        worst_expected: e[0],
    };
    let mut worst_ix = 0;
    let mut worst_score = -1.0;
    for (ix, (&a, &b)) in g.iter().zip(&e).enumerate() {
        let abs = if a == b || (a.is_nan() && b.is_nan()) {
            0.0
        } else {
            (a - b).abs()
        };
        let abs = if abs.is_nan() { f64::INFINITY } else { abs };
        let rel = if abs == 0.0 { 0.0 } else { abs / b.abs() };
        stats.max_abs = stats.max_abs.max(abs);
        stats.max_rel = stats.max_rel.max(rel);
        let score = abs / (tolerance.atol + tolerance.rtol * b.abs()).max(f64::MIN_POSITIVE);
        if score > worst_score {
            worst_score = score;
            worst_ix = ix;
        }
    }
    // Row-major coordinates of the worst element.
    let mut rest = worst_ix;
    let mut coords = vec![0; got.rank()];
    for (axis, &dim) in got.shape().iter().enumerate().rev() {
        coords[axis] = rest % dim;
        rest /= dim;
    }
    stats.worst = coords;
    stats.worst_got = g[worst_ix];
    stats.worst_expected = e[worst_ix];
    Some(stats)
}

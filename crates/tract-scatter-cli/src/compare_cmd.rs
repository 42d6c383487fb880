//! `tract-scatter compare MODEL`: outputs against a reference, with
//! onnx-golden's comparison rules and tolerances; with `--intermediates`,
//! every ONNX tensor of the model tract keeps, to find the first node
//! whose output differs.

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use onnx_golden::compare::{Tolerance, compare_with};
use tract_onnx_scatter::tract_onnx::prelude::*;

use crate::Failed;
use crate::cli::CompareArgs;
use crate::model::{load_with_inputs, optimize, read_data_set};
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
    if args.reference.is_none() && args.inputs.data_set.is_none() && args.intermediates.is_none() {
        bail!(
            "compare needs a reference: --reference FILE.npz, --data-set DIR or --intermediates REF.npz"
        )
    }
    let bundle = match &args.intermediates {
        Some(npz) => read_npz(npz)?,
        None => vec![],
    };
    let (loaded, inputs) = load_with_inputs(&args.model, &args.inputs, &bundle)?;
    // The decluttered model, before optimization fuses nodes away.
    let decluttered = args
        .intermediates
        .is_some()
        .then(|| (loaded.typed.clone(), inputs.clone()));
    let output_names = loaded.output_names.clone();
    let input_names = loaded.input_names.clone();
    let prepared = optimize(loaded, inputs, &args.model.model)?;
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
            if refs.is_empty() && args.intermediates.is_some() {
                // Inputs only: the intermediates are the reference.
            } else if refs.len() != output_names.len() {
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
        (None, None) if args.intermediates.is_some() => vec![],
        (None, None) => {
            bail!(
                "compare needs a reference: --reference FILE.npz, --data-set DIR or --intermediates REF.npz"
            )
        }
    };
    let outputs = run_once(&prepared, &args.model.model.display().to_string())?;
    let tolerance = Tolerance {
        rtol: args.rtol,
        atol: args.atol,
    };
    let mut mismatches = 0;
    let compared = references.len();
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
    if compared > 0 {
        println!(
            "rtol {} atol {}: {} of {} output(s) match",
            args.rtol,
            args.atol,
            compared - mismatches,
            compared
        );
    }
    if let (Some(npz), Some((typed, inputs))) = (&args.intermediates, decluttered) {
        let names = (&input_names[..], &output_names[..]);
        let differ = intermediates(&args, npz, typed, inputs, names, bundle, tolerance)?;
        if differ == 0 && mismatches > 0 {
            println!(
                "no intermediate differs in the decluttered model: the outputs of the optimized plan do"
            );
        }
        mismatches += differ;
    }
    if mismatches == 0 {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(crate::FAILED))
    }
}

/// An ONNX tensor's producer: the node's position in the ONNX graph, its
/// name and op type.
struct Producer {
    position: usize,
    node: String,
    op_type: String,
}

/// One intermediate compared: the producer's position in the ONNX graph,
/// the tensor's name, the verdict and the error figures of a difference.
type Compared<'a> = (usize, &'a str, Result<(), String>, Option<Errors>);

/// Compares the tensors of the decluttered model labelled with a name of
/// `bundle` (as tract labels outlets with ONNX tensor names) with the
/// bundle's; prints a summary and the first node in ONNX graph order whose
/// output differs. Returns how many tensors differ.
fn intermediates(
    args: &CompareArgs,
    npz: &Path,
    mut typed: TypedModel,
    inputs: TVec<TValue>,
    (input_names, output_names): (&[String], &[String]),
    bundle: Vec<(String, Tensor)>,
    tolerance: Tolerance,
) -> Result<usize> {
    let path = args.model.model.display().to_string();
    // ONNX graph order: the producer of each top-level tensor.
    let proto = tract_onnx_scatter::tract_onnx::onnx()
        .proto_model_for_path(&args.model.model)
        .with_context(|| format!("reading {path}"))?;
    let mut producers: HashMap<&str, Producer> = HashMap::new();
    let nodes = proto.graph.as_ref().map_or(&[][..], |g| &g.node[..]);
    for (position, node) in nodes.iter().enumerate() {
        for output in node.output.iter().filter(|o| !o.is_empty()) {
            producers.insert(
                output,
                Producer {
                    position,
                    node: if node.name.is_empty() {
                        output.clone()
                    } else {
                        node.name.clone()
                    },
                    op_type: node.op_type.clone(),
                },
            );
        }
    }
    // The model's outputs (by their ONNX names: decluttering may relabel
    // their outlets), then the labelled outlets the bundle has, each name
    // once; `names[i]` is the value `taken[i]` of the run.
    let expected: HashMap<&str, &Tensor> = bundle.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let mut outlets = typed.output_outlets()?.to_vec();
    let mut names: Vec<String> = vec![];
    let mut taken: Vec<usize> = vec![];
    for (ix, name) in output_names.iter().enumerate() {
        if expected.contains_key(name.as_str()) && !names.contains(name) {
            names.push(name.clone());
            taken.push(ix);
        }
    }
    for node in typed.nodes() {
        for slot in 0..node.outputs.len() {
            let outlet = OutletId::new(node.id, slot);
            if let Some(label) = typed.outlet_label(outlet)
                && expected.contains_key(label)
                && !input_names.iter().any(|n| n == label)
                && !names.iter().any(|n| n == label)
            {
                names.push(label.to_string());
                taken.push(outlets.len());
                outlets.push(outlet);
            }
        }
    }
    typed.select_output_outlets(&outlets)?;
    let values = typed
        .into_runnable()
        .with_context(|| format!("planning the decluttered {path}"))?
        .run(inputs)
        .with_context(|| format!("running the decluttered {path}"))
        .map_err(Failed)?;
    let mut results: Vec<Compared> = vec![];
    for (name, &ix) in names.iter().zip(&taken) {
        let got = &values[ix];
        let reference = expected[name.as_str()];
        let got = match (got.datum_type(), reference.datum_type()) {
            // .npz has no f16: references of f16 tensors are float32.
            (DatumType::F16, DatumType::F32) => got.cast_to::<f32>()?.into_owned(),
            _ => got.clone().into_tensor(),
        };
        let position = producers
            .get(name.as_str())
            .map_or(usize::MAX, |p| p.position);
        let verdict = compare_with(&got, reference, tolerance);
        let stats = verdict
            .is_err()
            .then(|| errors(&got, reference, tolerance))
            .flatten();
        results.push((position, name, verdict, stats));
    }
    results.sort_by_key(|r| r.0);
    let differ = results.iter().filter(|r| r.2.is_err()).count();
    let missing: Vec<&str> = bundle
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !names.iter().any(|m| m == n) && !input_names.iter().any(|m| m == n))
        .collect();
    println!(
        "intermediates (decluttered model): {} of {} tensor(s) of {} compared, {} match, {differ} differ",
        results.len(),
        bundle.len(),
        npz.display(),
        results.len() - differ
    );
    if !missing.is_empty() {
        const SHOWN: usize = 10;
        let more = if missing.len() > SHOWN { ", ..." } else { "" };
        println!(
            "not found in tract's plan ({}): {}{more}",
            missing.len(),
            missing[..missing.len().min(SHOWN)].join(", ")
        );
    }
    match results.iter().find(|r| r.2.is_err()) {
        None => println!("first difference: none"),
        Some((_, name, verdict, stats)) => {
            let at = match producers.get(name) {
                Some(p) => format!(
                    "node {} ({}, #{} of {} in the ONNX graph)",
                    p.node,
                    p.op_type,
                    p.position + 1,
                    nodes.len()
                ),
                None => "a node not in the ONNX graph".to_string(),
            };
            println!(
                "first difference: {at}, output {name}: {}{}",
                verdict.as_ref().err().map_or("", String::as_str),
                stats.as_ref().map(|e| e.to_string()).unwrap_or_default()
            );
        }
    }
    Ok(differ)
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

//! Load an ONNX model through the plugin, print its facts, run it, and
//! optionally write it as NNEF: the program to copy into your own project.
//!
//! ```text
//! cargo run -p tract-onnx-scatter --example run_onnx -- MODEL.onnx
//!     [--input NAME=FILE.pb | --input FILE.pb]...   inputs (TensorProto files);
//!                                                   missing ones are random
//!     [--set SYMBOL=N]...     give a symbolic dimension (dim_param) a value;
//!                             the model is then typed with concrete inputs
//!     [--seed N]              seed of the random inputs (default 0)
//!     [--nnef OUT.tar | --nnef OUT_DIR]   write the decluttered model as NNEF
//!                                         (with the plugin's scatter registry)
//! ```
//!
//! Random inputs have the declared shapes, symbols without `--set` taking the
//! value 1; floats are uniform in [-1, 1), integers in 0..4 (valid indices
//! into most axes), booleans fair coins.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail, format_err};
use tract_onnx_scatter::tract_hir::infer::Factoid;
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::prelude::*;

/// Parsed command line.
#[derive(Debug, Clone, Default)]
pub struct Args {
    pub model: PathBuf,
    /// `(input name, file)`; an empty name means "the next input in order".
    pub inputs: Vec<(String, PathBuf)>,
    pub sets: Vec<(String, i64)>,
    pub seed: u64,
    pub nnef: Option<PathBuf>,
}

impl Args {
    pub fn parse(args: &[String]) -> TractResult<Args> {
        let mut parsed = Args::default();
        let mut model = None;
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let mut value = |flag: &str| {
                it.next()
                    .cloned()
                    .ok_or_else(|| format_err!("{flag} needs a value"))
            };
            match arg.as_str() {
                "--input" => {
                    let v = value("--input")?;
                    parsed.inputs.push(match v.split_once('=') {
                        Some((name, file)) => (name.to_string(), file.into()),
                        None => (String::new(), v.into()),
                    });
                }
                "--set" => {
                    let v = value("--set")?;
                    let (sym, n) = v
                        .split_once('=')
                        .ok_or_else(|| format_err!("--set wants SYMBOL=N, got {v:?}"))?;
                    let n = n
                        .parse()
                        .with_context(|| format!("--set {v}: {n:?} is not an integer"))?;
                    parsed.sets.push((sym.to_string(), n));
                }
                "--seed" => parsed.seed = value("--seed")?.parse().context("--seed")?,
                "--nnef" => parsed.nnef = Some(value("--nnef")?.into()),
                "-h" | "--help" => bail!("{}", usage()),
                flag if flag.starts_with("--") => bail!("unknown option {flag}\n{}", usage()),
                path if model.is_none() => model = Some(PathBuf::from(path)),
                extra => bail!("unexpected argument {extra:?}\n{}", usage()),
            }
        }
        parsed.model = model.ok_or_else(|| format_err!("{}", usage()))?;
        Ok(parsed)
    }
}

fn usage() -> &'static str {
    "usage: run_onnx MODEL.onnx [--input [NAME=]FILE.pb]... [--set SYMBOL=N]... [--seed N] \
     [--nnef OUT.tar|OUT_DIR]"
}

/// What a run produced (printed by `main`, checked by the tests).
#[derive(Debug)]
pub struct Summary {
    pub input_facts: Vec<(String, TypedFact)>,
    pub output_facts: Vec<(String, TypedFact)>,
    pub inputs: TVec<TValue>,
    pub outputs: TVec<TValue>,
    /// Scatter ops left in the optimized plan.
    pub scatter_nodes: usize,
    pub run_time: std::time::Duration,
}

/// Loads, prints, runs and (optionally) writes NNEF.
pub fn run(args: &Args, out: &mut dyn std::io::Write) -> TractResult<Summary> {
    // With --set the inputs get concrete shapes; the file's value_info may
    // repeat the symbols on intermediate values, so it is ignored then.
    let onnx = tract_onnx_scatter::onnx().with_ignore_value_info(!args.sets.is_empty());
    let mut model = onnx
        .model_for_path(&args.model)
        .with_context(|| format!("loading {:?}", args.model))?;

    let mut values = SymbolValues::default();
    for (name, n) in &args.sets {
        values.set(&model.symbols.sym(name), *n);
    }
    if !args.sets.is_empty() {
        for ix in 0..model.inputs.len() {
            let fact = model.input_fact(ix)?.clone();
            let (Some(dt), Some(shape)) = (fact.datum_type.concretize(), fact.shape.concretize())
            else {
                continue;
            };
            let shape: TVec<TDim> = shape.iter().map(|d| d.eval(&values)).collect();
            model.set_input_fact(ix, InferenceFact::dt_shape(dt, shape))?;
        }
    }

    let typed = model.into_typed()?.into_decluttered()?;
    let facts = |outlets: &[OutletId]| -> TractResult<Vec<(String, TypedFact)>> {
        outlets
            .iter()
            .map(|o| {
                // The ONNX value name, when decluttering renamed the node.
                let name = typed
                    .outlet_label(*o)
                    .map(str::to_string)
                    .unwrap_or_else(|| typed.node(o.node).name.clone());
                Ok((name, typed.outlet_fact(*o)?.clone()))
            })
            .collect()
    };
    let input_facts = facts(typed.input_outlets()?)?;
    let output_facts = facts(typed.output_outlets()?)?;
    for (name, fact) in &input_facts {
        writeln!(out, "input  {name}: {fact:?}")?;
    }
    for (name, fact) in &output_facts {
        writeln!(out, "output {name}: {fact:?}")?;
    }

    if let Some(path) = &args.nnef {
        write_nnef(&typed, path)?;
        writeln!(out, "wrote NNEF to {path:?}")?;
    }

    let inputs = inputs(args, &input_facts, &values)?;
    let optimized = typed.into_optimized()?;
    let scatter_nodes = optimized
        .nodes()
        .iter()
        .filter(|n| n.op().name().contains("Scatter"))
        .count();
    let plan = optimized.into_runnable()?;
    let start = Instant::now();
    let outputs = plan.run(inputs.clone())?;
    let run_time = start.elapsed();
    writeln!(
        out,
        "ran in {:.3} ms ({scatter_nodes} scatter nodes in the optimized plan)",
        run_time.as_secs_f64() * 1e3
    )?;
    for ((name, _), value) in output_facts.iter().zip(&outputs) {
        writeln!(
            out,
            "output {name}: {:?} {:?} {}",
            value.datum_type(),
            value.shape(),
            first_values(value, 8)
        )?;
    }
    Ok(Summary {
        input_facts,
        output_facts,
        inputs,
        outputs,
        scatter_nodes,
        run_time,
    })
}

/// The given inputs (by name, or in order), random ones for the rest.
fn inputs(
    args: &Args,
    facts: &[(String, TypedFact)],
    values: &SymbolValues,
) -> TractResult<TVec<TValue>> {
    let mut given: Vec<Option<Tensor>> = vec![None; facts.len()];
    let mut next = 0;
    for (name, file) in &args.inputs {
        let ix = if name.is_empty() {
            while next < given.len() && given[next].is_some() {
                next += 1;
            }
            next
        } else {
            facts
                .iter()
                .position(|(n, _)| n == name)
                .ok_or_else(|| format_err!("the model has no input named {name:?}"))?
        };
        if ix >= given.len() {
            bail!("more --input files than model inputs ({})", facts.len());
        }
        given[ix] = Some(read_tensor(file)?);
    }
    let mut rng = Lcg(args.seed.wrapping_mul(2).wrapping_add(1));
    facts
        .iter()
        .zip(given)
        .map(|((_, fact), t)| match t {
            Some(t) => Ok(t.into_tvalue()),
            None => random_tensor(fact, values, &mut rng).map(|t| t.into_tvalue()),
        })
        .collect()
}

/// A TensorProto file (`input_0.pb` of ONNX test data, `numpy_helper.from_array(a).SerializeToString()`).
fn read_tensor(path: &Path) -> TractResult<Tensor> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {path:?}"))?;
    let proto = tract_onnx::tensor::proto_from_reader(file)?;
    let provider = tract_onnx::onnx().provider;
    tract_onnx::tensor::load_tensor(&*provider, &proto, None)
        .with_context(|| format!("decoding {path:?}"))
}

/// Tiny deterministic generator (no dependency for an example).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn unit(&mut self) -> f64 {
        (self.next() as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
    }
}

fn random_tensor(fact: &TypedFact, values: &SymbolValues, rng: &mut Lcg) -> TractResult<Tensor> {
    let mut values = values.clone();
    let mut shape = vec![];
    for dim in fact.shape.iter() {
        for sym in dim.symbols() {
            if values.get(&sym).is_none() {
                values.set(&sym, 1);
            }
        }
        shape.push(dim.eval(&values).to_i64()? as usize);
    }
    let len: usize = shape.iter().product();
    let dt = fact.datum_type;
    let t = if dt.is_float() {
        let v: Vec<f64> = (0..len).map(|_| rng.unit()).collect();
        Tensor::from_shape(&shape, &v)?.cast_to_dt(dt)?.into_owned()
    } else if dt == bool::datum_type() {
        let v: Vec<bool> = (0..len).map(|_| rng.next() & 1 == 1).collect();
        Tensor::from_shape(&shape, &v)?
    } else if dt.is_integer() {
        let v: Vec<i64> = (0..len).map(|_| (rng.next() % 4) as i64).collect();
        Tensor::from_shape(&shape, &v)?.cast_to_dt(dt)?.into_owned()
    } else {
        bail!("cannot make a random {dt:?} input; pass it with --input");
    };
    Ok(t)
}

/// The first `n` values, as text.
fn first_values(t: &Tensor, n: usize) -> String {
    let Ok(as_f64) = t.cast_to::<f64>() else {
        return format!("{t:?}");
    };
    let Ok(plain) = as_f64.try_as_plain_ram() else {
        return format!("{t:?}");
    };
    let Ok(slice) = plain.as_slice::<f64>() else {
        return format!("{t:?}");
    };
    let shown: Vec<String> = slice.iter().take(n).map(|v| format!("{v:.6}")).collect();
    let more = if slice.len() > n { ", ..." } else { "" };
    format!("[{}{more}]", shown.join(", "))
}

/// NNEF with the plugin's scatter registry: a `.tar` archive, or a directory.
fn write_nnef(model: &TypedModel, path: &Path) -> TractResult<()> {
    let nnef = tract_onnx_scatter::nnef();
    if path.extension().is_some_and(|e| e == "tar") {
        let file = std::fs::File::create(path).with_context(|| format!("creating {path:?}"))?;
        nnef.write_to_tar(model, file)?;
    } else {
        nnef.write_to_dir(model, path)?;
    }
    Ok(())
}

#[allow(dead_code)]
fn main() -> TractResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = Args::parse(&args)?;
    run(&args, &mut std::io::stdout())?;
    Ok(())
}

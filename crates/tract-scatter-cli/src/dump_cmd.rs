//! `tract-scatter dump MODEL`: the optimized plan, the symbols, the nodes
//! this plugin built, and the exporter deviations it accepted (the
//! plugin's `log::warn!` lines, captured by a logger installed for the
//! command).

use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::{Context, Result};
use tract_onnx_scatter::ops::{
    ScatterElements, ScatterElementsUpdate, ScatterGrad, ScatterNd, TensorScatter,
};
use tract_onnx_scatter::tract_onnx::prelude::*;
use tract_onnx_scatter::tract_overrides::{
    BindRunSymbols, IntegerToTDim, RunTimeBoundSlice, RunTimeConstantOfShape, RuntimeReshape,
    Unique,
};

use crate::cli::DumpArgs;
use crate::model::{Engine, load, shape_text, unsupported_ops, unsupported_text};
use crate::one_line;
use crate::tensors::require_file;

/// Warnings logged while the command runs: `(target, message)`.
static CAPTURED: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata())
            && let Ok(mut lines) = CAPTURED.lock()
        {
            lines.push((record.target().to_string(), record.args().to_string()));
        }
    }

    fn flush(&self) {}
}

/// The captured warnings since the last call.
fn take_warnings() -> Vec<(String, String)> {
    CAPTURED
        .lock()
        .map(|mut lines| std::mem::take(&mut *lines))
        .unwrap_or_default()
}

pub fn run(args: DumpArgs) -> Result<ExitCode> {
    if log::set_logger(&Capture).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
    let engine = Engine::of(&args.model);
    dump(&args, engine)?;
    if args.stock {
        println!();
        if let Err(e) = dump(&args, Engine::Stock) {
            println!("{}: fails: {}", Engine::Stock.call(), one_line(&e));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn dump(args: &DumpArgs, engine: Engine) -> Result<()> {
    require_file(&args.model.model, "an .onnx model")?;
    let path = args.model.model.display();
    // What the engine lacks, all at once, before typing stops at the first.
    let unsupported =
        unsupported_ops(&args.model.model, engine).with_context(|| format!("loading {path}"))?;
    println!("{path} through {}", engine.call());
    if unsupported.is_empty() {
        println!("unsupported operators: none");
    } else {
        println!(
            "unsupported operators ({}): {}",
            unsupported.len(),
            unsupported_text(&unsupported)
        );
    }
    take_warnings();
    let loaded = load(&args.model, engine, None)?;
    let warnings = take_warnings();
    let typed = loaded.typed;
    let optimized = typed
        .into_optimized()
        .with_context(|| format!("optimizing {path}"))?;
    let mut symbols: Vec<String> = optimized
        .symbols
        .all_symbols()
        .iter()
        .map(|s| s.to_string())
        .collect();
    symbols.sort();
    println!(
        "symbols: {}",
        if symbols.is_empty() {
            "none".to_string()
        } else {
            symbols.join(", ")
        }
    );
    for (name, outlet) in loaded.input_names.iter().zip(optimized.input_outlets()?) {
        println!(
            "input  {name}: {}",
            fact_text(optimized.outlet_fact(*outlet)?)
        );
    }
    for (name, outlet) in loaded.output_names.iter().zip(optimized.output_outlets()?) {
        println!(
            "output {name}: {}",
            fact_text(optimized.outlet_fact(*outlet)?)
        );
    }
    println!("optimized plan ({} nodes):", optimized.nodes().len());
    let mut built = vec![];
    for node in optimized.eval_order()? {
        let node = optimized.node(node);
        let facts: Vec<String> = node.outputs.iter().map(|o| fact_text(&o.fact)).collect();
        println!(
            "  {:>4} {} {} -> {}",
            node.id,
            node.name,
            node.op().name(),
            facts.join(", ")
        );
        if let Some(kind) = plugin_kind(node) {
            built.push(format!(
                "  {:>4} {} {} ({kind})",
                node.id,
                node.name,
                node.op().name()
            ));
        }
    }
    if engine != Engine::Stock {
        println!("built by the plugin: {} node(s)", built.len());
        for line in built {
            println!("{line}");
        }
    }
    let (deviations, others): (Vec<_>, Vec<_>) = warnings
        .into_iter()
        .partition(|(target, _)| target.starts_with("tract_onnx_scatter"));
    if engine != Engine::Stock {
        println!("exporter deviations accepted: {}", deviations.len());
        for (_, line) in deviations {
            println!("  {line}");
        }
    }
    if !others.is_empty() {
        println!("tract warnings: {}", others.len());
        for (target, line) in others {
            println!("  [{target}] {line}");
        }
    }
    Ok(())
}

/// `F32 [N, 3]`.
fn fact_text(fact: &TypedFact) -> String {
    format!("{:?} {}", fact.datum_type, shape_text(&fact.shape))
}

/// Whether the plugin built this node: one of its scatter ops, or one of
/// its tract overrides (ops stock tract 0.23.9 does not have).
pub fn plugin_kind(node: &TypedNode) -> Option<&'static str> {
    let scatter = node.op_is::<ScatterElements>()
        || node.op_is::<ScatterNd>()
        || node.op_is::<TensorScatter>()
        || node.op_is::<ScatterElementsUpdate>()
        || node.op_is::<ScatterGrad>();
    let overridden = node.op_is::<RuntimeReshape>()
        || node.op_is::<RunTimeBoundSlice>()
        || node.op_is::<BindRunSymbols>()
        || node.op_is::<RunTimeConstantOfShape>()
        || node.op_is::<IntegerToTDim>()
        || node.op_is::<Unique>();
    if scatter {
        Some("scatter op")
    } else if overridden {
        Some("tract override")
    } else {
        None
    }
}

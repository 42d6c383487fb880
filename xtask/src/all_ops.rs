//! `cargo xtask conformance --all-ops`: every official node test of the
//! newest pinned onnx release that ships data, through the plugin (`onnx()`,
//! as users load models) and stock tract, counted per operator.
//!
//! Informational only: the exit status is success whatever the counts; only
//! failing to obtain or verify the data is an error. The scatter suites
//! (`cargo xtask conformance` without `--all-ops`) remain the gate.

use crate::args::Args;
use anyhow::{Context, Result};
use onnx_golden::all_ops::{ensure_all_node_tests, newest_release, run_all_ops};
use onnx_golden::fetch::Source;
use onnx_golden::layout::Layout;
use onnx_golden::{Format, NamedFramework, Tract};
use std::process::ExitCode;
use std::time::Instant;

pub fn run(layout: &Layout, mut args: Args) -> Result<ExitCode> {
    let format: Format = args.take("--format").as_deref().unwrap_or("text").parse()?;
    let output = args.path("--output");
    let filter = args.take("--filter");
    let version = args.take("--release");
    let source = Source::resolve(args.path("--from"));
    args.finish()?;

    let started = Instant::now();
    let manifest = layout.manifest()?;
    let release = match &version {
        Some(v) => manifest
            .release(v)
            .with_context(|| format!("onnx {v} is not a pinned release of the manifest"))?,
        None => newest_release(&manifest.releases)
            .context("the manifest pins no release with node-test data")?,
    };
    let node_dir = ensure_all_node_tests(release, &layout.cache_dir(), &source)?;
    eprintln!(
        "onnx {}: node tests in {} (extracted from the hash-verified wheel)",
        release.version,
        node_dir.display()
    );

    let plugin = tract_onnx_scatter::onnx();
    let stock = tract_onnx::onnx();
    let (plugin, stock) = (Tract(&plugin), Tract(&stock));
    let frameworks = [
        NamedFramework {
            name: "plugin".into(),
            framework: &plugin,
        },
        NamedFramework {
            name: "stock".into(),
            framework: &stock,
        },
    ];
    let report = run_all_ops(
        &release.version,
        &node_dir,
        &frameworks,
        filter.as_deref(),
        &mut |done, total, case, seconds| {
            let cells: Vec<String> = case.result.outcomes.iter().map(|o| o.short()).collect();
            eprintln!(
                "[{done}/{total}] {} ({}): {} ({seconds:.2} s)",
                case.result.test,
                case.operator,
                cells.join(" / ")
            );
        },
    )?;
    let rendered = report.render(format);
    match output {
        Some(path) => {
            std::fs::write(&path, &rendered).with_context(|| format!("writing {path:?}"))?;
            eprintln!("report written to {}", path.display());
            for line in report.totals_lines() {
                eprintln!("{line}");
            }
        }
        None => print!("{rendered}"),
    }
    eprintln!("wall time: {:.1} s", started.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

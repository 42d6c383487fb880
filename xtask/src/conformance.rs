//! `cargo xtask conformance`: plugin vs stock tract over all golden tests.

use crate::args::Args;
use anyhow::{Context, Result};
use onnx_golden::fetch::Source;
use onnx_golden::layout::Layout;
use onnx_golden::{Format, NamedFramework, Report, Tract, run_suites};
use std::process::ExitCode;

/// Index of the gating framework in the list below.
const PLUGIN: usize = 0;

pub fn run(layout: &Layout, mut args: Args) -> Result<ExitCode> {
    let format: Format = args.take("--format").as_deref().unwrap_or("text").parse()?;
    let output = args.path("--output");
    let filter = args.take("--filter");
    let source = Source::resolve(args.path("--from"));
    args.finish()?;

    let expected = layout.expected_failures()?;
    let suites = layout.all_suites(&source)?;
    let plugin = tract_onnx_scatter::onnx();
    let stock = tract_onnx::onnx();
    let frameworks = [
        NamedFramework {
            name: "plugin".into(),
            framework: &Tract(&plugin),
        },
        NamedFramework {
            name: "stock".into(),
            framework: &Tract(&stock),
        },
    ];
    let cases = run_suites(
        &suites,
        &frameworks,
        filter.as_deref(),
        &mut |done, total, case| {
            let cells: Vec<String> = case.outcomes.iter().map(|o| o.short()).collect();
            eprintln!(
                "[{done}/{total}] {} {}: {}",
                case.suite,
                case.test,
                cells.join(" / ")
            );
        },
    )?;
    let names = frameworks.iter().map(|f| f.name.clone()).collect();
    let report = Report::new(names, PLUGIN, cases, &expected);
    let rendered = report.render(format);
    match output {
        Some(path) => {
            std::fs::write(&path, &rendered).with_context(|| format!("writing {path:?}"))?;
            eprintln!("report written to {}", path.display());
        }
        None => print!("{rendered}"),
    }
    if report.gate.is_ok() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprint!("conformance gate failed:\n{}", report.gate.explain());
        Ok(ExitCode::FAILURE)
    }
}

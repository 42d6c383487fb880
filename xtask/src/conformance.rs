//! `cargo xtask conformance`: plugin vs stock tract over all golden tests.
//!
//! The official releases and the extended corpus run the plugin strict
//! (`onnx_strict()`: every node valid at its opset, as the spec says); the
//! exporter suites run it as users load models (`onnx()`, which accepts
//! known exporter deviations), and so do the autograd suite (the
//! training-domain gradient ops, which stock tract lacks) and the
//! real-model suite (with the data's input shapes).

use crate::args::Args;
use anyhow::{Context, Result};
use onnx_golden::fetch::Source;
use onnx_golden::layout::Layout;
use onnx_golden::{Format, NamedFramework, Report, Tract, run_suites};
use std::process::ExitCode;

/// Index of the gating framework in the list below.
const PLUGIN: usize = 0;

pub fn run(layout: &Layout, mut args: Args) -> Result<ExitCode> {
    if args.switch("--all-ops") {
        return crate::all_ops::run(layout, args);
    }
    let format: Format = args.take("--format").as_deref().unwrap_or("text").parse()?;
    let output = args.path("--output");
    let filter = args.take("--filter");
    let source = Source::resolve(args.path("--from"));
    args.finish()?;

    let expected = layout.expected_failures()?;
    let conformance_suites = layout.all_suites(&source)?;
    let exporter_suites = layout.exporter_suites()?;
    // The training-domain gradient ops: stock tract has none, so its
    // column there is informational (every case fails).
    let autograd_suites = vec![layout.autograd_suite()];
    let real_models = vec![layout.real_model_suite(&source)?];
    let strict = tract_onnx_scatter::onnx_strict();
    let compat = tract_onnx_scatter::onnx();
    let stock = tract_onnx::onnx();
    // Real models run with the data's input shapes; their files' value_info
    // repeats the declared symbols on intermediate values, which would
    // contradict those shapes.
    let real = tract_onnx_scatter::onnx().with_ignore_value_info(true);
    let real_stock = tract_onnx::onnx().with_ignore_value_info(true);
    let groups = [
        (conformance_suites, Tract(&strict), Tract(&stock)),
        (exporter_suites, Tract(&compat), Tract(&stock)),
        (autograd_suites, Tract(&compat), Tract(&stock)),
        (real_models, Tract(&real), Tract(&real_stock)),
    ];
    let mut total = 0;
    for (suites, _, _) in &groups {
        for suite in suites {
            total += onnx_golden::suite::list_tests(suite, filter.as_deref())?.len();
        }
    }
    let mut cases = vec![];
    for (suites, plugin, stock) in &groups {
        let frameworks = [
            NamedFramework {
                name: "plugin".into(),
                framework: plugin,
            },
            NamedFramework {
                name: "stock".into(),
                framework: stock,
            },
        ];
        let offset = cases.len();
        cases.extend(run_suites(
            suites,
            &frameworks,
            filter.as_deref(),
            &mut |done, _, case| {
                let cells: Vec<String> = case.outcomes.iter().map(|o| o.short()).collect();
                eprintln!(
                    "[{}/{total}] {} {}: {}",
                    offset + done,
                    case.suite,
                    case.test,
                    cells.join(" / ")
                );
            },
        )?);
    }
    let names = vec!["plugin".to_string(), "stock".to_string()];
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

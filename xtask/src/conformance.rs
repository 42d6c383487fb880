//! `cargo xtask conformance`: plugin vs stock tract over all golden tests ([`run`]).
//!
//! The official releases and the extended corpus run the plugin strict (`onnx_strict()`: every
//! node valid at its opset, as the spec says); the exporter suites run it as users load models
//! (`onnx()`, which accepts known exporter deviations, with the input facts the models
//! declare), and so do the autograd suite (the training-domain gradient ops, which stock tract
//! lacks), the bfloat16 and complex suites and the real-model suite (with the data's input
//! shapes). Those results gate against `expected-failures.toml`.
//!
//! Every model of every suite, and every official node test of the newest release with data
//! (the `--all-ops` set), also runs through `onnx()` and stock tract with declared and with
//! pinned input facts: the never-worse gate ([`onnx_golden::never_worse`]) fails the run on any
//! model where the plugin does worse than stock.

use crate::args::Args;
use crate::progress::Progress;
use anyhow::{Context, Result};
use onnx_golden::all_ops::{ensure_all_node_tests, newest_release};
use onnx_golden::fetch::Source;
use onnx_golden::layout::Layout;
use onnx_golden::recurrent::{both_modes, holds_loop};
use onnx_golden::{
    Format, GateFrameworks, InputFacts, LoadOnnx, NamedFramework, NeverWorse, Pairing, Report,
    Suite, Tract, run_suites,
};
use std::process::ExitCode;
use std::time::Instant;

/// Index of the gating framework in the list below.
const PLUGIN: usize = 0;

/// Runs every suite and gate. It talks from its first second (where the data comes from,
/// each wheel it fetches, a progress line), and prints a short summary whose last line is
/// the verdict; the per-test table and every framework's failures go to `--output FILE` or,
/// with `--verbose`, before the summary.
pub fn run(layout: &Layout, mut args: Args) -> Result<ExitCode> {
    if args.switch("--all-ops") {
        return crate::all_ops::run(layout, args);
    }
    let format: Format = args.take("--format").as_deref().unwrap_or("text").parse()?;
    let output = args.path("--output");
    let filter = args.take("--filter");
    let verbose = args.switch("--verbose");
    let source = Source::resolve(args.path("--from"));
    args.finish()?;
    let started = Instant::now();
    eprintln!(
        "conformance: test data in {} ({}); fetched and hash-checked on first use",
        layout.cache_dir().display(),
        match &source {
            Source::Pip => "missing data: pip downloads the pinned onnx wheels".to_string(),
            Source::Local(dir) => format!("missing data from {}", dir.display()),
        }
    );

    let expected = layout.expected_failures()?;
    let conformance_suites = layout.all_suites(&source)?;
    let exporter_suites = layout.exporter_suites()?;
    let recurrent_suites = layout.recurrent_suites()?;
    let control_flow_suites = layout.control_flow_suites()?;
    // The training-domain gradient ops: stock tract has none, so its
    // column there is informational (every case fails).
    let autograd_suites = vec![layout.autograd_suite()];
    // bfloat16 and complex models, read as float32 holding bfloat16
    // values and as float pairs; stock tract reads neither (its column is
    // informational).
    let type_suites = vec![layout.bfloat16_suite(), layout.complex_suite()];
    let real_models = vec![layout.real_model_suite(&source)?];
    let all_ops = all_ops_suite(layout, &source)?;
    let strict = tract_onnx_scatter::onnx_strict();
    let compat = tract_onnx_scatter::onnx();
    let stock = tract_onnx::onnx();
    let (strict, compat, stock): (&dyn LoadOnnx, &dyn LoadOnnx, &dyn LoadOnnx) =
        (&strict, &compat, &stock);
    // Real models run with the data's input shapes; their files' value_info
    // repeats the declared symbols on intermediate values, which would
    // contradict those shapes.
    let real = tract_onnx_scatter::onnx().with_ignore_value_info(true);
    let real_stock = tract_onnx::onnx().with_ignore_value_info(true);
    let (real, real_stock): (&dyn LoadOnnx, &dyn LoadOnnx) = (&real, &real_stock);
    // Each group: its suites, the run whose results the expected failures
    // gate, and the pair the never-worse gate compares (`onnx()` against
    // stock, as users swap them). Exporter suites gate with the facts the
    // models declare, as users load them (dynamo exports name their
    // symbolic dims in value_info too, which pinned facts contradict).
    let groups = [
        (conformance_suites, Gated::Other(strict), compat, stock),
        (
            exporter_suites,
            Gated::Plugin(InputFacts::Declared),
            compat,
            stock,
        ),
        (recurrent_suites, Gated::PluginBothModes, compat, stock),
        (
            control_flow_suites,
            Gated::PluginBothModesAll,
            compat,
            stock,
        ),
        (
            autograd_suites,
            Gated::Plugin(InputFacts::Pinned),
            compat,
            stock,
        ),
        (
            type_suites,
            Gated::Plugin(InputFacts::Pinned),
            compat,
            stock,
        ),
        (
            real_models,
            Gated::Plugin(InputFacts::Pinned),
            real,
            real_stock,
        ),
        (vec![all_ops], Gated::Ungated, compat, stock),
    ];
    let mut total = 0;
    let mut suite_count = 0;
    for (suites, _, _, _) in &groups {
        for suite in suites {
            total += onnx_golden::suite::list_tests(suite, filter.as_deref())?.len();
            suite_count += 1;
        }
    }
    eprintln!(
        "conformance: {total} tests in {suite_count} suites, each through the plugin and stock \
         tract with declared and pinned input facts (data ready after {:.0} s)",
        started.elapsed().as_secs_f64()
    );
    let mut progress = Progress::new(total);
    let mut cases = vec![];
    // Recurrent cases without a Loop or Scan: tract's own LSTM/GRU ops.
    let mut ungated = vec![];
    let mut never_worse = NeverWorse::default();
    let mut done_before = 0;
    for (suites, gated, plugin, stock) in &groups {
        let gate = GateFrameworks::new(*plugin, *stock);
        let other_run = match gated {
            Gated::Other(onnx) => Some(Tract::pinned(*onnx)),
            _ => None,
        };
        let mut frameworks = gate.named();
        if let Some(run) = &other_run {
            frameworks.push(NamedFramework {
                name: "plugin (gated)".into(),
                framework: run,
            });
        }
        // The main report's columns: the gated run, then stock with the
        // same input facts (indices into `frameworks`).
        let columns = match gated {
            Gated::Plugin(InputFacts::Pinned) => Some((0, 1)),
            Gated::Plugin(InputFacts::Declared) => Some((2, 3)),
            Gated::Other(_) => Some((4, 1)),
            Gated::PluginBothModes | Gated::PluginBothModesAll | Gated::Ungated => None,
        };
        let results = run_suites(
            suites,
            &frameworks,
            filter.as_deref(),
            &mut |done, _, case| {
                let what = format!("{} {}", case.suite, case.test);
                if verbose {
                    let cells: Vec<String> = case.outcomes.iter().map(|o| o.short()).collect();
                    progress.line(&format!(
                        "[{}/{total}] {what}: {}",
                        done_before + done,
                        cells.join(" / ")
                    ));
                }
                progress.step(done_before + done, &what);
            },
        )?;
        done_before += results.len();
        never_worse.merge(NeverWorse::judge(&results, &Pairing::STANDARD));
        if let Some((plugin, stock)) = columns {
            cases.extend(results.into_iter().map(|mut case| {
                case.outcomes = vec![case.outcomes[plugin].clone(), case.outcomes[stock].clone()];
                case
            }));
        } else if let Gated::PluginBothModes | Gated::PluginBothModesAll = gated {
            // Declared facts are runs 2 (plugin) and 3 (stock), pinned 0 and 1.
            for mut case in results {
                let both = |declared: usize, pinned: usize| {
                    both_modes(&case.outcomes[declared], &case.outcomes[pinned])
                };
                let outcomes = vec![both(2, 0), both(3, 1)];
                case.outcomes = outcomes;
                if matches!(gated, Gated::PluginBothModesAll) || holds_loop(&case.dir) {
                    cases.push(case);
                } else {
                    ungated.push(case);
                }
            }
        }
    }
    progress.finish();
    let names = vec!["plugin".to_string(), "stock".to_string()];
    let report = Report::new(names, PLUGIN, cases, &expected).with_never_worse(never_worse);
    let mut rendered = report.render(format);
    if !ungated.is_empty() && format == Format::Text {
        rendered.push_str(&ungated_table(&ungated));
    }
    // The full report: to the file, else (asked for, or a format for
    // machines) to stdout; the summary, verdict last, ends the output.
    match &output {
        Some(path) => {
            std::fs::write(path, &rendered).with_context(|| format!("writing {path:?}"))?;
            eprintln!("full report written to {}", path.display());
        }
        None if verbose || format != Format::Text => println!("{rendered}"),
        None => {}
    }
    let mut notes = vec![format!(
        "{total} tests in {:.0} s",
        started.elapsed().as_secs_f64()
    )];
    if !ungated.is_empty() {
        notes.push(format!(
            "{} recurrent cases without Loop or Scan reported, not gated",
            ungated.len()
        ));
    }
    if output.is_none() && !verbose {
        notes
            .push("per-test results and stock's failures: --verbose, or --output FILE".to_string());
    }
    let summary = format!("{}\n{}", notes.join("; "), report.summary());
    if output.is_none() && format != Format::Text {
        // stdout holds the machine-readable report.
        eprint!("{summary}");
    } else {
        print!("{summary}");
    }
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The recurrent cases that hold no `Loop` or `Scan`, with both modes'
/// outcomes: reported, not gated.
fn ungated_table(cases: &[onnx_golden::CaseResult]) -> String {
    let mut out = String::from(
        "\nrecurrent cases without Loop or Scan (ONNX LSTM/GRU ops on tract's own kernels; reported, not gated):\n",
    );
    for case in cases {
        out.push_str(&format!(
            "  {} {}: plugin {} / stock {}\n",
            case.suite,
            case.test,
            case.outcomes[0].describe(),
            case.outcomes[1].describe()
        ));
    }
    out
}

/// Which run of a group the expected failures gate.
enum Gated<'a> {
    /// The never-worse gate's plugin run with these input facts.
    Plugin(InputFacts),
    /// The plugin's runs with declared and with pinned input facts, as one
    /// outcome (the recurrent suites); cases without a Loop or Scan are
    /// reported apart, not gated.
    PluginBothModes,
    /// The same, every case gated (the control-flow suites).
    PluginBothModesAll,
    /// Another configuration of the plugin, with pinned input facts.
    Other(&'a dyn LoadOnnx),
    /// None: the group only feeds the never-worse gate.
    Ungated,
}

/// Every official node test of the newest pinned release with data (the
/// `--all-ops` set), for the never-worse gate.
fn all_ops_suite(layout: &Layout, source: &Source) -> Result<Suite> {
    let manifest = layout.manifest()?;
    let release = newest_release(&manifest.releases)
        .context("the manifest pins no release with node-test data")?;
    Ok(Suite {
        name: format!("all-ops {}", release.version),
        root: ensure_all_node_tests(release, &layout.cache_dir(), source)?,
    })
}

//! `tract-scatter test DIR...`: node-test directories through the plugin,
//! with onnx-golden's runner, report and gates (the same ones
//! `cargo xtask conformance` uses).

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use onnx_golden::suite::list_tests;
use onnx_golden::{
    ExpectedFailures, GateFrameworks, InputFacts, NamedFramework, NeverWorse, Pairing, Report,
    Suite, Tract, run_suites,
};
use tract_onnx_scatter::tract_onnx;

use crate::cli::TestArgs;

pub fn run(args: TestArgs) -> Result<ExitCode> {
    let mut suites = vec![];
    for dir in &args.dirs {
        suites.extend(suites_of(dir)?);
    }
    let expected = match &args.expected_failures {
        Some(path) => {
            if !path.is_file() {
                bail!(
                    "--expected-failures {}: no such file (expected a TOML file of [[failure]] test, release, reason)",
                    path.display()
                );
            }
            ExpectedFailures::load(path)?
        }
        None => ExpectedFailures::default(),
    };
    // A report path that cannot be written fails now, not after the run.
    if let Some(parent) = args
        .output
        .as_deref()
        .and_then(std::path::Path::parent)
        .filter(|p| !p.as_os_str().is_empty() && !p.is_dir())
    {
        bail!(
            "--output {}: no such directory {} (create it first)",
            args.output.as_deref().unwrap_or(parent).display(),
            parent.display()
        );
    }
    let mut total = 0;
    for suite in &suites {
        total += list_tests(suite, args.filter.as_deref())?.len();
    }
    if total == 0 {
        bail!(
            "no node test (a directory holding model.onnx) under {}{}",
            args.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            args.filter
                .as_deref()
                .map(|f| format!(" whose name contains {f:?}"))
                .unwrap_or_default()
        );
    }

    let facts = if args.pinned {
        InputFacts::Pinned
    } else {
        InputFacts::Declared
    };
    let plugin = if args.strict {
        tract_onnx_scatter::onnx_strict()
    } else {
        tract_onnx_scatter::onnx()
    };
    // The never-worse gate compares onnx() (compat) with stock, as users
    // swap them, whatever --strict says.
    let compat = tract_onnx_scatter::onnx();
    let stock = tract_onnx::onnx();
    let gate = GateFrameworks::new(&compat, &stock);
    let gated_run = Tract {
        onnx: &plugin,
        input_facts: facts,
    };
    let stock_run = Tract {
        onnx: &stock,
        input_facts: facts,
    };
    // The frameworks run, and the indices of the report's columns in them.
    let (frameworks, columns): (Vec<NamedFramework<'_>>, Vec<usize>) = if args.never_worse {
        let mut frameworks = gate.named();
        let stock_column = match facts {
            InputFacts::Pinned => 1,
            InputFacts::Declared => 3,
        };
        if args.strict {
            frameworks.push(NamedFramework {
                name: "plugin (strict)".into(),
                framework: &gated_run,
            });
            (frameworks, vec![4, stock_column])
        } else {
            (frameworks, vec![stock_column - 1, stock_column])
        }
    } else {
        let mut frameworks = vec![NamedFramework {
            name: "plugin".into(),
            framework: &gated_run,
        }];
        if args.stock {
            frameworks.push(NamedFramework {
                name: "stock".into(),
                framework: &stock_run,
            });
        }
        let columns = (0..frameworks.len()).collect();
        (frameworks, columns)
    };

    let quiet = args.quiet;
    let results = run_suites(
        &suites,
        &frameworks,
        args.filter.as_deref(),
        &mut |done, total, case| {
            if !quiet {
                let cells: Vec<String> = columns
                    .iter()
                    .map(|&ix| case.outcomes[ix].short())
                    .collect();
                eprintln!(
                    "[{done}/{total}] {} {}: {}",
                    case.suite,
                    case.test,
                    cells.join(" / ")
                );
            }
        },
    )?;
    let never_worse = args
        .never_worse
        .then(|| NeverWorse::judge(&results, &Pairing::STANDARD));
    let cases = results
        .into_iter()
        .map(|mut case| {
            case.outcomes = columns
                .iter()
                .map(|&ix| case.outcomes[ix].clone())
                .collect();
            case
        })
        .collect();
    let mut names = vec!["plugin".to_string()];
    if columns.len() > 1 {
        names.push("stock".into());
    }
    let mut report = Report::new(names, 0, cases, &expected);
    if let Some(never_worse) = never_worse {
        report = report.with_never_worse(never_worse);
    }
    let rendered = report.render(args.format.into());
    match &args.output {
        Some(path) => {
            std::fs::write(path, &rendered)
                .with_context(|| format!("writing the report to {}", path.display()))?;
            if !quiet {
                eprintln!("report written to {}", path.display());
            }
        }
        None => print!("{rendered}"),
    }
    if report.is_ok() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprint!("gate failed:\n{}", report.explain());
        Ok(ExitCode::from(crate::FAILED))
    }
}

/// The suites of one directory, each named after its own directory as
/// `cargo xtask conformance` names them: the directory itself when a test
/// (a directory holding `model.onnx`) sits right below it or it is one
/// (`onnx-testdata/exporters/torch` is suite `torch`); else each of its
/// subdirectories holding tests (`onnx-testdata/exporters` is the suites
/// `jax2onnx`, `paddle2onnx`, `tf2onnx`, `torch`, ...), in name order.
fn suites_of(dir: &std::path::Path) -> Result<Vec<Suite>> {
    if !dir.is_dir() {
        bail!(
            "{}: no such directory (expected a directory of node tests: model.onnx + test_data_set_N)",
            dir.display()
        );
    }
    let holds_test = |d: &std::path::Path| d.join("model.onnx").is_file();
    let mut children: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    children.sort();
    if holds_test(dir) || children.iter().any(|c| holds_test(c)) {
        return Ok(vec![suite(dir)?]);
    }
    let mut suites = vec![];
    for child in children {
        let suite = suite(&child)?;
        if !list_tests(&suite, None)?.is_empty() {
            suites.push(suite);
        }
    }
    if suites.is_empty() {
        // No test anywhere: one suite, so the "no node test" error names it.
        suites.push(suite(dir)?);
    }
    Ok(suites)
}

/// The suite of one directory, named after it.
fn suite(dir: &std::path::Path) -> Result<Suite> {
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))?;
    let name = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| canonical.display().to_string());
    Ok(Suite {
        name,
        root: dir.to_path_buf(),
    })
}

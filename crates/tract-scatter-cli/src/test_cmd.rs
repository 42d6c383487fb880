//! `tract-scatter test DIR...`: node-test directories through the plugin,
//! with onnx-golden's runner, report and gates (the same ones
//! `cargo xtask conformance` uses).

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

use onnx_golden::compare::Tolerance;
use onnx_golden::suite::{list_tests, run_shard_with_tolerance};
use onnx_golden::{
    CaseResult, ExpectedFailures, Format, GateFrameworks, InputFacts, NamedFramework, NeverWorse,
    Outcome, Pairing, Phase, Report, Suite, Tract,
};
use std::collections::HashMap;

use crate::model::{Engine, unsupported_ops, unsupported_text};
use tract_onnx_scatter::tract_onnx;

use crate::cli::TestArgs;
use crate::progress::Progress;

pub fn run(args: TestArgs) -> Result<ExitCode> {
    let tolerance = Tolerance {
        rtol: args.rtol.unwrap_or(onnx_golden::compare::RTOL),
        atol: args.atol.unwrap_or(onnx_golden::compare::ATOL),
    };
    if !(tolerance.rtol >= 0.0 && tolerance.atol >= 0.0) {
        bail!(
            "--rtol {} --atol {}: tolerances must be non-negative numbers",
            tolerance.rtol,
            tolerance.atol
        );
    }
    let mut suites = vec![];
    for dir in &args.dirs {
        suites.extend(suites_of(dir)?);
    }
    let expected = expected_failures(args.expected_failures.as_deref())?;
    for suite in &mut suites {
        name_as_listed(suite, &expected);
    }
    check_output(args.output.as_deref())?;
    let (mut total, mut in_shard) = (0, 0);
    for suite in &suites {
        for (test, _) in list_tests(suite, args.filter.as_deref())? {
            total += 1;
            in_shard += usize::from(args.shard.is_none_or(|s| s.holds(&suite.name, &test)));
        }
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
    if let Some(shard) = args.shard
        && !quiet
    {
        eprintln!("shard {shard}: {in_shard} of {total} tests");
    }
    let progress = Progress::new(quiet, in_shard);
    let results = run_shard_with_tolerance(
        &suites,
        &frameworks,
        args.filter.as_deref(),
        args.shard,
        tolerance,
        &mut |done, total, case| {
            let cells: Vec<String> = columns
                .iter()
                .map(|&ix| case.outcomes[ix].short())
                .collect();
            // Above a bar: what the gate will not accept (an unexpected
            // failure, or an expected one that passes).
            let passed = case.outcomes[columns[0]].is_pass();
            let surprise = passed == expected.find(&case.suite, &case.test).is_some();
            progress.line(
                &format!(
                    "[{done}/{total}] {} {}: {}",
                    case.suite,
                    case.test,
                    cells.join(" / ")
                ),
                surprise,
            );
            progress.step(&format!("{} {}", case.suite, case.test));
        },
    )?;
    progress.finish();
    let never_worse = args
        .never_worse
        .then(|| NeverWorse::judge(&results, &Pairing::STANDARD));
    let mut cases: Vec<CaseResult> = results
        .into_iter()
        .map(|mut case| {
            case.outcomes = columns
                .iter()
                .map(|&ix| case.outcomes[ix].clone())
                .collect();
            case
        })
        .collect();
    let gated = if args.strict {
        Engine::Strict
    } else {
        Engine::Plugin
    };
    name_unsupported(&mut cases, &[gated, Engine::Stock]);
    let mut names = vec!["plugin".to_string()];
    if columns.len() > 1 {
        names.push("stock".into());
    }
    let mut report = Report::new(names, 0, cases, &expected);
    if let Some(never_worse) = never_worse {
        report = report.with_never_worse(never_worse);
    }
    if let Some(shard) = args.shard {
        report = report.with_shard(shard, suites.iter().map(|s| s.name.clone()).collect());
    }
    emit(&report, args.format.into(), args.output.as_deref(), quiet)
}

/// Names the operators an engine lacks (as `dump` lists them, every one
/// at once) ahead of tract's message in the failures where loading or
/// typing stopped; `engines[i]` ran the cases' outcome `i`.
fn name_unsupported(cases: &mut [CaseResult], engines: &[Engine]) {
    let mut named: HashMap<(PathBuf, usize), Option<String>> = HashMap::new();
    for case in cases {
        let model = case.dir.join("model.onnx");
        for (ix, outcome) in case.outcomes.iter_mut().enumerate() {
            let Some(&engine) = engines.get(ix) else {
                continue;
            };
            for result in [&mut outcome.decluttered, &mut outcome.optimized] {
                let Outcome::Fail { phase, reason } = result else {
                    continue;
                };
                if !matches!(phase, Phase::Load | Phase::Analyse | Phase::Typing) {
                    continue;
                }
                let lacking = named.entry((model.clone(), ix)).or_insert_with(|| {
                    match unsupported_ops(&model, engine) {
                        Ok(ops) if !ops.is_empty() => Some(format!(
                            "uses {} operator(s) {}: {}",
                            ops.len(),
                            engine.lacking(),
                            unsupported_text(&ops)
                        )),
                        _ => None,
                    }
                });
                if let Some(lacking) = lacking {
                    *reason = format!("{lacking}; {reason}");
                }
            }
        }
    }
}

/// The `--expected-failures` file, or none.
pub fn expected_failures(path: Option<&Path>) -> Result<ExpectedFailures> {
    match path {
        Some(path) => {
            if !path.is_file() {
                bail!(
                    "--expected-failures {}: no such file (expected a TOML file of [[failure]] test, release, reason)",
                    path.display()
                );
            }
            ExpectedFailures::load(path)
        }
        None => Ok(ExpectedFailures::default()),
    }
}

/// A report path that cannot be written fails before the run, not after.
pub fn check_output(output: Option<&Path>) -> Result<()> {
    if let Some(parent) = output
        .and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty() && !p.is_dir())
    {
        bail!(
            "--output {}: no such directory {} (create it first)",
            output.unwrap_or(parent).display(),
            parent.display()
        );
    }
    Ok(())
}

/// Writes the report (to `output`, or stdout) and exits on its verdict:
/// 1 with the gate's explanation on stderr when it fails.
pub fn emit(
    report: &Report,
    format: Format,
    output: Option<&Path>,
    quiet: bool,
) -> Result<ExitCode> {
    let rendered = report.render(format);
    match output {
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
fn suites_of(dir: &Path) -> Result<Vec<Suite>> {
    if !dir.is_dir() {
        bail!(
            "{}: no such directory (expected a directory of node tests: model.onnx + test_data_set_N)",
            dir.display()
        );
    }
    let holds_test = |d: &Path| d.join("model.onnx").is_file();
    let mut children: Vec<PathBuf> = std::fs::read_dir(dir)
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

/// Names `suite` as the expected-failures file does when the file names its
/// directory by a longer path: a `release` of several components
/// (`types/bfloat16`, `recurrent/tf2onnx`, as `cargo xtask conformance`
/// names those suites) that the directory's path ends with.
fn name_as_listed(suite: &mut Suite, expected: &ExpectedFailures) {
    let path = suite
        .root
        .canonicalize()
        .unwrap_or_else(|_| suite.root.clone());
    let listed = expected
        .entries
        .iter()
        .map(|e| e.release.as_str())
        .filter(|release| {
            release.contains('/') && Path::new(release).file_name() == path.file_name()
        })
        .find(|release| path.ends_with(release));
    if let Some(release) = listed {
        suite.name = release.to_string();
    }
}

/// The suite of one directory, named after it: after the link, when it
/// is a symbolic link (as runfiles are), else after its canonical path's
/// last component (`.` is named after the current directory).
fn suite(dir: &Path) -> Result<Suite> {
    let canonical = dir
        .canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))?;
    let name = dir
        .file_name()
        .or_else(|| canonical.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| canonical.display().to_string());
    Ok(Suite {
        name,
        root: dir.to_path_buf(),
    })
}

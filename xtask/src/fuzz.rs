//! `cargo xtask fuzz --seconds N [--target NAME]`: runs each cargo-fuzz
//! target of `fuzz/` (or the one named) for N seconds with libFuzzer, on the
//! stable toolchain (`RUSTC_BOOTSTRAP=1`, no sanitizer: cargo-fuzz's own
//! flags are stable codegen flags except the sanitizer ones), and prints
//! executions, coverage and corpus size per target.
//!
//! Seeds are read from `fuzz/seeds/<target>/` (committed); what the fuzzer
//! learns goes to `fuzz/corpus/<target>/` and crashes to
//! `fuzz/artifacts/<target>/` (both git-ignored). A crash fails the command;
//! turn it into a regression test in `tests/hostile_inputs.rs` (or
//! `crates/scatter-kernels/tests/hostile.rs`) before fixing it.

use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use crate::args::Args;

/// Every fuzz target, in the order they run.
pub const TARGETS: [&str; 7] = [
    "kernels",
    "one_node_model",
    "model_bytes",
    "grad_ops",
    "overrides",
    "tensor_files",
    "node_test_dir",
];

/// libFuzzer options: an allocation above 2 GiB, a peak RSS above 2 GiB or
/// one input taking more than 30 s is a crash ("unbounded allocation",
/// "loop over a declared size"). The limits leave room for what a valid
/// model may compute while it loads: the plugin lets tract fold constants
/// up to 256 MiB (`tract_overrides::fold_budget`), and tract computes a
/// fold before it weighs it.
const LIBFUZZER_OPTIONS: [&str; 4] = [
    "-rss_limit_mb=2048",
    "-malloc_limit_mb=2048",
    "-timeout=30",
    "-print_final_stats=1",
];

pub fn run(mut args: Args) -> Result<ExitCode> {
    let seconds: u64 = match args.take("--seconds") {
        Some(s) => s
            .parse()
            .with_context(|| format!("--seconds takes a number of seconds, got {s:?}"))?,
        None => 60,
    };
    let targets: Vec<&str> = match args.take("--target") {
        Some(name) => match TARGETS.iter().find(|t| **t == name) {
            Some(t) => vec![*t],
            None => bail!(
                "unknown fuzz target {name:?}; targets: {}",
                TARGETS.join(", ")
            ),
        },
        None => TARGETS.to_vec(),
    };
    args.finish()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root");
    let fuzz = root.join("fuzz");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let have_cargo_fuzz = Command::new(&cargo)
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have_cargo_fuzz {
        bail!("cargo-fuzz is not installed: run `cargo install cargo-fuzz` (works on stable)");
    }
    let mut failed = vec![];
    let mut summary = vec![];
    for target in &targets {
        let corpus = fuzz.join("corpus").join(target);
        let seeds = fuzz.join("seeds").join(target);
        std::fs::create_dir_all(&corpus)?;
        eprintln!("== fuzz {target} for {seconds} s ==");
        let mut child = Command::new(&cargo)
            .current_dir(&fuzz)
            // cargo-fuzz passes -Z flags only for sanitizers; the bootstrap
            // switch lets the rest (and its nightly check) pass on stable.
            .env("RUSTC_BOOTSTRAP", "1")
            .args(["fuzz", "run", "--sanitizer", "none", target])
            .arg(&corpus)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .args(LIBFUZZER_OPTIONS)
            .stdout(Stdio::inherit())
            .stderr(Stdio::piped())
            .spawn()?;
        // Echo libFuzzer's log as it comes; keep its last status line and
        // its final stats for the summary.
        let mut log = String::new();
        let mut last_status = String::new();
        if let Some(stderr) = child.stderr.take() {
            let mut reader = BufReader::new(stderr);
            let mut buf = vec![];
            while reader.read_until(b'\n', &mut buf)? > 0 {
                let line = String::from_utf8_lossy(&buf);
                eprint!("{line}");
                if line.starts_with('#') && line.contains("cov:") {
                    last_status = line.trim_end().to_string();
                } else if line.starts_with("stat::") {
                    log.push_str(&line);
                }
                buf.clear();
            }
        }
        log.push_str(&last_status);
        let status = child.wait()?;
        let stats = final_stats(&log);
        summary.push(format!(
            "{target}: {} ({})",
            stats.unwrap_or_else(|| "no stats".into()),
            if status.success() { "ok" } else { "CRASH" }
        ));
        if !status.success() {
            failed.push(*target);
        }
    }
    println!("fuzz summary ({seconds} s per target):");
    for line in &summary {
        println!("  {line}");
    }
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "crashing targets: {} (reproducers in fuzz/artifacts/<target>/; \
             `cargo fuzz run <target> <file>` replays one)",
            failed.join(", ")
        );
        Ok(ExitCode::FAILURE)
    }
}

/// The totals libFuzzer printed: executions, coverage, features and
/// corpus size of the last status line, and its final stats.
fn final_stats(log: &str) -> Option<String> {
    let last = log
        .lines()
        .rev()
        .find(|l| l.starts_with('#') && l.contains("cov:"))?;
    let field = |name: &str| {
        last.split_whitespace()
            .skip_while(|w| *w != name)
            .nth(1)
            .map(str::to_string)
    };
    let execs = log
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .map(|s| s.trim().to_string())
        .or_else(|| {
            last.split_whitespace()
                .next()
                .map(|s| s.trim_start_matches('#').to_string())
        })?;
    Some(format!(
        "{execs} execs, cov {}, ft {}, corpus {}",
        field("cov:").unwrap_or_default(),
        field("ft:").unwrap_or_default(),
        field("corp:").unwrap_or_default(),
    ))
}

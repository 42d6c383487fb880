//! `cargo xtask conformance --all-ops`: every official node test of the
//! newest pinned onnx release that ships data, through the plugin (`onnx()`,
//! as users load models) and stock tract, counted per operator.
//!
//! Each runs with the model's declared input facts and with facts pinned to
//! the data. The counts are informational; the exit status fails only when
//! the data cannot be had or verified, or when the plugin does worse than
//! stock on some test (the never-worse gate, which `cargo xtask
//! conformance` also applies to these tests).

use crate::args::Args;
use anyhow::{Context, Result};
use onnx_golden::all_ops::{ensure_all_node_tests, newest_release, run_all_ops};
use onnx_golden::fetch::Source;
use onnx_golden::layout::Layout;
use onnx_golden::{Format, GateFrameworks, NeverWorse, Pairing};
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
    // Plugin and stock, each with pinned and with declared input facts.
    let runs = GateFrameworks::new(&plugin, &stock);
    let frameworks = runs.named();
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
    let never_worse = NeverWorse::judge(
        &report
            .cases
            .iter()
            .map(|c| c.result.clone())
            .collect::<Vec<_>>(),
        &Pairing::STANDARD,
    );
    let gate_ok = never_worse.is_ok();
    let report = report.with_never_worse(never_worse);
    let mut rendered = report.render(format);
    if matches!(format, Format::Markdown | Format::Text) {
        // After the title line: where these numbers come from.
        let at = rendered.find('\n').map_or(rendered.len(), |i| i + 1);
        let bullet = if format == Format::Markdown { "- " } else { "" };
        let lines: String = provenance(layout, started.elapsed().as_secs_f64())
            .iter()
            .map(|l| format!("{bullet}{l}\n"))
            .collect();
        rendered.insert_str(at, &format!("\n{lines}"));
    }
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
    if gate_ok {
        Ok(ExitCode::SUCCESS)
    } else {
        eprint!(
            "plugin worse than stock:\n{}",
            report
                .never_worse
                .as_ref()
                .map(|nw| nw.explain())
                .unwrap_or_default()
        );
        Ok(ExitCode::FAILURE)
    }
}

/// Lines saying how the report was produced: command, date, tract version
/// (from Cargo.lock), machine and the run's wall time.
fn provenance(layout: &Layout, seconds: f64) -> Vec<String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tract = std::fs::read_to_string(layout.root.join("Cargo.lock"))
        .ok()
        .and_then(|lock| {
            let at = lock.find("name = \"tract-onnx\"\n")?;
            let rest = &lock[at..];
            let line = rest.lines().nth(1)?;
            Some(
                line.strip_prefix("version = ")?
                    .trim_matches('"')
                    .to_string(),
            )
        })
        .unwrap_or_else(|| "unknown (no tract-onnx in Cargo.lock)".into());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    vec![
        format!("command: `cargo xtask {}`", args.join(" ")),
        format!("date: {} (UTC)", utc_date()),
        format!(
            "tract: tract-onnx {tract} (Cargo.lock); plugin: tract_onnx_scatter::onnx(); stock: tract_onnx::onnx()"
        ),
        format!(
            "machine: {cpu}, {cores} cores, {} {}; {}",
            std::env::consts::OS,
            std::env::consts::ARCH,
            if cfg!(debug_assertions) {
                "debug build (dependencies at opt-level 1)"
            } else {
                "release build"
            }
        ),
        format!("wall time: {seconds:.1} s (fetching or verifying the data included)"),
    ]
}

/// Today's date, `YYYY-MM-DD`, from the system clock (UTC).
fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Howard Hinnant's civil_from_days.
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

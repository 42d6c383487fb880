//! `tract-scatter merge REPORT.json...`: the JSON reports of several `test`
//! runs (the shards of one run, `--shard K/N`) as one report, gated once
//! over all their tests, as a single run of them reports and gates.

use std::process::ExitCode;

use anyhow::{Context, Result};
use onnx_golden::Report;
use onnx_golden::report::ReadReport;

use crate::cli::MergeArgs;
use crate::tensors::require_file;
use crate::test_cmd::{check_output, emit, expected_failures};

pub fn run(args: MergeArgs) -> Result<ExitCode> {
    let expected = expected_failures(args.expected_failures.as_deref())?;
    check_output(args.output.as_deref())?;
    let mut parts = vec![];
    for path in &args.reports {
        require_file(path, "a report of tract-scatter test --format json")?;
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let report = ReadReport::from_json(&text).with_context(|| {
            format!(
                "{}: not a report of tract-scatter test --format json",
                path.display()
            )
        })?;
        parts.push((path.display().to_string(), report));
    }
    let report = Report::merge(&parts, &expected)?;
    emit(&report, args.format.into(), args.output.as_deref(), false)
}

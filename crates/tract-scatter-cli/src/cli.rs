//! The command line, as clap derives it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "tract-scatter",
    version,
    about = "ONNX models through tract 0.23.9 with the tract-onnx-scatter plugin"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run node-test directories (model.onnx + test_data_set_N) through the
    /// plugin and gate on expected failures.
    Test(TestArgs),
}

/// Report formats of `test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Text,
    Markdown,
    Json,
    Junit,
}

impl From<ReportFormat> for onnx_golden::Format {
    fn from(f: ReportFormat) -> onnx_golden::Format {
        match f {
            ReportFormat::Text => onnx_golden::Format::Text,
            ReportFormat::Markdown => onnx_golden::Format::Markdown,
            ReportFormat::Json => onnx_golden::Format::Json,
            ReportFormat::Junit => onnx_golden::Format::Junit,
        }
    }
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Directories searched for node tests; each is a suite named after
    /// the directory (the `release` of expected-failure entries).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Failures to accept: TOML `[[failure]] test, release, reason`
    /// (onnx-testdata/expected-failures.toml).
    #[arg(long, value_name = "FILE")]
    pub expected_failures: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// Write the report there instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Load with onnx_strict(): exporter deviations are refused.
    #[arg(long)]
    pub strict: bool,
    /// Pin the input facts to each data set's types and shapes (default:
    /// the facts the model declares, as users load models).
    #[arg(long)]
    pub pinned: bool,
    /// Also run stock tract (informational column).
    #[arg(long)]
    pub stock: bool,
    /// Run the never-worse gate against stock tract, with declared and
    /// pinned input facts; fail on any model where the plugin does worse.
    #[arg(long)]
    pub never_worse: bool,
    /// Only tests whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// No per-test progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

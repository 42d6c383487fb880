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
    /// Run a model on given or random inputs; print or save its outputs.
    Run(RunArgs),
    /// Run a model and compare its outputs with a reference.
    Compare(CompareArgs),
    /// Print the optimized plan, the symbols, the nodes this plugin built
    /// and the exporter deviations it accepted.
    Dump(DumpArgs),
    /// Time a model per call in each calling mode, with a per-op-type profile.
    Bench(BenchArgs),
    /// Write the decluttered model as NNEF, with the plugin's registry.
    Convert(ConvertArgs),
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

/// `SYMBOL=N`, as `--set` takes it.
fn parse_set(s: &str) -> Result<(String, i64), String> {
    let (sym, n) = s
        .split_once('=')
        .ok_or_else(|| "expected SYMBOL=N, with N an integer".to_string())?;
    let n = n
        .trim()
        .parse()
        .map_err(|_| format!("expected SYMBOL=N, with N an integer, got N = {n:?}"))?;
    if sym.trim().is_empty() {
        return Err("expected SYMBOL=N, the symbol is empty".into());
    }
    Ok((sym.trim().to_string(), n))
}

/// The model and how to load it.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The ONNX model.
    #[arg(value_name = "MODEL")]
    pub model: PathBuf,
    /// Load with onnx_strict(): exporter deviations are refused.
    #[arg(long)]
    pub strict: bool,
    /// Give a symbolic dimension (dim_param) a value; the model is then
    /// typed with concrete input shapes.
    #[arg(long, value_name = "SYMBOL=N", value_parser = parse_set)]
    pub set: Vec<(String, i64)>,
}

/// Where the inputs come from; inputs not given are seeded random tensors.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Input files (.npy or TensorProto .pb), in the model's input order.
    #[arg(value_name = "INPUT")]
    pub files: Vec<PathBuf>,
    /// An input file for a named input (or, without NAME=, the next one).
    #[arg(long, value_name = "NAME=FILE")]
    pub input: Vec<String>,
    /// An .npz whose arrays are named after the model's inputs.
    #[arg(long, value_name = "FILE.npz")]
    pub inputs: Option<PathBuf>,
    /// A node-test data set directory: its input_<i>.pb files.
    #[arg(long, value_name = "DIR")]
    pub data_set: Option<PathBuf>,
    /// Seed of the random inputs (shapes from the declared facts, symbols
    /// without --set taking the value 1).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Type the model with the given inputs' types and shapes (every input
    /// must be given) instead of the facts it declares.
    #[arg(long)]
    pub pinned: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Write the outputs, named after the model's outputs, to this .npz
    /// (default: print a summary of each).
    #[arg(long, value_name = "OUT.npz")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub inputs: InputArgs,
    /// The expected outputs: an .npz keyed by output name (default, with
    /// --data-set: its output_<i>.pb files).
    #[arg(long, value_name = "FILE.npz")]
    pub reference: Option<PathBuf>,
    /// Relative tolerance: |got - expected| <= atol + rtol * |expected|.
    #[arg(long, default_value_t = onnx_golden::compare::RTOL)]
    pub rtol: f64,
    /// Absolute tolerance.
    #[arg(long, default_value_t = onnx_golden::compare::ATOL)]
    pub atol: f64,
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Also show what stock tract (tract_onnx::onnx()) makes of the file.
    #[arg(long)]
    pub stock: bool,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub inputs: InputArgs,
    /// Timed calls per mode (after one untimed warm-up call).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The NNEF output: a .tar archive, or a directory otherwise.
    #[arg(long, value_name = "OUT.tar|OUT_DIR", required = true)]
    pub nnef: PathBuf,
}

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
    /// The most bytes one tensor read from a file (.npy, .npz array, .pb)
    /// may hold: a header declaring more is refused before anything is
    /// allocated.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = crate::tensors::DEFAULT_MAX_TENSOR_BYTES)]
    pub max_tensor_bytes: u64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run node-test directories (model.onnx + test_data_set_N) through the
    /// plugin and gate on expected failures.
    #[command(after_help = "Example:
  tract-scatter test onnx-testdata/exporters --expected-failures onnx-testdata/expected-failures.toml
  tract-scatter test my-tests --shard 1/4 --format json --output shard-1.json")]
    Test(TestArgs),
    /// Merge the JSON reports of test --shard K/N runs (or of runs of
    /// other suites) and gate once over all their tests.
    #[command(after_help = "Example:
  tract-scatter merge shard-1.json shard-2.json shard-3.json shard-4.json --expected-failures expected-failures.toml")]
    Merge(MergeArgs),
    /// Run a model on given or random inputs; print or save its outputs.
    #[command(after_help = "Example:
  tract-scatter run model.onnx x.npy --input mask=mask.npy --output outputs.npz
  tract-scatter run model.onnx --set batch=4 --random --seed 1")]
    Run(RunArgs),
    /// Run a model and compare its outputs with a reference.
    #[command(after_help = "Example:
  tract-scatter compare model.onnx --inputs inputs.npz --reference expected.npz --rtol 1e-4
  python3 crates/tract-scatter-cli/scripts/intermediates.py model.onnx --inputs inputs.npz --output ref.npz
  tract-scatter compare model.onnx --intermediates ref.npz")]
    Compare(CompareArgs),
    /// Print the operators no one implements, the optimized plan, the
    /// symbols, the nodes this plugin built and the exporter deviations it
    /// accepted.
    #[command(after_help = "Example:
  tract-scatter dump model.onnx --set batch=1 --stock")]
    Dump(DumpArgs),
    /// Time a model per call in each calling mode, with a per-op-type profile.
    #[command(after_help = "Example:
  tract-scatter bench model.onnx --inputs inputs.npz --rounds 100")]
    Bench(BenchArgs),
    /// Write the decluttered model as NNEF, with the plugin's registry.
    #[command(after_help = "Example:
  tract-scatter convert model.onnx --nnef model.nnef.tar")]
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
    /// Relative tolerance of float outputs, |got - expected| <= atol +
    /// rtol * |expected| (default ONNX's 1e-3), for the tests without a
    /// tolerance.toml of their own or above them in their suite.
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Absolute tolerance of float outputs (default ONNX's 1e-7), as
    /// --rtol.
    #[arg(long)]
    pub atol: Option<f64>,
    /// Run the never-worse gate against stock tract, with declared and
    /// pinned input facts; fail on any model where the plugin does worse.
    #[arg(long)]
    pub never_worse: bool,
    /// Only tests whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
    /// Run only part K of N (1-based) of the tests, split by test path
    /// (a hash of SUITE/TEST: stable across machines, and whatever other
    /// tests exist); merge joins the parts' JSON reports.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<onnx_golden::suite::Shard>,
    /// No progress on stderr (a bar on a terminal, else one line per test).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Reports written by test --format json: every shard of one run
    /// (--shard K/N, K = 1..N), or runs of different tests.
    #[arg(required = true, value_name = "REPORT.json")]
    pub reports: Vec<PathBuf>,
    /// Failures to accept, as for test: applied once over all the
    /// reports' tests (the shards' own verdicts are not read).
    #[arg(long, value_name = "FILE")]
    pub expected_failures: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// Write the merged report there instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
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

/// Where the inputs come from; an input not given is an error, unless
/// `--random` asks for a seeded random tensor.
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
    /// A node-test data set directory: its `input_<i>.pb` files.
    #[arg(long, value_name = "DIR")]
    pub data_set: Option<PathBuf>,
    /// Make the inputs not given seeded random tensors (shapes from the
    /// declared facts, symbols without --set taking the value 1; integers
    /// that index an axis the model names stay below its size); the seed
    /// and the symbols' values are printed on stderr.
    #[arg(long)]
    pub random: bool,
    /// Seed of the random inputs (default 0); implies --random.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
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
    /// --data-set: its `output_<i>.pb` files).
    #[arg(long, value_name = "FILE.npz")]
    pub reference: Option<PathBuf>,
    /// Relative tolerance: |got - expected| <= atol + rtol * |expected|.
    #[arg(long, default_value_t = onnx_golden::compare::RTOL)]
    pub rtol: f64,
    /// Absolute tolerance.
    #[arg(long, default_value_t = onnx_golden::compare::ATOL)]
    pub atol: f64,
    /// Also compare intermediate tensors with this .npz keyed by ONNX
    /// tensor name (scripts/intermediates.py writes one with onnxruntime),
    /// on the decluttered model, and name the first node in ONNX graph
    /// order whose output differs. Its arrays named after the model's
    /// inputs are the inputs not otherwise given.
    #[arg(long, value_name = "REF.npz")]
    pub intermediates: Option<PathBuf>,
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
    /// No progress on stderr (a bar on a terminal, else one line per mode).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The NNEF output: a .tar archive, or a directory otherwise.
    #[arg(long, value_name = "OUT.tar|OUT_DIR", required = true)]
    pub nnef: PathBuf,
}

//! Project automation, run as `cargo xtask <command>`.

mod all_ops;
mod args;
mod bench;
mod conformance;
mod fuzz;
mod generated;
mod progress;
mod update_manifest;

use anyhow::Result;
use onnx_golden::fetch::Source;
use onnx_golden::layout::{Layout, root_above};
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  fetch-testdata [--from DIR]
      Download (pip) the pinned onnx wheels, extract their node tests into
      the shared test-data cache (see conformance) and verify every hash.
      --from DIR (or ONNX_TESTDATA_FROM=DIR) uses an onnx checkout, unpacked
      wheel, a directory of the pinned wheels or another clone's cache
      instead of pip. Generated releases
      (wheels without test data, onnx >= 1.23): regenerate their node tests
      in a venv under the cache (python3 with venv and pip) and
      verify them and the committed copy in onnx-testdata/generated/.
  conformance [--verbose] [--output FILE] [--format text|markdown|json|junit]
              [--filter SUBSTRING] [--from DIR]
      Run every golden suite with the plugin and stock tract, each with the
      inputs' declared and pinned facts:
        - the official node tests of every pinned onnx release (fetched on
          first use, see fetch-testdata) and of the generated releases
          (committed), and onnx-testdata/extended/: gated with the plugin
          strict (onnx_strict());
        - onnx-testdata/exporters/<exporter>/ (models by real exporters),
          recurrent/<exporter>/ (Loop, Scan, LSTM; both input modes),
          autograd/ (training-domain gradient ops), types/bfloat16 and
          types/complex, real-models/: gated with onnx();
        - every official node test of the newest pinned release with data
          (the --all-ops set): only for the never-worse gate.
      Exits non-zero on an unexpected plugin failure, a stale entry of
      onnx-testdata/expected-failures.toml, or a model the plugin runs worse
      than stock tract (never-worse gate). Prints where the data comes from,
      a progress line (a bar on a terminal), then a summary per suite whose
      last line is the verdict. --verbose also prints each test's result
      and the full report (every failure, stock's included) before the
      summary; --output FILE writes the full report there in --format.
      Test data is cached in $TRACT_ONNX_SCATTER_CACHE, else
      $XDG_CACHE_HOME/tract-onnx-scatter, else ~/.cache/tract-onnx-scatter,
      shared by every clone (see docs/conformance.md).
  conformance --all-ops [--format ...] [--output FILE] [--filter SUBSTRING]
              [--release VERSION] [--from DIR]
      Run every official node test of the newest pinned release that ships
      data (or VERSION) with the plugin and stock tract, counted per
      operator. Informational: exits 0 whatever the counts.
  bench [--filter SUBSTRING[,SUBSTRING...]] [--budget-ms N] [--output FILE]
        [--python PATH] [--torch-python PATH] [--pool-capacity N]
        [--no-ort true] [--no-torch true] [--no-stock true]
        [--huge-page-inputs true] [--malloc pinned|dynamic]
        [--baseline EXE] [--baseline-env NAME=VALUE[,NAME=VALUE...]]
      Build scatter-bench in release mode and time every row (or those
      whose name contains any SUBSTRING) with the plugin and stock tract in each
      calling mode, next to copies of the data and onnxruntime (a Python
      with onnxruntime: --python, ORT_PYTHON, or found); print the tables
      and the target lines (each exported pair: dynamo within its target of
      TorchScript). glibc's malloc thresholds are pinned at their dynamic
      maximum for every engine's process (GLIBC_TUNABLES, named in the
      report) unless GLIBC_TUNABLES is set or --malloc dynamic is given.
      --baseline EXE (another build's scatter-bench) and --baseline-env
      (variables for it, e.g. SCATTER_MECHANISMS_OFF=fused_copy; alone,
      this build with them) time the plugin again as the baseline in the
      same rounds, and print this build over it, flagged outside ±10%.
      See docs/performance.md.
  fuzz [--seconds N] [--target NAME]
      Run each cargo-fuzz target of fuzz/ (or the one named: kernels,
      one_node_model, model_bytes, grad_ops, overrides, tensor_files,
      node_test_dir) for N seconds (default 60) on stable; non-zero exit on
      a crash. Needs
      `cargo install cargo-fuzz`. See fuzz/README.md.
  update-manifest [--wheels DIR]
      Re-pin onnx-testdata/manifest.toml: for each listed release, take the
      wheel from DIR (or pip), record its hash and the hash of every file of
      the selected node tests. Generated releases are generated afresh and
      their committed copy in onnx-testdata/generated/ replaced.
  check-onnx-release [--against VERSION]
      Informational: is the newest onnx on PyPI newer than the newest pinned
      release (or the pinned VERSION), and which selected node tests would
      it add?
";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode> {
    let mut argv = std::env::args().skip(1);
    let Some(command) = argv.next() else {
        eprint!("{USAGE}");
        return Ok(ExitCode::FAILURE);
    };
    let mut args = args::Args::parse(argv)?;
    if args.switch("--help") {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    let layout = Layout::new(root_above(env!("CARGO_MANIFEST_DIR")));
    match command.as_str() {
        "fetch-testdata" => {
            let source = Source::resolve(args.path("--from"));
            args.finish()?;
            fetch(&layout, &source)?;
            Ok(ExitCode::SUCCESS)
        }
        "conformance" => conformance::run(&layout, args),
        "bench" => bench::run(args),
        "fuzz" => fuzz::run(args),
        "check-onnx-release" => {
            let against = args.take("--against");
            args.finish()?;
            generated::check_onnx_release(&layout, against.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        "update-manifest" => {
            let wheels = args.path("--wheels");
            args.finish()?;
            update_manifest::run(&layout, wheels.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        other => {
            eprint!("unknown command {other:?}\n{USAGE}");
            Ok(ExitCode::FAILURE)
        }
    }
}

fn fetch(layout: &Layout, source: &Source) -> Result<()> {
    let manifest = layout.manifest()?;
    for release in &manifest.releases {
        let suite = layout.release_suite(&manifest, &release.version, source)?;
        eprintln!(
            "onnx {}: {} tests, {} files verified in {}",
            release.version,
            release.tests().len(),
            release.files.len(),
            suite.root.display()
        );
    }
    generated::fetch(layout, &manifest)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_usage_describes_everything_conformance_runs() {
        for what in [
            "extended/",
            "exporters/",
            "recurrent/",
            "autograd/",
            "types/bfloat16",
            "types/complex",
            "real-models/",
            "generated releases",
            "--all-ops set",
            "never-worse",
            "expected-failures.toml",
            "--verbose",
            "TRACT_ONNX_SCATTER_CACHE",
        ] {
            assert!(super::USAGE.contains(what), "{what} is not in the usage");
        }
    }

    #[test]
    fn the_usage_names_every_fuzz_target() {
        for target in crate::fuzz::TARGETS {
            assert!(
                super::USAGE.contains(target),
                "{target} is not in the usage"
            );
        }
    }
}

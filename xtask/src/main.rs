//! Project automation, run as `cargo xtask <command>`.

mod all_ops;
mod args;
mod bench;
mod conformance;
mod fuzz;
mod generated;
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
      onnx-testdata/cache/ and verify every hash. --from DIR (or
      ONNX_TESTDATA_FROM=DIR) uses an onnx checkout, unpacked wheel or a
      directory of the pinned wheels instead of pip. Generated releases
      (wheels without test data, onnx >= 1.23): regenerate their node tests
      in a venv under onnx-testdata/cache/ (python3 with venv and pip) and
      verify them and the committed copy in onnx-testdata/generated/.
  conformance [--format text|markdown|json|junit] [--output FILE]
              [--filter SUBSTRING] [--from DIR]
      Run the pinned official tests and onnx-testdata/extended/ with the
      plugin and stock tract; exit non-zero on an unexpected plugin failure
      or a stale entry of onnx-testdata/expected-failures.toml.
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
    fn the_usage_names_every_fuzz_target() {
        for target in crate::fuzz::TARGETS {
            assert!(
                super::USAGE.contains(target),
                "{target} is not in the usage"
            );
        }
    }
}

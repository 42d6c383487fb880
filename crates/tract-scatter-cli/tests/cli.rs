//! The `tract-scatter` binary, run as a subprocess on committed models of
//! onnx-testdata and on .npy/.npz fixtures written here.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (this crate is at crates/tract-scatter-cli).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// A fresh temporary directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tract-scatter-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn tract_scatter(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_tract-scatter"))
        .args(args)
        .current_dir(root())
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("running tract-scatter");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A usage error: exit 2, one line on stderr, nothing on stdout. Returns
/// the line with temp paths made stable.
fn usage_error(args: &[&str]) -> String {
    let run = tract_scatter(args);
    assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {:?}", run.stderr);
    assert!(run.stderr.starts_with("error: "), "{:?}", run.stderr);
    assert!(!run.stderr.contains("panicked"), "{:?}", run.stderr);
    run.stderr.trim_end().to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const TORCH: &str = "onnx-testdata/exporters/torch";
const EXPECTED: &str = "onnx-testdata/expected-failures.toml";

#[test]
fn test_gates_on_expected_failures() {
    // index_add__ts11..12 are listed as TorchScript exporter bugs for release `torch`.
    let args = [
        "test",
        TORCH,
        "--filter",
        "index_add__ts1",
        "--expected-failures",
        EXPECTED,
        "--quiet",
    ];
    let run = tract_scatter(&args);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("torch"), "{}", run.stdout);
    assert!(
        run.stdout.contains("xFAIL") || run.stdout.contains("xfail"),
        "{}",
        run.stdout
    );

    // Without the list, the exporter bugs are unexpected failures.
    let run = tract_scatter(&args[..4]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("index_add__ts11"), "{}", run.stderr);
}

#[test]
fn test_junit_report_and_never_worse() {
    let dir = temp_dir("junit");
    let xml = dir.join("report.xml");
    let run = tract_scatter(&[
        "test",
        TORCH,
        "--filter",
        "scatter_add__ts16",
        "--format",
        "junit",
        "--output",
        s(&xml),
        "--never-worse",
        "--stock",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let xml = std::fs::read_to_string(xml).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(xml.contains("<testsuite"), "{xml}");
    assert!(xml.contains("scatter_add__ts16"), "{xml}");
    assert!(xml.to_lowercase().contains("never"), "{xml}");
}

#[test]
fn test_json_report_is_json() {
    let run = tract_scatter(&[
        "test",
        TORCH,
        "--filter",
        "scatter_add__ts16",
        "--format",
        "json",
        "--pinned",
        "--strict",
        "--quiet",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["cases"][0]["suite"], "torch");
}

#[test]
fn test_usage_errors() {
    let errors = [
        usage_error(&["test", "no/such/dir"]),
        usage_error(&["test", TORCH, "--expected-failures", "no/such.toml"]),
        usage_error(&["test", TORCH, "--filter", "nothing matches this"]),
        usage_error(&["test", TORCH, "--format", "html"]),
        usage_error(&["test", "--frobnicate", TORCH]),
        usage_error(&["test"]),
    ];
    insta::assert_snapshot!("test_usage_errors", errors.join("\n"));
}

//! The `tract-scatter` binary, run as a subprocess on committed models of
//! onnx-testdata and on .npy/.npz fixtures written here.

use std::path::{Path, PathBuf};
use std::process::Command;

use tract_onnx_scatter::tract_onnx::prelude::*;

/// The workspace root (this crate is at crates/tract-scatter-cli).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// A fresh temporary directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("tract-scatter-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
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

/// A directory of suites (`onnx-testdata/exporters`) is one suite per
/// subdirectory, named as `cargo xtask conformance` names them, so the
/// expected failures of every exporter apply.
#[test]
fn test_of_a_directory_of_suites_names_each_suite_after_its_directory() {
    let run = tract_scatter(&[
        "test",
        "onnx-testdata/exporters",
        "--filter",
        "scatter_nd_into_zeros_dup_idx__opset1",
        "--expected-failures",
        EXPECTED,
        "--format",
        "json",
        "--quiet",
    ]);
    // tf2onnx's duplicate-index cases are listed exporter bugs of release
    // `tf2onnx`: expected, so the gate passes; paddle2onnx's pass.
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let cases = v["cases"].as_array().unwrap();
    let suites: std::collections::BTreeSet<&str> =
        cases.iter().filter_map(|c| c["suite"].as_str()).collect();
    assert_eq!(
        suites.into_iter().collect::<Vec<_>>(),
        ["paddle2onnx", "tf2onnx"]
    );
    for case in cases.iter().filter(|c| c["suite"] == "tf2onnx") {
        assert!(case["expected_failure"].is_string(), "{case}");
    }
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
        usage_error(&["test", TORCH, "--output", "no/such/dir/report.xml"]),
    ];
    insta::assert_snapshot!("test_usage_errors", errors.join("\n"));
}

const SCATTER_ADD: &str = "onnx-testdata/exporters/torch/scatter_add__ts16";
const GIN: &str = "onnx-testdata/exporters/torch-models/gin_like_sum_count_pool__ts16";

fn model(dir: &str) -> String {
    format!("{dir}/model.onnx")
}

fn data_set(dir: &str) -> String {
    format!("{dir}/test_data_set_0")
}

/// A TensorProto file of the committed test data, decoded.
fn pb(dir: &str, file: &str) -> Tensor {
    let bytes = std::fs::read(root().join(dir).join("test_data_set_0").join(file)).unwrap();
    onnx_golden::tensor_proto::decode_tensor_bytes(&bytes).unwrap()
}

fn write_npy<T: Datum + ndarray_npy::WritableElement>(path: &Path, t: &Tensor) {
    ndarray_npy::write_npy(path, &t.to_plain_array_view::<T>().unwrap()).unwrap();
}

/// scatter_add's data set 0 as x.npy, idx.npy, src.npy and inputs.npz.
fn scatter_add_fixtures(dir: &Path) -> [PathBuf; 4] {
    let (x, idx, src) = (
        pb(SCATTER_ADD, "input_0.pb"),
        pb(SCATTER_ADD, "input_1.pb"),
        pb(SCATTER_ADD, "input_2.pb"),
    );
    let files = [
        dir.join("x.npy"),
        dir.join("idx.npy"),
        dir.join("src.npy"),
        dir.join("inputs.npz"),
    ];
    write_npy::<f32>(&files[0], &x);
    write_npy::<i64>(&files[1], &idx);
    write_npy::<f32>(&files[2], &src);
    let mut npz = ndarray_npy::NpzWriter::new(std::fs::File::create(&files[3]).unwrap());
    npz.add_array("src", &src.to_plain_array_view::<f32>().unwrap())
        .unwrap();
    npz.add_array("x", &x.to_plain_array_view::<f32>().unwrap())
        .unwrap();
    npz.add_array("idx", &idx.to_plain_array_view::<i64>().unwrap())
        .unwrap();
    npz.finish().unwrap();
    files
}

fn read_npz(path: &Path, name: &str) -> Tensor {
    let mut npz = ndarray_npy::NpzReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let a: tract_ndarray::ArrayD<f32> = npz.by_name(name).unwrap();
    a.into()
}

#[test]
fn run_from_npy_npz_pb_and_data_set() {
    let dir = temp_dir("run");
    let [x, idx, src, npz] = scatter_add_fixtures(&dir);
    let expected = pb(SCATTER_ADD, "output_0.pb");
    let ways: Vec<Vec<String>> = vec![
        vec![s(&x).into(), s(&idx).into(), s(&src).into()],
        vec![
            format!("--input=src={}", s(&src)),
            format!("--input=idx={}", s(&idx)),
            s(&x).into(),
        ],
        vec!["--inputs".into(), s(&npz).into()],
        vec!["--data-set".into(), data_set(SCATTER_ADD)],
        vec![
            format!("{}/input_0.pb", data_set(SCATTER_ADD)),
            format!("{}/input_1.pb", data_set(SCATTER_ADD)),
            format!("{}/input_2.pb", data_set(SCATTER_ADD)),
            "--pinned".into(),
        ],
    ];
    for (ix, way) in ways.iter().enumerate() {
        let out = dir.join(format!("out{ix}.npz"));
        let mut args = vec!["run".to_string(), model(SCATTER_ADD)];
        args.extend(way.iter().cloned());
        args.extend(["--output".to_string(), s(&out).into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = tract_scatter(&args);
        assert_eq!(run.code, 0, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("wrote 1 output(s)"), "{}", run.stdout);
        let got = read_npz(&out, "3");
        onnx_golden::compare::compare(&got, &expected).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    }
}

#[test]
fn run_prints_summaries_of_random_inputs_with_set() {
    let run = tract_scatter(&[
        "run",
        &model(GIN),
        "--set",
        "num_nodes=9",
        "--set",
        "num_edges=24",
        "--set",
        "num_graphs=4",
        "--seed",
        "3",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("input  x: F32 [9, 5]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("input  edge_index: I64 [2, 24]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("output graph_out: F32 [4, 1]"),
        "{}",
        run.stdout
    );
    // The ONNX output name, not the label decluttering leaves on the outlet.
    assert!(
        run.stdout.contains("output node_out: F32 [9, 8]"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(" min "), "{}", run.stdout);
    // Same seed, same inputs.
    let again = tract_scatter(&[
        "run",
        &model(GIN),
        "--set",
        "num_nodes=9",
        "--set",
        "num_edges=24",
        "--set",
        "num_graphs=4",
        "--seed",
        "3",
    ]);
    assert_eq!(run.stdout, again.stdout);
}

#[test]
fn run_usage_errors() {
    let dir = temp_dir("run-errors");
    let [x, idx, src, _] = scatter_add_fixtures(&dir);
    let text = dir.join("x.txt");
    std::fs::write(&text, "1 2 3").unwrap();
    let m = model(SCATTER_ADD);
    let errors = [
        usage_error(&["run", "no/such/model.onnx"]),
        usage_error(&["run", "README.md"]),
        // idx given as x: wrong element type.
        usage_error(&["run", &m, s(&idx)]),
        // src given as x: wrong shape.
        usage_error(&["run", &m, s(&src)]),
        usage_error(&["run", &m, s(&x), s(&idx), s(&src), s(&src)]),
        usage_error(&["run", &m, "--input", &format!("y={}", s(&x))]),
        usage_error(&["run", &m, s(&text)]),
        usage_error(&["run", &m, "missing.npy"]),
        usage_error(&["run", &m, "--set", "N"]),
        usage_error(&["run", &m, "--set", "N=two"]),
        usage_error(&["run", &model(GIN), "--set", "nodes=3"]),
        usage_error(&["run", &m, "--data-set", "no/such/dir"]),
        usage_error(&["run", &m, "--pinned", s(&x)]),
        usage_error(&["run", &m, "--frobnicate"]),
    ];
    let errors = errors.join("\n").replace(s(&dir), "$TMP");
    insta::assert_snapshot!("run_usage_errors", errors);
}

#[test]
fn compare_with_data_set_and_reference() {
    let run = tract_scatter(&[
        "compare",
        &model(SCATTER_ADD),
        "--data-set",
        &data_set(SCATTER_ADD),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("output 3: ok (max abs err"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("1 of 1 output(s) match"),
        "{}",
        run.stdout
    );

    // A TorchScript exporter bug (duplicates overwrite): a mismatch, exit 1,
    // with the worst element's coordinates.
    let ts14 = "onnx-testdata/exporters/torch/scatter_add__ts14";
    let run = tract_scatter(&["compare", &model(ts14), "--data-set", &data_set(ts14)]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("output 5: MISMATCH"), "{}", run.stdout);
    assert!(run.stdout.contains("worst at [1, 1]"), "{}", run.stdout);
    // Loose enough tolerances accept it.
    let run = tract_scatter(&[
        "compare",
        &model(ts14),
        "--data-set",
        &data_set(ts14),
        "--atol",
        "10",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    // A reference .npz keyed by output name: run's own output, same seed.
    let dir = temp_dir("compare");
    let reference = dir.join("ref.npz");
    let run = tract_scatter(&["run", &model(SCATTER_ADD), "--output", s(&reference)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let run = tract_scatter(&["compare", &model(SCATTER_ADD), "--reference", s(&reference)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let run = tract_scatter(&[
        "compare",
        &model(SCATTER_ADD),
        "--reference",
        s(&reference),
        "--seed",
        "2",
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
}

#[test]
fn compare_usage_errors() {
    let dir = temp_dir("compare-errors");
    let [_, _, _, npz] = scatter_add_fixtures(&dir);
    let m = model(SCATTER_ADD);
    let errors = [
        usage_error(&["compare", &m]),
        usage_error(&["compare", &m, "--reference", s(&npz)]),
        usage_error(&["compare", &m, "--reference", "no/such.npz"]),
        usage_error(&[
            "compare",
            &m,
            "--data-set",
            &data_set(SCATTER_ADD),
            "--rtol=-1",
        ]),
        usage_error(&[
            "compare",
            &m,
            "--data-set",
            &data_set(SCATTER_ADD),
            "--atol",
            "x",
        ]),
    ];
    let errors = errors.join("\n").replace(s(&dir), "$TMP");
    insta::assert_snapshot!("compare_usage_errors", errors);
}

const AMAX_TS16: &str = "onnx-testdata/exporters/torch/scatter_reduce_amax_self__ts16";
const BOOL_MASK_TS16: &str = "onnx-testdata/exporters/torch/bool_mask_assign__ts16";

fn dump(args: &[&str]) -> String {
    let run = tract_scatter(args);
    assert_eq!(run.code, 0, "{args:?}: {}{}", run.stdout, run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    run.stdout
}

#[test]
fn dump_shows_deviations_and_stock() {
    // A TorchScript ScatterElements-16 with reduction 'max' (an opset-18
    // value): accepted with a warning; stock tract fails on the file.
    insta::assert_snapshot!(
        "dump_deviation",
        dump(&["dump", &model(AMAX_TS16), "--stock"])
    );
    // The same file refused by onnx_strict(): a load error, exit 2.
    insta::assert_snapshot!(
        "dump_strict_refuses",
        usage_error(&["dump", &model(AMAX_TS16), "--strict"])
    );
}

#[test]
fn dump_shows_plugin_nodes_and_symbols() {
    // NonZero counts (symbols), a run-time-bound Slice (tract override)
    // and a ScatterND (scatter op); stock tract's plan beside.
    insta::assert_snapshot!(
        "dump_override",
        dump(&["dump", &model(BOOL_MASK_TS16), "--stock"])
    );
    let out = dump(&["dump", &model(GIN)]);
    assert!(
        out.contains("symbols: num_edges, num_graphs, num_nodes"),
        "{out}"
    );
    let out = dump(&["dump", &model(GIN), "--set", "num_nodes=9"]);
    assert!(out.contains("input  x: F32 [9, 5]"), "{out}");
}

#[test]
fn bench_times_each_mode_and_profiles_op_types() {
    let run = tract_scatter(&["bench", &model(BOOL_MASK_TS16), "--rounds", "3"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for line in [
        "12 nodes in the optimized plan, 3 rounds per mode",
        "plan.run(inputs.clone())",
        "SimpleState::run(inputs.clone())",
        "SimpleState::run(owned inputs)",
        "profile by op type",
        "ScatterND [plugin scatter op]",
        "StridedSlice [plugin tract override]",
        "NonZero ",
    ] {
        assert!(run.stdout.contains(line), "{line:?} not in\n{}", run.stdout);
    }
    let run = tract_scatter(&[
        "bench",
        &model(SCATTER_ADD),
        "--data-set",
        &data_set(SCATTER_ADD),
        "--rounds",
        "2",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("ScatterElements [plugin scatter op]"),
        "{}",
        run.stdout
    );
    insta::assert_snapshot!(
        "bench_usage_errors",
        [
            usage_error(&["bench", &model(SCATTER_ADD), "--rounds", "0"]),
            usage_error(&["bench", "missing.onnx"]),
        ]
        .join("\n")
    );
}

#[test]
fn convert_writes_nnef_that_reads_back() {
    let dir = temp_dir("convert");
    let tar = dir.join("scatter_add.tar");
    let run = tract_scatter(&["convert", &model(SCATTER_ADD), "--nnef", s(&tar)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("as NNEF archive"), "{}", run.stdout);
    // Read back with the plugin's registry and run on the data set.
    let plan = tract_onnx_scatter::nnef()
        .model_for_path(&tar)
        .unwrap()
        .into_optimized()
        .unwrap()
        .into_runnable()
        .unwrap();
    let inputs: TVec<TValue> = (0..3)
        .map(|i| pb(SCATTER_ADD, &format!("input_{i}.pb")).into_tvalue())
        .collect();
    let outputs = plan.run(inputs).unwrap();
    onnx_golden::compare::compare(&outputs[0], &pb(SCATTER_ADD, "output_0.pb")).unwrap();

    let out_dir = dir.join("scatter_add_nnef");
    let run = tract_scatter(&["convert", &model(SCATTER_ADD), "--nnef", s(&out_dir)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let graph = std::fs::read_to_string(out_dir.join("graph.nnef")).unwrap();
    assert!(graph.contains("tract_onnx_scatter_elements("), "{graph}");

    // An existing directory is refused; so is a missing --nnef.
    let errors = [
        usage_error(&["convert", &model(SCATTER_ADD), "--nnef", s(&out_dir)]),
        usage_error(&["convert", &model(SCATTER_ADD)]),
        usage_error(&[
            "convert",
            &model(SCATTER_ADD),
            "--nnef",
            "no/such/dir/x.tar",
        ]),
    ];
    insta::assert_snapshot!(
        "convert_usage_errors",
        errors.join("\n").replace(s(&dir), "$TMP")
    );

    // An op without NNEF form (the run-time-bound Slice override): exit 1,
    // one line, no half-written archive.
    let broken = dir.join("bool_mask.tar");
    let run = tract_scatter(&["convert", &model(BOOL_MASK_TS16), "--nnef", s(&broken)]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("No serializer found"), "{}", run.stderr);
    assert!(!broken.exists());
}

/// The committed GTCRN speech model (what examples/run_onnx.rs was tested
/// on): four named inputs, four outputs.
#[test]
fn gtcrn_runs_compares_and_converts() {
    let gtcrn = "onnx-testdata/real-models/gtcrn";
    let run = tract_scatter(&["compare", &model(gtcrn), "--data-set", &data_set(gtcrn)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("4 of 4 output(s) match"),
        "{}",
        run.stdout
    );
    let run = tract_scatter(&["run", &model(gtcrn), "--seed", "1"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("input  mix: F32 [1, 257, 1, 2]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("output enh: F32 [1, 257, 1, 2]"),
        "{}",
        run.stdout
    );
    let again = tract_scatter(&["run", &model(gtcrn), "--seed", "1"]);
    assert_eq!(run.stdout, again.stdout);
    let other = tract_scatter(&["run", &model(gtcrn), "--seed", "2"]);
    assert_ne!(run.stdout, other.stdout);
    let dir = temp_dir("gtcrn");
    let tar = dir.join("gtcrn.tar");
    let run = tract_scatter(&["convert", &model(gtcrn), "--nnef", s(&tar)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(std::fs::metadata(&tar).unwrap().len() > 100_000);
}

/// A model that fails at run time is exit 1 with one line, even when tract
/// panics (stock Gather on out-of-range random indices: every symbol of
/// GIN's inputs defaults to 1, and random indices go up to 3).
#[test]
fn run_time_failures_are_one_line_exit_1() {
    let out = Command::new(env!("CARGO_BIN_EXE_tract-scatter"))
        .args(["run", &model(GIN)])
        .current_dir(root())
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: tract panicked: "), "{stderr}");
    assert!(!stderr.contains("stack backtrace"), "{stderr}");
}

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

/// The suites a JSON report's cases name, each once, sorted.
fn suite_names(report: &serde_json::Value) -> Vec<&str> {
    let cases = report["cases"].as_array().unwrap();
    let names: std::collections::BTreeSet<&str> =
        cases.iter().filter_map(|c| c["suite"].as_str()).collect();
    names.into_iter().collect()
}

/// The element-type corpus (`onnx-testdata/types`: bfloat16, complex64 and
/// complex128 node tests) passes the gate with the committed list, whose
/// entries name the bfloat16 suite by a longer path (`types/bfloat16`);
/// the complex suite, which the list does not name, keeps its directory's
/// name.
#[test]
fn test_of_the_bfloat16_and_complex_corpus_passes_with_the_committed_list() {
    let run = tract_scatter(&[
        "test",
        "onnx-testdata/types",
        "--expected-failures",
        EXPECTED,
        "--format",
        "json",
        "--quiet",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(suite_names(&v), ["complex", "types/bfloat16"]);
    // Without the list, the listed exporter bugs and refusals fail the gate.
    let run = tract_scatter(&["test", "onnx-testdata/types", "--quiet"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
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
    assert_eq!(suite_names(&v), ["paddle2onnx", "tf2onnx"]);
    for case in v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["suite"] == "tf2onnx")
    {
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
    let run = tract_scatter(&[
        "run",
        &model(SCATTER_ADD),
        "--random",
        "--output",
        s(&reference),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let run = tract_scatter(&[
        "compare",
        &model(SCATTER_ADD),
        "--random",
        "--reference",
        s(&reference),
    ]);
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
        usage_error(&["compare", &m, "--inputs", s(&npz), "--reference", s(&npz)]),
        usage_error(&[
            "compare",
            &m,
            "--inputs",
            s(&npz),
            "--reference",
            "no/such.npz",
        ]),
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
    let run = tract_scatter(&["bench", &model(BOOL_MASK_TS16), "--random", "--rounds", "3"]);
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

/// A suite assembled from symbolic links (as build systems' runfiles
/// are): links to committed test directories, a test directory whose
/// model and data set are links, and a link cycle.
#[cfg(unix)]
#[test]
fn test_follows_symbolic_links_to_tests() {
    use std::os::unix::fs::symlink;
    let dir = temp_dir("links");
    let suite = dir.join("linked_suite");
    std::fs::create_dir_all(suite.join("by_file").join("scatter_add__ts16")).unwrap();
    let real = root().join(SCATTER_ADD);
    symlink(&real, suite.join("scatter_add__ts16")).unwrap();
    let by_file = suite.join("by_file").join("scatter_add__ts16");
    symlink(real.join("model.onnx"), by_file.join("model.onnx")).unwrap();
    symlink(
        real.join("test_data_set_0"),
        by_file.join("test_data_set_0"),
    )
    .unwrap();
    symlink(&suite, suite.join("by_file").join("cycle")).unwrap();
    let run = tract_scatter(&["test", s(&suite), "--format", "json", "--quiet"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let cases: Vec<(&str, &str, &str)> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["suite"].as_str().unwrap(),
                c["test"].as_str().unwrap(),
                c["outcomes"][0]["optimized"]["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        cases,
        [
            ("linked_suite", "by_file/scatter_add__ts16", "pass"),
            ("linked_suite", "scatter_add__ts16", "pass"),
        ]
    );
    // The suite directory itself may be a link, named after the link.
    let link = dir.join("runfiles_suite");
    symlink(&suite, &link).unwrap();
    let run = tract_scatter(&["test", s(&link), "--format", "json", "--quiet"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["cases"].as_array().unwrap().len(), 2);
    assert_eq!(v["cases"][0]["suite"], "runfiles_suite");
}

/// Runs `args` under `script`, stderr on a pseudo-terminal; `None` where
/// util-linux's `script` is missing.
fn on_a_terminal(args: &[&str]) -> Option<String> {
    let command = std::iter::once(env!("CARGO_BIN_EXE_tract-scatter"))
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &format!("{command} > /dev/null"), "/dev/null"])
        .current_dir(root())
        .env("TERM", "xterm")
        .output()
        .ok()?;
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn progress_is_a_bar_on_a_terminal_lines_otherwise_nothing_when_quiet() {
    let test = [
        "test",
        TORCH,
        "--filter",
        "scatter_add__ts1",
        "--expected-failures",
        EXPECTED,
    ];
    let set = data_set(SCATTER_ADD);
    let bench = [
        "bench",
        &model(SCATTER_ADD),
        "--data-set",
        &set,
        "--rounds",
        "2",
    ];
    // Not a terminal: one line per test (per bench mode).
    let run = tract_scatter(&test);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("[1/7] torch scatter_add__ts11: FAIL(compare)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("[7/7] torch scatter_add__ts17: pass"),
        "{}",
        run.stderr
    );
    let run = tract_scatter(&bench);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("[1/4] plan.run(inputs.clone()): done"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("[4/4] profile: done"), "{}", run.stderr);
    // --quiet: nothing.
    for args in [&test[..], &bench[..]] {
        let mut quiet = args.to_vec();
        quiet.push("--quiet");
        let run = tract_scatter(&quiet);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert!(run.stderr.is_empty(), "{quiet:?}: {}", run.stderr);
        // On a terminal too.
        if let Some(screen) = on_a_terminal(&quiet) {
            assert!(screen.trim().is_empty(), "{quiet:?}: {screen:?}");
        }
    }
    // A terminal: a bar (no progress lines: the expected failures and the
    // passes are the bar's business).
    let Some(screen) = on_a_terminal(&test) else {
        eprintln!("no `script` command: the terminal half of this test is skipped");
        return;
    };
    assert!(screen.contains("/7 torch scatter_add__ts1"), "{screen:?}");
    assert!(screen.contains("[="), "{screen:?}");
    assert!(!screen.contains("[1/7]"), "{screen:?}");
    let screen = on_a_terminal(&bench).unwrap();
    assert!(
        screen.contains("/11 plan.run(inputs.clone())"),
        "{screen:?}"
    );
}

#[test]
fn every_subcommand_help_shows_an_example() {
    let mut examples = vec![];
    for command in [
        "test", "merge", "run", "compare", "dump", "bench", "convert",
    ] {
        let run = tract_scatter(&[command, "--help"]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        let (_, example) = run
            .stdout
            .split_once("\nExample:\n")
            .unwrap_or_else(|| panic!("{command} --help has no example:\n{}", run.stdout));
        assert!(
            example.contains(&format!("tract-scatter {command} ")),
            "{example}"
        );
        examples.push(format!("{command}:\n{}", example.trim_end()));
        // -h too.
        assert!(
            tract_scatter(&[command, "-h"])
                .stdout
                .contains("\nExample:\n")
        );
    }
    insta::assert_snapshot!("help_examples", examples.join("\n"));
}

/// A model of 2 inputs with operators no one implements: `Foo` three times
/// (once in an `If` branch), `Bar` once, and an unused `Baz`.
fn model_with_unsupported_ops(path: &Path) {
    use prost::Message as _;
    use tract_onnx_scatter::tract_onnx::pb::*;
    let tensor = |name: &str, elem_type: i32| ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type,
                shape: Some(TensorShapeProto {
                    dim: vec![tensor_shape_proto::Dimension {
                        value: Some(tensor_shape_proto::dimension::Value::DimValue(2)),
                        ..Default::default()
                    }],
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let node = |op: &str, name: &str, inputs: &[&str], output: &str| NodeProto {
        op_type: op.into(),
        name: name.into(),
        input: inputs.iter().map(|i| i.to_string()).collect(),
        output: vec![output.into()],
        ..Default::default()
    };
    let branch = |nodes: Vec<NodeProto>, output: &str| AttributeProto {
        name: String::new(),
        r#type: attribute_proto::AttributeType::Graph as i32,
        g: Some(GraphProto {
            name: "branch".into(),
            node: nodes,
            output: vec![tensor(output, 1)],
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut then_branch = branch(vec![node("Foo", "f3", &["y3"], "t")], "t");
    then_branch.name = "then_branch".into();
    let mut else_branch = branch(vec![node("Relu", "r", &["y3"], "e")], "e");
    else_branch.name = "else_branch".into();
    let mut if_node = node("If", "choose", &["c"], "z");
    if_node.attribute = vec![then_branch, else_branch];
    let graph = GraphProto {
        name: "unsupported".into(),
        node: vec![
            node("Foo", "f1", &["x"], "y1"),
            node("Relu", "", &["y1"], "relu_out"),
            node("Bar", "b1", &["relu_out"], "y2"),
            node("Baz", "unused", &["y2"], "dead"),
            node("Foo", "f2", &["y2"], "y3"),
            if_node,
        ],
        input: vec![tensor("x", 1), tensor("c", 9)],
        output: vec![tensor("z", 1)],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(graph),
        ..Default::default()
    };
    std::fs::write(path, model.encode_to_vec()).unwrap();
}

#[test]
fn dump_lists_every_unsupported_operator_at_once() {
    let dir = temp_dir("unsupported");
    let path = dir.join("model.onnx");
    model_with_unsupported_ops(&path);
    let run = tract_scatter(&["dump", s(&path)]);
    // The model does not type: exit 2, one line on stderr naming them all,
    // after what dump could print.
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    let list = "Foo (3 nodes: f1, f2, f3), Bar (1 node: b1)";
    assert!(run.stderr.contains(list), "{}", run.stderr);
    insta::assert_snapshot!("dump_unsupported", run.stdout.replace(s(&dir), "$TMP"));
    // run names them too, in its one-line error.
    let run = tract_scatter(&["run", s(&path)]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.starts_with(&format!(
            "error: {} uses 2 operator(s) neither tract nor the plugin implements: {list}: typing ",
            s(&path)
        )),
        "{}",
        run.stderr
    );
    // Stock tract lacks the same ones.
    let run = tract_scatter(&["dump", s(&path), "--stock"]);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
}

/// Every labelled (ONNX-named) tensor of GIN's decluttered model as the
/// plugin computes it on the committed data set, with the inputs, as
/// scripts/intermediates.py writes them with onnxruntime.
fn gin_intermediates() -> Vec<(String, Tensor)> {
    let mut typed = tract_onnx_scatter::onnx()
        .model_for_path(root().join(model(GIN)))
        .unwrap()
        .into_typed()
        .unwrap()
        .into_decluttered()
        .unwrap();
    let mut labelled = vec![];
    for node in typed.nodes() {
        for slot in 0..node.outputs.len() {
            let outlet = OutletId::new(node.id, slot);
            if let Some(label) = typed.outlet_label(outlet)
                && !labelled.iter().any(|(l, _)| l == label)
                && !["x", "edge_index", "batch", "graph_attr"].contains(&label)
            {
                labelled.push((label.to_string(), outlet));
            }
        }
    }
    let outlets: Vec<OutletId> = labelled.iter().map(|(_, o)| *o).collect();
    typed.select_output_outlets(&outlets).unwrap();
    let inputs: Vec<(String, Tensor)> = ["x", "edge_index", "batch", "graph_attr"]
        .iter()
        .enumerate()
        .map(|(ix, name)| (name.to_string(), pb(GIN, &format!("input_{ix}.pb"))))
        .collect();
    let values = typed
        .into_runnable()
        .unwrap()
        .run(
            inputs
                .iter()
                .map(|(_, t)| t.clone().into_tvalue())
                .collect(),
        )
        .unwrap();
    let mut bundle = inputs;
    for ((label, _), value) in labelled.into_iter().zip(values) {
        // .npz holds numbers, not TDims.
        let value = value.into_tensor();
        if value.datum_type() == DatumType::TDim {
            bundle.push((label, value.cast_to::<i64>().unwrap().into_owned()));
        } else {
            bundle.push((label, value));
        }
    }
    bundle
}

fn write_bundle(path: &Path, bundle: &[(String, Tensor)]) {
    let mut npz = ndarray_npy::NpzWriter::new(std::fs::File::create(path).unwrap());
    for (name, t) in bundle {
        match t.datum_type() {
            DatumType::F32 => {
                npz.add_array(name.as_str(), &t.to_plain_array_view::<f32>().unwrap())
            }
            DatumType::I64 => {
                npz.add_array(name.as_str(), &t.to_plain_array_view::<i64>().unwrap())
            }
            DatumType::Bool => {
                npz.add_array(name.as_str(), &t.to_plain_array_view::<bool>().unwrap())
            }
            other => panic!("{name}: {other:?}"),
        }
        .unwrap();
    }
    npz.finish().unwrap();
}

#[test]
fn compare_intermediates_names_the_first_node_whose_output_differs() {
    let dir = temp_dir("intermediates");
    let mut bundle = gin_intermediates();
    // A tensor of onnxruntime's that tract folded away or never had.
    bundle.push(("/folded/Shape_output_0".into(), tensor1(&[2i64])));
    let same = dir.join("same.npz");
    write_bundle(&same, &bundle);
    // Inputs from the bundle: no --data-set needed.
    let run = tract_scatter(&["compare", &model(GIN), "--intermediates", s(&same)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let compared = bundle.len() - 5;
    assert!(
        run.stdout.contains(&format!(
            "intermediates (decluttered model): {compared} of {} tensor(s) of {} compared, {compared} match, 0 differ",
            bundle.len(),
            s(&same)
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("not found in tract's plan (1): /folded/Shape_output_0\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("first difference: none"),
        "{}",
        run.stdout
    );

    // Perturb two Relu outputs, a later one first: the earlier one in ONNX
    // graph order is named.
    for name in [
        "/layers.2/mlp/mlp.1/Relu_output_0",
        "/layers.1/mlp/mlp.1/Relu_output_0",
    ] {
        let (_, t) = bundle.iter_mut().find(|(n, _)| n == name).unwrap();
        let mut values = t.to_plain_array_view::<f32>().unwrap().to_owned();
        values[&[0, 3][..]] += 0.5;
        *t = values.into();
    }
    let perturbed = dir.join("perturbed.npz");
    write_bundle(&perturbed, &bundle);
    let run = tract_scatter(&[
        "compare",
        &model(GIN),
        "--intermediates",
        s(&perturbed),
        "--data-set",
        &data_set(GIN),
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    // The outputs themselves match (the perturbed tensors are the
    // reference's, not tract's).
    assert!(
        run.stdout.contains("2 of 2 output(s) match"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains(", 2 differ\n"), "{}", run.stdout);
    let first = run
        .stdout
        .lines()
        .find(|l| l.starts_with("first difference: "))
        .unwrap();
    assert!(
        first.starts_with(
            "first difference: node /layers.1/mlp/mlp.1/Relu (Relu, #66 of 152 in the ONNX graph), output /layers.1/mlp/mlp.1/Relu_output_0: value mismatch at [0, 3]"
        ),
        "{first}"
    );
    assert!(first.contains("worst at [0, 3]"), "{first}");
    // Loose tolerances accept it.
    let run = tract_scatter(&[
        "compare",
        &model(GIN),
        "--intermediates",
        s(&perturbed),
        "--atol",
        "1",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);

    insta::assert_snapshot!(
        "compare_intermediates_usage_errors",
        [
            usage_error(&["compare", &model(GIN), "--intermediates", "no/such.npz"]),
            usage_error(&["compare", &model(GIN)]),
        ]
        .join("\n")
    );
}

/// `test --shard K/N` to JSON, then `merge`: the report and the verdict of
/// one run over all the tests.
#[test]
fn shards_merge_into_the_report_of_a_single_run() {
    let dir = temp_dir("shards");
    let base = [
        "test",
        TORCH,
        "--filter",
        "scatter_add",
        "--expected-failures",
        EXPECTED,
        "--never-worse",
        "--quiet",
    ];
    let single = tract_scatter(&[&base[..], &["--format", "json"]].concat());
    assert_eq!(single.code, 0, "{}{}", single.stdout, single.stderr);
    let single_text = tract_scatter(&base);
    let mut shards = vec![];
    for k in 1..=2 {
        let out = dir.join(format!("shard-{k}.json"));
        let shard = format!("{k}/2");
        let run = tract_scatter(
            &[
                &base[..],
                &["--format", "json", "--shard", &shard, "--output", s(&out)],
            ]
            .concat(),
        );
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        shards.push(out);
    }
    // Both shards ran something, and nothing twice.
    let cases = |path: &Path| {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        v["cases"].as_array().unwrap().len()
    };
    let (one, two) = (cases(&shards[0]), cases(&shards[1]));
    assert!(one > 0 && two > 0 && one + two == 9, "{one} + {two}");

    // Merged in either order: the single run's report, as JSON and text.
    let merge = |format: &str, order: [usize; 2]| {
        let run = tract_scatter(&[
            "merge",
            s(&shards[order[0]]),
            s(&shards[order[1]]),
            "--expected-failures",
            EXPECTED,
            "--format",
            format,
        ]);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        run.stdout
    };
    assert_eq!(merge("json", [1, 0]), single.stdout);
    assert_eq!(merge("text", [0, 1]), single_text.stdout);
    // Without the expected failures, the TorchScript bugs fail the merge.
    let run = tract_scatter(&["merge", s(&shards[0]), s(&shards[1])]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("5 unexpected failure(s)"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("verdict: FAILED"), "{}", run.stdout);

    let not_json = dir.join("report.txt");
    std::fs::write(&not_json, &single_text.stdout).unwrap();
    let errors = [
        usage_error(&["merge", s(&shards[0])]),
        usage_error(&["merge", s(&shards[0]), s(&shards[0]), s(&shards[1])]),
        usage_error(&["merge", s(&not_json)]),
        usage_error(&["merge", "no/such.json"]),
        usage_error(&["merge"]),
        usage_error(&["test", TORCH, "--shard", "3/2"]),
        usage_error(&["test", TORCH, "--shard", "1"]),
    ];
    insta::assert_snapshot!(
        "shard_and_merge_usage_errors",
        errors.join("\n").replace(s(&dir), "$TMP")
    );
}

/// An `.npy` header with `shape` of float32 and `data` bytes after it.
fn npy_bytes(shape: &str, data: usize) -> Vec<u8> {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(vec![0u8; data]);
    bytes
}

/// Hostile tensor files: a header declaring more than the file holds, or
/// more than the size limit, is one line and exit 2 before anything is
/// allocated (a 100-byte `.npy` declaring 4e15 bytes used to abort).
#[test]
fn tensor_files_declaring_more_than_they_hold_are_refused_before_allocation() {
    let dir = temp_dir("hostile-tensors");
    let huge = dir.join("huge.npy");
    std::fs::write(&huge, npy_bytes("(100000, 100000, 100000)", 16)).unwrap();
    let short = dir.join("short.npy");
    std::fs::write(&short, npy_bytes("(4,)", 8)).unwrap();
    let npz = dir.join("lie.npz");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&npz).unwrap());
        zip.start_file("x.npy", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, &npy_bytes("(1000000, 1000000)", 16)).unwrap();
        zip.finish().unwrap();
    }
    let m = model(SCATTER_ADD);
    let errors = [
        usage_error(&["run", &m, s(&huge)]),
        usage_error(&[
            "run",
            &m,
            s(&huge),
            "--max-tensor-bytes",
            "100000000000000000",
        ]),
        usage_error(&["run", &m, s(&short)]),
        usage_error(&["run", &m, "--inputs", s(&npz)]),
    ];
    let errors = errors.join("\n").replace(s(&dir), "$TMP");
    insta::assert_snapshot!("hostile_tensor_files", errors);
}

/// A size no header declares but the machine cannot give (here random
/// inputs of `--set num_nodes=200000000` under a 1.5 GB address-space
/// limit): one line and exit 2, not an abort with a backtrace.
#[cfg(target_os = "linux")]
#[test]
fn an_allocation_the_machine_refuses_is_one_line_and_exit_2() {
    let script = format!(
        "ulimit -v 1500000 && exec {} run {} --set num_nodes=200000000 --set num_edges=24 --set num_graphs=4 --random",
        env!("CARGO_BIN_EXE_tract-scatter"),
        model(GIN)
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(root())
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("running sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "error: out of memory: an allocation of 8000000000 bytes failed"
    );
}

/// One `$ tract-scatter ...` example of docs/command-line.md: its
/// arguments and the output lines the document shows.
struct Documented {
    args: Vec<String>,
    shown: Vec<String>,
}

/// Every `$ tract-scatter` command of the document's `text` blocks, with
/// its continuation lines joined, and the lines shown after it.
fn documented_commands(doc: &str) -> Vec<Documented> {
    let mut found: Vec<Documented> = vec![];
    let mut in_block = false;
    let mut lines = doc.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            in_block = line == "```text";
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            let mut command = command.to_string();
            while command.ends_with('\\') {
                command.pop();
                command.push_str(lines.next().unwrap_or("").trim());
            }
            let words: Vec<String> = command.split_whitespace().map(String::from).collect();
            if words.first().map(String::as_str) == Some("tract-scatter") {
                found.push(Documented {
                    args: words[1..].to_vec(),
                    shown: vec![],
                });
            } else {
                found.push(Documented {
                    args: vec![],
                    shown: vec![],
                });
            }
        } else if let Some(last) = found.last_mut() {
            last.shown.push(line.to_string());
        }
    }
    found.retain(|d| !d.args.is_empty());
    found
}

/// The documented commands run, and print what the document shows: the
/// same kind of outcome (an error where it shows one) and, for every shown
/// line, a printed line with the same first word (numbers and timings
/// vary; `...` stands for lines left out; stdout and stderr interleave). Run from a directory
/// holding the repository's `onnx-testdata` and `crates`, where the files
/// the document's examples make (`huge.npy`, `unsupported.onnx`,
/// `my-models`) are made
/// first; a command reading a file made by Python (an intermediates
/// bundle) is skipped.
#[test]
fn documented_commands_print_what_the_docs_show() {
    let doc = std::fs::read_to_string(root().join("docs/command-line.md")).unwrap();
    let dir = temp_dir("docs");
    for linked in ["onnx-testdata", "crates"] {
        std::os::unix::fs::symlink(root().join(linked), dir.join(linked)).unwrap();
    }
    std::fs::write(
        dir.join("huge.npy"),
        npy_bytes("(100000, 100000, 100000)", 16),
    )
    .unwrap();
    model_with_unsupported_ops(&dir.join("unsupported.onnx"));
    suite_off_by_2e_3(&dir);
    let mut ran = 0;
    let mut skipped = vec![];
    for documented in documented_commands(&doc) {
        let args: Vec<&str> = documented.args.iter().map(String::as_str).collect();
        let missing = args
            .iter()
            .filter(|a| a.ends_with(".npz") || a.ends_with(".json"))
            .any(|a| !dir.join(a).exists() && !args.contains(&"--output"));
        if missing {
            skipped.push(args.join(" "));
            continue;
        }
        let out = Command::new(env!("CARGO_BIN_EXE_tract-scatter"))
            .args(&args)
            .current_dir(&*dir)
            .env_remove("RUST_BACKTRACE")
            .output()
            .unwrap();
        let printed = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let shown: Vec<&String> = documented
            .shown
            .iter()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("..."))
            .collect();
        let shows_error = shown.iter().any(|l| l.starts_with("error:"));
        assert_eq!(
            !out.status.success(),
            shows_error
                || printed.contains("MISMATCH")
                || printed.contains("differs")
                || printed.contains("verdict: FAILED"),
            "{args:?} exited {:?}, the document shows:\n{}\nit printed:\n{printed}",
            out.status.code(),
            documented.shown.join("\n")
        );
        let first_word = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
        let printed_words: Vec<String> = printed.lines().map(first_word).collect();
        for line in &shown {
            let want = first_word(line);
            assert!(
                printed_words.contains(&want),
                "{args:?}: the document shows a line starting {want:?} that it did not print:\n{printed}"
            );
        }
        ran += 1;
    }
    assert!(
        ran >= 12,
        "only {ran} documented commands ran (skipped: {skipped:?})"
    );
}

/// `Concat(a, b)` along axis 1 of inputs declared `[rows_a, 2]` and
/// `[rows_b, 2]`: the declared facts do not type (two symbols the concat
/// needs equal, as exporters sometimes name one batch twice), the data do.
fn concat_of_two_batch_symbols(dir: &Path) -> PathBuf {
    use prost::Message;
    use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
    use tract_onnx_scatter::tract_onnx::pb::*;
    let input = |name: &str, rows: &str| ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: tensor_proto::DataType::Float as i32,
                shape: Some(TensorShapeProto {
                    dim: vec![
                        Dimension {
                            value: Some(dimension::Value::DimParam(rows.into())),
                            ..Default::default()
                        },
                        Dimension {
                            value: Some(dimension::Value::DimValue(2)),
                            ..Default::default()
                        },
                    ],
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let proto = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 13,
        }],
        graph: Some(GraphProto {
            name: "concat".into(),
            node: vec![NodeProto {
                name: "concat".into(),
                op_type: "Concat".into(),
                input: vec!["a".into(), "b".into()],
                output: vec!["y".into()],
                attribute: vec![AttributeProto {
                    name: "axis".into(),
                    r#type: attribute_proto::AttributeType::Int as i32,
                    i: 1,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            input: vec![input("a", "rows_a"), input("b", "rows_b")],
            output: vec![ValueInfoProto {
                name: "y".into(),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let path = dir.join("concat.onnx");
    std::fs::write(&path, proto.encode_to_vec()).unwrap();
    path
}

#[test]
fn pinned_runs_a_model_whose_declared_facts_do_not_type() {
    let dir = temp_dir("pinned_rescue");
    let model = concat_of_two_batch_symbols(&dir);
    let a = dir.join("a.npy");
    let b = dir.join("b.npy");
    write_npy::<f32>(&a, &tensor2(&[[1f32, 2.], [3., 4.]]));
    write_npy::<f32>(&b, &tensor2(&[[5f32, 6.], [7., 8.]]));
    let declared = tract_scatter(&["run", s(&model), s(&a), s(&b)]);
    assert_eq!(declared.code, 2, "{}{}", declared.stdout, declared.stderr);
    assert!(declared.stderr.contains("typing"), "{}", declared.stderr);
    let out = dir.join("out.npz");
    let pinned = tract_scatter(&[
        "run",
        s(&model),
        s(&a),
        s(&b),
        "--pinned",
        "--output",
        s(&out),
    ]);
    assert_eq!(pinned.code, 0, "{}{}", pinned.stdout, pinned.stderr);
    assert_eq!(
        read_npz(&out, "y"),
        tensor2(&[[1f32, 2., 5., 6.], [3., 4., 7., 8.]])
    );
}

/// A complex64 `.npy` (numpy's `<c8`) of `shape`, holding `parts` (real,
/// imaginary, interleaved).
fn complex_npy_bytes(shape: &str, parts: &[f32]) -> Vec<u8> {
    let mut header = format!("{{'descr': '<c8', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    bytes.extend(parts.iter().flat_map(|p| p.to_le_bytes()));
    bytes
}

/// A complex model takes numpy's complex `.npy`, prints its complex values
/// as complex numbers, and `--output` writes them as numpy complex arrays.
#[test]
fn run_reads_complex_npy_and_prints_and_writes_complex_outputs() {
    let dir = temp_dir("complex-npy");
    let case = "onnx-testdata/types/complex/scatter_nd_18_add_c64_rank1_depth1_v0";
    let data = dir.join("data.npy");
    std::fs::write(
        &data,
        complex_npy_bytes("(3,)", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    )
    .unwrap();
    let set = format!("{case}/test_data_set_0");
    let model = format!("{case}/model.onnx");
    let (indices, updates) = (format!("{set}/input_1.pb"), format!("{set}/input_2.pb"));
    let run = tract_scatter(&["run", &model, s(&data), &indices, &updates]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("input  data: complex64 [3] [1+2i, 3+4i, 5+6i]"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("output output: complex64 [3] ["),
        "{}",
        run.stdout
    );
    let npz = dir.join("out.npz");
    let run = tract_scatter(&[
        "run",
        &model,
        s(&data),
        &indices,
        &updates,
        "--output",
        s(&npz),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&npz).unwrap()).unwrap();
    let mut header = vec![0u8; 128];
    std::io::Read::read_exact(&mut archive.by_name("output.npy").unwrap(), &mut header).unwrap();
    let header = String::from_utf8_lossy(&header);
    assert!(header.contains("'descr': '<c8'"), "{header}");
    assert!(header.contains("'shape': (3,)"), "{header}");
}

/// A bfloat16 model's values print with their ONNX type and the tract
/// type that holds them.
#[test]
fn run_prints_bfloat16_values_as_bfloat16() {
    let case = "onnx-testdata/types/bfloat16/scatter_elements_13_noreduction_bf16_rank1_axis-1_v1";
    let run = tract_scatter(&[
        "run",
        &format!("{case}/model.onnx"),
        "--data-set",
        &format!("{case}/test_data_set_0"),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("output output: bfloat16 (in F32) [1] [3.328125]"),
        "{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------
// Issue 51: gating with a tolerance, never guessing inputs, messages naming
// their file and stage, float16 files.

/// A `ValueInfoProto` of `elem_type` (ONNX `DataType`) and `dims`.
fn value_info(
    name: &str,
    elem_type: i32,
    dims: &[i64],
) -> tract_onnx_scatter::tract_onnx::pb::ValueInfoProto {
    use tract_onnx_scatter::tract_onnx::pb::*;
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type,
                shape: Some(TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|&d| tensor_shape_proto::Dimension {
                            value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
                            ..Default::default()
                        })
                        .collect(),
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A model of one node `op` (with an int attribute `axis` when given),
/// from `inputs` to `output`, at opset 17.
fn one_node_model(
    path: &Path,
    op: &str,
    axis: Option<i64>,
    inputs: &[(&str, i32, &[i64])],
    output: (&str, i32, &[i64]),
) {
    use prost::Message as _;
    use tract_onnx_scatter::tract_onnx::pb::*;
    let node = NodeProto {
        op_type: op.into(),
        name: op.to_lowercase(),
        input: inputs.iter().map(|i| i.0.to_string()).collect(),
        output: vec![output.0.into()],
        attribute: axis
            .map(|axis| AttributeProto {
                name: "axis".into(),
                r#type: attribute_proto::AttributeType::Int as i32,
                i: axis,
                ..Default::default()
            })
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let graph = GraphProto {
        name: "one_node".into(),
        node: vec![node],
        input: inputs
            .iter()
            .map(|(n, t, d)| value_info(n, *t, d))
            .collect(),
        output: vec![value_info(output.0, output.1, output.2)],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(graph),
        ..Default::default()
    };
    std::fs::write(path, model.encode_to_vec()).unwrap();
}

/// `output_0.pb` of scatter_add__ts16's data set 0 with every float
/// scaled by `factor`, as a TensorProto.
fn scaled_reference(factor: f32) -> Vec<u8> {
    use prost::Message as _;
    use tract_onnx_scatter::tract_onnx::pb::TensorProto;
    let path = root().join(data_set(SCATTER_ADD)).join("output_0.pb");
    let mut proto = TensorProto::decode(std::fs::read(path).unwrap().as_slice()).unwrap();
    if proto.raw_data.is_empty() {
        for v in &mut proto.float_data {
            *v *= factor;
        }
    } else {
        proto.raw_data = proto
            .raw_data
            .chunks_exact(4)
            .flat_map(|c| (f32::from_le_bytes([c[0], c[1], c[2], c[3]]) * factor).to_le_bytes())
            .collect();
    }
    proto.encode_to_vec()
}

/// `dir/my-models/scatter_add`: scatter_add__ts16 whose reference is off
/// by a relative 2e-3, past ONNX's rtol of 1e-3 (a model computed in
/// another order than its reference, as real models are).
fn suite_off_by_2e_3(dir: &Path) -> PathBuf {
    let suite = dir.join("my-models");
    let test = suite.join("scatter_add");
    let set = test.join("test_data_set_0");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::copy(root().join(model(SCATTER_ADD)), test.join("model.onnx")).unwrap();
    for i in 0..3 {
        let input = format!("input_{i}.pb");
        std::fs::copy(
            root().join(data_set(SCATTER_ADD)).join(&input),
            set.join(&input),
        )
        .unwrap();
    }
    std::fs::write(set.join("output_0.pb"), scaled_reference(1.002)).unwrap();
    suite
}

/// `test` gates with `--rtol`/`--atol`, and with `tolerance.toml` files: the
/// test's own, else the nearest above it in its suite, else the flags,
/// else ONNX's.
#[test]
fn test_gates_with_a_tolerance_from_the_command_line_or_a_tolerance_file() {
    let dir = temp_dir("tolerance");
    let suite = suite_off_by_2e_3(&dir);
    let test = |extra: &[&str]| {
        let mut args = vec!["test", s(&suite)];
        args.extend(extra);
        tract_scatter(&args)
    };
    // ONNX's tolerances: the difference fails the gate, and the failure
    // says by how much.
    let run = test(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("FAIL(compare)"), "{}", run.stdout);
    assert!(run.stdout.contains("value mismatch"), "{}", run.stdout);
    // A wider rtol from the command line passes it; an atol alone as wide
    // as the values does too, and one too narrow does not.
    let run = test(&["--rtol", "1e-2"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("verdict: OK"), "{}", run.stdout);
    assert_eq!(test(&["--atol", "1e-1"]).code, 0);
    assert_eq!(test(&["--atol", "1e-6"]).code, 1);
    // A suite's tolerance.toml applies to its tests without a flag...
    std::fs::write(suite.join("tolerance.toml"), "rtol = 1e-2\natol = 1e-7\n").unwrap();
    let run = test(&[]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // ... and over the flags: the file is the more specific.
    assert_eq!(test(&["--rtol", "1e-5"]).code, 0);
    // A test's own file wins over its suite's.
    let own = suite.join("scatter_add").join("tolerance.toml");
    std::fs::write(&own, "rtol = 1e-4\natol = 0\n").unwrap();
    assert_eq!(test(&[]).code, 1);
    // A malformed file fails its test, naming the file.
    std::fs::write(&own, "rtol = 1e-4\n").unwrap();
    let run = test(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("scatter_add/tolerance.toml")
            && run.stdout.contains("missing field `atol`"),
        "{}",
        run.stdout
    );
    std::fs::write(&own, "rtol = -1.0\natol = 0\n").unwrap();
    let run = test(&[]);
    assert!(
        run.stdout.contains("tolerances must be non-negative"),
        "{}",
        run.stdout
    );
    insta::assert_snapshot!(
        "test_tolerance_usage_errors",
        [
            usage_error(&["test", s(&suite), "--rtol=-1"]),
            usage_error(&["test", s(&suite), "--atol", "NaN"]),
            usage_error(&["test", s(&suite), "--atol", "tiny"]),
        ]
        .join("\n")
        .replace(s(&dir), "$TMP")
    );
}

/// `--data-set` on a directory holding no `input_0.pb` is an error naming
/// what it holds, and the data set inside when there is one (a node test's
/// directory, the natural mistake); `run` and `bench` alike. Missing
/// inputs are an error naming them, unless `--random` asks for random
/// ones.
#[test]
fn inputs_are_never_guessed_silently() {
    let dir = temp_dir("never-guess");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let [x, _, _, _] = scatter_add_fixtures(&dir);
    let m = model(SCATTER_ADD);
    let errors = [
        usage_error(&["run", &m, "--data-set", SCATTER_ADD]),
        usage_error(&["bench", &m, "--data-set", SCATTER_ADD]),
        usage_error(&["compare", &m, "--data-set", SCATTER_ADD]),
        usage_error(&["run", &m, "--data-set", s(&empty)]),
        usage_error(&["run", &m, s(&x)]),
        usage_error(&["run", &m]),
        usage_error(&["bench", &m]),
    ];
    insta::assert_snapshot!(
        "never_guess_inputs",
        errors.join("\n").replace(s(&dir), "$TMP")
    );
    // Asked for: random, and said so with the seed and every symbol.
    let run = tract_scatter(&["run", &m, s(&x), "--random"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stderr,
        "random inputs idx, src (--random, seed 0; symbols: none)\n"
    );
    let run = tract_scatter(&[
        "run",
        &model(GIN),
        "--set",
        "num_nodes=9",
        "--set",
        "num_graphs=4",
        "--seed",
        "4",
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stderr,
        "random inputs x, edge_index, batch, graph_attr (--random, seed 4; symbols: num_nodes=9, num_edges=1, num_graphs=4)\n"
    );
}

/// Random integers indexing an axis the model names (Gather's indices,
/// fed from an input) stay below its size: a data axis of 2, where the
/// default range 0..4 would run out of it.
#[test]
fn random_indices_stay_in_the_range_the_model_gives_them() {
    let dir = temp_dir("random-indices");
    let path = dir.join("gather.onnx");
    one_node_model(
        &path,
        "Gather",
        Some(0),
        &[("data", 1, &[2, 3]), ("indices", 7, &[64])],
        ("out", 1, &[64, 3]),
    );
    for seed in ["0", "1", "2"] {
        let run = tract_scatter(&["run", s(&path), "--seed", seed]);
        assert_eq!(run.code, 0, "seed {seed}: {}{}", run.stdout, run.stderr);
        let indices = run
            .stdout
            .lines()
            .find(|l| l.starts_with("input  indices: I64 [64] ["))
            .unwrap_or_else(|| panic!("{}", run.stdout));
        assert!(
            !indices.contains('2') && !indices.contains('3'),
            "{indices}"
        );
    }
}

/// Where the model does not say what a random integer indexes, a run that
/// fails on random inputs says they were (GIN indexes its node features
/// with a slice of `edge_index`: every symbol defaults to 1 and random
/// indices go up to 3), and tract's panic is one line, exit 1.
#[test]
fn a_run_failing_on_random_inputs_says_they_were_random() {
    let run = tract_scatter(&["run", &model(GIN), "--random"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(
        lines[0].starts_with("random inputs x, edge_index"),
        "{}",
        run.stderr
    );
    assert!(
        lines[1].starts_with(
            "error: on random inputs x, edge_index, batch, graph_attr (--random, seed 0; symbols: num_nodes=1, num_edges=1, num_graphs=1): random values may be out of what the model accepts (an index out of range): give real inputs: running "
        ) && lines[1].contains(": tract panicked: "),
        "{}",
        run.stderr
    );
    let run = tract_scatter(&["bench", &model(GIN), "--random", "--rounds", "1", "--quiet"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("error: on random inputs"),
        "{}",
        run.stderr
    );
}

/// Every message names its file and what was being done with it.
#[test]
fn messages_name_the_file_and_the_stage() {
    let dir = temp_dir("stages");
    let object = dir.join("object.npy");
    let mut bytes = npy_bytes("(2,)", 0);
    let at = bytes.windows(5).position(|w| w == b"'<f4'").unwrap();
    bytes[at..at + 5].copy_from_slice(b"'|O' ");
    bytes.extend(b"\x80\x04N.");
    std::fs::write(&object, bytes).unwrap();
    let npz = dir.join("object.npz");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&npz).unwrap());
        zip.start_file("x.npy", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, &std::fs::read(&object).unwrap()).unwrap();
        zip.finish().unwrap();
    }
    let m = model(SCATTER_ADD);
    let errors = [
        usage_error(&["run", "README.md"]),
        usage_error(&["run", SCATTER_ADD]),
        usage_error(&["run", "onnx-testdata"]),
        usage_error(&["dump", "README.md"]),
        usage_error(&["run", &m, s(&object)]),
        usage_error(&["run", &m, "--inputs", s(&npz)]),
    ];
    insta::assert_snapshot!("stage_errors", errors.join("\n").replace(s(&dir), "$TMP"));
}

/// `test` names the operators neither tract nor the plugin implements, as
/// `dump` does, where tract's own message names one and not what stops.
#[test]
fn test_names_unsupported_operators() {
    let dir = temp_dir("test-unsupported");
    let case = dir.join("suite").join("unsupported");
    let set = case.join("test_data_set_0");
    std::fs::create_dir_all(&set).unwrap();
    model_with_unsupported_ops(&case.join("model.onnx"));
    {
        use prost::Message as _;
        use tract_onnx_scatter::tract_onnx::pb::TensorProto;
        let x = TensorProto {
            dims: vec![2],
            data_type: 1,
            float_data: vec![1.0, 2.0],
            ..Default::default()
        };
        let c = TensorProto {
            dims: vec![2],
            data_type: 9,
            int32_data: vec![1, 0],
            ..Default::default()
        };
        std::fs::write(set.join("input_0.pb"), x.encode_to_vec()).unwrap();
        std::fs::write(set.join("input_1.pb"), c.encode_to_vec()).unwrap();
        std::fs::write(set.join("output_0.pb"), x.encode_to_vec()).unwrap();
    }
    let run = tract_scatter(&["test", s(&dir.join("suite")), "--stock", "--quiet"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let list = "uses 2 operator(s) neither tract nor the plugin implements: Foo (3 nodes: f1, f2, f3), Bar (1 node: b1); ";
    assert!(
        run.stdout.contains(&format!(
            "[plugin] suite unsupported: FAIL at typing: {list}"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "[stock] suite unsupported: FAIL at typing: uses 2 operator(s) stock tract does not implement: Foo (3 nodes: f1, f2, f3), Bar (1 node: b1); "
        ),
        "{}",
        run.stdout
    );
}

/// A closed stdout (`tract-scatter ... | head`) ends the process quietly:
/// by SIGPIPE, as other tools end, with nothing on stderr.
#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_quietly() {
    use std::os::unix::process::ExitStatusExt as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tract-scatter"))
        .args(["dump", &model(GIN)])
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Closed before the first line is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr, "", "{:?}", out.status);
    assert!(
        out.status.signal() == Some(libc_sigpipe()) || out.status.success(),
        "{:?}",
        out.status
    );
}

/// SIGPIPE's number on the platforms the tests run on.
#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}

/// A float16 `.npy` of `shape` holding `values`.
fn f16_npy_bytes(shape: &str, values: &[f32]) -> Vec<u8> {
    let mut bytes = npy_bytes(shape, 0);
    let at = bytes.windows(5).position(|w| w == b"'<f4'").unwrap();
    bytes[at..at + 5].copy_from_slice(b"'<f2'");
    bytes.extend(values.iter().flat_map(|&v| {
        tract_onnx_scatter::half::f16::from_f32(v)
            .to_bits()
            .to_le_bytes()
    }));
    bytes
}

/// float16 `.npy` and `.npz` arrays are read as f16 inputs, and f16
/// outputs written as numpy's float16.
#[test]
fn run_reads_and_writes_float16() {
    let dir = temp_dir("float16");
    let path = dir.join("relu.onnx");
    one_node_model(&path, "Relu", None, &[("x", 10, &[3])], ("y", 10, &[3]));
    let x = dir.join("x.npy");
    std::fs::write(&x, f16_npy_bytes("(3,)", &[-1.5, 0.25, 2.0])).unwrap();
    let out = dir.join("out.npz");
    let run = tract_scatter(&["run", s(&path), s(&x), "--output", s(&out)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("input  x: F16 [3] [-1.5, 0.25, 2]"),
        "{}",
        run.stdout
    );
    // Written as numpy writes float16: the same bytes as an .npy of the
    // output values.
    let mut archive = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
    let mut written = vec![];
    std::io::Read::read_to_end(&mut archive.by_name("y.npy").unwrap(), &mut written).unwrap();
    assert_eq!(written, f16_npy_bytes("(3,)", &[0.0, 0.25, 2.0]));
    let inputs = dir.join("inputs.npz");
    {
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&inputs).unwrap());
        zip.start_file("x.npy", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, &f16_npy_bytes("(3,)", &[4.0, -4.0, 0.5])).unwrap();
        zip.finish().unwrap();
    }
    let run = tract_scatter(&["run", s(&path), "--inputs", s(&inputs)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("output y: F16 [3] [4, 0, 0.5]"),
        "{}",
        run.stdout
    );
}

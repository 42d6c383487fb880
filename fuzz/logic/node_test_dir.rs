//! Node-test-directory target: a temporary directory built from the input
//! (`model.onnx`, `test_data_set_<k>/input_<i>.pb` and `output_<i>.pb`,
//! `expected_error.txt`, `tolerance.toml`, any of them missing, numbered
//! with gaps or twice, or a directory where a file belongs), read by
//! `onnx_golden::NodeTest::load` and, when it reads, run by
//! `onnx_golden::run::run_test` with the plugin's `onnx()` (declared or
//! pinned input facts). Neither may panic: a panic that escapes them
//! (reading the directory, decoding a tensor, comparing outputs) is a
//! crash. `run_test` catches a panic of the framework and reports it as
//! `Outcome::Panic` (the process lives on, as `tract-scatter test`'s
//! does); such a panic is a crash here too when it comes from the plugin's
//! own code (its message's location is in `crates/tract-onnx-scatter/` or
//! `crates/scatter-kernels/`) on a model whose every op `onnx()` registers.
//! Panics of tract's own code on such models are `model_bytes`' findings.
//!
//! The input is a list of entries `[code: u8][len: u32 LE][bytes]` (a
//! length past the end takes what is left); [`path_of`] says which file a
//! code writes. The first byte picks declared (even) or pinned (odd)
//! input facts.
//!
//! The body of the `node_test_dir` fuzz target ([`run`]), shared with the
//! replay test (`tests/fuzz_replay.rs`).

#[path = "model_case.rs"]
mod model_case;

use onnx_golden::outcome::{FrameworkOutcome, Outcome};
use onnx_golden::{NodeTest, Tract};
use prost::Message;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use tract_onnx_scatter::tract_onnx::pb::ModelProto;

/// Data sets and tensors per data set a code can name.
const SETS: usize = 4;
const TENSORS: usize = 8;
/// Codes below this name special files; from it, `test_data_set_<k>`
/// tensors (see [`path_of`]).
const FIRST_TENSOR: u8 = 8;

/// The file (or, ending in `/`, the directory) an entry code writes,
/// relative to the test directory.
pub fn path_of(code: u8) -> String {
    match code % (FIRST_TENSOR + (SETS * TENSORS * 2) as u8) {
        0 => "model.onnx".into(),
        1 => "expected_error.txt".into(),
        2 => "tolerance.toml".into(),
        3 => "test_data_set_0".into(), // a file where a directory belongs
        4 => "model.onnx/".into(),     // a directory where the model belongs
        5 => "test_data_set_00/input_0.pb".into(),
        6 => "test_data_set_0/input_01.pb".into(),
        7 => "test_data_set_1/input_x.pb".into(),
        c => {
            let c = (c - FIRST_TENSOR) as usize;
            let (set, rest) = (c / (TENSORS * 2), c % (TENSORS * 2));
            let kind = if rest % 2 == 0 { "input" } else { "output" };
            format!("test_data_set_{set}/{kind}_{}.pb", rest / 2)
        }
    }
}

/// The entry code writing `path` (for seeds), if any.
#[allow(dead_code)] // the replay test writes seeds with it
pub fn code_of(path: &str) -> Option<u8> {
    (0..FIRST_TENSOR + (SETS * TENSORS * 2) as u8).find(|&c| path_of(c) == path)
}

/// The input of the target for a test directory's files (relative path,
/// bytes), with `pinned` input facts (how seeds are written).
#[allow(dead_code)] // the replay test writes seeds with it
pub fn input(files: &[(String, Vec<u8>)], pinned: bool) -> Vec<u8> {
    let mut out = vec![pinned as u8];
    for (path, bytes) in files {
        if let Some(code) = code_of(path) {
            out.push(code);
            out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            out.extend_from_slice(bytes);
        }
    }
    out
}

fn entries(mut bytes: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = vec![];
    while let Some((&code, rest)) = bytes.split_first() {
        let mut len = [0u8; 4];
        let n = rest.len().min(4);
        len[..n].copy_from_slice(&rest[..n]);
        let rest = &rest[n..];
        let len = (u32::from_le_bytes(len) as usize).min(rest.len());
        out.push((code, &rest[..len]));
        bytes = &rest[len..];
    }
    out
}

/// A directory of its own for each call (replay tests run in parallel).
fn scratch_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("scatter-fuzz-node-{}-{n}", std::process::id()))
}

fn write(dir: &Path, path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let target = dir.join(path.trim_end_matches('/'));
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if path.ends_with('/') {
        std::fs::create_dir_all(&target)
    } else if target.is_dir() {
        Ok(())
    } else {
        std::fs::write(&target, bytes)
    }
}

/// Whether every op of the model file (and of its subgraphs) is one
/// `onnx()` registers.
fn in_scope(model: &Path) -> bool {
    let Ok(bytes) = std::fs::read(model) else {
        return false;
    };
    let Ok(proto) = ModelProto::decode(&bytes[..]) else {
        return false;
    };
    let Some(graph) = &proto.graph else {
        return false;
    };
    let mut ops = vec![];
    model_case::op_types(graph, &mut ops);
    ops.iter().all(|op| model_case::registered().contains(*op))
}

/// One input of the `node_test_dir` target: `NodeTest::load` and `run_test`
/// answer; a panic of the plugin's own code on a model in scope is a crash.
pub fn run(bytes: &[u8]) {
    if let Some((outcome, true)) = outcome(bytes) {
        for (mode, o) in [
            ("decluttered", &outcome.decluttered),
            ("optimized", &outcome.optimized),
        ] {
            if let Outcome::Panic { phase, message } = o
                && PLUGIN_SOURCES.iter().any(|s| message.contains(s))
            {
                panic!("{mode}: the plugin panicked at {phase}: {message}");
            }
        }
    }
}

/// Where the plugin's own code lives: a panic located there is its own.
const PLUGIN_SOURCES: [&str; 2] = ["crates/tract-onnx-scatter/", "crates/scatter-kernels/"];

/// What one input comes to: `None` when the directory does not read as a
/// node test, else `run_test`'s outcome and whether every op of the model
/// is one `onnx()` registers.
pub fn outcome(bytes: &[u8]) -> Option<(FrameworkOutcome, bool)> {
    let (&facts, rest) = bytes.split_first()?;
    let root = scratch_dir();
    let dir = root.join("case");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&dir).ok()?;
    let written = entries(rest)
        .into_iter()
        .all(|(code, bytes)| write(&dir, &path_of(code), bytes).is_ok());
    let outcome = if written {
        match NodeTest::load(&dir) {
            Ok(test) => {
                let _ = test.opset();
                let plugin = tract_onnx_scatter::onnx();
                let framework = if facts % 2 == 0 {
                    Tract::declared(&plugin)
                } else {
                    Tract::pinned(&plugin)
                };
                model_case::limit_loops();
                let outcome = onnx_golden::run::run_test(&test, &framework);
                Some((outcome, in_scope(&test.model_path())))
            }
            Err(_) => None,
        }
    } else {
        None
    };
    let _ = std::fs::remove_dir_all(&root);
    outcome
}

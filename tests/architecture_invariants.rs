//! The "Architecture invariant:" lines of ARCHITECTURE.md that a reading
//! of the sources or manifests can check, checked. (The import layers and
//! circles are `docs_drift.rs` and `import_graph.rs`; never-worse, hostile
//! inputs and overrides matching stock have their own files.)

use std::fs;
use std::path::{Path, PathBuf};

use crate::import_graph::code_of;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The file at `path`, relative to the repository's root.
fn read(path: &Path) -> String {
    fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.rs` file below `dir` (relative to the root), sorted.
fn rust_files(dir: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("a readable directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join(dir), &mut out);
    out.into_iter()
        .map(|p| {
            p.strip_prefix(root())
                .expect("below the root")
                .to_path_buf()
        })
        .collect()
}

/// The names of the crates a manifest's `[dependencies]` (and
/// target-specific dependencies) list; dev- and build-dependencies aside.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_dependencies = false;
    for line in read(Path::new(manifest)).lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]"
                || (line.starts_with("[target.") && line.ends_with(".dependencies]"));
            continue;
        }
        if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
            names.push(name.to_string());
        }
    }
    names
}

#[test]
fn the_kernels_depend_on_no_tract_crate() {
    let deps = dependencies("crates/scatter-kernels/Cargo.toml");
    assert!(!deps.is_empty(), "no [dependencies] read");
    let tract: Vec<_> = deps.iter().filter(|d| d.starts_with("tract")).collect();
    assert!(tract.is_empty(), "scatter-kernels depends on {tract:?}");
}

#[test]
fn onnx_golden_knows_neither_the_plugin_nor_the_kernels() {
    let deps = dependencies("crates/onnx-golden/Cargo.toml");
    assert!(
        deps.iter().any(|d| d == "tract-onnx"),
        "no [dependencies] read: {deps:?}"
    );
    for ours in ["tract-onnx-scatter", "scatter-kernels"] {
        assert!(
            !deps.iter().any(|d| d == ours),
            "onnx-golden depends on {ours}"
        );
    }
}

#[test]
fn the_plugin_depends_on_nothing_test_only() {
    let deps = dependencies("crates/tract-onnx-scatter/Cargo.toml");
    assert!(
        deps.iter().any(|d| d == "scatter-kernels"),
        "no [dependencies] read: {deps:?}"
    );
    for test_only in [
        "onnx-golden",
        "insta",
        "syn",
        "arbitrary",
        "integration-tests",
    ] {
        assert!(
            !deps.iter().any(|d| d == test_only),
            "the plugin depends on {test_only}"
        );
    }
}

#[test]
fn every_tract_crate_is_pinned_to_0_23_9() {
    let manifest = read(Path::new("Cargo.toml"));
    let tract: Vec<&str> = manifest
        .lines()
        .filter(|l| l.trim_start().starts_with("tract-") && !l.contains("path ="))
        .collect();
    assert!(
        tract.len() >= 5,
        "the workspace names {} tract crates",
        tract.len()
    );
    for line in tract {
        assert!(
            line.ends_with("\"=0.23.9\""),
            "not pinned to =0.23.9: {line}"
        );
    }
}

#[test]
fn the_kernels_start_no_thread() {
    for path in rust_files("crates/scatter-kernels/src") {
        let code = code_of(&read(&path));
        for spawn in [
            "thread::spawn",
            "thread::scope",
            "thread::Builder",
            "rayon::",
            "ThreadPool",
        ] {
            assert!(
                !code.contains(spawn),
                "{} starts threads: {spawn}",
                path.display()
            );
        }
    }
}

#[test]
fn only_the_speed_policy_builds_a_schedule() {
    let policy = Path::new("crates/tract-onnx-scatter/src/ops/run/speed_policy.rs");
    let mut seen_in_policy = false;
    for path in rust_files("crates/tract-onnx-scatter/src") {
        let code = code_of(&read(&path));
        let builds = code.contains("Schedule {") || code.contains("Schedule::");
        if path == policy {
            seen_in_policy = builds;
        } else {
            assert!(!builds, "{} builds a Schedule", path.display());
        }
    }
    assert!(
        seen_in_policy,
        "the walk did not see the speed policy's Schedule"
    );
}

/// Where an `unsafe` block of `source` has no comment that mentions
/// safety of its own: in the comment lines within `REACH` lines above it
/// and after the previous `unsafe` block (one proof per block, not one
/// for several).
fn unproved_unsafe_blocks(source: &str) -> Vec<usize> {
    const REACH: usize = 16;
    let lines: Vec<&str> = source.lines().collect();
    let is_comment = |l: &str| l.trim_start().starts_with("//");
    let opens_unsafe = |l: &str| {
        !is_comment(l)
            && l.match_indices("unsafe")
                .any(|(i, _)| l[i + 6..].trim_start().starts_with('{'))
    };
    let mut previous_block = 0;
    let mut unproved = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !opens_unsafe(line) {
            continue;
        }
        let from = i.saturating_sub(REACH).max(previous_block);
        let proved = lines[from..i]
            .iter()
            .any(|l| is_comment(l) && l.to_lowercase().contains("safety"));
        if !proved {
            unproved.push(i + 1);
        }
        previous_block = i + 1;
    }
    unproved
}

#[test]
fn every_unsafe_block_carries_its_own_proof() {
    let mut unproved = Vec::new();
    for dir in [
        "crates/scatter-kernels/src",
        "crates/tract-onnx-scatter/src",
        "crates/tract-scatter-cli/src",
        "crates/scatter-bench/src",
        "crates/onnx-golden/src",
    ] {
        for path in rust_files(dir) {
            for line in unproved_unsafe_blocks(&read(&path)) {
                unproved.push(format!("{}:{line}", path.display()));
            }
        }
    }
    assert!(
        unproved.is_empty(),
        "unsafe blocks without a SAFETY comment: {unproved:?}"
    );
}

#[test]
fn an_unsafe_block_that_shares_another_s_proof_is_found() {
    let shared = "// SAFETY: both in bounds.\nlet a = unsafe { x() };\nlet b = unsafe { y() };\n";
    assert_eq!(unproved_unsafe_blocks(shared), [3]);
    let own = "// SAFETY: in bounds.\nlet a = unsafe { x() };\n// SAFETY: too.\nunsafe {\n";
    assert!(unproved_unsafe_blocks(own).is_empty());
    assert_eq!(
        unproved_unsafe_blocks("fn f() {\n    unsafe { g() }\n}\n"),
        [2]
    );
}

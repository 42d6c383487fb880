//! ARCHITECTURE.md names every Rust source file of the repository, each in
//! the section of its crate (`### \`crates/scatter-kernels\``, ...), by its
//! path relative to the crate, `src/` optional where the section says
//! so: a file added without a line in the code map fails here.

use std::fs;
use std::path::{Path, PathBuf};

/// The sections of the code map and the directories whose `.rs` files
/// they must name.
const SECTIONS: &[&str] = &[
    "crates/scatter-kernels",
    "crates/tract-onnx-scatter",
    "crates/onnx-golden",
    "crates/tract-scatter-cli",
    "crates/scatter-bench",
    "xtask",
    "tests",
    "fuzz",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The text of the section headed `` ### `dir` ``, up to the next heading
/// of the same or a higher level.
fn section<'a>(doc: &'a str, dir: &str) -> &'a str {
    let heading = format!("### `{dir}`");
    let start = doc
        .find(&heading)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no section {heading}"));
    let body = &doc[start + heading.len()..];
    let end = ["\n### ", "\n## "]
        .iter()
        .filter_map(|h| body.find(h))
        .min()
        .unwrap_or(body.len());
    &body[..end]
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "target" | "corpus" | "artifacts" | "snapshots") {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_source_file_is_named_in_its_section_of_the_code_map() {
    let root = root();
    let doc = fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut missing = vec![];
    for dir in SECTIONS {
        let text = section(&doc, dir);
        let mut files = vec![];
        rust_files(&root.join(dir), &mut files);
        assert!(!files.is_empty(), "no .rs file under {dir}");
        for file in files {
            let relative = file
                .strip_prefix(root.join(dir))
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let short = relative.strip_prefix("src/").unwrap_or(&relative);
            let named = |name: &str| {
                text.contains(&format!("`{name}`")) || text.contains(&format!("`{name} "))
            };
            if !named(&relative) && !named(short) {
                missing.push(format!("{dir}/{relative}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "source files not named in ARCHITECTURE.md's code map (add a line in their crate's section):\n  {}",
        missing.join("\n  ")
    );
}

#[test]
fn the_code_map_holds_no_timings() {
    let doc = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    for unit in [" ms", " µs", " ns", " s)", " GB/s", "×"] {
        assert!(
            !doc.contains(unit),
            "ARCHITECTURE.md carries a measurement ({unit:?}): figures go to docs/performance.md"
        );
    }
}

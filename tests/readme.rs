//! README.md's example compiles and runs, and stays the one README shows:
//! README's first `rust` block is `crates/tract-onnx-scatter/examples/keras_gru.rs`,
//! included here whole (its `main` and the model bytes it ships).

use std::path::Path;

use crate::own_process::in_own_process;

include!("../crates/tract-onnx-scatter/examples/keras_gru.rs");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
}

const EXAMPLE: &str = "crates/tract-onnx-scatter/examples/keras_gru.rs";

#[test]
fn the_readme_example_runs_from_any_directory() {
    // The example reads nothing from the working directory: changed in a
    // process of its own, so the binary's other tests keep theirs.
    in_own_process("readme::the_readme_example_runs_from_any_directory", || {
        std::env::set_current_dir(std::env::temp_dir()).unwrap();
        main().unwrap();
    });
}

#[test]
fn the_readme_shows_the_example_whole() {
    let example = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block: Vec<&str> = readme
        .lines()
        .skip_while(|l| *l != "```rust")
        .skip(1)
        .take_while(|l| *l != "```")
        .collect();
    let example: Vec<&str> = example.lines().collect();
    assert_eq!(block, example, "README.md's example differs from {EXAMPLE}");
    assert!(example.iter().any(|l| l.starts_with("fn main()")));
    let first_rust = readme.lines().position(|l| l == "```rust").unwrap();
    assert!(
        first_rust < 80,
        "the example starts on line {}",
        first_rust + 1
    );
}

#[test]
fn the_example_ships_the_corpus_model() {
    let shipped =
        std::fs::read(root().join("crates/tract-onnx-scatter/examples/keras_gru.onnx")).unwrap();
    let corpus =
        std::fs::read(root().join("onnx-testdata/recurrent/tf2onnx/keras_gru__opset18/model.onnx"))
            .unwrap();
    assert!(
        shipped == corpus,
        "examples/keras_gru.onnx differs from the corpus's model"
    );
}

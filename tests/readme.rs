//! README.md's example compiles and runs, and stays the one README shows:
//! the lines between the markers below are README's first `rust` block.

use std::path::Path;
use tract_onnx_scatter::tract_onnx::prelude::*;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
}

fn readme_example() -> TractResult<()> {
    // README example: begin
    let model = tract_onnx_scatter::onnx()
        .model_for_path("onnx-testdata/recurrent/tf2onnx/keras_gru__opset18/model.onnx")?
        .into_optimized()?
        .into_runnable()?;
    let x = Tensor::zero::<f32>(&[2, 10, 4])?;
    let outputs = model.run(tvec!(x.into_tvalue()))?;
    let y = outputs[0].to_plain_array_view::<f32>()?;
    assert_eq!(y.shape(), &[2, 10, 6]);
    // README example: end
    Ok(())
}

#[test]
fn the_readme_example_runs() {
    std::env::set_current_dir(root()).unwrap();
    readme_example().unwrap();
}

#[test]
fn the_readme_shows_this_file_s_example() {
    let source = std::fs::read_to_string(root().join("tests/readme.rs")).unwrap();
    let body: Vec<&str> = source
        .lines()
        .skip_while(|l| !l.contains("// README example: begin"))
        .skip(1)
        .take_while(|l| !l.contains("// README example: end"))
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block: Vec<&str> = readme
        .lines()
        .skip_while(|l| *l != "```rust")
        .skip(1)
        .take_while(|l| *l != "```")
        .filter(|l| !l.starts_with("use ") && !l.is_empty())
        .collect();
    assert_eq!(
        block, body,
        "README.md's example differs from tests/readme.rs"
    );
    let first_rust = readme.lines().position(|l| l == "```rust").unwrap();
    assert!(
        first_rust < 80,
        "the example starts on line {}",
        first_rust + 1
    );
}

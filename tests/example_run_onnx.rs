//! The `run_onnx` example of tract-onnx-scatter (the program users copy),
//! compiled into this test and run on the committed GTCRN model: given
//! inputs, random inputs, `--set` of a symbol, and NNEF output.

#[path = "../crates/tract-onnx-scatter/examples/run_onnx.rs"]
#[allow(dead_code)]
mod run_onnx;

#[path = "support/graph.rs"]
mod graph;

use graph::{D, Graph, attr_int};
use onnx_golden::layout::root_above;
use onnx_golden::tensor_proto::decode_tensor_bytes;
use prost::Message;
use run_onnx::{Args, run};
use std::path::PathBuf;
use tract_onnx_scatter::tract_core::internal::Approximation;
use tract_onnx_scatter::tract_onnx::prelude::*;

fn gtcrn() -> PathBuf {
    root_above(env!("CARGO_MANIFEST_DIR")).join("onnx-testdata/real-models/gtcrn")
}

fn args(list: &[&str]) -> Args {
    let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    Args::parse(&list).unwrap()
}

#[test]
fn runs_gtcrn_on_given_inputs_and_writes_nnef() {
    let dir = gtcrn();
    let set = dir.join("test_data_set_0");
    let pb = |f: &str| set.join(f).display().to_string();
    let nnef = std::env::temp_dir().join(format!("run_onnx_gtcrn_{}.tar", std::process::id()));
    let (model, i0) = (
        dir.join("model.onnx").display().to_string(),
        pb("input_0.pb"),
    );
    let (i1, i2, i3) = (pb("input_1.pb"), pb("input_2.pb"), pb("input_3.pb"));
    let nnef_arg = nnef.display().to_string();
    let a = args(&[
        &model,
        "--input",
        &format!("mix={i0}"),
        "--input",
        &i1,
        "--input",
        &i2,
        "--input",
        &format!("inter_cache={i3}"),
        "--nnef",
        &nnef_arg,
    ]);
    let mut printed = Vec::new();
    let summary = run(&a, &mut printed).unwrap();
    let printed = String::from_utf8(printed).unwrap();
    assert!(printed.contains("input  mix: 1,257,1,2,F32"), "{printed}");
    assert!(printed.contains("output enh"), "{printed}");
    assert_eq!(summary.scatter_nodes, 0);
    let expected = decode_tensor_bytes(&std::fs::read(set.join("output_0.pb")).unwrap()).unwrap();
    let got = summary.outputs[0].cast_to::<f32>().unwrap().into_owned();
    assert!(
        got.close_enough(&expected, Approximation::Approximate)
            .is_ok()
    );
    assert!(std::fs::metadata(&nnef).unwrap().len() > 100_000);
    // The NNEF archive loads back with the plugin's registry and runs.
    let reloaded = tract_onnx_scatter::nnef()
        .model_for_path(&nnef)
        .unwrap()
        .into_optimized()
        .unwrap()
        .into_runnable()
        .unwrap();
    let again = reloaded.run(summary.inputs.clone()).unwrap();
    assert_eq!(again[0].shape(), &[1, 257, 1, 2]);
    std::fs::remove_file(&nnef).ok();
}

#[test]
fn random_inputs_are_seeded() {
    let model = gtcrn().join("model.onnx").display().to_string();
    let run_seed = |seed: &str| run(&args(&[&model, "--seed", seed]), &mut Vec::new()).unwrap();
    let (a, b, c) = (run_seed("1"), run_seed("1"), run_seed("2"));
    assert_eq!(a.inputs[0], b.inputs[0]);
    assert_eq!(a.outputs[0], b.outputs[0]);
    assert_ne!(a.inputs[0], c.inputs[0]);
}

#[test]
fn set_gives_symbols_values() {
    // data [N, 4], ScatterElements along axis 1 with indices from an input.
    let graph = Graph::new(18)
        .input("data", DatumType::F32, &[D::S("N"), D::N(4)])
        .input("indices", DatumType::I64, &[D::S("N"), D::N(2)])
        .input("updates", DatumType::F32, &[D::S("N"), D::N(2)])
        .node(
            "ScatterElements",
            &["data", "indices", "updates"],
            &["out"],
            vec![attr_int("axis", 1)],
        )
        .output("out", DatumType::F32);
    let path = std::env::temp_dir().join(format!("run_onnx_sym_{}.onnx", std::process::id()));
    std::fs::write(&path, graph.proto().encode_to_vec()).unwrap();
    let p = path.display().to_string();
    let mut printed = Vec::new();
    let symbolic = run(&args(&[&p]), &mut printed).unwrap();
    let printed = String::from_utf8(printed).unwrap();
    assert!(printed.contains("input  data: N,4,F32"), "{printed}");
    assert_eq!(symbolic.outputs[0].shape(), &[1, 4]);
    assert_eq!(symbolic.scatter_nodes, 1);
    let mut printed = Vec::new();
    let set = run(&args(&[&p, "--set", "N=3"]), &mut printed).unwrap();
    let printed = String::from_utf8(printed).unwrap();
    assert!(printed.contains("input  data: 3,4,F32"), "{printed}");
    assert_eq!(set.outputs[0].shape(), &[3, 4]);
    std::fs::remove_file(&path).ok();
    assert!(Args::parse(&["m.onnx".into(), "--set".into(), "N".into()]).is_err());
}

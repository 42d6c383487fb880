//! ModelProto-bytes target: arbitrary bytes decoded as an ONNX model and,
//! when they decode to a graph whose every node (subgraphs included) has
//! an op type `tract_onnx_scatter::onnx()` registers — tract's own ops, the
//! scatter family, the gradient ops and the tract overrides — loaded
//! through `onnx()`, typed, decluttered, optimized and made runnable. The
//! seed corpus is real models: one-node scatter models (from
//! `onnx-testdata/extended`) and small exporter and recurrent models
//! (`onnx-testdata/exporters`, `onnx-testdata/recurrent`), so mutations stay
//! close to what the builders read: attributes, opsets, domains, input
//! lists, value infos, initializers and `Loop`/`If` bodies. Must answer `Ok`
//! or `Err`, never panic.
//!
//! The body of the `model_bytes` fuzz target ([`run`]), shared with the
//! replay test (`tests/fuzz_replay.rs`).

#[path = "model_case.rs"]
mod model_case;

use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::ModelProto;
use tract_onnx_scatter::tract_onnx::prelude::*;

/// One input of the `model_bytes` target: `Ok` or `Err`, never a panic.
pub fn run(bytes: &[u8]) {
    let Ok(proto) = ModelProto::decode(bytes) else {
        return;
    };
    let Some(graph) = &proto.graph else {
        return;
    };
    let mut ops = vec![];
    model_case::op_types(graph, &mut ops);
    if ops.is_empty() || !ops.iter().all(|op| model_case::registered().contains(*op)) {
        return;
    }
    // No skip for tract's own loader panics (an output nobody produces,
    // a zero-volume initializer of huge dims, raw string data, element
    // types tract lacks): the plugin's loader refuses them first
    // (`tract_onnx_scatter::load::validate`).
    model_case::limit_loops();
    let Ok(model) = tract_onnx_scatter::onnx().model_for_proto_model(&proto) else {
        return;
    };
    let Ok(typed) = model.into_typed() else {
        return;
    };
    let _ = typed
        .into_decluttered()
        .and_then(|m| m.into_optimized())
        .and_then(|m| m.into_runnable());
}

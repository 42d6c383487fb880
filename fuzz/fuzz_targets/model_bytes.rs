//! ModelProto-bytes target: arbitrary bytes decoded as an ONNX model and,
//! when they decode to a graph made only of scatter nodes (the plugin's
//! builders; any other op would fuzz stock tract instead), loaded through
//! `tract_onnx_scatter::onnx()`, typed, optimized and made runnable. The
//! seed corpus is real one-node scatter models (from
//! `onnx-testdata/extended`), so mutations stay close to the builders'
//! input: attributes, opsets, domains, input lists, value infos and
//! initializers. Must answer `Ok` or `Err`, never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::ModelProto;
use tract_onnx_scatter::tract_onnx::prelude::*;

const OPS: &[&str] = &[
    "Scatter",
    "ScatterElements",
    "ScatterND",
    "TensorScatter",
    "ScatterElementsUpdate",
];

fuzz_target!(|bytes: &[u8]| {
    let Ok(proto) = ModelProto::decode(bytes) else {
        return;
    };
    let Some(graph) = &proto.graph else {
        return;
    };
    if graph.node.is_empty() || !graph.node.iter().all(|n| OPS.contains(&&*n.op_type)) {
        return;
    }
    // No skip for tract's own loader panics (an output nobody produces,
    // a zero-volume initializer of huge dims, raw string data, element
    // types tract lacks): the plugin's loader refuses them first
    // (`tract_onnx_scatter::load::validate`).
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
});

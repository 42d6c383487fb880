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
    // tract 0.23.9's graph parser indexes its name map with every graph
    // output name (tract-onnx `model.rs`, `outlets_by_name[..]`): an output
    // nobody produces panics there, for any op. Out of the plugin's reach.
    let known = |name: &str| {
        graph.input.iter().any(|i| i.name == name)
            || graph.initializer.iter().any(|t| t.name == name)
            || graph
                .node
                .iter()
                .any(|n| n.output.iter().any(|o| o == name))
    };
    if !graph.output.iter().all(|o| known(&o.name)) {
        return;
    }
    // tract 0.23.9 loads an initializer given as typed data (int64_data,
    // float_data, ...) through ndarray, then `Tensor::from(Array)` unwraps
    // tract's own size check, which overflows on a zero-volume shape whose
    // other dims (times the element size) multiply past isize before the zero is reached ("tensor
    // shape [..] is too large" panic in tract-data `tensor.rs`). Skipped:
    // it happens in tract's loader, for any op.
    if graph.initializer.iter().any(|t| {
        t.dims.contains(&0)
            && t.dims
                .iter()
                .try_fold(16i64, |acc, &d| acc.checked_mul(d.max(1)))
                .is_none()
    }) {
        return;
    }
    // Keep to what the plugin owns: tract's own loader panics on a few
    // TensorProto encodings (raw string data, struct types) before any
    // scatter builder runs.
    if graph.initializer.iter().any(|t| {
        !t.raw_data.is_empty() && t.data_type == 8
            || ![1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13].contains(&t.data_type)
    }) {
        return;
    }
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

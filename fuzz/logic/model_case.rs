//! What the model targets share: a framed input (a `ModelProto` and the
//! `TensorProto`s fed to it, as a node test's `model.onnx` and
//! `input_<i>.pb` hold them), mutations of a decoded model and its feeds
//! driven by the bytes after the frame, the op types of a graph and its
//! subgraphs, the op types `onnx()` registers, and one run through the
//! plugin (`grad_ops` and `overrides` go through [`outcome`]). Included with `#[path]` by each target's logic
//! module (and so by `tests/fuzz_replay.rs`).
//!
//! The frame: `[n: u8][len: u32 LE][model][len][tensor 0]…[len][tensor n-1]`,
//! then the mutation bytes. A length past the end takes what is left, so a
//! mutated frame still decodes to something.

#![allow(dead_code)]

use arbitrary::{Result, Unstructured};
use prost::Message;
use std::collections::HashSet;
use std::sync::OnceLock;
use std::sync::atomic::Ordering;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, type_proto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;
use tract_onnx_scatter::tract_overrides::onnx_loop::{LOOP_ITERATION_LIMIT, LOOP_MEMORY_BUDGET};

/// The iteration limit every model target runs `Loop`s under: a runaway
/// loop is an error, not a timeout.
pub const FUZZ_LOOP_ITERATIONS: usize = 10_000;
/// The memory budget of every `Loop` in the model targets (256 MiB, under
/// libFuzzer's `-malloc_limit_mb=1024`).
pub const FUZZ_LOOP_BUDGET: usize = 256 << 20;

/// Lowers the plugin's process-wide `Loop` limits to the fuzz ones.
pub fn limit_loops() {
    LOOP_ITERATION_LIMIT.store(FUZZ_LOOP_ITERATIONS, Ordering::Relaxed);
    LOOP_MEMORY_BUDGET.store(FUZZ_LOOP_BUDGET, Ordering::Relaxed);
}

/// A framed input, split.
pub struct Framed<'a> {
    /// The `ModelProto` bytes.
    pub model: &'a [u8],
    /// The `TensorProto` bytes of each fed tensor, in graph-input order.
    pub tensors: Vec<&'a [u8]>,
    /// What follows the frame: the mutations' bytes.
    pub rest: &'a [u8],
}

fn chunk<'a>(bytes: &mut &'a [u8]) -> &'a [u8] {
    let mut len = [0u8; 4];
    let n = bytes.len().min(4);
    len[..n].copy_from_slice(&bytes[..n]);
    *bytes = &bytes[n..];
    let len = (u32::from_le_bytes(len) as usize).min(bytes.len());
    let (head, tail) = bytes.split_at(len);
    *bytes = tail;
    head
}

/// Splits a framed input (never fails: missing parts are empty).
pub fn split(bytes: &[u8]) -> Framed<'_> {
    let (count, mut bytes) = match bytes.split_first() {
        Some((n, rest)) => (*n as usize, rest),
        None => (0, bytes),
    };
    let model = chunk(&mut bytes);
    let tensors = (0..count.min(16)).map(|_| chunk(&mut bytes)).collect();
    Framed {
        model,
        tensors,
        rest: bytes,
    }
}

/// The frame of a model and its fed tensors (how seeds are written).
pub fn frame(model: &[u8], tensors: &[Vec<u8>], rest: &[u8]) -> Vec<u8> {
    let mut out = vec![tensors.len() as u8];
    for part in std::iter::once(model).chain(tensors.iter().map(|t| &t[..])) {
        out.extend_from_slice(&(part.len() as u32).to_le_bytes());
        out.extend_from_slice(part);
    }
    out.extend_from_slice(rest);
    out
}

/// The decoded frame: the model, and the fed tensors decoded by
/// onnx-golden's TensorProto reader (`None` when one does not decode).
pub fn decode(framed: &Framed) -> Option<(ModelProto, Vec<Tensor>)> {
    let model = ModelProto::decode(framed.model).ok()?;
    let feeds = framed
        .tensors
        .iter()
        .map(|t| onnx_golden::tensor_proto::decode_tensor_bytes(t).ok())
        .collect::<Option<Vec<_>>>()?;
    Some((model, feeds))
}

/// The graphs held by a node's attributes (`Loop` and `Scan` bodies, `If`
/// branches).
pub fn subgraphs(node: &NodeProto) -> impl Iterator<Item = &GraphProto> {
    node.attribute
        .iter()
        .flat_map(|a| a.g.iter().chain(a.graphs.iter()))
}

/// Every op type of `graph` and of its subgraphs, at any depth.
pub fn op_types<'g>(graph: &'g GraphProto, out: &mut Vec<&'g str>) {
    for node in &graph.node {
        out.push(&node.op_type);
        for g in subgraphs(node) {
            op_types(g, out);
        }
    }
}

fn count_nodes(graph: &GraphProto) -> usize {
    graph
        .node
        .iter()
        .map(|n| 1 + subgraphs(n).map(count_nodes).sum::<usize>())
        .sum()
}

/// Where the `ix`-th node of `graph` and its subgraphs (pre-order) is: node
/// index, then (attribute, graph, node) steps into subgraphs.
fn nth_node_path(graph: &GraphProto, ix: &mut usize, path: &mut Vec<usize>) -> bool {
    for (n, node) in graph.node.iter().enumerate() {
        path.push(n);
        if *ix == 0 {
            return true;
        }
        *ix -= 1;
        for (a, attr) in node.attribute.iter().enumerate() {
            for (g, sub) in attr.g.iter().chain(attr.graphs.iter()).enumerate() {
                path.push(a);
                path.push(g);
                if nth_node_path(sub, ix, path) {
                    return true;
                }
                path.truncate(path.len() - 2);
            }
        }
        path.pop();
    }
    false
}

/// A node of the model, chosen by `u`, any depth.
fn some_node<'m>(
    u: &mut Unstructured,
    graph: &'m mut GraphProto,
) -> Result<Option<&'m mut NodeProto>> {
    let n = count_nodes(graph);
    if n == 0 {
        return Ok(None);
    }
    let mut ix = u.choose_index(n)?;
    let mut path = vec![];
    if !nth_node_path(graph, &mut ix, &mut path) {
        return Ok(None);
    }
    let mut graph = graph;
    let mut steps = path.chunks(3);
    loop {
        let step = steps.next().expect("a path ends on a node");
        let node = &mut graph.node[step[0]];
        if step.len() == 1 {
            return Ok(Some(node));
        }
        let attr = &mut node.attribute[step[1]];
        let skip = usize::from(attr.g.is_some());
        graph = match attr.g.as_mut() {
            Some(g) if step[2] == 0 => g,
            _ => &mut attr.graphs[step[2] - skip],
        };
    }
}

/// A small integer, an index-like value or an extreme.
fn int(u: &mut Unstructured) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=20)? {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => i32::MIN as i64,
        3 => i32::MAX as i64,
        4 => u.arbitrary()?,
        5 => 1 << 20,
        n => n as i64 - 12,
    })
}

fn float(u: &mut Unstructured) -> Result<f32> {
    Ok(match u.int_in_range(0u8..=10)? {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        3 => -0.0,
        4 => f32::MAX,
        5 => u.arbitrary()?,
        n => n as f32 * 0.75 - 4.0,
    })
}

/// Replaces the values of `t` (same type and shape) with index-like values
/// and extremes, or gives it another shape.
fn mutate_tensor(u: &mut Unstructured, t: &Tensor) -> Result<Tensor> {
    let dt = t.datum_type();
    let shape: Vec<usize> = if u.ratio(1u8, 4)? {
        let rank = u.int_in_range(0..=4)?;
        (0..rank)
            .map(|_| u.int_in_range(0usize..=4))
            .collect::<Result<_>>()?
    } else {
        t.shape().to_vec()
    };
    let len: usize = shape.iter().product();
    let values: Vec<i64> = (0..len).map(|_| int(u)).collect::<Result<_>>()?;
    let as_i64 = Tensor::from_shape(&shape, &values).unwrap_or_else(|_| tensor0(0i64));
    if dt.is_float() {
        let floats: Vec<f32> = (0..len).map(|_| float(u)).collect::<Result<_>>()?;
        let t = Tensor::from_shape(&shape, &floats).unwrap_or_else(|_| tensor0(0f32));
        return Ok(t.cast_to_dt(dt).map(|c| c.into_owned()).unwrap_or(t));
    }
    Ok(as_i64
        .cast_to_dt(dt)
        .map(|c| c.into_owned())
        .unwrap_or(as_i64))
}

/// Applies up to eight mutations chosen by `u` to a decoded model and its
/// feeds: attribute values (of the names in `attributes` or the node's
/// own), removed attributes, opset versions, a fed tensor's values or
/// shape, a declared dim, a node input or output dropped or renamed.
pub fn mutate(
    u: &mut Unstructured,
    model: &mut ModelProto,
    feeds: &mut [Tensor],
    attributes: &[&str],
    strings: &[&str],
) -> Result<()> {
    for _ in 0..8 {
        if u.is_empty() {
            break;
        }
        let Some(graph) = model.graph.as_mut() else {
            return Ok(());
        };
        match u.int_in_range(0u8..=9)? {
            // An attribute set (replacing one of the same name).
            0..=2 => {
                let Some(node) = some_node(u, graph)? else {
                    continue;
                };
                let own: Vec<String> = node.attribute.iter().map(|a| a.name.clone()).collect();
                let name = if !own.is_empty() && u.arbitrary()? {
                    u.choose(&own)?.clone()
                } else if attributes.is_empty() {
                    continue;
                } else {
                    u.choose(attributes)?.to_string()
                };
                let mut a = AttributeProto {
                    name: name.clone(),
                    ..Default::default()
                };
                match u.int_in_range(0u8..=5)? {
                    0 | 1 => {
                        a.r#type = AttributeType::Int as i32;
                        a.i = int(u)?;
                    }
                    2 => {
                        a.r#type = AttributeType::Float as i32;
                        a.f = float(u)?;
                    }
                    3 if !strings.is_empty() => {
                        a.r#type = AttributeType::String as i32;
                        a.s = u.choose(strings)?.as_bytes().to_vec();
                    }
                    _ => {
                        a.r#type = AttributeType::Ints as i32;
                        let n = u.int_in_range(0..=4)?;
                        a.ints = (0..n).map(|_| int(u)).collect::<Result<_>>()?;
                    }
                }
                node.attribute.retain(|b| b.name != name);
                node.attribute.push(a);
            }
            3 => {
                if let Some(node) = some_node(u, graph)?
                    && !node.attribute.is_empty()
                {
                    let ix = u.choose_index(node.attribute.len())?;
                    // A graph attribute stays: dropping a body is one
                    // well-tested refusal, not worth many executions.
                    if node.attribute[ix].g.is_none() {
                        node.attribute.remove(ix);
                    }
                }
            }
            4 => {
                if !model.opset_import.is_empty() {
                    let ix = u.choose_index(model.opset_import.len())?;
                    model.opset_import[ix].version = match u.int_in_range(0u8..=3)? {
                        0 => int(u)?,
                        _ => u.int_in_range(1..=25)?,
                    };
                }
            }
            5 | 6 => {
                if !feeds.is_empty() {
                    let ix = u.choose_index(feeds.len())?;
                    feeds[ix] = mutate_tensor(u, &feeds[ix])?;
                }
            }
            7 => {
                if !graph.input.is_empty() {
                    let ix = u.choose_index(graph.input.len())?;
                    if let Some(type_proto::Value::TensorType(t)) = graph.input[ix]
                        .r#type
                        .as_mut()
                        .and_then(|t| t.value.as_mut())
                    {
                        match t.shape.as_mut() {
                            Some(shape) if !shape.dim.is_empty() && u.arbitrary()? => {
                                let d = u.choose_index(shape.dim.len())?;
                                shape.dim[d] = Dimension {
                                    value: Some(if u.arbitrary()? {
                                        dimension::Value::DimValue(int(u)?)
                                    } else {
                                        dimension::Value::DimParam(
                                            u.choose(&["N", "M", "", "1"])?.to_string(),
                                        )
                                    }),
                                    ..Default::default()
                                };
                            }
                            _ => t.shape = None,
                        }
                    }
                }
            }
            8 => {
                if let Some(node) = some_node(u, graph)?
                    && !node.input.is_empty()
                {
                    let ix = u.choose_index(node.input.len())?;
                    if u.arbitrary()? {
                        node.input[ix] = String::new();
                    } else {
                        node.input.remove(ix);
                    }
                }
            }
            _ => {
                if let Some(node) = some_node(u, graph)?
                    && !node.output.is_empty()
                {
                    let ix = u.choose_index(node.output.len())?;
                    if u.arbitrary()? {
                        node.output[ix] = String::new();
                    } else {
                        node.output.push(format!("extra{ix}"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The largest tensor, in bytes, a fuzzed model may be run with: a mutated
/// model that legitimately computes more (an `Expand` to a mutated shape of
/// millions of rows, say) needs more time and memory than libFuzzer's
/// limits give one input, and is loaded and optimized but not run.
pub const FUZZ_RUN_TENSOR_BYTES: usize = 64 << 20;

/// Whether some value of `model` is known, from its facts, to be larger
/// than [`FUZZ_RUN_TENSOR_BYTES`].
pub fn computes_past_the_run_budget(model: &TypedModel) -> bool {
    model.nodes().iter().any(|node| {
        node.outputs.iter().any(|output| {
            let fact = &output.fact;
            fact.shape.as_concrete().is_some_and(|dims| {
                dims.iter()
                    .try_fold(fact.datum_type.size_of(), |acc, d| acc.checked_mul(*d))
                    .is_none_or(|bytes| bytes > FUZZ_RUN_TENSOR_BYTES)
            })
        })
    })
}

/// Loads `model` through the plugin's `onnx()`, optimizes it (or types and
/// declutters it), makes it runnable and runs it on `feeds` (unless it
/// [`computes_past_the_run_budget`]).
pub fn run_model(model: &ModelProto, feeds: Vec<Tensor>, optimize: bool) -> TractResult<()> {
    let model = tract_onnx_scatter::onnx().model_for_proto_model(model)?;
    let typed = if optimize {
        model.into_optimized()?
    } else {
        model.into_typed()?.into_decluttered()?
    };
    if computes_past_the_run_budget(&typed) {
        return Ok(());
    }
    let plan = typed.into_runnable()?;
    plan.run(feeds.into_iter().map(|t| t.into_tvalue()).collect())?;
    Ok(())
}

/// The op types `onnx()` registers (tract's and the plugin's).
pub fn registered() -> &'static HashSet<String> {
    static OPS: OnceLock<HashSet<String>> = OnceLock::new();
    OPS.get_or_init(|| {
        tract_onnx_scatter::onnx()
            .op_register()
            .0
            .keys()
            .cloned()
            .collect()
    })
}

/// A model, the tensors fed to it, and whether it is optimized (else typed
/// and decluttered) before it runs.
pub struct Case {
    pub proto: ModelProto,
    pub feeds: Vec<Tensor>,
    pub optimize: bool,
}

/// A framed real case, kept when `in_scope` holds for its model, mutated
/// by the bytes after the frame (attribute values of the names in
/// `attributes`, strings from `strings`).
pub fn framed_case(
    bytes: &[u8],
    in_scope: impl FnOnce(&ModelProto) -> bool,
    attributes: &[&str],
    strings: &[&str],
) -> Option<Case> {
    let framed = split(bytes);
    let (mut proto, mut feeds) = decode(&framed)?;
    if !in_scope(&proto) {
        return None;
    }
    let mut u = Unstructured::new(framed.rest);
    let optimize = !u.ratio(1u8, 4).unwrap_or(false);
    let _ = mutate(&mut u, &mut proto, &mut feeds, attributes, strings);
    Some(Case {
        proto,
        feeds,
        optimize,
    })
}

/// What one input of a model target comes to: the first byte picks a
/// framed real case (even, `framed`) or one built from the bytes (odd,
/// `built`); `None` when they make no case, else the run's result.
pub fn outcome(
    bytes: &[u8],
    framed: impl FnOnce(&[u8]) -> Option<Case>,
    built: impl FnOnce(&mut Unstructured) -> Result<Case>,
) -> Option<TractResult<()>> {
    let (&kind, rest) = bytes.split_first()?;
    let case = if kind % 2 == 0 {
        framed(rest)
    } else {
        built(&mut Unstructured::new(rest)).ok()
    }?;
    limit_loops();
    Some(run_model(&case.proto, case.feeds, case.optimize))
}

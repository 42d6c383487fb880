//! Gradient-op target: one-node models of `ScatterElementsGrad` and
//! `ScatterNDGrad` (domain `tract_onnx_scatter.training`, version 1)
//! loaded through `tract_onnx_scatter::onnx()`, optimized (or typed and
//! decluttered), made runnable and run. Every step must answer `Ok` or
//! `Err`; a panic, an abort, a timeout or an allocation beyond libFuzzer's
//! limit is a bug.
//!
//! An input is one of two kinds, told by its first byte:
//!
//! - even: a framed real case (`model_case.rs`): a model and its fed
//!   tensors, as the autograd cases (`onnx-testdata/autograd/`) hold them,
//!   kept when every node is a gradient op, then mutated by the bytes after
//!   the frame (attributes `axis`, `reduction`, `include_self`,
//!   `lda_coeff` set to any value and type or removed, the domain version,
//!   fed values and shapes, declared dims, node inputs and outputs);
//! - odd: a generated case (`arbitrary`): the op (sometimes misspelt), its
//!   domain and domain version, 0–4 attributes of any type and value, data
//!   of any rank (0–9) and type (f32/f64/f16 mostly), indices of int64,
//!   int32 or another type whose values are valid, ±dim or extreme, updates
//!   and grad_output shaped as the op wants or not, each input a graph
//!   input (declared dims exact, symbolic, missing, negative, huge) or an
//!   initializer (dims sometimes lying), 0–3 node outputs, and the tensors
//!   fed (sometimes of another type or shape than declared).
//!
//! The body of the `grad_ops` fuzz target ([`run`]), shared with the replay
//! test (`tests/fuzz_replay.rs`).

#[path = "model_case.rs"]
mod model_case;
use model_case::Case;
#[path = "proto_gen.rs"]
mod proto_gen;

use arbitrary::{Result, Unstructured};
use proto_gen::{
    ELEMS, actual_shape, declared_dim, float, initializer, int, pick, tensor, value_info,
};
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// The gradient ops' domain.
pub const DOMAIN: &str = "tract_onnx_scatter.training";
/// The gradient ops.
pub const GRAD_OPS: [&str; 2] = ["ScatterElementsGrad", "ScatterNDGrad"];

const ATTRIBUTES: &[&str] = &["axis", "reduction", "include_self", "lda_coeff", "foo"];
const REDUCTIONS: &[&str] = &[
    "none", "add", "mul", "max", "min", "mean", "sum", "", "Add", "\u{0}",
];

fn attribute(u: &mut Unstructured) -> Result<AttributeProto> {
    let name = pick(
        u,
        &[
            "axis",
            "reduction",
            "reduction",
            "include_self",
            "include_self",
            "lda_coeff",
            "lda_coeff",
            "foo",
        ],
    )?;
    let mut a = AttributeProto {
        name: name.into(),
        ..Default::default()
    };
    // One in eight attributes has a type its name does not take.
    let kind = if u.ratio(1u8, 8)? {
        pick(u, &["i", "f", "s", "ints", "none"])?
    } else {
        match name {
            "reduction" => "s",
            "lda_coeff" => "f",
            _ => "i",
        }
    };
    match kind {
        "i" => {
            a.r#type = AttributeType::Int as i32;
            a.i = match (name, u.int_in_range(0u8..=3)?) {
                ("include_self", 0..=2) => pick(u, &[0, 1, 1, 2, -1])?,
                _ => int(u)?,
            };
        }
        "f" => {
            a.r#type = AttributeType::Float as i32;
            a.f = if u.arbitrary()? {
                pick(u, &[1.0, 0.5, -2.0, 0.0, 1e-30, 3.0e38])?
            } else {
                float(u)? as f32
            };
        }
        "s" => {
            a.r#type = AttributeType::String as i32;
            a.s = pick(u, REDUCTIONS)?.as_bytes().to_vec();
        }
        "ints" => {
            a.r#type = AttributeType::Ints as i32;
            a.ints = vec![int(u)?, int(u)?];
        }
        _ => {
            a.r#type = u.int_in_range(0..=14)?;
            a.i = int(u)?;
        }
    }
    Ok(a)
}

/// An index on an axis of size `d`: mostly valid, sometimes just outside,
/// sometimes extreme.
fn index(u: &mut Unstructured, d: usize) -> Result<i64> {
    let d = d as i64;
    Ok(match u.int_in_range(0u8..=20)? {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => d,
        3 => -d - 1,
        4 => i32::MIN as i64,
        5 => u.arbitrary()?,
        _ if d == 0 => 0,
        n if n % 2 == 0 => u.int_in_range(0..=d - 1)?,
        _ => u.int_in_range(-d..=-1)?,
    })
}

/// A dim of indices next to a data dim `d`: mostly at most `d`.
fn up_to(u: &mut Unstructured, d: usize) -> Result<usize> {
    Ok(match u.int_in_range(0u8..=8)? {
        0 => 0,
        1 => d + 1,
        2 | 3 if d > 0 => u.int_in_range(1..=d)?,
        _ => d,
    })
}

fn exact_dim(d: usize) -> Dimension {
    Dimension {
        value: Some(dimension::Value::DimValue(d as i64)),
        ..Default::default()
    }
}

struct Shapes {
    data: Vec<usize>,
    indices: Vec<usize>,
    updates: Vec<usize>,
    /// For each index element (row-major), the size of the axis it indexes.
    index_dims: Vec<usize>,
}

fn elements_shapes(u: &mut Unstructured, data: Vec<usize>) -> Result<Shapes> {
    let rank = data.len() as i64;
    let axis = if rank == 0 {
        0
    } else {
        u.int_in_range(0..=rank - 1)?
    } as usize;
    let mut indices: Vec<usize> = data
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            if i == axis {
                u.int_in_range(0..=3)
            } else {
                up_to(u, d)
            }
        })
        .collect::<Result<_>>()?;
    if u.ratio(1u8, 12)? {
        indices = actual_shape(u)?;
    }
    let updates = if u.ratio(1u8, 12)? {
        actual_shape(u)?
    } else {
        indices.clone()
    };
    let n: usize = indices.iter().product();
    let axis_dim = data.get(axis).copied().unwrap_or(1);
    Ok(Shapes {
        data,
        indices,
        updates,
        index_dims: vec![axis_dim; n],
    })
}

fn nd_shapes(u: &mut Unstructured, data: Vec<usize>) -> Result<Shapes> {
    let rank = data.len();
    let k = match u.int_in_range(0u8..=10)? {
        0 => 0,
        1 => rank + 1,
        _ => u.int_in_range(1..=rank.max(1))?,
    };
    let batch: Vec<usize> = (0..u.int_in_range(0..=2)?)
        .map(|_| u.int_in_range(0usize..=3))
        .collect::<Result<_>>()?;
    let mut indices = batch.clone();
    indices.push(k);
    let mut updates = batch;
    updates.extend(data.iter().skip(k));
    if u.ratio(1u8, 12)? {
        updates = actual_shape(u)?;
    }
    let n: usize = indices.iter().product();
    let index_dims = (0..n)
        .map(|i| data.get(i % k.max(1)).copied().unwrap_or(1))
        .collect();
    Ok(Shapes {
        data,
        indices,
        updates,
        index_dims,
    })
}

/// The indices tensor: index-like values as `elem` (int64, int32, or
/// another type through a cast).
fn indices_tensor(
    u: &mut Unstructured,
    elem: DataType,
    shape: &[usize],
    dims: &[usize],
) -> Result<Option<Tensor>> {
    let values: Vec<i64> = dims.iter().map(|&d| index(u, d)).collect::<Result<_>>()?;
    let Ok(t) = Tensor::from_shape(shape, &values) else {
        return Ok(None);
    };
    Ok(match elem {
        DataType::Int64 => Some(t),
        DataType::Int32 => Some(t.cast_to::<i32>().map(|c| c.into_owned()).unwrap_or(t)),
        other => tensor(u, other, shape)?,
    })
}

fn case(u: &mut Unstructured) -> Result<Case> {
    let nd: bool = u.arbitrary()?;
    let op_type = if u.ratio(1u8, 40)? {
        pick(
            u,
            &[
                "ScatterElementGrad",
                "scatterndgrad",
                "ScatterND",
                "ScatterElements",
            ],
        )?
    } else {
        GRAD_OPS[nd as usize]
    };
    let domain = if u.ratio(1u8, 10)? {
        pick(u, &["", "ai.onnx", "tract_onnx_scatter", "com.microsoft"])?
    } else {
        DOMAIN
    };
    let domain_version = match u.int_in_range(0u8..=12)? {
        0 => int(u)?,
        1 => pick(u, &[0, 2])?,
        _ => 1,
    };
    let opset = match u.int_in_range(0u8..=10)? {
        0 => int(u)?,
        _ => pick(u, &[18, 18, 13, 11, 24, 7])?,
    };
    let attributes: Vec<AttributeProto> = (0..u.int_in_range(0u8..=4)?)
        .map(|_| attribute(u))
        .collect::<Result<_>>()?;
    let elem = match u.int_in_range(0u8..=10)? {
        0..=3 => DataType::Float,
        4 | 5 => DataType::Double,
        6 | 7 => DataType::Float16,
        _ => pick(u, ELEMS)?,
    };
    let index_elem = match u.int_in_range(0u8..=10)? {
        0..=5 => DataType::Int64,
        6..=8 => DataType::Int32,
        _ => pick(u, ELEMS)?,
    };
    let data = actual_shape(u)?;
    let shapes = if nd {
        nd_shapes(u, data)?
    } else {
        elements_shapes(u, data)?
    };
    let grad_shape = if u.ratio(1u8, 12)? {
        actual_shape(u)?
    } else {
        shapes.data.clone()
    };
    let mut values = vec![
        ("data", elem, tensor(u, elem, &shapes.data)?),
        (
            "indices",
            index_elem,
            indices_tensor(u, index_elem, &shapes.indices, &shapes.index_dims)?,
        ),
        ("updates", elem, tensor(u, elem, &shapes.updates)?),
        ("grad_output", elem, tensor(u, elem, &grad_shape)?),
    ];
    match u.int_in_range(0u8..=16)? {
        0 => values.truncate(u.int_in_range(0..=3)?),
        1 => {
            let e = pick(u, ELEMS)?;
            let s = actual_shape(u)?;
            values.push(("extra", e, tensor(u, e, &s)?));
        }
        _ => {}
    }
    let mut graph = GraphProto {
        name: "grad".into(),
        ..Default::default()
    };
    let mut node_inputs = vec![];
    let mut feeds = vec![];
    for (name, elem, t) in values {
        if u.ratio(1u8, 40)? {
            node_inputs.push(String::new());
            continue;
        }
        let as_initializer = u.ratio(1u8, if name == "indices" { 3 } else { 8 })?;
        match t {
            Some(t) if as_initializer => graph.initializer.push(initializer(u, name, elem, &t)?),
            t => {
                // Declared dims: exact in most inputs, in one in four any
                // of `declared_dim`'s (symbolic, huge, negative, missing).
                let shape = t.as_ref().map(|t| t.shape().to_vec()).unwrap_or_default();
                let declared = if u.ratio(1u8, 16)? {
                    None
                } else if u.ratio(1u8, 4)? {
                    let dim = shape
                        .iter()
                        .map(|&d| declared_dim(u, d))
                        .collect::<Result<Vec<_>>>()?;
                    Some(TensorShapeProto { dim })
                } else {
                    let dim = shape.iter().map(|&d| exact_dim(d)).collect();
                    Some(TensorShapeProto { dim })
                };
                graph.input.push(value_info(name, elem, declared));
                let fed = if u.ratio(1u8, 16)? {
                    let other = pick(u, ELEMS)?;
                    let shape = actual_shape(u)?;
                    tensor(u, other, &shape)?
                } else {
                    t
                };
                feeds.push(fed.unwrap_or_else(|| Tensor::from(0f32)));
            }
        }
        node_inputs.push(name.to_string());
    }
    let outputs: Vec<String> = match u.int_in_range(0u8..=12)? {
        0 => vec!["grad_data".into()],
        1 => vec!["".into(), "grad_updates".into()],
        2 => vec!["grad_data".into(), "grad_updates".into(), "extra".into()],
        _ => vec!["grad_data".into(), "grad_updates".into()],
    };
    let out_elem = if u.ratio(1u8, 6)? {
        pick(u, ELEMS)?
    } else {
        elem
    };
    for name in outputs.iter().filter(|n| !n.is_empty()) {
        graph.output.push(value_info(name, out_elem, None));
    }
    graph.node.push(NodeProto {
        input: node_inputs,
        output: outputs,
        name: "grad".into(),
        op_type: op_type.into(),
        domain: domain.into(),
        attribute: attributes,
        ..Default::default()
    });
    let mut opset_import = vec![OperatorSetIdProto {
        domain: String::new(),
        version: opset,
    }];
    if !u.ratio(1u8, 20)? {
        opset_import.push(OperatorSetIdProto {
            domain: domain.into(),
            version: domain_version,
        });
    }
    Ok(Case {
        proto: ModelProto {
            ir_version: 8,
            opset_import,
            graph: Some(graph),
            ..Default::default()
        },
        feeds,
        optimize: u.ratio(3u8, 4)?,
    })
}

/// A framed real case, kept when every node is a gradient op, mutated.
fn framed_case(bytes: &[u8]) -> Option<Case> {
    let in_scope = |proto: &ModelProto| {
        proto.graph.as_ref().is_some_and(|graph| {
            !graph.node.is_empty() && graph.node.iter().all(|n| GRAD_OPS.contains(&&*n.op_type))
        })
    };
    model_case::framed_case(bytes, in_scope, ATTRIBUTES, REDUCTIONS)
}

/// The framed input of a model and its fed tensors (how seeds are
/// written; the target's input is a kind byte, 0, before it).
#[allow(dead_code)] // the replay test writes seeds with it
pub fn model_case_frame(model: &[u8], tensors: &[Vec<u8>]) -> Vec<u8> {
    model_case::frame(model, tensors, &[])
}

/// One input of the `grad_ops` target: `Ok` or `Err`, never a panic.
pub fn run(bytes: &[u8]) {
    let _ = outcome(bytes);
}

/// What one input comes to: `None` when it makes no case (a frame that
/// does not decode, a model out of scope, too few bytes), else the run's
/// result.
pub fn outcome(bytes: &[u8]) -> Option<TractResult<()>> {
    model_case::outcome(bytes, framed_case, case)
}

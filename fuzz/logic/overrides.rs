//! Override target: models around the tract operators the plugin replaces
//! (`crates/tract-onnx-scatter/src/tract_overrides/`), loaded through
//! `tract_onnx_scatter::onnx()`, optimized (or typed and decluttered),
//! made runnable and run, with the `Loop` limits lowered
//! (`model_case::limit_loops`: 10 000 iterations, 256 MiB) so a runaway
//! loop is an error, not a timeout. Every step must answer `Ok` or `Err`;
//! a panic, an abort, a timeout or an allocation beyond libFuzzer's limit
//! is a bug.
//!
//! An input is one of two kinds, told by its first byte:
//!
//! - even: a framed real model and its fed tensors (`model_case.rs`), as
//!   the exporter and recurrent corpora hold them (`loop_*` cases, small
//!   recurrent models), kept when some node at any depth is an overridden
//!   op, then mutated by the bytes after the frame (attributes, opsets,
//!   fed values and shapes — trip counts, conditions, shapes, bounds —,
//!   declared dims, node inputs and outputs, in the bodies too);
//! - odd: a generated model (`arbitrary`): one or two of `Loop` (trip
//!   count and condition absent, fed or constant, of any value, extreme or
//!   past the iteration limit; 0–3 carried values; a body whose condition,
//!   carried updates — add, identity, a growing concat, a ScatterND at the
//!   iteration, a slice at the iteration that changes the rank — and scan
//!   outputs vary, reads outer values, may hold another override, and may
//!   have too few or too many inputs and outputs), `If` (condition fed or
//!   constant, of any shape and type; branches of different arity or
//!   types), `Reshape`, `Slice`, `Expand`, `ConstantOfShape`, `Squeeze`
//!   with run-time (fed) or constant shapes, bounds and axes holding
//!   extremes, `Unique`, `Cast`/`CastLike` (any `to`, numeric and other
//!   strings), `ReverseSequence` (any lengths and axes), and `Concat` of a
//!   symbolic shape with extreme values.
//!
//! Nothing is left out for tract's sake: inputs on which tract 0.23.9
//! itself panics (an `If` whose branches give different numbers of
//! outputs, a constant negative `ConstantOfShape` dim, constant `Squeeze`
//! axes outside the rank) are generated too; the plugin refuses or fences
//! them (`fuzz/README.md`).
//!
//! The body of the `overrides` fuzz target ([`run`]), shared with the
//! replay test (`tests/fuzz_replay.rs`).

#[path = "model_case.rs"]
mod model_case;
use model_case::Case;
#[path = "proto_gen.rs"]
mod proto_gen;

use arbitrary::{Result, Unstructured};
use proto_gen::{ELEMS, actual_shape, declared_dim, initializer, int, pick, tensor, value_info};
use tract_onnx_scatter::TractOverride;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// Attribute names the framed mutations set.
const ATTRIBUTES: &[&str] = &[
    "axis",
    "axes",
    "allowzero",
    "to",
    "saturate",
    "sorted",
    "batch_axis",
    "time_axis",
    "starts",
    "ends",
];

fn attr_int(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i,
        ..Default::default()
    }
}

fn attr_ints(name: &str, ints: Vec<i64>) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Ints as i32,
        ints,
        ..Default::default()
    }
}

fn attr_graph(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Graph as i32,
        g: Some(g),
        ..Default::default()
    }
}

/// A model under construction: the main graph, the tensors fed to its
/// inputs, and the subgraphs (bodies, branches) being written.
struct Builder {
    main: GraphProto,
    feeds: Vec<Tensor>,
    subs: Vec<GraphProto>,
    names: usize,
}

impl Builder {
    fn new() -> Builder {
        Builder {
            main: GraphProto {
                name: "overrides".into(),
                ..Default::default()
            },
            feeds: vec![],
            subs: vec![],
            names: 0,
        }
    }

    fn name(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    /// The graph nodes are written to: the innermost subgraph, or the main one.
    fn graph(&mut self) -> &mut GraphProto {
        self.subs.last_mut().unwrap_or(&mut self.main)
    }

    /// A fed graph input of the main graph holding `t` (declared dims
    /// exact, symbolic, missing or hostile), sometimes fed another tensor.
    fn feed(&mut self, u: &mut Unstructured, elem: DataType, t: Tensor) -> Result<String> {
        let name = self.name("in");
        // Declared dims: mostly exact or symbolic (the run binds them), in
        // one input in eight any of `declared_dim`'s (huge, negative,
        // missing, ...), which `one_node_model` is about.
        let declared = if u.ratio(1u8, 16)? {
            None
        } else if u.ratio(1u8, 8)? {
            let dim = t
                .shape()
                .iter()
                .map(|&d| declared_dim(u, d))
                .collect::<Result<Vec<_>>>()?;
            Some(TensorShapeProto { dim })
        } else {
            let dim = t
                .shape()
                .iter()
                .map(|&d| {
                    Ok(Dimension {
                        value: Some(if u.ratio(1u8, 4)? {
                            dimension::Value::DimParam(pick(u, &["N", "M", "T"])?.into())
                        } else {
                            dimension::Value::DimValue(d as i64)
                        }),
                        ..Default::default()
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Some(TensorShapeProto { dim })
        };
        self.main.input.push(value_info(&name, elem, declared));
        let fed = if u.ratio(1u8, 24)? {
            let other = pick(u, ELEMS)?;
            let shape = actual_shape(u)?;
            tensor(u, other, &shape)?.unwrap_or(t)
        } else {
            t
        };
        self.feeds.push(fed);
        Ok(name)
    }

    /// An initializer of the graph being written holding `t`.
    fn constant(&mut self, u: &mut Unstructured, elem: DataType, t: &Tensor) -> Result<String> {
        let name = self.name("c");
        let init = initializer(u, &name, elem, t)?;
        self.graph().initializer.push(init);
        Ok(name)
    }

    /// `t` as a run-time value (fed to the main graph, read from a body
    /// as an outer-scope value) or, one in `constant` times, a constant
    /// (never when `constant` is 0).
    fn value(
        &mut self,
        u: &mut Unstructured,
        elem: DataType,
        t: Tensor,
        constant: u8,
    ) -> Result<String> {
        if constant > 0 && u.ratio(1u8, constant)? {
            self.constant(u, elem, &t)
        } else {
            self.feed(u, elem, t)
        }
    }

    fn node(
        &mut self,
        op: &str,
        inputs: &[&str],
        outputs: &[&str],
        attribute: Vec<AttributeProto>,
    ) {
        let name = self.name(op);
        self.graph().node.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            name,
            op_type: op.into(),
            attribute,
            ..Default::default()
        });
    }

    /// One node of one output, named after the op.
    fn op(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String {
        let out = self.name(&format!("{}_", op.to_lowercase()));
        self.node(op, inputs, &[&out], attribute);
        out
    }
}

fn i64s(values: Vec<i64>) -> Tensor {
    let n = values.len();
    Tensor::from_shape(&[n], &values).expect("a vector")
}

/// An element type, mostly float32.
fn elem(u: &mut Unstructured) -> Result<DataType> {
    Ok(if u.ratio(2u8, 3)? {
        DataType::Float
    } else {
        pick(u, ELEMS)?
    })
}

/// A tensor of `elem` and a small shape (float32 zeros when tract cannot
/// hold `elem`).
fn data(u: &mut Unstructured, elem: DataType) -> Result<(DataType, Tensor)> {
    let shape = actual_shape(u)?;
    Ok(match tensor(u, elem, &shape)? {
        Some(t) => (elem, t),
        None => (DataType::Float, Tensor::zero::<f32>(&shape).expect("small")),
    })
}

/// A bound, a dim or a shape entry: near the data's dims, or extreme.
fn entry(u: &mut Unstructured, dims: &[usize]) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=14)? {
        0 | 1 => int(u)?,
        2 => -1,
        3 => 0,
        4 => 1,
        5 => 2,
        _ if dims.is_empty() => 1,
        n if n % 2 == 0 => dims[u.choose_index(dims.len())?] as i64,
        _ => -(dims[u.choose_index(dims.len())?] as i64),
    })
}

/// A vector of `entry`s of about `len` entries.
fn entries(u: &mut Unstructured, dims: &[usize], len: usize) -> Result<Tensor> {
    let len = match u.int_in_range(0u8..=10)? {
        0 => len + 1,
        1 => len.saturating_sub(1),
        _ => len,
    };
    let values = (0..len).map(|_| entry(u, dims)).collect::<Result<_>>()?;
    Ok(i64s(values))
}

/// An int64 vector as the op wants it, sometimes as another type or rank.
fn index_value(u: &mut Unstructured, b: &mut Builder, t: Tensor, constant: u8) -> Result<String> {
    match u.int_in_range(0u8..=16)? {
        0 => {
            let t = t.cast_to::<i32>().map(|c| c.into_owned()).unwrap_or(t);
            b.value(u, DataType::Int32, t, constant)
        }
        1 => {
            let t = t.cast_to::<f32>().map(|c| c.into_owned()).unwrap_or(t);
            b.value(u, DataType::Float, t, constant)
        }
        2 => {
            let n = t.len();
            let t = t.into_shape(&[1, n]).expect("same volume");
            b.value(u, DataType::Int64, t, constant)
        }
        _ => b.value(u, DataType::Int64, t, constant),
    }
}

// ---------------------------------------------------------------------------
// One op around an overridden tract operator; each returns its outputs and
// their element types.

type Outputs = Vec<(String, DataType)>;

fn reshape(u: &mut Unstructured, b: &mut Builder) -> Result<Outputs> {
    let (dt, x) = {
        let e = elem(u)?;
        data(u, e)?
    };
    let dims = x.shape().to_vec();
    let x = b.value(u, dt, x, 8)?;
    let n = u.int_in_range(0..=4)?;
    let shape = entries(u, &dims, n)?;
    let shape = index_value(u, b, shape, 3)?;
    let attrs = if u.ratio(1u8, 4)? {
        vec![attr_int("allowzero", pick(u, &[0, 1, 1, 2, -1])?)]
    } else {
        vec![]
    };
    Ok(vec![(b.op("Reshape", &[&x, &shape], attrs), dt)])
}

fn slice(u: &mut Unstructured, b: &mut Builder, opset: i64) -> Result<Outputs> {
    let (dt, x) = {
        let e = elem(u)?;
        data(u, e)?
    };
    let dims = x.shape().to_vec();
    let rank = dims.len();
    let x = b.value(u, dt, x, 8)?;
    let n = if rank == 0 {
        1
    } else {
        u.int_in_range(1..=rank)?
    };
    if opset < 10 {
        let values = |u: &mut Unstructured| -> Result<Vec<i64>> {
            (0..n).map(|_| entry(u, &dims)).collect()
        };
        let mut attrs = vec![
            attr_ints("starts", values(u)?),
            attr_ints("ends", values(u)?),
        ];
        if u.arbitrary()? {
            attrs.push(attr_ints("axes", values(u)?));
        }
        return Ok(vec![(b.op("Slice", &[&x], attrs), dt)]);
    }
    let starts = entries(u, &dims, n)?;
    let starts = index_value(u, b, starts, 3)?;
    let ends = entries(u, &dims, n)?;
    let ends = index_value(u, b, ends, 3)?;
    let mut inputs = vec![x, starts, ends];
    if u.ratio(3u8, 4)? {
        let axes: Vec<i64> = (0..n)
            .map(|i| {
                Ok(match u.int_in_range(0u8..=8)? {
                    0 => int(u)?,
                    1 => -(i as i64) - 1,
                    _ => i as i64,
                })
            })
            .collect::<Result<_>>()?;
        let axes = index_value(u, b, i64s(axes), 2)?;
        inputs.push(axes);
        if u.arbitrary()? {
            let steps: Vec<i64> = (0..n)
                .map(|_| pick(u, &[1, 1, 1, 2, -1, -1, -2, 0, 3, i64::MIN, i64::MAX]))
                .collect::<Result<_>>()?;
            let steps = index_value(u, b, i64s(steps), 3)?;
            inputs.push(steps);
        }
    }
    if u.ratio(1u8, 20)? {
        inputs.insert(3, String::new());
    }
    let inputs: Vec<&str> = inputs.iter().map(|s| s.as_str()).collect();
    Ok(vec![(b.op("Slice", &inputs, vec![]), dt)])
}

fn expand(u: &mut Unstructured, b: &mut Builder) -> Result<Outputs> {
    let (dt, x) = {
        let e = elem(u)?;
        data(u, e)?
    };
    let dims = x.shape().to_vec();
    let x = b.value(u, dt, x, 8)?;
    let n = u.int_in_range(0..=5)?;
    let shape: Vec<i64> = (0..n)
        .map(|_| {
            Ok(match u.int_in_range(0u8..=24)? {
                0 => int(u)?,
                1 => -1,
                2 => 0,
                3..=8 => u.int_in_range(2..=4)?,
                _ if dims.is_empty() => 1,
                _ => dims[u.choose_index(dims.len())?] as i64,
            })
        })
        .collect::<Result<_>>()?;
    let shape = index_value(u, b, i64s(shape), 3)?;
    Ok(vec![(b.op("Expand", &[&x, &shape], vec![]), dt)])
}

fn constant_of_shape(u: &mut Unstructured, b: &mut Builder) -> Result<Outputs> {
    let n = u.int_in_range(0..=4)?;
    let shape = entries(u, &[2, 3, 4], n)?;
    let shape = if u.ratio(1u8, 3)? {
        b.constant(u, DataType::Int64, &shape)?
    } else {
        index_value(u, b, shape, 0)?
    };
    let mut attrs = vec![];
    let mut dt = DataType::Float;
    if u.arbitrary()? {
        let e = pick(u, ELEMS)?;
        let shape = if u.ratio(1u8, 8)? { vec![2] } else { vec![1] };
        if let Some(t) = tensor(u, e, &shape)? {
            dt = e;
            attrs.push(AttributeProto {
                name: "value".into(),
                r#type: AttributeType::Tensor as i32,
                t: Some(initializer(u, "value", e, &t)?),
                ..Default::default()
            });
        }
    }
    Ok(vec![(b.op("ConstantOfShape", &[&shape], attrs), dt)])
}

fn squeeze(u: &mut Unstructured, b: &mut Builder, opset: i64) -> Result<Outputs> {
    let (dt, x) = {
        let e = elem(u)?;
        data(u, e)?
    };
    let dims = x.shape().to_vec();
    let rank = dims.len() as i64;
    let x = b.value(u, dt, x, 8)?;
    let n = u.int_in_range(0..=2)?;
    let constant = opset < 13 || u.ratio(1u8, 2)?;
    let axes: Vec<i64> = (0..n)
        .map(|_| {
            Ok(match u.int_in_range(0u8..=6)? {
                0 => int(u)?,
                _ if rank == 0 => 0,
                _ => u.int_in_range(-rank..=rank - 1)?,
            })
        })
        .collect::<Result<_>>()?;
    if opset < 13 {
        let attrs = if n > 0 {
            vec![attr_ints("axes", axes)]
        } else {
            vec![]
        };
        return Ok(vec![(b.op("Squeeze", &[&x], attrs), dt)]);
    }
    let out = if n > 0 || u.arbitrary()? {
        let axes = if constant {
            b.constant(u, DataType::Int64, &i64s(axes))?
        } else {
            index_value(u, b, i64s(axes), 0)?
        };
        b.op("Squeeze", &[&x, &axes], vec![])
    } else {
        b.op("Squeeze", &[&x], vec![])
    };
    Ok(vec![(out, dt)])
}

fn concat(u: &mut Unstructured, b: &mut Builder) -> Result<Outputs> {
    // A shape holding symbols (declared `N`, `M`), concatenated with
    // int64 values, extremes among them.
    let shape = actual_shape(u)?;
    let x = b.feed(
        u,
        DataType::Float,
        Tensor::zero::<f32>(&shape).expect("small"),
    )?;
    let s = b.op("Shape", &[&x], vec![]);
    let values: Vec<i64> = (0..u.int_in_range(0..=3)?)
        .map(|_| int(u))
        .collect::<Result<_>>()?;
    let c = b.value(u, DataType::Int64, i64s(values), 2)?;
    let axis = if u.ratio(1u8, 8)? { int(u)? } else { 0 };
    let mut inputs = vec![s.as_str(), c.as_str()];
    if u.arbitrary()? {
        inputs.reverse();
    }
    let out = b.op("Concat", &inputs, vec![attr_int("axis", axis)]);
    // What exporters do with it: a reshape or an expand to that shape.
    let out = match u.int_in_range(0u8..=2)? {
        0 => b.op("Reshape", &[&x, &out], vec![]),
        1 => b.op("Expand", &[&x, &out], vec![]),
        _ => return Ok(vec![(out, DataType::Int64)]),
    };
    Ok(vec![(out, DataType::Float)])
}

fn unique(u: &mut Unstructured, b: &mut Builder) -> Result<Outputs> {
    let e = pick(
        u,
        &[
            DataType::Float,
            DataType::Int64,
            DataType::Int32,
            DataType::String,
            DataType::Bool,
            DataType::Float16,
            DataType::Double,
            DataType::Uint8,
            DataType::Int8,
        ],
    )?;
    let (dt, x) = data(u, e)?;
    let rank = x.rank() as i64;
    let x = b.value(u, dt, x, 6)?;
    let mut attrs = vec![];
    if u.arbitrary()? {
        let axis = match u.int_in_range(0u8..=4)? {
            0 => int(u)?,
            _ if rank == 0 => 0,
            _ => u.int_in_range(-rank..=rank - 1)?,
        };
        attrs.push(attr_int("axis", axis));
    }
    if u.ratio(1u8, 3)? {
        attrs.push(attr_int("sorted", pick(u, &[0, 1, 2])?));
    }
    let n = u.int_in_range(1..=4)?;
    let outs: Vec<String> = (0..n).map(|_| b.name("unique_")).collect();
    let names: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    b.node("Unique", &[&x], &names, attrs);
    Ok(outs
        .into_iter()
        .enumerate()
        .map(|(i, o)| (o, if i == 0 { dt } else { DataType::Int64 }))
        .collect())
}

/// A string tensor of numbers, non-numbers and edge cases.
fn strings(u: &mut Unstructured) -> Result<Tensor> {
    let shape = actual_shape(u)?;
    let n: usize = shape.iter().product();
    let v: Vec<String> = (0..n)
        .map(|_| {
            Ok(pick(
                u,
                &[
                    "1",
                    "-2.5",
                    "inf",
                    "-INF",
                    "NaN",
                    "1e40",
                    "abc",
                    "",
                    "0x10",
                    "true",
                    "9223372036854775808",
                    "-0",
                    "1_000",
                    " 3",
                    "\u{0}",
                ],
            )?
            .to_string())
        })
        .collect::<Result<_>>()?;
    Ok(tract_ndarray::ArrayD::from_shape_vec(shape, v)
        .map(|a| a.into_tensor())
        .unwrap_or_else(|_| tensor0(String::new())))
}

fn cast(u: &mut Unstructured, b: &mut Builder) -> Result<Outputs> {
    let (dt, x) = if u.ratio(1u8, 4)? {
        (DataType::String, strings(u)?)
    } else {
        {
            let e = pick(u, ELEMS)?;
            data(u, e)?
        }
    };
    let x = b.value(u, dt, x, 6)?;
    let to = match u.int_in_range(0u8..=10)? {
        0 => int(u)?,
        1 => 0,
        _ => pick(u, &ELEMS[..13])? as i64,
    };
    if u.ratio(1u8, 3)? {
        // CastLike: the target type from a second input.
        let e = pick(u, ELEMS)?;
        let (e, like) = if e == DataType::String {
            (e, strings(u)?)
        } else {
            data(u, e)?
        };
        let like = b.value(u, e, like, 3)?;
        let attrs = if u.ratio(1u8, 6)? {
            vec![attr_int("saturate", pick(u, &[0, 1, 2])?)]
        } else {
            vec![]
        };
        return Ok(vec![(b.op("CastLike", &[&x, &like], attrs), e)]);
    }
    let mut attrs = vec![];
    if !u.ratio(1u8, 20)? {
        attrs.push(if u.ratio(1u8, 16)? {
            AttributeProto {
                name: "to".into(),
                r#type: AttributeType::String as i32,
                s: b"float".to_vec(),
                ..Default::default()
            }
        } else {
            attr_int("to", to)
        });
    }
    if u.ratio(1u8, 6)? {
        attrs.push(attr_int("saturate", pick(u, &[0, 1, 2])?));
    }
    let out_dt = DataType::try_from(to as i32).unwrap_or(DataType::Undefined);
    Ok(vec![(b.op("Cast", &[&x], attrs), out_dt)])
}

fn reverse_sequence(u: &mut Unstructured, b: &mut Builder) -> Result<Outputs> {
    let rank = u.int_in_range(2..=4)?;
    let mut shape: Vec<usize> = (0..rank)
        .map(|_| u.int_in_range(0usize..=4))
        .collect::<Result<_>>()?;
    if u.ratio(1u8, 12)? {
        shape = actual_shape(u)?;
    }
    let e = elem(u)?;
    let (dt, x) = match tensor(u, e, &shape)? {
        Some(t) => (e, t),
        None => (DataType::Float, Tensor::zero::<f32>(&shape).expect("small")),
    };
    let x = b.value(u, dt, x, 8)?;
    let (batch_axis, time_axis) = match u.int_in_range(0u8..=10)? {
        0 => (int(u)?, int(u)?),
        1 => (pick(u, &[0, 1, 2, -1])?, pick(u, &[0, 1, 2, -1])?),
        2..=5 => (0, 1),
        _ => (1, 0),
    };
    let batch = shape
        .get(batch_axis.clamp(0, 1) as usize)
        .copied()
        .unwrap_or(1);
    let time = shape
        .get(time_axis.clamp(0, 1) as usize)
        .copied()
        .unwrap_or(1);
    let len = match u.int_in_range(0u8..=10)? {
        0 => batch + 1,
        1 => batch.saturating_sub(1),
        _ => batch,
    };
    let lens: Vec<i64> = (0..len)
        .map(|_| {
            Ok(match u.int_in_range(0u8..=12)? {
                0 => int(u)?,
                1 => -1,
                2 => time as i64 + 1,
                _ => u.int_in_range(0..=time as i64)?,
            })
        })
        .collect::<Result<_>>()?;
    let lens = index_value(u, b, i64s(lens), 3)?;
    let mut attrs = vec![];
    if batch_axis != 1 || u.arbitrary()? {
        attrs.push(attr_int("batch_axis", batch_axis));
    }
    if time_axis != 0 || u.arbitrary()? {
        attrs.push(attr_int("time_axis", time_axis));
    }
    Ok(vec![(b.op("ReverseSequence", &[&x, &lens], attrs), dt)])
}

/// A boolean condition: a fed or constant scalar, sometimes of another
/// shape or type.
fn condition(u: &mut Unstructured, b: &mut Builder, constant: u8) -> Result<String> {
    let v: bool = u.arbitrary()?;
    match u.int_in_range(0u8..=16)? {
        0 => b.value(u, DataType::Bool, tensor1(&[v, !v]), constant),
        1 => b.value(u, DataType::Float, tensor0(v as u8 as f32), constant),
        2 => b.value(u, DataType::Bool, tensor1(&[v]), constant),
        _ => b.value(u, DataType::Bool, tensor0(v), constant),
    }
}

/// A branch of an `If`: no inputs, 1–2 outputs computed from outer values
/// or constants, sometimes through another override.
fn branch(
    u: &mut Unstructured,
    b: &mut Builder,
    x: &str,
    depth: u8,
    outputs: usize,
) -> Result<GraphProto> {
    let name = b.name("branch");
    b.subs.push(GraphProto {
        name,
        ..Default::default()
    });
    let mut outs: Outputs = vec![];
    for _ in 0..outputs {
        let o = match u.int_in_range(0u8..=5)? {
            0 => (b.op("Identity", &[x], vec![]), DataType::Float),
            1 => (b.op("Add", &[x, x], vec![]), DataType::Float),
            2 => {
                let (dt, t) = {
                    let e = elem(u)?;
                    data(u, e)?
                };
                let c = b.constant(u, dt, &t)?;
                (b.op("Identity", &[&c], vec![]), dt)
            }
            _ => {
                let mut inner = one_op(u, b, 13, depth + 1)?;
                inner.truncate(1);
                match inner.pop() {
                    Some(o) => o,
                    None => (b.op("Identity", &[x], vec![]), DataType::Float),
                }
            }
        };
        outs.push(o);
    }
    let mut g = b.subs.pop().expect("pushed above");
    for (name, dt) in outs {
        g.output.push(value_info(&name, dt, None));
    }
    Ok(g)
}

fn if_(u: &mut Unstructured, b: &mut Builder, depth: u8) -> Result<Outputs> {
    let cond = condition(u, b, 3)?;
    let (_, x) = data(u, DataType::Float)?;
    let x = b.value(u, DataType::Float, x, 6)?;
    let then_outputs = u.int_in_range(1..=2)?;
    let else_outputs = match u.int_in_range(0u8..=8)? {
        0 => u.int_in_range(1..=2)?,
        _ => then_outputs,
    };
    let then_branch = branch(u, b, &x, depth, then_outputs)?;
    let else_branch = branch(u, b, &x, depth, else_outputs)?;
    let n = match u.int_in_range(0u8..=8)? {
        0 => u.int_in_range(0..=3)?,
        _ => then_branch.output.len(),
    };
    let outs: Vec<String> = (0..n).map(|_| b.name("if_")).collect();
    let names: Vec<&str> = outs.iter().map(|s| s.as_str()).collect();
    b.node(
        "If",
        &[&cond],
        &names,
        vec![
            attr_graph("then_branch", then_branch),
            attr_graph("else_branch", else_branch),
        ],
    );
    Ok(outs.into_iter().map(|o| (o, DataType::Float)).collect())
}

/// A scalar int64 trip count: absent, fed or constant, of any value.
fn trip_count(u: &mut Unstructured, b: &mut Builder) -> Result<String> {
    if u.ratio(1u8, 5)? {
        return Ok(String::new());
    }
    let m = match u.int_in_range(0u8..=20)? {
        0 => int(u)?,
        1 => -1,
        2 => 0,
        3 => 20_000, // past the iteration limit
        4 => i64::MAX,
        _ => u.int_in_range(1..=6)?,
    };
    match u.int_in_range(0u8..=16)? {
        0 => b.value(u, DataType::Int32, tensor0(m as i32), 3),
        1 => b.value(u, DataType::Int64, tensor1(&[m]), 3),
        2 => b.value(u, DataType::Float, tensor0(m as f32), 3),
        _ => b.value(u, DataType::Int64, tensor0(m), 3),
    }
}

fn loop_(u: &mut Unstructured, b: &mut Builder, depth: u8) -> Result<Outputs> {
    let m = trip_count(u, b)?;
    let cond = if u.ratio(1u8, 4)? {
        String::new()
    } else {
        condition(u, b, 3)?
    };
    // Carried values: outer inputs (or constants) of small shapes.
    let n_carried = u.int_in_range(0..=3)?;
    let mut carried = vec![];
    for _ in 0..n_carried {
        let e = if u.ratio(3u8, 4)? {
            DataType::Float
        } else {
            pick(
                u,
                &[
                    DataType::Int64,
                    DataType::Int32,
                    DataType::Double,
                    DataType::Bool,
                ],
            )?
        };
        let (dt, t) = data(u, e)?;
        let shape = t.shape().to_vec();
        let name = b.value(u, dt, t, 4)?;
        carried.push((name, dt, shape));
    }
    // An outer value the body reads row by row (`x[i]`).
    let (_, rows) = data(u, DataType::Float)?;
    let rows = b.value(u, DataType::Float, rows, 6)?;

    let name = b.name("body");
    b.subs.push(GraphProto {
        name,
        ..Default::default()
    });
    let iter = b.name("iter");
    let cond_in = b.name("cond_in");
    let mut body_inputs = vec![
        value_info(
            &iter,
            if u.ratio(1u8, 16)? {
                DataType::Int32
            } else {
                DataType::Int64
            },
            Some(TensorShapeProto { dim: vec![] }),
        ),
        value_info(
            &cond_in,
            DataType::Bool,
            Some(TensorShapeProto { dim: vec![] }),
        ),
    ];
    let mut carried_in = vec![];
    for (_, dt, shape) in &carried {
        let name = b.name("carried_in");
        let declared = if u.ratio(1u8, 3)? {
            None
        } else {
            let dim = shape
                .iter()
                .map(|&d| declared_dim(u, d))
                .collect::<Result<Vec<_>>>()?;
            Some(TensorShapeProto { dim })
        };
        let dt = if u.ratio(1u8, 16)? {
            pick(u, ELEMS)?
        } else {
            *dt
        };
        body_inputs.push(value_info(&name, dt, declared));
        carried_in.push(name);
    }
    match u.int_in_range(0u8..=16)? {
        0 => {
            body_inputs.pop();
        }
        1 => body_inputs.push(value_info("extra_in", DataType::Float, None)),
        _ => {}
    }
    b.graph().input = body_inputs;

    // The condition out.
    let cond_out = match u.int_in_range(0u8..=5)? {
        0 | 1 => b.op("Identity", &[&cond_in], vec![]),
        2 | 3 => {
            let k = tensor0(pick(u, &[0i64, 1, 3, 10, 50_000])?);
            let k = b.constant(u, DataType::Int64, &k)?;
            b.op("Less", &[&iter, &k], vec![])
        }
        4 => {
            let v: bool = u.arbitrary()?;
            let c = b.constant(u, DataType::Bool, &tensor0(v))?;
            b.op("Identity", &[&c], vec![])
        }
        _ => {
            let f = b.op(
                "Cast",
                &[&iter],
                vec![attr_int("to", DataType::Float as i64)],
            );
            let k = tensor0(pick(u, &[2f32, 100.0])?);
            let k = b.constant(u, DataType::Float, &k)?;
            b.op("Less", &[&f, &k], vec![])
        }
    };
    // The carried values out.
    let mut outs: Vec<(String, DataType)> = vec![];
    for ((_, dt, shape), c_in) in carried.iter().zip(&carried_in) {
        let dt = *dt;
        let out = match u.int_in_range(0u8..=9)? {
            0 | 1 => b.op("Identity", &[c_in], vec![]),
            2 | 3 if dt != DataType::Bool => {
                let one = tensor0(1f32).cast_to_dt(datum(dt)).map(|c| c.into_owned());
                let one = one.unwrap_or_else(|_| tensor0(1f32));
                let one = b.constant(u, dt, &one)?;
                b.op("Add", &[c_in, &one], vec![])
            }
            // Grows every iteration: the memory budget's business.
            4 if !shape.is_empty() => b.op("Concat", &[c_in, c_in], vec![attr_int("axis", 0)]),
            // A row written at the iteration index.
            5 | 6 if !shape.is_empty() => {
                let two = b.constant(u, DataType::Int64, &i64s(vec![1, 1]))?;
                let idx = b.op("Reshape", &[&iter, &two], vec![]);
                let mut row = vec![1];
                row.extend_from_slice(&shape[1..]);
                let upd = match tensor(u, dt, &row)? {
                    Some(t) => t,
                    None => Tensor::zero::<f32>(&row).expect("small"),
                };
                let upd = b.constant(u, dt, &upd)?;
                b.op("ScatterND", &[c_in, &idx, &upd], vec![])
            }
            // `c[i]`: a run-time slice at the iteration, then a squeeze
            // (the rank changes after the first iteration).
            7 if !shape.is_empty() => row_at(u, b, c_in, &iter)?,
            _ => b.op("Identity", &[c_in], vec![]),
        };
        outs.push((out, dt));
    }
    // Scan outputs.
    let mut scans: Vec<(String, DataType)> = vec![];
    for _ in 0..u.int_in_range(0..=2)? {
        let s = match u.int_in_range(0u8..=5)? {
            0 => (b.op("Identity", &[&iter], vec![]), DataType::Int64),
            1 | 2 => (row_at(u, b, &rows, &iter)?, DataType::Float),
            3 if !outs.is_empty() => {
                let (o, dt) = outs[u.choose_index(outs.len())?].clone();
                (b.op("Identity", &[&o], vec![]), dt)
            }
            _ if depth < 1 => {
                let mut inner = one_op(u, b, 13, depth + 1)?;
                inner.truncate(1);
                match inner.pop() {
                    Some(o) => o,
                    None => (b.op("Identity", &[&iter], vec![]), DataType::Int64),
                }
            }
            _ => (b.op("Identity", &[&iter], vec![]), DataType::Int64),
        };
        scans.push(s);
    }
    let mut body_outputs = vec![value_info(&cond_out, DataType::Bool, None)];
    for (name, dt) in outs.iter().chain(&scans) {
        body_outputs.push(value_info(name, *dt, None));
    }
    match u.int_in_range(0u8..=16)? {
        0 => {
            body_outputs.pop();
        }
        1 => {
            let last = body_outputs.len() - 1;
            body_outputs.swap(0, last);
        }
        _ => {}
    }
    let mut body = b.subs.pop().expect("pushed above");
    body.output = body_outputs;

    let mut inputs = vec![m, cond];
    inputs.extend(carried.iter().map(|c| c.0.clone()));
    let results: Vec<(String, DataType)> = outs
        .iter()
        .chain(&scans)
        .map(|(_, dt)| (b.name("loop_"), *dt))
        .collect();
    let inputs: Vec<&str> = inputs.iter().map(|s| s.as_str()).collect();
    let names: Vec<&str> = results.iter().map(|s| s.0.as_str()).collect();
    b.node("Loop", &inputs, &names, vec![attr_graph("body", body)]);
    Ok(results)
}

/// `x[i]` as exporters write it: `Slice(x, [i], [i + 1], [0])`, then
/// `Squeeze` of axis 0 (in the body being written).
fn row_at(u: &mut Unstructured, b: &mut Builder, x: &str, iter: &str) -> Result<String> {
    let zero = b.constant(u, DataType::Int64, &i64s(vec![0]))?;
    let one = b.constant(u, DataType::Int64, &i64s(vec![1]))?;
    let start = b.op("Unsqueeze", &[iter, &zero], vec![]);
    let end = b.op("Add", &[&start, &one], vec![]);
    let row = b.op("Slice", &[x, &start, &end, &zero], vec![]);
    Ok(b.op("Squeeze", &[&row, &zero], vec![]))
}

fn datum(dt: DataType) -> DatumType {
    match dt {
        DataType::Double => DatumType::F64,
        DataType::Int64 => DatumType::I64,
        DataType::Int32 => DatumType::I32,
        DataType::Bool => DatumType::Bool,
        _ => DatumType::F32,
    }
}

/// One op around an overridden operator, nested at `depth` (bodies and
/// branches hold at most one more level).
fn one_op(u: &mut Unstructured, b: &mut Builder, opset: i64, depth: u8) -> Result<Outputs> {
    let choices = if depth == 0 { 13 } else { 10 };
    match u.int_in_range(0u8..=choices)? {
        0 => reshape(u, b),
        1 => slice(u, b, opset),
        2 => expand(u, b),
        3 => constant_of_shape(u, b),
        4 => squeeze(u, b, opset),
        5 => concat(u, b),
        6 => unique(u, b),
        7 | 8 => cast(u, b),
        9 | 10 => reverse_sequence(u, b),
        11 => if_(u, b, depth),
        _ => loop_(u, b, depth),
    }
}

fn case(u: &mut Unstructured) -> Result<Case> {
    let opset = match u.int_in_range(0u8..=12)? {
        0 => int(u)?,
        1 => u.int_in_range(1..=25)?,
        _ => pick(u, &[13, 13, 18, 18, 11, 16, 17, 21, 9, 10])?,
    };
    let mut b = Builder::new();
    let mut outputs = one_op(&mut *u, &mut b, opset, 0)?;
    if u.ratio(1u8, 4)? {
        outputs.extend(one_op(&mut *u, &mut b, opset, 0)?);
    }
    for (name, dt) in outputs {
        let dt = if u.ratio(1u8, 12)? {
            DataType::Undefined
        } else {
            dt
        };
        b.main.output.push(value_info(&name, dt, None));
    }
    Ok(Case {
        proto: ModelProto {
            ir_version: 8,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: opset,
            }],
            graph: Some(b.main),
            ..Default::default()
        },
        feeds: b.feeds,
        optimize: u.ratio(3u8, 4)?,
    })
}

/// A framed real model, kept when it holds an overridden op, mutated.
fn framed_case(bytes: &[u8]) -> Option<Case> {
    let in_scope = |proto: &ModelProto| {
        let mut ops = vec![];
        if let Some(graph) = &proto.graph {
            model_case::op_types(graph, &mut ops);
        }
        let overridden = TractOverride::ALL.map(|o| o.op_type());
        ops.iter().any(|op| overridden.contains(op))
    };
    model_case::framed_case(bytes, in_scope, ATTRIBUTES, &[])
}

/// The framed input of a model and its fed tensors (how seeds are
/// written; the target's input is a kind byte, 0, before it).
#[allow(dead_code)] // the replay test writes seeds with it
pub fn model_case_frame(model: &[u8], tensors: &[Vec<u8>]) -> Vec<u8> {
    model_case::frame(model, tensors, &[])
}

/// One input of the `overrides` target: `Ok` or `Err`, never a panic.
pub fn run(bytes: &[u8]) {
    let _ = outcome(bytes);
}

/// What one input comes to: `None` when it makes no case (a frame that
/// does not decode, a model out of scope, too few bytes), else the run's
/// result.
pub fn outcome(bytes: &[u8]) -> Option<TractResult<()>> {
    model_case::outcome(bytes, framed_case, case)
}

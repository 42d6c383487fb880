//! End-to-end target: an arbitrary one-node model (op, domain, opset,
//! attributes of any type, inputs as graph inputs with declared shapes that
//! may be symbolic, missing, negative, huge or overflowing, or as
//! initializers), built as an ONNX `ModelProto`, loaded through
//! `tract_onnx_scatter::onnx()`, optimized (or only typed), made runnable
//! and run on arbitrary tensors whose shapes and types may differ from the
//! declared ones. Every step must answer `Ok` or `Err`; a panic, an abort, a
//! timeout or an allocation beyond libFuzzer's limit is a bug.

#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto, type_proto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

const OPS: &[&str] = &[
    "ScatterElements",
    "ScatterND",
    "Scatter",
    "TensorScatter",
    "ScatterElementsUpdate",
];

/// Element types a tensor may have (the ones tract loads, plus a few it
/// does not).
const ELEMS: &[DataType] = &[
    DataType::Float,
    DataType::Int64,
    DataType::Int32,
    DataType::Bool,
    DataType::Double,
    DataType::Float16,
    DataType::Int8,
    DataType::Int16,
    DataType::Uint8,
    DataType::Uint16,
    DataType::Uint32,
    DataType::Uint64,
    DataType::String,
    DataType::Bfloat16,
    DataType::Complex64,
    DataType::Undefined,
];

fn pick<T: Copy>(u: &mut Unstructured, items: &[T]) -> Result<T> {
    Ok(*u.choose(items)?)
}

/// A small integer, an index-like value or an extreme.
fn int(u: &mut Unstructured) -> Result<i64> {
    Ok(match u.int_in_range(0u8..=20)? {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => i32::MIN as i64,
        3 => i32::MAX as i64,
        4 => u.arbitrary()?,
        n => n as i64 - 12,
    })
}

fn float(u: &mut Unstructured) -> Result<f64> {
    Ok(match u.int_in_range(0u8..=10)? {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => f64::NEG_INFINITY,
        3 => -0.0,
        4 => f64::MAX,
        5 => u.arbitrary()?,
        n => n as f64 * 0.75 - 4.0,
    })
}

fn attribute(u: &mut Unstructured) -> Result<AttributeProto> {
    let name = pick(
        u,
        &[
            "axis",
            "axis",
            "reduction",
            "reduction",
            "mode",
            "use_init_val",
            "foo",
            "",
        ],
    )?;
    let mut a = AttributeProto {
        name: name.into(),
        ..Default::default()
    };
    match u.int_in_range(0u8..=9)? {
        0..=3 => {
            a.r#type = AttributeType::Int as i32;
            a.i = int(u)?;
        }
        4..=7 => {
            a.r#type = AttributeType::String as i32;
            let s = pick(
                u,
                &[
                    "none", "add", "mul", "max", "min", "mean", "sum", "prod", "linear",
                    "circular", "Add", "", "\u{0}",
                ],
            )?;
            a.s = if u.ratio(1u8, 20)? {
                vec![0xff, 0xfe]
            } else {
                s.as_bytes().to_vec()
            };
        }
        8 => {
            a.r#type = AttributeType::Float as i32;
            a.f = float(u)? as f32;
        }
        _ => {
            a.r#type = u.int_in_range(0..=14)?;
            a.ints = vec![int(u)?];
        }
    }
    Ok(a)
}

/// An actual (small) shape for a tensor that is fed or stored.
fn actual_shape(u: &mut Unstructured) -> Result<Vec<usize>> {
    let rank = match u.int_in_range(0u8..=16)? {
        0 => 0,
        1 => u.int_in_range(5..=9)?,
        n => (n % 4 + 1) as usize,
    };
    let mut shape: Vec<usize> = (0..rank)
        .map(|_| Ok(pick(u, &[0usize, 1, 1, 2, 2, 3, 3, 4])?))
        .collect::<Result<_>>()?;
    // Keep tensors small.
    while shape.iter().product::<usize>() > 512 {
        let i = shape.iter().position(|&d| d > 1).unwrap();
        shape[i] -= 1;
    }
    Ok(shape)
}

/// A declared dimension: usually the actual one, sometimes hostile.
fn declared_dim(u: &mut Unstructured, actual: usize) -> Result<Dimension> {
    let value = match u.int_in_range(0u8..=20)? {
        0 => Some(dimension::Value::DimValue(i64::MAX)),
        1 => Some(dimension::Value::DimValue(1 << 32)),
        2 => Some(dimension::Value::DimValue(-1)),
        3 => Some(dimension::Value::DimValue(i64::MIN)),
        4 => Some(dimension::Value::DimValue(actual as i64 + 1)),
        5 => Some(dimension::Value::DimValue(1 << 20)),
        6 => Some(dimension::Value::DimParam(
            pick(u, &["N", "M", "", "1", "N+1"])?.into(),
        )),
        7 => None,
        _ => Some(dimension::Value::DimValue(actual as i64)),
    };
    Ok(Dimension {
        value,
        ..Default::default()
    })
}

fn value_info(name: &str, elem: DataType, shape: Option<TensorShapeProto>) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: elem as i32,
                shape,
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A tract tensor of `elem` and `shape` with arbitrary values, or `None`
/// for element types tract cannot hold.
fn tensor(u: &mut Unstructured, elem: DataType, shape: &[usize]) -> Result<Option<Tensor>> {
    let n: usize = shape.iter().product();
    macro_rules! ints {
        ($t:ty) => {{
            let v: Vec<$t> = (0..n).map(|_| Ok(int(u)? as $t)).collect::<Result<_>>()?;
            Tensor::from_shape(shape, &v).ok()
        }};
    }
    macro_rules! floats {
        ($t:ty) => {{
            let v: Vec<$t> = (0..n).map(|_| Ok(float(u)? as $t)).collect::<Result<_>>()?;
            Tensor::from_shape(shape, &v).ok()
        }};
    }
    Ok(match elem {
        DataType::Float => floats!(f32),
        DataType::Double => floats!(f64),
        DataType::Float16 => {
            let v: Vec<half::f16> = (0..n)
                .map(|_| Ok(half::f16::from_f64(float(u)?)))
                .collect::<Result<_>>()?;
            Tensor::from_shape(shape, &v).ok()
        }
        DataType::Int64 => ints!(i64),
        DataType::Int32 => ints!(i32),
        DataType::Int16 => ints!(i16),
        DataType::Int8 => ints!(i8),
        DataType::Uint8 => ints!(u8),
        DataType::Uint16 => ints!(u16),
        DataType::Uint32 => ints!(u32),
        DataType::Uint64 => ints!(u64),
        DataType::Bool => {
            let v: Vec<bool> = (0..n).map(|_| u.arbitrary()).collect::<Result<_>>()?;
            Tensor::from_shape(shape, &v).ok()
        }
        DataType::String => {
            let v: Vec<String> = (0..n)
                .map(|_| Ok(pick(u, &["", "a", "b", "zz", "é"])?.to_string()))
                .collect::<Result<_>>()?;
            tract_ndarray::ArrayD::from_shape_vec(shape, v)
                .ok()
                .map(|a| a.into_tensor())
        }
        _ => None,
    })
}

/// An initializer holding `t`, its dims sometimes lying.
fn initializer(
    u: &mut Unstructured,
    name: &str,
    elem: DataType,
    t: &Tensor,
) -> Result<TensorProto> {
    let mut dims: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
    if u.ratio(1u8, 12)? {
        match u.int_in_range(0u8..=3)? {
            0 => dims.push(1 << 40),
            1 => dims = vec![1 << 32, 1 << 32, 1 << 32],
            2 => dims.push(-1),
            _ => dims.push(0),
        }
    }
    let mut p = TensorProto {
        name: name.into(),
        dims,
        data_type: elem as i32,
        ..Default::default()
    };
    if elem == DataType::String {
        // tract cannot load raw string data (it panics in its own loader,
        // outside the plugin): always string_data.
        p.string_data = t
            .try_as_plain_ram()
            .ok()
            .and_then(|v| {
                v.as_slice::<String>()
                    .ok()
                    .map(|s| s.iter().map(|s| s.as_bytes().to_vec()).collect())
            })
            .unwrap_or_default();
    } else if elem == DataType::Int64 && u.arbitrary()? {
        p.int64_data = t
            .cast_to::<i64>()
            .map(|c| {
                c.try_as_plain_ram()
                    .unwrap()
                    .as_slice::<i64>()
                    .unwrap()
                    .to_vec()
            })
            .unwrap_or_default();
    } else {
        let mut raw = t.as_bytes().to_vec();
        if u.ratio(1u8, 16)? {
            raw.pop();
        }
        p.raw_data = raw;
    }
    Ok(p)
}

struct Case {
    proto: ModelProto,
    feeds: TVec<TValue>,
    optimize: bool,
}

fn case(u: &mut Unstructured) -> Result<Case> {
    let op_type = if u.ratio(1u8, 30)? {
        pick(u, &["scatterND", "Scatter ", "ScatterElementz"])?
    } else {
        pick(u, OPS)?
    };
    let domain = pick(
        u,
        &["", "", "", "", "ai.onnx", "org.openvinotoolkit", "custom"],
    )?;
    let opset = match u.int_in_range(0u8..=12)? {
        0 => int(u)?,
        1 => u.int_in_range(1..=30)?,
        _ => pick(u, &[9, 10, 11, 13, 16, 17, 18, 24, 18, 18])?,
    };
    let attributes: Vec<AttributeProto> = (0..u.int_in_range(0u8..=3)?)
        .map(|_| attribute(u))
        .collect::<Result<_>>()?;
    let n_inputs = match u.int_in_range(0u8..=12)? {
        0 => u.int_in_range(0..=6)?,
        1..=3 => 4,
        4..=6 => 2,
        _ => 3,
    };
    let mut graph = GraphProto {
        name: "fuzz".into(),
        ..Default::default()
    };
    let mut node_inputs = vec![];
    let mut feeds = tvec![];
    for i in 0..n_inputs {
        let name = format!("in{i}");
        if u.ratio(1u8, 30)? {
            node_inputs.push(String::new()); // an absent optional input
            continue;
        }
        // Inputs 1 (indices) and 3 (axis / write_indices) are mostly int64.
        let elem = if (i == 1 || i == 3) && !u.ratio(1u8, 6)? {
            pick(u, &[DataType::Int64, DataType::Int64, DataType::Int32])?
        } else if u.ratio(1u8, 3)? {
            pick(u, ELEMS)?
        } else {
            DataType::Float
        };
        let shape = actual_shape(u)?;
        let t = tensor(u, elem, &shape)?;
        let as_initializer = u.ratio(1u8, if i == 1 || i == 3 { 3 } else { 8 })?;
        match t {
            Some(t) if as_initializer => {
                graph.initializer.push(initializer(u, &name, elem, &t)?);
            }
            t => {
                let declared = if u.ratio(1u8, 12)? {
                    None
                } else {
                    let mut dim = shape
                        .iter()
                        .map(|&d| declared_dim(u, d))
                        .collect::<Result<Vec<_>>>()?;
                    if u.ratio(1u8, 20)? {
                        dim.push(declared_dim(u, 1)?);
                    }
                    Some(TensorShapeProto { dim })
                };
                graph.input.push(value_info(&name, elem, declared));
                // What is fed: usually the declared type, sometimes not.
                let fed = if u.ratio(1u8, 16)? {
                    let other = pick(u, ELEMS)?;
                    let shape = actual_shape(u)?;
                    tensor(u, other, &shape)?
                } else {
                    t
                };
                feeds.push(fed.unwrap_or_else(|| Tensor::from(0f32)).into_tvalue());
            }
        }
        node_inputs.push(name);
    }
    graph.node.push(NodeProto {
        input: node_inputs,
        output: vec!["output".into()],
        name: "scatter".into(),
        op_type: op_type.into(),
        domain: domain.into(),
        attribute: attributes,
        ..Default::default()
    });
    let out_elem = pick(u, &[DataType::Float, DataType::Undefined, DataType::Int64])?;
    graph.output.push(value_info("output", out_elem, None));
    let mut opset_import = vec![OperatorSetIdProto {
        domain: String::new(),
        version: opset,
    }];
    if !domain.is_empty() {
        opset_import.push(OperatorSetIdProto {
            domain: domain.into(),
            version: u.int_in_range(1..=3)?,
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

fn run(case: Case) -> TractResult<()> {
    let model = tract_onnx_scatter::onnx().model_for_proto_model(&case.proto)?;
    let typed = if case.optimize {
        model.into_optimized()?
    } else {
        model.into_typed()?
    };
    let plan = typed.into_runnable()?;
    plan.run(case.feeds)?;
    Ok(())
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(case) = case(&mut u) else {
        return;
    };
    let _ = run(case);
});

//! End-to-end target: an arbitrary one-node model (op, domain, opset,
//! attributes of any type, inputs as graph inputs with declared shapes that
//! may be symbolic, missing, negative, huge or overflowing, or as
//! initializers), built as an ONNX `ModelProto`, loaded through
//! `tract_onnx_scatter::onnx()`, optimized (or only typed), made runnable
//! and run on arbitrary tensors whose shapes and types may differ from the
//! declared ones. Every step must answer `Ok` or `Err`; a panic, an abort, a
//! timeout or an allocation beyond libFuzzer's limit is a bug.
//!
//! The body of the `one_node_model` fuzz target ([`run`]), shared with the
//! replay test (`tests/fuzz_replay.rs`).

#[path = "proto_gen.rs"]
mod proto_gen;

use arbitrary::{Result, Unstructured};
use proto_gen::*;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

const OPS: &[&str] = &[
    "ScatterElements",
    "ScatterND",
    "Scatter",
    "TensorScatter",
    "ScatterElementsUpdate",
];

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

fn run_case(case: Case) -> TractResult<()> {
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

/// One input of the `one_node_model` target: `Ok` or `Err`, never a panic.
pub fn run(bytes: &[u8]) {
    let mut u = Unstructured::new(bytes);
    let Ok(case) = case(&mut u) else {
        return;
    };
    let _ = run_case(case);
}

//! Multi-node ONNX graphs built in memory (`tract_onnx::pb` types,
//! prost-encoded) and loaded through `tract_onnx_scatter::onnx()`, for the
//! NNEF, symbolic-shape and optimization tests. The integration tests
//! include this file as their `graph` module; the plugin's unit tests that
//! read an op's private state after a load use it as `crate::graph`.

// Each binary uses part of it.
#![allow(dead_code)]
// `pub` for the integration tests, whose module it is; in the plugin it is
// a private test module.
#![allow(unreachable_pub)]

use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto, type_proto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// An ONNX framework a test loads with: the plugin's loader or stock tract.
pub trait Loader:
    Framework<tract_onnx_scatter::tract_onnx::pb::ModelProto, InferenceModel>
{
}

impl<F: Framework<tract_onnx_scatter::tract_onnx::pb::ModelProto, InferenceModel>> Loader for F {}

/// The ONNX element type of a tract datum type.
pub fn onnx_type(dt: DatumType) -> DataType {
    match dt {
        DatumType::Bool => DataType::Bool,
        DatumType::I8 => DataType::Int8,
        DatumType::I16 => DataType::Int16,
        DatumType::I32 => DataType::Int32,
        DatumType::I64 => DataType::Int64,
        DatumType::U8 => DataType::Uint8,
        DatumType::U16 => DataType::Uint16,
        DatumType::U32 => DataType::Uint32,
        DatumType::U64 => DataType::Uint64,
        DatumType::F16 => DataType::Float16,
        DatumType::F32 => DataType::Float,
        DatumType::F64 => DataType::Double,
        DatumType::String => DataType::String,
        other => panic!("no ONNX type for {other:?}"),
    }
}

/// A graph input dimension: a number, or a `dim_param` symbol.
#[derive(Debug, Clone)]
pub enum D {
    N(i64),
    S(&'static str),
}

/// An ONNX graph under construction (default domain, one opset).
#[derive(Debug, Clone)]
pub struct Graph {
    opset: i64,
    inputs: Vec<ValueInfoProto>,
    outputs: Vec<ValueInfoProto>,
    inits: Vec<TensorProto>,
    nodes: Vec<NodeProto>,
}

impl Graph {
    pub fn new(opset: i64) -> Graph {
        Graph {
            opset,
            inputs: vec![],
            outputs: vec![],
            inits: vec![],
            nodes: vec![],
        }
    }

    /// A graph input of type `dt` and shape `shape`.
    pub fn input(mut self, name: &str, dt: DatumType, shape: &[D]) -> Graph {
        let dim = shape
            .iter()
            .map(|d| Dimension {
                value: Some(match d {
                    D::N(n) => dimension::Value::DimValue(*n),
                    D::S(s) => dimension::Value::DimParam(s.to_string()),
                }),
                ..Default::default()
            })
            .collect();
        self.inputs
            .push(value_info(name, dt, Some(TensorShapeProto { dim })));
        self
    }

    /// A graph input of concrete shape.
    pub fn input_c(self, name: &str, dt: DatumType, shape: &[usize]) -> Graph {
        let shape: Vec<D> = shape.iter().map(|&d| D::N(d as i64)).collect();
        self.input(name, dt, &shape)
    }

    /// An initializer holding `t`.
    pub fn init(mut self, name: &str, t: &Tensor) -> Graph {
        self.inits.push(tensor_proto(name, t));
        self
    }

    /// A node `op_type(inputs) -> outputs`, named after its first output.
    pub fn node(
        mut self,
        op_type: &str,
        inputs: &[&str],
        outputs: &[&str],
        attributes: Vec<AttributeProto>,
    ) -> Graph {
        self.nodes.push(NodeProto {
            name: outputs[0].to_string(),
            op_type: op_type.into(),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outputs.iter().map(|s| s.to_string()).collect(),
            attribute: attributes,
            ..Default::default()
        });
        self
    }

    /// An `If(cond) -> outputs` node, its branches `then_branch` and
    /// `else_branch`, named after its first output.
    pub fn if_node(
        self,
        cond: &str,
        outputs: &[&str],
        then_branch: &Graph,
        else_branch: &Graph,
    ) -> Graph {
        self.node(
            "If",
            &[cond],
            outputs,
            vec![
                attr_graph("then_branch", then_branch.graph_proto()),
                attr_graph("else_branch", else_branch.graph_proto()),
            ],
        )
    }

    /// A graph output of type `dt`, shape left to inference.
    pub fn output(mut self, name: &str, dt: DatumType) -> Graph {
        self.outputs.push(value_info(name, dt, None));
        self
    }

    /// The graph alone, e.g. as an `If` branch (whose outputs need no
    /// input of their own: they read the enclosing graph's values by name).
    pub fn graph_proto(&self) -> GraphProto {
        GraphProto {
            name: "graph".into(),
            node: self.nodes.clone(),
            initializer: self.inits.clone(),
            input: self.inputs.clone(),
            output: self.outputs.clone(),
            ..Default::default()
        }
    }

    pub fn proto(&self) -> ModelProto {
        ModelProto {
            ir_version: 8,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: self.opset,
            }],
            graph: Some(self.graph_proto()),
            ..Default::default()
        }
    }

    /// Loaded from its prost encoding, as a file would be.
    pub fn load(&self) -> TractResult<InferenceModel> {
        self.load_with(&tract_onnx_scatter::onnx())
    }

    /// Loaded through `onnx` (stock tract, strict plugin, ...).
    pub fn load_with(&self, onnx: &impl Loader) -> TractResult<InferenceModel> {
        let bytes = self.proto().encode_to_vec();
        onnx.model_for_read(&mut &bytes[..])
    }

    /// Typed, not decluttered.
    pub fn typed(&self) -> TractResult<TypedModel> {
        self.load()?.into_typed()
    }

    pub fn decluttered(&self) -> TractResult<TypedModel> {
        self.typed()?.into_decluttered()
    }

    pub fn optimized(&self) -> TractResult<TypedModel> {
        self.typed()?.into_optimized()
    }
}

pub fn attr_int(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i,
        ..Default::default()
    }
}

pub fn attr_ints(name: &str, ints: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Ints as i32,
        ints: ints.to_vec(),
        ..Default::default()
    }
}

pub fn attr_graph(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Graph as i32,
        g: Some(g),
        ..Default::default()
    }
}

pub fn attr_string(name: &str, s: &str) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::String as i32,
        s: s.as_bytes().to_vec(),
        ..Default::default()
    }
}

/// A tensor attribute (a `Constant`'s `value`).
pub fn attr_tensor(name: &str, t: &Tensor) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Tensor as i32,
        t: Some(tensor_proto(name, t)),
        ..Default::default()
    }
}

fn value_info(name: &str, dt: DatumType, shape: Option<TensorShapeProto>) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: onnx_type(dt) as i32,
                shape,
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `t` as an ONNX initializer: `string_data` for strings, little-endian
/// `raw_data` for everything else.
pub fn tensor_proto(name: &str, t: &Tensor) -> TensorProto {
    let mut proto = TensorProto {
        name: name.into(),
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: onnx_type(t.datum_type()) as i32,
        ..Default::default()
    };
    let plain = t.try_as_plain_ram().expect("plain tensor");
    if t.datum_type() == DatumType::String {
        proto.string_data = plain
            .as_slice::<String>()
            .unwrap()
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
    } else {
        proto.raw_data = plain.as_bytes().to_vec();
    }
    proto
}

/// `values` (row-major, as i64) as a tensor of type `dt` and shape `shape`.
pub fn tensor(dt: DatumType, shape: &[usize], values: &[i64]) -> Tensor {
    let t = Tensor::from_shape(shape, values).unwrap();
    match dt {
        DatumType::Bool => t
            .cast_to_dt(DatumType::I64)
            .unwrap()
            .cast_to::<bool>()
            .unwrap()
            .into_owned(),
        DatumType::String => {
            let strings: Vec<String> = values.iter().map(|v| format!("s{v}")).collect();
            tract_ndarray::ArrayD::from_shape_vec(shape, strings)
                .unwrap()
                .into()
        }
        dt => t.cast_to_dt(dt).unwrap().into_owned(),
    }
}

/// Runs `model` on `inputs`.
pub fn run(model: &TypedModel, inputs: &[Tensor]) -> TractResult<TVec<TValue>> {
    let plan = model.clone().into_runnable()?;
    plan.run(inputs.iter().cloned().map(|t| t.into_tvalue()).collect())
}

/// Names of the ops of `model`'s nodes.
pub fn op_names(model: &TypedModel) -> Vec<String> {
    model
        .nodes()
        .iter()
        .map(|n| n.op().name().to_string())
        .collect()
}

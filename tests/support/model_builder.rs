//! One-node ONNX models built in memory: a `ModelProto` made of
//! `tract_onnx::pb` types, prost-encoded, then loaded through
//! `tract_onnx_scatter::onnx()` (or `onnx_strict()`) exactly as a file would be.

#![allow(dead_code)]

use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto, type_proto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// The node name every builder uses unless told otherwise.
pub const NODE: &str = "scatter_node";

/// A dimension of a graph input: concrete or symbolic.
#[derive(Debug, Clone)]
pub enum Dim {
    Val(i64),
    Sym(&'static str),
}

impl From<i64> for Dim {
    fn from(v: i64) -> Dim {
        Dim::Val(v)
    }
}

impl From<&'static str> for Dim {
    fn from(s: &'static str) -> Dim {
        Dim::Sym(s)
    }
}

/// One value feeding the node: a typed graph input or an initializer.
#[derive(Debug, Clone)]
pub enum Value {
    Input {
        name: String,
        elem: DataType,
        shape: Vec<Dim>,
    },
    Init(Box<TensorProto>),
}

impl Value {
    pub fn name(&self) -> &str {
        match self {
            Value::Input { name, .. } => name,
            Value::Init(t) => &t.name,
        }
    }
}

/// A graph input `name` of element type `elem` and concrete `shape`.
pub fn input(name: &str, elem: DataType, shape: &[i64]) -> Value {
    Value::Input {
        name: name.into(),
        elem,
        shape: shape.iter().map(|&d| Dim::Val(d)).collect(),
    }
}

/// A graph input whose shape may hold symbols.
pub fn input_sym(name: &str, elem: DataType, shape: Vec<Dim>) -> Value {
    Value::Input {
        name: name.into(),
        elem,
        shape,
    }
}

/// An int64 initializer (a constant, known at load time).
pub fn init_i64(name: &str, shape: &[i64], values: &[i64]) -> Value {
    Value::Init(Box::new(TensorProto {
        name: name.into(),
        dims: shape.to_vec(),
        data_type: DataType::Int64 as i32,
        int64_data: values.to_vec(),
        ..Default::default()
    }))
}

pub fn attr_int(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i: value,
        ..Default::default()
    }
}

pub fn attr_string(name: &str, value: &str) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::String as i32,
        s: value.as_bytes().to_vec(),
        ..Default::default()
    }
}

pub fn attr_float(name: &str, value: f32) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Float as i32,
        f: value,
        ..Default::default()
    }
}

/// A one-node model under construction.
#[derive(Debug, Clone)]
pub struct OneNode {
    pub op_type: String,
    pub node_name: String,
    pub opset: i64,
    pub attributes: Vec<AttributeProto>,
    pub values: Vec<Value>,
    /// The node's input names; by default the names of `values`, in order.
    pub node_inputs: Option<Vec<String>>,
    /// The element type declared for the graph output.
    pub output_elem: DataType,
    /// Load through `onnx_strict()` (exporter deviations refused) instead
    /// of `onnx()`.
    pub strict: bool,
}

impl OneNode {
    pub fn new(op_type: &str, opset: i64) -> OneNode {
        OneNode {
            op_type: op_type.into(),
            node_name: NODE.into(),
            opset,
            attributes: vec![],
            values: vec![],
            node_inputs: None,
            output_elem: DataType::Float,
            strict: false,
        }
    }

    /// Loads through `onnx_strict()` from now on.
    pub fn strict(mut self, strict: bool) -> OneNode {
        self.strict = strict;
        self
    }

    pub fn attr(mut self, attr: AttributeProto) -> OneNode {
        self.attributes.push(attr);
        self
    }

    pub fn value(mut self, value: Value) -> OneNode {
        self.values.push(value);
        self
    }

    pub fn node_inputs(mut self, names: &[&str]) -> OneNode {
        self.node_inputs = Some(names.iter().map(|s| s.to_string()).collect());
        self
    }

    pub fn output_elem(mut self, elem: DataType) -> OneNode {
        self.output_elem = elem;
        self
    }

    pub fn proto(&self) -> ModelProto {
        let mut graph = GraphProto {
            name: "one_node".into(),
            ..Default::default()
        };
        for value in &self.values {
            match value {
                Value::Input { name, elem, shape } => {
                    graph.input.push(value_info(name, *elem, Some(shape)))
                }
                Value::Init(t) => graph.initializer.push((**t).clone()),
            }
        }
        let inputs = self
            .node_inputs
            .clone()
            .unwrap_or_else(|| self.values.iter().map(|v| v.name().to_string()).collect());
        graph.node.push(NodeProto {
            input: inputs,
            output: vec!["output".into()],
            name: self.node_name.clone(),
            op_type: self.op_type.clone(),
            attribute: self.attributes.clone(),
            ..Default::default()
        });
        graph
            .output
            .push(value_info("output", self.output_elem, None));
        ModelProto {
            ir_version: 8,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: self.opset,
            }],
            producer_name: "integration-tests".into(),
            graph: Some(graph),
            ..Default::default()
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.proto().encode_to_vec()
    }

    /// `model_for_read` through the plugin's `onnx()` (`onnx_strict()`
    /// when [`OneNode::strict`]).
    pub fn load(&self) -> TractResult<InferenceModel> {
        let bytes = self.bytes();
        let onnx = if self.strict {
            tract_onnx_scatter::onnx_strict()
        } else {
            tract_onnx_scatter::onnx()
        };
        onnx.model_for_read(&mut &bytes[..])
    }

    /// Loaded, optimized and made runnable: every load-time check has run.
    pub fn compile(&self) -> TractResult<std::sync::Arc<TypedSimplePlan>> {
        self.load()?.into_optimized()?.into_runnable()
    }

    /// Compiles, then runs on `inputs` (the graph inputs, in order).
    pub fn run(&self, inputs: TVec<TValue>) -> TractResult<TVec<TValue>> {
        self.compile()?.run(inputs)
    }
}

fn value_info(name: &str, elem: DataType, shape: Option<&[Dim]>) -> ValueInfoProto {
    let shape = shape.map(|dims| TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| Dimension {
                value: Some(match d {
                    Dim::Val(v) => dimension::Value::DimValue(*v),
                    Dim::Sym(s) => dimension::Value::DimParam(s.to_string()),
                }),
                ..Default::default()
            })
            .collect(),
    });
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

/// The whole error chain, outermost first, joined with " | ".
pub fn chain(err: &anyhow::Error) -> String {
    err.chain()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// `f()`, failing the test with `what` when it panics.
pub fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(t) => t,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("{what}: panicked: {msg}")
        }
    }
}

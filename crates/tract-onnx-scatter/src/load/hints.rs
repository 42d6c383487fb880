//! Facts an exporter declares for intermediate values, read as hints ([`soften`]).
//!
//! tract applies a graph's `value_info` (and a subgraph's declared inputs and outputs) as hard
//! facts, so a fact that contradicts what the model's inputs prove stops the load or the
//! typing: dynamo names a scan body's batch `s77` where the graph input says `batch`
//! ("Impossible to unify Sym(s77) with Sym(batch)"), jax2onnx writes a sentinel symbol for a
//! dim it does not track, and pinning an input to the data's shape contradicts every symbol the
//! exporter repeated ("… Sym(batch) with Val(2)"). The symbols of those declarations are the
//! exporter's names, not facts of the model: an intermediate value's dims follow from the
//! inputs' facts. Contract: docs/contract.md, "The loader".

use std::collections::BTreeSet;

use tract_onnx::pb::tensor_proto::DataType;
use tract_onnx::pb::tensor_shape_proto::dimension::Value as Dim;
use tract_onnx::pb::{GraphProto, ModelProto, ValueInfoProto, type_proto};

/// What [`soften`] changed, for its log line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Softened {
    /// Symbols the main graph's inputs declare, read as unknown where an
    /// intermediate fact repeats them.
    pub(crate) input_symbols: BTreeSet<String>,
    /// Symbols no graph input declares (an exporter's own names).
    pub(crate) other_symbols: BTreeSet<String>,
    /// Intermediate values whose integer type was dropped.
    pub(crate) integer_types: usize,
}

impl Softened {
    /// Whether nothing was changed (no log line is due).
    pub(crate) fn is_empty(&self) -> bool {
        self.input_symbols.is_empty() && self.other_symbols.is_empty() && self.integer_types == 0
    }
}

/// Whether [`soften`] would change `model`.
pub(crate) fn needs_softening(model: &ModelProto) -> bool {
    let Some(graph) = &model.graph else {
        return false;
    };
    let mut found = false;
    visit(graph, true, &mut |info, role| {
        found |= symbolic_dims(info) > 0 || (role == Role::ValueInfo && drops_type(info));
    });
    found
}

/// Reads the intermediate facts of `model` as hints: in every graph (nested ones included),
/// each dim that `value_info`, a subgraph's inputs or outputs, or the main graph's outputs
/// name by a symbol (`dim_param`) becomes an unknown dim, and `value_info` of an integer type
/// loses its type, as tract already treats int64 (integers may be shape values, which tract
/// carries as TDim). Element types of other values, ranks and numeric dims stay. The main
/// graph's inputs are the model's facts and stay as declared.
pub(crate) fn soften(model: &mut ModelProto) -> Softened {
    let mut softened = Softened::default();
    let Some(graph) = &mut model.graph else {
        return softened;
    };
    let declared: BTreeSet<String> = graph
        .input
        .iter()
        .flat_map(|i| dim_params(i).map(str::to_string).collect::<Vec<_>>())
        .collect();
    visit_mut(graph, true, &mut |info, role| {
        if role == Role::ValueInfo && drops_type(info) {
            set_type_unknown(info);
            softened.integer_types += 1;
        }
        for name in take_dim_params(info) {
            if declared.contains(&name) {
                softened.input_symbols.insert(name);
            } else {
                softened.other_symbols.insert(name);
            }
        }
    });
    softened
}

/// Which declaration of a graph a value info is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    ValueInfo,
    /// A subgraph's input or output, or the main graph's output.
    Boundary,
}

fn visit(graph: &GraphProto, main: bool, f: &mut dyn FnMut(&ValueInfoProto, Role)) {
    for info in &graph.value_info {
        f(info, Role::ValueInfo);
    }
    let inputs = if main { &[][..] } else { &graph.input[..] };
    for info in inputs.iter().chain(&graph.output) {
        f(info, Role::Boundary);
    }
    for node in &graph.node {
        for attr in &node.attribute {
            for g in attr.g.iter().chain(&attr.graphs) {
                visit(g, false, f);
            }
        }
    }
}

fn visit_mut(graph: &mut GraphProto, main: bool, f: &mut dyn FnMut(&mut ValueInfoProto, Role)) {
    for info in &mut graph.value_info {
        f(info, Role::ValueInfo);
    }
    if !main {
        for info in &mut graph.input {
            f(info, Role::Boundary);
        }
    }
    for info in &mut graph.output {
        f(info, Role::Boundary);
    }
    for node in &mut graph.node {
        for attr in &mut node.attribute {
            for g in attr.g.iter_mut().chain(&mut attr.graphs) {
                visit_mut(g, false, f);
            }
        }
    }
}

fn tensor_type(info: &ValueInfoProto) -> Option<&type_proto::Tensor> {
    match info.r#type.as_ref()?.value.as_ref()? {
        type_proto::Value::TensorType(t) => Some(t),
    }
}

fn tensor_type_mut(info: &mut ValueInfoProto) -> Option<&mut type_proto::Tensor> {
    match info.r#type.as_mut()?.value.as_mut()? {
        type_proto::Value::TensorType(t) => Some(t),
    }
}

fn dim_params(info: &ValueInfoProto) -> impl Iterator<Item = &str> {
    tensor_type(info)
        .and_then(|t| t.shape.as_ref())
        .into_iter()
        .flat_map(|s| &s.dim)
        .filter_map(|d| match &d.value {
            Some(Dim::DimParam(p)) if p != "?" => Some(p.as_str()),
            _ => None,
        })
}

fn symbolic_dims(info: &ValueInfoProto) -> usize {
    dim_params(info).count()
}

/// The dim_params of `info`, each replaced by an unknown dim.
fn take_dim_params(info: &mut ValueInfoProto) -> Vec<String> {
    let Some(shape) = tensor_type_mut(info).and_then(|t| t.shape.as_mut()) else {
        return vec![];
    };
    let mut taken = vec![];
    for dim in &mut shape.dim {
        if let Some(Dim::DimParam(p)) = &dim.value
            && p != "?"
        {
            taken.push(p.clone());
            dim.value = None;
        }
    }
    taken
}

/// Integer types other than int64, which tract already reads as "an
/// integer, maybe a shape value".
fn drops_type(info: &ValueInfoProto) -> bool {
    tensor_type(info).is_some_and(|t| {
        [
            DataType::Int8,
            DataType::Int16,
            DataType::Int32,
            DataType::Uint8,
            DataType::Uint16,
            DataType::Uint32,
            DataType::Uint64,
        ]
        .iter()
        .any(|dt| *dt as i32 == t.elem_type)
    })
}

/// The type tract reads as "an integer of a type analysis decides": int64,
/// whose type it drops from a value_info.
fn set_type_unknown(info: &mut ValueInfoProto) {
    if let Some(t) = tensor_type_mut(info) {
        t.elem_type = DataType::Int64 as i32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::pb::{NodeProto, TensorShapeProto, TypeProto, tensor_shape_proto};

    fn info(name: &str, elem_type: DataType, dims: &[&str]) -> ValueInfoProto {
        let dim = dims
            .iter()
            .map(|d| tensor_shape_proto::Dimension {
                value: Some(match d.parse::<i64>() {
                    Ok(v) => Dim::DimValue(v),
                    Err(_) => Dim::DimParam(d.to_string()),
                }),
                ..Default::default()
            })
            .collect();
        ValueInfoProto {
            name: name.into(),
            r#type: Some(TypeProto {
                value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                    elem_type: elem_type as i32,
                    shape: Some(TensorShapeProto { dim }),
                })),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn dims(info: &ValueInfoProto) -> Vec<String> {
        tensor_type(info)
            .unwrap()
            .shape
            .as_ref()
            .unwrap()
            .dim
            .iter()
            .map(|d| match &d.value {
                Some(Dim::DimValue(v)) => v.to_string(),
                Some(Dim::DimParam(p)) => p.clone(),
                None => "?".into(),
            })
            .collect()
    }

    fn model() -> ModelProto {
        let body = GraphProto {
            input: vec![info("h", DataType::Float, &["s77", "6"])],
            output: vec![info("h2", DataType::Float, &["batch", "6"])],
            value_info: vec![info("t", DataType::Float, &["s12", "6"])],
            ..Default::default()
        };
        let scan = NodeProto {
            op_type: "Scan".into(),
            attribute: vec![tract_onnx::pb::AttributeProto {
                name: "body".into(),
                g: Some(body),
                ..Default::default()
            }],
            ..Default::default()
        };
        ModelProto {
            graph: Some(GraphProto {
                node: vec![scan],
                input: vec![info("x", DataType::Float, &["batch", "T", "4"])],
                output: vec![info("y", DataType::Float, &["batch", "T", "6"])],
                value_info: vec![
                    info("a", DataType::Float, &["batch", "SENTINEL", "6"]),
                    info("n", DataType::Int32, &["2"]),
                ],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn intermediate_symbols_become_unknown_dims_and_input_facts_stay() {
        let mut m = model();
        assert!(needs_softening(&m));
        let softened = soften(&mut m);
        let g = m.graph.as_ref().unwrap();
        assert_eq!(dims(&g.input[0]), ["batch", "T", "4"]);
        assert_eq!(dims(&g.output[0]), ["?", "?", "6"]);
        assert_eq!(dims(&g.value_info[0]), ["?", "?", "6"]);
        let body = g.node[0].attribute[0].g.as_ref().unwrap();
        assert_eq!(dims(&body.input[0]), ["?", "6"]);
        assert_eq!(dims(&body.output[0]), ["?", "6"]);
        assert_eq!(dims(&body.value_info[0]), ["?", "6"]);
        assert_eq!(
            softened.input_symbols.into_iter().collect::<Vec<_>>(),
            ["T", "batch"]
        );
        assert_eq!(
            softened.other_symbols.into_iter().collect::<Vec<_>>(),
            ["SENTINEL", "s12", "s77"]
        );
    }

    #[test]
    fn integer_value_info_loses_its_type_and_keeps_its_numeric_dims() {
        let mut m = model();
        let softened = soften(&mut m);
        let n = &m.graph.as_ref().unwrap().value_info[1];
        assert_eq!(tensor_type(n).unwrap().elem_type, DataType::Int64 as i32);
        assert_eq!(dims(n), ["2"]);
        assert_eq!(softened.integer_types, 1);
        assert!(!needs_softening(&m), "a second pass changes nothing");
    }
}

//! What tract 0.23.9's parser would panic on, refused before it parses.
//!
//! A hostile file must give an error, never a crash. tract's ONNX parser panics on a few
//! malformed models whatever their ops (a graph output nobody produces, a tensor past
//! `isize::MAX` bytes, raw string data, an element type it lacks, `If` branches of different
//! output counts, a `Transpose` perm that is no permutation): [`validate`] lists them and
//! refuses each with an error naming the graph, the element and the value. Contract:
//! docs/contract.md, "The loader".

use std::collections::HashSet;

use tract_hir::internal::*;
use tract_onnx::pb::tensor_proto::DataType;
use tract_onnx::pb::tensor_shape_proto::dimension::Value as Dim;
use tract_onnx::pb::{GraphProto, ModelProto, TensorProto, type_proto};

/// Refuses what tract's parser would panic on, whatever the model's ops:
///
/// - a graph output that no node, input or initializer of its graph produces (it indexes its
///   name map with every output name);
/// - a tensor (initializer or `Constant` value) whose dims, zeros left out, times its element
///   size pass `isize::MAX`: tract builds typed data through ndarray and unwraps its own size
///   check;
/// - a graph input declared with such dims (typing makes a tensor of them);
/// - string data given as raw bytes, and element types it has no Rust type for (bfloat16,
///   complex, float8, 4-bit types): `unimplemented!()`;
/// - an `If` whose two branches have different output counts (its analysis unwraps the op's
///   output count, which errs on them);
/// - a `Transpose` whose `perm` is not a permutation (`[1, 0, 0]`): tract turns it into axis
///   moves in a loop that never ends, allocating until the process aborts.
///
/// Walks every graph of the model, nested ones included, and returns an error naming the
/// graph, the element and the value; it reads metadata only (no tensor data is copied).
pub(crate) fn validate(model: &ModelProto) -> TractResult<()> {
    let Some(graph) = &model.graph else {
        return Ok(()); // tract's own error: "model proto does not contain a graph"
    };
    validate_graph(graph, "the main graph")
}

fn validate_graph(graph: &GraphProto, which: &str) -> TractResult<()> {
    let mut produced: HashSet<&str> = HashSet::new();
    produced.extend(graph.input.iter().map(|i| i.name.as_str()));
    produced.extend(graph.initializer.iter().map(|t| t.name.as_str()));
    for node in &graph.node {
        produced.extend(node.output.iter().map(String::as_str));
    }
    for output in &graph.output {
        ensure!(
            produced.contains(output.name.as_str()),
            "{which}: output '{}' is produced by no node, input or initializer of the graph",
            output.name
        );
    }
    for init in &graph.initializer {
        check_tensor(init, &format!("{which}: initializer '{}'", init.name))?;
    }
    for input in &graph.input {
        check_declared_input(input, which)?;
    }
    for node in &graph.node {
        let name = super::node_label(node);
        if node.op_type == "If" {
            check_if_branches(node, &name, which)?;
        }
        if node.op_type == "Transpose" {
            check_transpose_perm(node, &name, which)?;
        }
        for attr in &node.attribute {
            let what = format!(
                "{which}: node '{name}' ({}), attribute '{}'",
                node.op_type, attr.name
            );
            for t in attr.t.iter().chain(&attr.tensors) {
                check_tensor(t, &what)?;
            }
            for g in attr.g.iter().chain(&attr.graphs) {
                validate_graph(g, &format!("the graph of {what}"))?;
            }
        }
    }
    Ok(())
}

/// An `If`'s branches give the node's outputs: as many each.
fn check_if_branches(node: &tract_onnx::pb::NodeProto, name: &str, which: &str) -> TractResult<()> {
    let branch = |attr: &str| {
        node.attribute
            .iter()
            .find(|a| a.name == attr)
            .and_then(|a| a.g.as_ref())
            .map(|g| g.output.len())
    };
    if let (Some(then), Some(otherwise)) = (branch("then_branch"), branch("else_branch")) {
        ensure!(
            then == otherwise,
            "{which}: node '{name}' (If): then_branch has {then} outputs, else_branch {otherwise}: both branches must give the node's outputs"
        );
    }
    Ok(())
}

/// A `Transpose`'s `perm`, when given, holds each of `0..len` once.
fn check_transpose_perm(
    node: &tract_onnx::pb::NodeProto,
    name: &str,
    which: &str,
) -> TractResult<()> {
    let Some(perm) = node.attribute.iter().find(|a| a.name == "perm") else {
        return Ok(());
    };
    let len = perm.ints.len();
    let mut seen = vec![false; len];
    for (ix, &axis) in perm.ints.iter().enumerate() {
        let slot = usize::try_from(axis).ok().filter(|&a| a < len);
        ensure!(
            slot.is_some_and(|a| !std::mem::replace(&mut seen[a], true)),
            "{which}: node '{name}' (Transpose): perm {:?} is not a permutation: perm[{ix}] = {axis} is {}; each of 0..{len} must appear once",
            perm.ints,
            if slot.is_some() {
                "repeated".to_string()
            } else {
                format!("outside 0..{len}")
            }
        );
    }
    Ok(())
}

/// The element types tract 0.23.9 has a Rust type for, by ONNX code, and
/// their sizes in bytes (strings: the size of a `String`).
fn element(code: i32) -> Option<(DataType, usize)> {
    let dt = DataType::try_from(code).ok()?;
    let size = match dt {
        DataType::Float | DataType::Int32 | DataType::Uint32 => 4,
        DataType::Uint8 | DataType::Int8 | DataType::Bool => 1,
        DataType::Uint16 | DataType::Int16 | DataType::Float16 => 2,
        DataType::Int64 | DataType::Uint64 | DataType::Double => 8,
        DataType::String => std::mem::size_of::<String>(),
        _ => return None,
    };
    Some((dt, size))
}

fn type_name(code: i32) -> String {
    match DataType::try_from(code) {
        Ok(dt) => format!("{dt:?} ({code})"),
        Err(_) => format!("an unknown element type ({code})"),
    }
}

/// Whether the dims, zeros left out, times `size` bytes fit `isize::MAX`.
fn fits(dims: impl Iterator<Item = u64>, size: usize) -> bool {
    dims.filter(|d| *d != 0)
        .try_fold(size as u64, |acc, d| acc.checked_mul(d))
        .is_some_and(|bytes| bytes <= isize::MAX as u64)
}

fn check_tensor(t: &TensorProto, what: &str) -> TractResult<()> {
    let Some((dt, size)) = element(t.data_type) else {
        bail!(
            "{what}: element type {} is not supported by tract 0.23.9",
            type_name(t.data_type)
        );
    };
    if let Some(d) = t.dims.iter().find(|d| **d < 0) {
        bail!("{what}: dims {:?} hold a negative dim ({d})", t.dims);
    }
    ensure!(
        fits(t.dims.iter().map(|&d| d as u64), size),
        "{what}: dims {:?} of {dt:?} overflow: more than isize::MAX bytes",
        t.dims
    );
    ensure!(
        dt != DataType::String || t.raw_data.is_empty(),
        "{what}: string data given as raw bytes (ONNX stores strings in string_data)"
    );
    Ok(())
}

fn check_declared_input(input: &tract_onnx::pb::ValueInfoProto, which: &str) -> TractResult<()> {
    let Some(type_proto::Value::TensorType(t)) =
        input.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return Ok(());
    };
    let Some((dt, size)) = element(t.elem_type) else {
        return Ok(()); // tract's own error: "Unknown DatumType"
    };
    let Some(shape) = &t.shape else {
        return Ok(());
    };
    let dims: Vec<i64> = shape
        .dim
        .iter()
        .filter_map(|d| match d.value {
            Some(Dim::DimValue(v)) => Some(v),
            _ => None,
        })
        .collect();
    ensure!(
        fits(dims.iter().map(|&d| d.max(0) as u64), size),
        "{which}: input '{}' declares dims {dims:?} of {dt:?}: more than isize::MAX bytes",
        input.name
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::pb::{NodeProto, ValueInfoProto};

    fn model(graph: GraphProto) -> ModelProto {
        ModelProto {
            graph: Some(graph),
            ..Default::default()
        }
    }

    fn tensor(name: &str, data_type: DataType, dims: &[i64]) -> TensorProto {
        TensorProto {
            name: name.into(),
            data_type: data_type as i32,
            dims: dims.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn an_output_nobody_produces_is_named() {
        let g = GraphProto {
            output: vec![ValueInfoProto {
                name: "nobody".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(
            validate(&model(g)).unwrap_err().to_string(),
            "the main graph: output 'nobody' is produced by no node, input or initializer of the graph"
        );
    }

    #[test]
    fn a_zero_volume_initializer_of_huge_dims_is_refused() {
        let g = GraphProto {
            initializer: vec![tensor("i", DataType::Int64, &[1 << 40, 1 << 30, 0])],
            ..Default::default()
        };
        assert_eq!(
            validate(&model(g)).unwrap_err().to_string(),
            "the main graph: initializer 'i': dims [1099511627776, 1073741824, 0] of Int64 overflow: more than isize::MAX bytes"
        );
    }

    #[test]
    fn a_transpose_perm_that_repeats_an_axis_is_named() {
        let transpose = |perm: &[i64]| NodeProto {
            name: "t".into(),
            op_type: "Transpose".into(),
            attribute: vec![tract_onnx::pb::AttributeProto {
                name: "perm".into(),
                ints: perm.to_vec(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let g = |perm: &[i64]| GraphProto {
            node: vec![transpose(perm)],
            ..Default::default()
        };
        assert_eq!(
            validate(&model(g(&[1, 0, 0]))).unwrap_err().to_string(),
            "the main graph: node 't' (Transpose): perm [1, 0, 0] is not a permutation: perm[2] = 0 is repeated; each of 0..3 must appear once"
        );
        assert_eq!(
            validate(&model(g(&[0, 3, 1]))).unwrap_err().to_string(),
            "the main graph: node 't' (Transpose): perm [0, 3, 1] is not a permutation: perm[1] = 3 is outside 0..3; each of 0..3 must appear once"
        );
        assert!(validate(&model(g(&[2, 0, 1]))).is_ok());
    }

    #[test]
    fn an_if_whose_branches_differ_in_arity_is_named() {
        let branch = |name: &str, outputs: usize| tract_onnx::pb::AttributeProto {
            name: name.into(),
            g: Some(GraphProto {
                output: (0..outputs)
                    .map(|i| ValueInfoProto {
                        name: format!("{name}{i}"),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let node = NodeProto {
            name: "choose".into(),
            op_type: "If".into(),
            attribute: vec![branch("then_branch", 1), branch("else_branch", 2)],
            ..Default::default()
        };
        let g = GraphProto {
            node: vec![node],
            ..Default::default()
        };
        assert_eq!(
            validate(&model(g)).unwrap_err().to_string(),
            "the main graph: node 'choose' (If): then_branch has 1 outputs, else_branch 2: both branches must give the node's outputs"
        );
    }

    #[test]
    fn element_types_tract_lacks_and_raw_strings_are_refused_in_nested_graphs_too() {
        let body = GraphProto {
            initializer: vec![tensor("b", DataType::Bfloat16, &[2])],
            ..Default::default()
        };
        let node = NodeProto {
            name: "loop".into(),
            op_type: "Loop".into(),
            attribute: vec![tract_onnx::pb::AttributeProto {
                name: "body".into(),
                g: Some(body),
                ..Default::default()
            }],
            ..Default::default()
        };
        let g = GraphProto {
            node: vec![node],
            ..Default::default()
        };
        assert_eq!(
            validate(&model(g)).unwrap_err().to_string(),
            "the graph of the main graph: node 'loop' (Loop), attribute 'body': initializer 'b': element type Bfloat16 (16) is not supported by tract 0.23.9"
        );
        let mut s = tensor("s", DataType::String, &[1]);
        s.raw_data = b"x".to_vec();
        let g = GraphProto {
            initializer: vec![s],
            ..Default::default()
        };
        assert!(
            validate(&model(g))
                .unwrap_err()
                .to_string()
                .contains("raw bytes")
        );
    }
}

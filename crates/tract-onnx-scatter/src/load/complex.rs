//! complex64 and complex128 models, read as float32 / float64 tensors with a trailing axis of 2
//! (real, imaginary): ONNX's own interleaved layout.
//!
//! tract 0.23.9 reads no complex tensor. The loader rewrites a model that holds one
//! ([`holds_complex`]) before tract parses it ([`widen`]): tensors and declarations gain the
//! pair axis, the nodes reading a complex value act on it ([`SUPPORTED`]), and a scatter of
//! complex data keeps its complex shapes and computes complex reductions. A caller feeds a
//! complex input as the float tensor of its interleaved parts (`[.., 2]`) and reads complex
//! outputs alike.
//!
//! Contract: docs/contract.md, "complex64 and complex128".
//!
//! **Architecture invariant:** a model with no complex value is not touched.

use std::collections::HashMap;

use tract_hir::internal::*;
use tract_onnx::pb::tensor_proto::DataType;
use tract_onnx::pb::tensor_shape_proto::Dimension;
use tract_onnx::pb::tensor_shape_proto::dimension::Value as Dim;
use tract_onnx::pb::type_proto::Value as TypeValue;
use tract_onnx::pb::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeProto};

use crate::parse::attributes::ONNX_ELEM_TYPE;

const COMPLEX64: i32 = DataType::Complex64 as i32;
const COMPLEX128: i32 = DataType::Complex128 as i32;

/// The ops a complex value may reach, and what changes for them.
pub(crate) const SUPPORTED: &[&str] = &[
    "Identity",
    "Transpose",
    "Reshape",
    "Flatten",
    "Concat",
    "Split",
    "Slice",
    "Squeeze",
    "Unsqueeze",
    "Gather",
    "Expand",
    "Tile",
    "Scatter",
    "ScatterElements",
    "ScatterND",
    "TensorScatter",
];

/// The float type holding the parts of complex type `code`.
fn part_type(code: i32) -> Option<i32> {
    match code {
        COMPLEX64 => Some(DataType::Float as i32),
        COMPLEX128 => Some(DataType::Double as i32),
        _ => None,
    }
}

/// Whether any graph of `model` holds a complex tensor or declaration.
pub(crate) fn holds_complex(model: &ModelProto) -> bool {
    model.graph.as_ref().is_some_and(graph_holds_complex)
}

fn graph_holds_complex(graph: &GraphProto) -> bool {
    graph
        .initializer
        .iter()
        .any(|t| part_type(t.data_type).is_some())
        || graph
            .input
            .iter()
            .chain(&graph.output)
            .chain(&graph.value_info)
            .any(|v| complex_elem(v.r#type.as_ref()).is_some())
        || graph.node.iter().any(|node| {
            node.attribute.iter().any(|a| {
                a.t.iter()
                    .chain(&a.tensors)
                    .any(|t| part_type(t.data_type).is_some())
                    || a.g.iter().chain(&a.graphs).any(graph_holds_complex)
            })
        })
}

fn complex_elem(t: Option<&TypeProto>) -> Option<i32> {
    match t.and_then(|t| t.value.as_ref()) {
        Some(TypeValue::TensorType(t)) if part_type(t.elem_type).is_some() => Some(t.elem_type),
        _ => None,
    }
}

/// The pair axis appended to a complex declaration.
fn widen_type(t: &mut TypeProto) {
    if let Some(TypeValue::TensorType(t)) = &mut t.value
        && let Some(part) = part_type(t.elem_type)
    {
        t.elem_type = part;
        if let Some(shape) = &mut t.shape {
            shape.dim.push(Dimension {
                value: Some(Dim::DimValue(2)),
                ..Dimension::default()
            });
        }
    }
}

/// Rewrites every graph of `model`; the number of nodes rewritten. `opset` is the model's
/// default-domain version (it decides how an added `Unsqueeze` takes its axes).
///
/// - complex tensors become float tensors of dims `[.., 2]` holding the same bytes; complex
///   declarations become float declarations with the trailing 2;
/// - each node that reads a complex value is rewritten so that it does on the pair axis what
///   ONNX does on complex elements ([`SUPPORTED`]): axes counted from the end move one place
///   left, shapes gain the trailing 2 (`Tile` repeats it once), a `Flatten` splits it off
///   again;
/// - a `Scatter`, `ScatterElements` or `ScatterND` of complex data keeps its axis, indices
///   and shapes as written and is marked complex ([`ONNX_ELEM_TYPE`]): the op sees the
///   complex shapes, so its checks and messages are in the user's terms, and its reductions
///   are complex arithmetic (`mul` multiplies complex numbers). `max` and `min` have no order
///   on complex numbers: a load error naming the node, as is any other op reading a complex
///   value.
pub(crate) fn widen(model: &mut ModelProto) -> TractResult<usize> {
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map(|o| o.version)
        .unwrap_or(0);
    let Some(graph) = model.graph.as_mut() else {
        return Ok(0);
    };
    let mut names = Names::default();
    widen_graph(graph, &HashMap::new(), "the main graph", opset, &mut names)
}

/// Fresh value names for the nodes and constants the rewrite adds.
#[derive(Default)]
struct Names(usize);

impl Names {
    fn fresh(&mut self, base: &str) -> String {
        self.0 += 1;
        format!("{base}.complex_{}", self.0)
    }
}

/// The complex values in scope: name → ONNX type (complex64 or complex128).
type ComplexValues = HashMap<String, i32>;

fn widen_graph(
    graph: &mut GraphProto,
    outer: &ComplexValues,
    which: &str,
    opset: i64,
    names: &mut Names,
) -> TractResult<usize> {
    let mut complex: ComplexValues = outer.clone();
    for init in &mut graph.initializer {
        if part_type(init.data_type).is_some() {
            complex.insert(init.name.clone(), init.data_type);
            widen_tensor(init, &format!("{which}: initializer '{}'", init.name))?;
        }
    }
    for input in &graph.input {
        if let Some(code) = complex_elem(input.r#type.as_ref()) {
            complex.insert(input.name.clone(), code);
        }
    }
    for v in graph
        .input
        .iter_mut()
        .chain(&mut graph.output)
        .chain(&mut graph.value_info)
    {
        v.r#type.iter_mut().for_each(widen_type);
    }
    let mut rewritten = 0;
    let mut nodes = Vec::with_capacity(graph.node.len());
    let mut constants = vec![];
    for mut node in std::mem::take(&mut graph.node) {
        let name = super::node_label(&node);
        let mut complex_attribute = None;
        for attr in &mut node.attribute {
            let what = format!(
                "{which}: node '{name}' ({}), attribute '{}'",
                node.op_type, attr.name
            );
            for t in attr.t.iter_mut().chain(&mut attr.tensors) {
                if part_type(t.data_type).is_some() {
                    complex_attribute = Some(t.data_type);
                    widen_tensor(t, &what)?;
                }
            }
            for g in attr.g.iter_mut().chain(&mut attr.graphs) {
                rewritten +=
                    widen_graph(g, &complex, &format!("the graph of {what}"), opset, names)?;
            }
        }
        let reads: Vec<Option<i32>> = node.input.iter().map(|i| complex.get(i).copied()).collect();
        if let Some(code) = complex_attribute
            && node.op_type == "Constant"
        {
            complex.extend(node.output.iter().map(|o| (o.clone(), code)));
            nodes.push(node);
            continue;
        }
        let Some(code) = reads.iter().flatten().next().copied() else {
            nodes.push(node);
            continue;
        };
        let site = format!("{which}: node '{name}' ({})", node.op_type);
        let (mut before, mut after) = (vec![], vec![]);
        rewrite_node(
            &mut node,
            &reads,
            &site,
            opset,
            names,
            &mut before,
            &mut after,
            &mut constants,
        )?;
        rewritten += 1;
        complex.extend(
            node.output
                .iter()
                .chain(after.iter().flat_map(|n| &n.output))
                .filter(|o| !o.is_empty())
                .map(|o| (o.clone(), code)),
        );
        nodes.extend(before);
        nodes.push(node);
        nodes.extend(after);
    }
    graph.initializer.extend(constants);
    graph.node = nodes;
    Ok(rewritten)
}

/// `node`, which reads a complex value (`reads[i]`: the ONNX type of
/// input `i`, when complex), made to act on the pair axis as ONNX acts on
/// complex elements. Nodes it needs first go to `before`, nodes that
/// finish its outputs to `after`, constants to `constants`.
#[allow(clippy::too_many_arguments)]
fn rewrite_node(
    node: &mut NodeProto,
    reads: &[Option<i32>],
    site: &str,
    opset: i64,
    names: &mut Names,
    before: &mut Vec<NodeProto>,
    after: &mut Vec<NodeProto>,
    constants: &mut Vec<TensorProto>,
) -> TractResult<()> {
    let op = node.op_type.clone();
    match op.as_str() {
        "Identity" => (),
        "Transpose" => {
            let Some(perm) = attr_mut(node, "perm") else {
                bail!("{site}: a Transpose of a complex value needs its perm attribute");
            };
            let rank = perm.ints.len() as i64;
            perm.ints.push(rank);
        }
        "Reshape" | "Expand" | "Tile" => {
            // The target shape gains the pair axis; Tile's repeats repeat
            // it once.
            let shape = input(node, 1, site)?;
            let widened = names.fresh(&shape);
            let pair = names.fresh(&shape);
            constants.push(int64_tensor(&pair, &[if op == "Tile" { 1 } else { 2 }]));
            before.push(NodeProto {
                name: names.fresh(&node.name),
                op_type: "Concat".into(),
                input: vec![shape, pair],
                output: vec![widened.clone()],
                attribute: vec![int_attr("axis", 0)],
                ..NodeProto::default()
            });
            node.input[1] = widened;
        }
        "Concat" | "Gather" | "Split" => shift_axis_attr(node, "axis", 0),
        "Flatten" => {
            // Flatten the complex axes, then split the pair off again:
            // `[a.., b.., 2]` flattens at the same axis to `[A, B * 2]`,
            // reshaped to `[A, B, 2]`.
            shift_axis_attr(node, "axis", 1);
            let Some(output) = node.output.first().filter(|o| !o.is_empty()).cloned() else {
                bail!("{site}: a Flatten without output");
            };
            let flat = names.fresh(&output);
            let target = names.fresh(&output);
            constants.push(int64_tensor(&target, &[0, -1, 2]));
            after.push(NodeProto {
                name: names.fresh(&node.name),
                op_type: "Reshape".into(),
                input: vec![flat.clone(), target],
                output: vec![output],
                ..NodeProto::default()
            });
            node.output[0] = flat;
        }
        "Slice" => {
            if opset < 10 {
                shift_axes_attr(node, "axes");
            } else if let Some(axes) = node.input.get(3).filter(|a| !a.is_empty()).cloned() {
                node.input[3] = shifted_axes(&axes, names, before, constants);
            }
        }
        "Squeeze" | "Unsqueeze" => {
            if opset < 13 {
                shift_axes_attr(node, "axes");
            } else if let Some(axes) = node.input.get(1).filter(|a| !a.is_empty()).cloned() {
                node.input[1] = shifted_axes(&axes, names, before, constants);
            } else if op == "Unsqueeze" {
                bail!("{site}: an Unsqueeze without axes");
            }
        }
        "Scatter" | "ScatterElements" | "ScatterND" => {
            check_reduction(node, site)?;
            let (data, updates) = (
                reads.first().copied().flatten(),
                reads.get(2).copied().flatten(),
            );
            let Some(code) = data.filter(|d| Some(*d) == updates) else {
                bail!("{site}: data and updates must both be complex, of one type");
            };
            node.attribute
                .push(int_attr(ONNX_ELEM_TYPE, i64::from(code)));
        }
        "TensorScatter" => shift_axis_attr(node, "axis", -2),
        _ => bail!(
            "{site}: reads a complex value; complex values may only reach {} (tract has no complex type)",
            SUPPORTED.join(", ")
        ),
    }
    Ok(())
}

/// Complex numbers have no order: no `max` or `min` reduction. Other
/// values are the op's to check.
fn check_reduction(node: &NodeProto, site: &str) -> TractResult<()> {
    let reduction = super::reduction_attribute(node);
    match reduction.as_str() {
        "max" | "min" => bail!(
            "{site}: reduction '{reduction}' on complex data: complex numbers have no order (supported: none, add, mul)"
        ),
        _ => Ok(()),
    }
}

fn input(node: &NodeProto, i: usize, site: &str) -> TractResult<String> {
    node.input
        .get(i)
        .filter(|s| !s.is_empty())
        .cloned()
        .with_context(|| format!("{site}: input {i} is missing"))
}

fn attr_mut<'a>(node: &'a mut NodeProto, name: &str) -> Option<&'a mut AttributeProto> {
    node.attribute.iter_mut().find(|a| a.name == name)
}

/// An axis counted from the end (negative) moves one place left past the
/// pair axis; `default` is the attribute's value when absent.
fn shift_axis_attr(node: &mut NodeProto, name: &str, default: i64) {
    match attr_mut(node, name) {
        // i64::MIN stays: no rank makes it valid, and the op refuses it.
        Some(a) if a.i < 0 => a.i = a.i.saturating_sub(1),
        Some(_) => (),
        None if default < 0 => node.attribute.push(int_attr(name, default - 1)),
        None => (),
    }
}

fn shift_axes_attr(node: &mut NodeProto, name: &str) {
    if let Some(a) = attr_mut(node, name) {
        a.ints
            .iter_mut()
            .filter(|v| **v < 0)
            .for_each(|v| *v = v.saturating_sub(1));
    }
}

/// The axes input `axes` with its negative values moved one place left,
/// computed by nodes added to `before`: `axes - (axes < 0)`.
fn shifted_axes(
    axes: &str,
    names: &mut Names,
    before: &mut Vec<NodeProto>,
    constants: &mut Vec<TensorProto>,
) -> String {
    let zero = names.fresh("zero");
    constants.push(int64_tensor(&zero, &[]));
    let negative = names.fresh(axes);
    let shift = names.fresh(axes);
    let shifted = names.fresh(axes);
    before.push(NodeProto {
        name: names.fresh(axes),
        op_type: "Less".into(),
        input: vec![axes.into(), zero],
        output: vec![negative.clone()],
        ..NodeProto::default()
    });
    before.push(NodeProto {
        name: names.fresh(axes),
        op_type: "Cast".into(),
        input: vec![negative],
        output: vec![shift.clone()],
        attribute: vec![int_attr("to", DataType::Int64 as i64)],
        ..NodeProto::default()
    });
    before.push(NodeProto {
        name: names.fresh(axes),
        op_type: "Sub".into(),
        input: vec![axes.into(), shift],
        output: vec![shifted.clone()],
        ..NodeProto::default()
    });
    shifted
}

fn int_attr(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 2, // INT
        i,
        ..AttributeProto::default()
    }
}

/// An int64 constant: `values` of dims `[values.len()]`, or a scalar when
/// `values` is empty (zero).
fn int64_tensor(name: &str, values: &[i64]) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: if values.is_empty() {
            vec![]
        } else {
            vec![values.len() as i64]
        },
        data_type: DataType::Int64 as i32,
        int64_data: if values.is_empty() {
            vec![0]
        } else {
            values.to_vec()
        },
        ..TensorProto::default()
    }
}

/// `t`, complex, as the float tensor of its parts: dims `[.., 2]`, the
/// same bytes, after checking that the data holds the dims' volume.
fn widen_tensor(t: &mut TensorProto, what: &str) -> TractResult<()> {
    let Some(part) = part_type(t.data_type) else {
        return Ok(());
    };
    ensure!(
        t.data_location != Some(1) && t.external_data.is_empty(),
        "{what}: complex data stored outside the model is not supported"
    );
    let volume = t.dims.iter().try_fold(1usize, |acc, d| {
        usize::try_from(*d).ok().and_then(|d| acc.checked_mul(d))
    });
    let Some(parts) = volume.and_then(|v| v.checked_mul(2)) else {
        bail!("{what}: dims {:?} of complex are not a tensor's", t.dims);
    };
    let part_bytes = if t.data_type == COMPLEX64 { 4 } else { 8 };
    let held = if !t.raw_data.is_empty() {
        t.raw_data.len() / part_bytes
    } else if t.data_type == COMPLEX64 {
        t.float_data.len()
    } else {
        t.double_data.len()
    };
    let exact = t.raw_data.is_empty() || t.raw_data.len().is_multiple_of(part_bytes);
    ensure!(
        exact && held == parts,
        "{what}: complex dims {:?} take {parts} real and imaginary parts, the data holds {}",
        t.dims,
        if t.raw_data.is_empty() {
            held.to_string()
        } else {
            format!("{} bytes", t.raw_data.len())
        }
    );
    t.data_type = part;
    t.dims.push(2);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints_attr(name: &str, ints: &[i64]) -> AttributeProto {
        AttributeProto {
            name: name.into(),
            r#type: 7, // INTS
            ints: ints.to_vec(),
            ..AttributeProto::default()
        }
    }

    #[test]
    fn a_complex64_initializer_becomes_float32_with_a_pair_axis() {
        let mut t = TensorProto {
            dims: vec![2],
            data_type: COMPLEX64,
            float_data: vec![1.0, 2.0, 3.0, 4.0],
            ..TensorProto::default()
        };
        widen_tensor(&mut t, "w").unwrap();
        assert_eq!(t.data_type, DataType::Float as i32);
        assert_eq!(t.dims, [2, 2]);
        assert_eq!(t.float_data, [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn complex_data_shorter_than_its_dims_is_an_error_naming_the_tensor() {
        let mut t = TensorProto {
            dims: vec![2],
            data_type: COMPLEX128,
            raw_data: vec![0; 24],
            ..TensorProto::default()
        };
        let err = widen_tensor(&mut t, "initializer 'w'").unwrap_err();
        assert_eq!(
            err.to_string(),
            "initializer 'w': complex dims [2] take 4 real and imaginary parts, the data holds 24 bytes"
        );
    }

    #[test]
    fn an_axis_of_i64_min_stays_for_the_op_to_refuse() {
        let mut node = NodeProto {
            attribute: vec![
                int_attr("axis", i64::MIN),
                ints_attr("axes", &[i64::MIN, -1]),
            ],
            ..NodeProto::default()
        };
        shift_axis_attr(&mut node, "axis", 0);
        shift_axes_attr(&mut node, "axes");
        assert_eq!(node.attribute[0].i, i64::MIN);
        assert_eq!(node.attribute[1].ints, [i64::MIN, -2]);
    }

    #[test]
    fn a_negative_axis_moves_past_the_pair_axis_and_a_positive_one_stays() {
        let mut node = NodeProto {
            attribute: vec![int_attr("axis", -1)],
            ..NodeProto::default()
        };
        shift_axis_attr(&mut node, "axis", 0);
        assert_eq!(node.attribute[0].i, -2);
        node.attribute[0].i = 1;
        shift_axis_attr(&mut node, "axis", 0);
        assert_eq!(node.attribute[0].i, 1);
    }
}

//! bfloat16 models, read as float32 that holds bfloat16 values.
//!
//! tract 0.23.9 has no bfloat16 type and its parser reads no BFLOAT16 tensor. Every bfloat16
//! value is exactly a float32 value, so the loader rewrites a model that holds bfloat16
//! ([`holds_bfloat16`]) before tract parses it ([`widen`]): float32 tensors and declarations,
//! a [`ROUND_TO_BFLOAT16`] node wherever ONNX produces a bfloat16 value, a [`KNOWN_BFLOAT16`]
//! mark on each bfloat16 output of the main graph.
//!
//! Contract: docs/contract.md, "bfloat16".
//!
//! **Architecture invariant:** a model with no bfloat16 anywhere is not touched.

use std::collections::{HashMap, HashSet};

use tract_hir::internal::*;

use crate::ops::run::known_bfloat16::KNOWN_BFLOAT16;
use crate::parse::attributes::ONNX_ELEM_TYPE;
use tract_onnx::pb::tensor_proto::DataType;
use tract_onnx::pb::type_proto::Value as TypeValue;
use tract_onnx::pb::{AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TypeProto};

/// The op type of the nodes the loader adds to round float32 values to
/// bfloat16 values (domain [`DOMAIN`]).
pub(crate) const ROUND_TO_BFLOAT16: &str = "RoundToBfloat16";

/// The domain of [`ROUND_TO_BFLOAT16`] nodes.
pub(crate) const DOMAIN: &str = "tract_onnx_scatter.load";

const BFLOAT16: i32 = DataType::Bfloat16 as i32;
const FLOAT: i32 = DataType::Float as i32;

/// Ops whose outputs are values of their inputs (or of their attributes),
/// unchanged: their bfloat16 outputs need no rounding.
pub(crate) const MOVES_VALUES: &[&str] = &[
    "Identity",
    "Reshape",
    "Transpose",
    "Squeeze",
    "Unsqueeze",
    "Flatten",
    "Expand",
    "Concat",
    "Split",
    "Slice",
    "Gather",
    "GatherElements",
    "GatherND",
    "Tile",
    "Pad",
    "Where",
    "DepthToSpace",
    "SpaceToDepth",
    "ReverseSequence",
    "Compress",
    "ConstantOfShape",
    "Constant",
    "Max",
    "Min",
    "ReduceMax",
    "ReduceMin",
    "Relu",
    "Abs",
    "Neg",
    "Scatter",
    "ScatterElements",
    "ScatterND",
    "TensorScatter",
];

/// Ops with an output whose type is not their inputs' float type: these
/// outputs are never bfloat16 (op type, output slot; `None`: every
/// output).
pub(crate) const OTHER_TYPE_OUTPUTS: &[(&str, Option<usize>)] = &[
    ("Shape", None),
    ("Size", None),
    ("NonZero", None),
    ("ArgMax", None),
    ("ArgMin", None),
    ("Equal", None),
    ("Less", None),
    ("LessOrEqual", None),
    ("Greater", None),
    ("GreaterOrEqual", None),
    ("IsNaN", None),
    ("IsInf", None),
    ("Not", None),
    ("And", None),
    ("Or", None),
    ("Xor", None),
    ("TopK", Some(1)),
    ("MaxPool", Some(1)),
    ("Dropout", Some(1)),
    ("Unique", Some(1)),
    ("Unique", Some(2)),
    ("Unique", Some(3)),
];

/// Whether any graph of `model` holds a bfloat16 tensor, declaration or
/// cast: the cheap test before a copy of the model is rewritten.
pub(crate) fn holds_bfloat16(model: &ModelProto) -> bool {
    model.graph.as_ref().is_some_and(graph_holds_bfloat16)
}

fn graph_holds_bfloat16(graph: &GraphProto) -> bool {
    graph.initializer.iter().any(|t| t.data_type == BFLOAT16)
        || graph
            .input
            .iter()
            .chain(&graph.output)
            .chain(&graph.value_info)
            .any(|v| v.r#type.as_ref().is_some_and(type_holds_bfloat16))
        || graph.node.iter().any(|node| {
            (node.op_type == "Cast" && cast_to(node) == Some(BFLOAT16 as i64))
                || node.attribute.iter().any(|a| {
                    a.t.iter()
                        .chain(&a.tensors)
                        .any(|t| t.data_type == BFLOAT16)
                        || a.g.iter().chain(&a.graphs).any(graph_holds_bfloat16)
                })
        })
}

fn type_holds_bfloat16(t: &TypeProto) -> bool {
    matches!(&t.value, Some(TypeValue::TensorType(t)) if t.elem_type == BFLOAT16)
}

fn widen_type(t: &mut TypeProto) {
    if let Some(TypeValue::TensorType(t)) = &mut t.value
        && t.elem_type == BFLOAT16
    {
        t.elem_type = FLOAT;
    }
}

fn cast_to(node: &NodeProto) -> Option<i64> {
    node.attribute.iter().find(|a| a.name == "to").map(|a| a.i)
}

/// Rewrites every graph of `model` (nested ones included); the number of rounding nodes
/// added. An error names the graph element whose bfloat16 data does not match its dims, or
/// the scatter that would need per-update rounding.
///
/// - bfloat16 tensors (initializers, `Constant` values and every other tensor attribute)
///   become float32 tensors of the same values;
/// - bfloat16 declarations (graph inputs, outputs, `value_info`, in every graph) become
///   float32; `Cast` and `CastLike` to bfloat16 cast to float32;
/// - wherever ONNX produces a bfloat16 value that float32 arithmetic may leave between two
///   bfloat16 values, a [`ROUND_TO_BFLOAT16`] node rounds it (to nearest, ties to even):
///   after a `Cast`/`CastLike` to bfloat16, after a bfloat16 graph input, and after every
///   node computing a bfloat16 output from bfloat16 inputs, but those that only move values
///   ([`MOVES_VALUES`]), whose outputs are already bfloat16 values;
/// - each bfloat16 output of the main graph a node makes passes a [`KNOWN_BFLOAT16`] node,
///   which marks it as holding bfloat16 values ([`crate::ops::run::known_bfloat16`]): fed
///   back as an input, it is not read again;
/// - a `ScatterElements` or `ScatterND` with reduction `add` or `mul` on bfloat16 data
///   rounds after every update in ONNX: it is marked bfloat16 ([`ONNX_ELEM_TYPE`]), and the
///   op computes in bfloat16. OpenVINO's `ScatterElementsUpdate` reducing bfloat16 data
///   (`sum`, `prod`, `mean`) is a load error naming the node.
///
/// A value is bfloat16 when its producer says so: a bfloat16 tensor or input, a cast to
/// bfloat16, or a node reading a bfloat16 value or attribute, unless its op gives that output
/// another type ([`OTHER_TYPE_OUTPUTS`]) or the model declares another type for it. float32
/// arithmetic rounded once to bfloat16 equals bfloat16 arithmetic for `+ - × ÷` and `sqrt`
/// (float32's 24-bit significand is more than twice bfloat16's 8 bits plus 2), so
/// element-wise ops give onnx's reference results bit for bit.
pub(crate) fn widen(model: &mut ModelProto) -> TractResult<usize> {
    let Some(graph) = model.graph.as_mut() else {
        return Ok(0);
    };
    widen_graph(graph, &HashSet::new(), "the main graph", true)
}

/// Rewrites `graph` (`which` names it in errors; `outer`: the bfloat16
/// values it sees from outside). In the main graph (`mark_outputs`), a
/// [`KNOWN_BFLOAT16`] node marks each bfloat16 output a node makes, so that
/// it is not read again when it comes back as an input
/// ([`crate::ops::run::known_bfloat16`]).
fn widen_graph(
    graph: &mut GraphProto,
    outer: &HashSet<String>,
    which: &str,
    mark_outputs: bool,
) -> TractResult<usize> {
    let mut bf16: HashSet<String> = outer.clone();
    // What the model declares, read before the declarations are widened.
    let mut declared: HashMap<String, i32> = HashMap::new();
    for v in graph.value_info.iter().chain(&graph.output) {
        if let Some(TypeValue::TensorType(t)) = v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            declared.insert(v.name.clone(), t.elem_type);
        }
    }
    for init in &mut graph.initializer {
        if init.data_type == BFLOAT16 {
            widen_tensor(init, &format!("{which}: initializer '{}'", init.name))?;
            bf16.insert(init.name.clone());
        }
    }
    let mut rounded_inputs = vec![];
    for input in &graph.input {
        if input.r#type.as_ref().is_some_and(type_holds_bfloat16)
            && !graph.initializer.iter().any(|i| i.name == input.name)
        {
            bf16.insert(input.name.clone());
            rounded_inputs.push(input.name.clone());
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

    let mut rounding_nodes = 0;
    let mut nodes = Vec::with_capacity(graph.node.len());
    for mut node in std::mem::take(&mut graph.node) {
        let name = super::node_label(&node);
        let mut bf16_attribute = false;
        for attr in &mut node.attribute {
            let what = format!(
                "{which}: node '{name}' ({}), attribute '{}'",
                node.op_type, attr.name
            );
            bf16_attribute |= widen_attribute(attr, &bf16, &what, &mut rounding_nodes)?;
        }
        let reads_bf16 = node.input.iter().any(|i| bf16.contains(i));
        let (outputs_bf16, round) = match node.op_type.as_str() {
            "Cast" if cast_to(&node) == Some(BFLOAT16 as i64) => {
                for a in node.attribute.iter_mut().filter(|a| a.name == "to") {
                    a.i = FLOAT as i64;
                }
                (true, true)
            }
            "Cast" => (false, false),
            "CastLike" => {
                let to_bf16 = node.input.get(1).is_some_and(|i| bf16.contains(i));
                (to_bf16, to_bf16)
            }
            op => {
                let tainted = reads_bf16 || bf16_attribute;
                (tainted, tainted && !MOVES_VALUES.contains(&op))
            }
        };
        if reads_bf16 {
            mark_rounding_scatter(&mut node, &name, which, &bf16)?;
        }
        let mut rounding = vec![];
        if outputs_bf16 {
            for (slot, output) in node.output.iter_mut().enumerate() {
                if output.is_empty()
                    || gives_other_type(&node.op_type, slot)
                    || declared.get(output).is_some_and(|t| *t != BFLOAT16)
                {
                    continue;
                }
                bf16.insert(output.clone());
                if round {
                    let unrounded = format!("{output}.before_bfloat16");
                    rounding.push(round_node(
                        &unrounded,
                        output,
                        &format!("{name}.bfloat16.{slot}"),
                    ));
                    *output = unrounded;
                }
            }
        }
        nodes.push(node);
        rounding_nodes += rounding.len();
        nodes.extend(rounding);
    }
    if !rounded_inputs.is_empty() {
        let mut renamed = HashMap::new();
        let mut first = vec![];
        for input in &rounded_inputs {
            let rounded = format!("{input}.bfloat16");
            first.push(round_node(input, &rounded, &format!("{input}.bfloat16")));
            renamed.insert(input.clone(), rounded);
        }
        for node in &mut nodes {
            rename_inputs(node, &renamed);
        }
        rounding_nodes += first.len();
        first.extend(nodes);
        nodes = first;
    }
    if mark_outputs {
        mark_known_outputs(&mut nodes, &graph.output, &bf16);
    }
    graph.node = nodes;
    Ok(rounding_nodes)
}

/// Puts a [`KNOWN_BFLOAT16`] node between each bfloat16 graph output a
/// node of `nodes` makes and the graph's output of that name; the nodes
/// reading the value read it before the mark.
fn mark_known_outputs(
    nodes: &mut Vec<NodeProto>,
    outputs: &[tract_onnx::pb::ValueInfoProto],
    bf16: &HashSet<String>,
) {
    let made: HashSet<&str> = nodes
        .iter()
        .flat_map(|n| n.output.iter().map(String::as_str))
        .collect();
    let mut marked: Vec<String> = vec![];
    for output in outputs {
        let name = &output.name;
        if bf16.contains(name) && made.contains(name.as_str()) && !marked.contains(name) {
            marked.push(name.clone());
        }
    }
    if marked.is_empty() {
        return;
    }
    let renamed: HashMap<String, String> = marked
        .iter()
        .map(|o| (o.clone(), format!("{o}.before_known_bfloat16")))
        .collect();
    for node in nodes.iter_mut() {
        for output in &mut node.output {
            if let Some(new) = renamed.get(output) {
                *output = new.clone();
            }
        }
        rename_inputs(node, &renamed);
    }
    for output in &marked {
        nodes.push(NodeProto {
            name: format!("{output}.known_bfloat16"),
            op_type: KNOWN_BFLOAT16.into(),
            domain: DOMAIN.into(),
            input: vec![renamed[output].clone()],
            output: vec![output.clone()],
            ..NodeProto::default()
        });
    }
}

/// Widens the bfloat16 tensors of `attr` and the graphs it holds; whether
/// it held a bfloat16 tensor.
fn widen_attribute(
    attr: &mut AttributeProto,
    bf16: &HashSet<String>,
    what: &str,
    rounding_nodes: &mut usize,
) -> TractResult<bool> {
    let mut held = false;
    for t in attr.t.iter_mut().chain(&mut attr.tensors) {
        if t.data_type == BFLOAT16 {
            widen_tensor(t, what)?;
            held = true;
        }
    }
    for g in attr.g.iter_mut().chain(&mut attr.graphs) {
        *rounding_nodes += widen_graph(g, bf16, &format!("the graph of {what}"), false)?;
    }
    Ok(held)
}

fn gives_other_type(op: &str, slot: usize) -> bool {
    OTHER_TYPE_OUTPUTS
        .iter()
        .any(|(o, s)| *o == op && s.is_none_or(|s| s == slot))
}

/// A scatter that reduces bfloat16 data with `add` or `mul` rounds after
/// every update in ONNX: marked bfloat16 ([`ONNX_ELEM_TYPE`]) for its op.
/// OpenVINO's `ScatterElementsUpdate` is refused: nothing here states how
/// its `sum`, `prod` and `mean` round on bfloat16.
fn mark_rounding_scatter(
    node: &mut NodeProto,
    name: &str,
    which: &str,
    bf16: &HashSet<String>,
) -> TractResult<()> {
    let data_bf16 = node.input.first().is_some_and(|d| bf16.contains(d));
    let reduction = super::reduction_attribute(node);
    let rounds = matches!(reduction.as_str(), "add" | "mul" | "sum" | "prod" | "mean");
    if !data_bf16 || !rounds {
        return Ok(());
    }
    match node.op_type.as_str() {
        "ScatterElements" | "ScatterND" => {
            node.attribute.push(AttributeProto {
                name: ONNX_ELEM_TYPE.into(),
                r#type: tract_onnx::pb::attribute_proto::AttributeType::Int as i32,
                i: DataType::Bfloat16 as i64,
                ..AttributeProto::default()
            });
            Ok(())
        }
        "ScatterElementsUpdate" => bail!(
            "{which}: node '{name}' (ScatterElementsUpdate): reduction '{reduction}' on bfloat16 data is not supported; reductions none, max and min are"
        ),
        _ => Ok(()),
    }
}

fn round_node(input: &str, output: &str, name: &str) -> NodeProto {
    NodeProto {
        name: name.into(),
        op_type: ROUND_TO_BFLOAT16.into(),
        domain: DOMAIN.into(),
        input: vec![input.into()],
        output: vec![output.into()],
        ..NodeProto::default()
    }
}

/// Renames the inputs of `node` and of the graphs it holds, where the
/// graph does not declare the name itself.
fn rename_inputs(node: &mut NodeProto, renamed: &HashMap<String, String>) {
    for input in &mut node.input {
        if let Some(new) = renamed.get(input) {
            *input = new.clone();
        }
    }
    for attr in &mut node.attribute {
        for g in attr.g.iter_mut().chain(&mut attr.graphs) {
            let own: HashSet<&str> = g
                .input
                .iter()
                .map(|i| i.name.as_str())
                .chain(g.initializer.iter().map(|i| i.name.as_str()))
                .chain(
                    g.node
                        .iter()
                        .flat_map(|n| n.output.iter().map(String::as_str)),
                )
                .collect();
            let visible: HashMap<String, String> = renamed
                .iter()
                .filter(|(k, _)| !own.contains(k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            for n in &mut g.node {
                rename_inputs(n, &visible);
            }
            for o in &mut g.output {
                if let Some(new) = visible.get(&o.name) {
                    o.name = new.clone();
                }
            }
        }
    }
}

/// `t`'s bfloat16 values as float32 (raw little-endian float32 data),
/// after checking that the data holds exactly the dims' volume.
fn widen_tensor(t: &mut TensorProto, what: &str) -> TractResult<()> {
    ensure!(
        t.data_location != Some(1) && t.external_data.is_empty(),
        "{what}: bfloat16 data stored outside the model is not supported"
    );
    let volume = t.dims.iter().try_fold(1usize, |acc, d| {
        usize::try_from(*d).ok().and_then(|d| acc.checked_mul(d))
    });
    let Some(volume) = volume else {
        bail!("{what}: dims {:?} of bfloat16 are not a tensor's", t.dims);
    };
    let bits: Vec<u16> = if !t.raw_data.is_empty() {
        ensure!(
            Some(t.raw_data.len()) == volume.checked_mul(2),
            "{what}: bfloat16 dims {:?} take {volume} values, the raw data holds {} bytes",
            t.dims,
            t.raw_data.len()
        );
        t.raw_data
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect()
    } else {
        ensure!(
            t.int32_data.len() == volume,
            "{what}: bfloat16 dims {:?} take {volume} values, int32_data holds {}",
            t.dims,
            t.int32_data.len()
        );
        t.int32_data.iter().map(|v| *v as u16).collect()
    };
    t.raw_data = bits
        .iter()
        .flat_map(|b| half::bf16::from_bits(*b).to_f32().to_le_bytes())
        .collect();
    t.int32_data.clear();
    t.data_type = FLOAT;
    Ok(())
}

pub(crate) use super::round_to_bfloat16::round_to_bfloat16_builder;

#[cfg(test)]
mod tests {
    use super::*;

    fn bf16_bits(x: f32) -> i32 {
        half::bf16::from_f32(x).to_bits() as i32
    }

    #[test]
    fn a_bfloat16_initializer_becomes_float32_of_the_same_values() {
        let mut t = TensorProto {
            name: "w".into(),
            dims: vec![2],
            data_type: BFLOAT16,
            int32_data: vec![bf16_bits(1.5), bf16_bits(-3.0)],
            ..TensorProto::default()
        };
        widen_tensor(&mut t, "w").unwrap();
        assert_eq!(t.data_type, FLOAT);
        let values: Vec<f32> = t
            .raw_data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        assert_eq!(values, [1.5, -3.0]);
    }

    #[test]
    fn bfloat16_data_shorter_than_its_dims_is_an_error_naming_the_tensor() {
        let mut t = TensorProto {
            dims: vec![3],
            data_type: BFLOAT16,
            raw_data: vec![0, 0],
            ..TensorProto::default()
        };
        let err = widen_tensor(&mut t, "initializer 'w'").unwrap_err();
        assert_eq!(
            err.to_string(),
            "initializer 'w': bfloat16 dims [3] take 3 values, the raw data holds 2 bytes"
        );
    }
}

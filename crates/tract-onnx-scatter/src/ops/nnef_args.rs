//! The arguments of this crate's NNEF primitives, read and written the
//! same way by every op home: inputs, reductions, the ONNX op a
//! ScatterElements primitive came from, and [`OnnxElement`].

use scatter_kernels::{Reduction, UpdateReduction};
use tract_nnef::internal::*;

use crate::parse::onnx_types::OnnxElement;
use crate::parse::opset::ScatterOp;
use crate::parse::site::NodeSite;

pub(crate) fn input(ast: &IntoAst, node: &TypedNode, ix: usize) -> TractResult<Arc<RValue>> {
    let outlet = node
        .inputs
        .get(ix)
        .with_context(|| format!("{} has no input {ix}", node.name))?;
    ast.mapping
        .get(outlet)
        .cloned()
        .with_context(|| format!("input {ix} of {} is not serialized", node.name))
}

pub(crate) fn inputs3(ast: &IntoAst, node: &TypedNode) -> TractResult<[Arc<RValue>; 3]> {
    Ok([
        input(ast, node, 0)?,
        input(ast, node, 1)?,
        input(ast, node, 2)?,
    ])
}

/// The reduction `name` of a ScatterElements family primitive: ONNX's, or
/// OpenVINO's `mean`.
pub(crate) fn reduction(site: &NodeSite, name: &str) -> TractResult<UpdateReduction> {
    UpdateReduction::from_name(name)
        .ok_or_else(|| unknown_reduction(site, name, &UpdateReduction::ALL))
}

/// The reduction `name` of a ScatterND primitive: ONNX's.
pub(crate) fn onnx_reduction(site: &NodeSite, name: &str) -> TractResult<Reduction> {
    Reduction::from_onnx(name).ok_or_else(|| unknown_reduction(site, name, &Reduction::ALL))
}

/// The `onnx_element` argument of a ScatterElements or ScatterND
/// primitive ([`crate::parse::onnx_types::OnnxElement::as_str`]).
pub(crate) fn onnx_element(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
    site: &NodeSite,
) -> TractResult<OnnxElement> {
    let name: String = invocation.named_arg_as(builder, "onnx_element")?;
    OnnxElement::from_name(&name).ok_or_else(|| {
        site.error(format!(
            "onnx_element '{name}' is unknown; expected one of: native, bfloat16, complex"
        ))
    })
}

fn unknown_reduction<R: std::fmt::Display>(
    site: &NodeSite,
    name: &str,
    all: &[R],
) -> anyhow::Error {
    let all: Vec<String> = all.iter().map(|r| r.to_string()).collect();
    site.error(format!(
        "reduction '{name}' is unknown; expected one of: {}",
        all.join(", ")
    ))
}

/// The op a ScatterElements primitive was built from: its messages name
/// that op. A ScatterND folded into a ScatterElements
/// ([`crate::ops::rewrite::transpose_fold`]) keeps naming the user's ScatterND.
fn scatter_elements_op(name: &str) -> Option<ScatterOp> {
    [
        ScatterOp::ScatterElements,
        ScatterOp::Scatter,
        ScatterOp::ScatterElementsUpdate,
        ScatterOp::ScatterNd,
    ]
    .into_iter()
    .find(|op| op.onnx_name() == name)
}

/// The `input`, `indices` and `updates` arguments every scatter primitive
/// but TensorScatter takes.
pub(crate) fn data_indices_updates(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<[OutletId; 3]> {
    Ok([
        invocation.named_arg_as(builder, "input")?,
        invocation.named_arg_as(builder, "indices")?,
        invocation.named_arg_as(builder, "updates")?,
    ])
}

/// The site of a ScatterElements-family node read back from NNEF: the ONNX
/// op it came from (`onnx_op`), the NNEF node name, no opset.
pub(crate) fn elements_site(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
    primitive: &str,
) -> TractResult<NodeSite> {
    let onnx_op: String = invocation.named_arg_as(builder, "onnx_op")?;
    let node = builder.generate_node_name();
    let op_kind = scatter_elements_op(&onnx_op).with_context(|| {
        format!("{primitive} '{node}': onnx_op '{onnx_op}' is not one of ScatterElements, Scatter, ScatterElementsUpdate, ScatterND")
    })?;
    Ok(NodeSite::new(op_kind, node, None))
}

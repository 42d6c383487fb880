//! NNEF serialization of this crate's typed ops, exposed the tract way.
//!
//! A model typed through [`crate::onnx()`] writes to an NNEF tar with
//! [`nnef()`] and reads back with it. The graph of such a tar carries
//! `extension tract_registry tract_onnx_scatter`: loading it with an `Nnef`
//! that lacks this registry fails with tract's
//! `Registry not found Identifier("tract_onnx_scatter")`; enable it with
//! [`WithScatter::with_scatter`] (or use [`nnef()`]).
//!
//! ```no_run
//! use tract_onnx_scatter::tract_onnx::prelude::*;
//! use tract_onnx_scatter::WithScatter;
//! use tract_onnx_scatter::tract_onnx_opl::WithOnnx;
//!
//! let model = tract_onnx_scatter::onnx().model_for_path("model.onnx")?.into_typed()?.into_decluttered()?;
//! let framework = tract_onnx_scatter::tract_nnef::nnef().with_onnx().with_scatter();
//! framework.write_to_tar(&model, std::fs::File::create("model.nnef.tar")?)?;
//! # Ok::<(), anyhow::Error>(())
//! ```

use scatter_kernels::{Reduction, UpdateReduction};
use tract_nnef::internal::*;

use crate::ops::types::OnnxElement;
use crate::opset::ScatterOp;
use crate::site::NodeSite;

/// The id of this crate's NNEF registry, as `graph.nnef` names it in its
/// `extension tract_registry ...` line.
pub const REGISTRY_ID: &str = "tract_onnx_scatter";

/// Enables this crate's NNEF registry on a tract NNEF framework.
pub trait WithScatter {
    /// The framework with the `tract_onnx_scatter` registry enabled.
    fn with_scatter(self) -> Self;
    /// Enables the `tract_onnx_scatter` registry; a framework that already
    /// has it keeps it once.
    fn enable_scatter(&mut self);
}

impl WithScatter for tract_nnef::framework::Nnef {
    fn enable_scatter(&mut self) {
        if !self.registries.iter().any(|r| r.id.0 == REGISTRY_ID) {
            self.registries.push(registry());
        }
    }

    fn with_scatter(mut self) -> Self {
        self.enable_scatter();
        self
    }
}

/// `tract_nnef::nnef()` with tract's ONNX extensions and this crate's
/// registry enabled.
pub fn nnef() -> tract_nnef::framework::Nnef {
    use tract_onnx_opl::WithOnnx;
    tract_nnef::nnef().with_onnx().with_scatter()
}

/// The registry: the NNEF primitive, dumper and loader of every op home
/// that has an NNEF form ([`crate::ops::OpHome::register_nnef`]).
pub fn registry() -> Registry {
    let mut registry = Registry::new(REGISTRY_ID)
        .with_doc("Extension `tract_onnx_scatter` holds the ONNX scatter ops of the tract-onnx-scatter crate")
        .with_doc("(ScatterElements, Scatter, ScatterND, TensorScatter, ScatterElementsUpdate) with every")
        .with_doc("reduction and element type.")
        .with_doc("")
        .with_doc("Add `extension tract_registry tract_onnx_scatter` to `graph.nnef`, and enable it with")
        .with_doc("`tract_onnx_scatter::WithScatter::with_scatter` (or use `tract_onnx_scatter::nnef()`).");
    for register in crate::ops::HOMES
        .iter()
        .filter_map(|home| home.register_nnef)
    {
        register(&mut registry);
    }
    registry
}

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
/// primitive ([`crate::ops::types::OnnxElement::as_str`]).
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
/// ([`crate::ops::transpose_fold`]) keeps naming the user's ScatterND.
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

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

use scatter_kernels::{Reduction, TensorScatterMode};
use tract_nnef::internal::*;

use crate::ops::{ScatterElements, ScatterElementsUpdate, ScatterNd, TensorScatter};
use crate::opset::ScatterOp;
use crate::site::NodeSite;

/// The id of this crate's NNEF registry, as `graph.nnef` names it in its
/// `extension tract_registry ...` line.
pub const REGISTRY_ID: &str = "tract_onnx_scatter";

/// The NNEF primitive of [`ScatterElements`].
pub const SCATTER_ELEMENTS: &str = "tract_onnx_scatter_elements";

/// The NNEF primitive of [`ScatterNd`].
pub const SCATTER_ND: &str = "tract_onnx_scatter_nd";

/// The NNEF primitive of [`TensorScatter`].
pub const TENSOR_SCATTER: &str = "tract_onnx_tensor_scatter";

/// The NNEF primitive of [`ScatterElementsUpdate`] (the axis as a tensor
/// input, known at run time).
pub const SCATTER_ELEMENTS_UPDATE: &str = "tract_onnx_scatter_elements_update";

/// Enables this crate's NNEF registry on a tract NNEF framework.
pub trait WithScatter {
    fn with_scatter(self) -> Self;
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

/// The registry: dumpers and loaders of the typed scatter ops.
pub fn registry() -> Registry {
    let mut registry = Registry::new(REGISTRY_ID)
        .with_doc("Extension `tract_onnx_scatter` holds the ONNX scatter ops of the tract-onnx-scatter crate")
        .with_doc("(ScatterElements, Scatter, ScatterND, TensorScatter, ScatterElementsUpdate) with every")
        .with_doc("reduction and element type.")
        .with_doc("")
        .with_doc("Add `extension tract_registry tract_onnx_scatter` to `graph.nnef`, and enable it with")
        .with_doc("`tract_onnx_scatter::WithScatter::with_scatter` (or use `tract_onnx_scatter::nnef()`).");

    registry.register_dumper(dump_scatter_elements);
    registry
        .register_primitive(
            SCATTER_ELEMENTS,
            &[
                TypeName::Scalar.tensor().named("input"),
                TypeName::Integer.tensor().named("indices"),
                TypeName::Scalar.tensor().named("updates"),
                TypeName::Integer.named("axis"),
                TypeName::String.named("reduction").default("none"),
                TypeName::Logical.named("use_init_val").default(true),
                TypeName::String.named("onnx_op").default("ScatterElements"),
            ],
            &[("output", TypeName::Scalar.tensor())],
            load_scatter_elements,
        )
        .with_doc("ONNX ScatterElements (or Scatter, or OpenVINO ScatterElementsUpdate with onnx_op set accordingly).");

    registry.register_dumper(dump_scatter_nd);
    registry
        .register_primitive(
            SCATTER_ND,
            &[
                TypeName::Scalar.tensor().named("input"),
                TypeName::Integer.tensor().named("indices"),
                TypeName::Scalar.tensor().named("updates"),
                TypeName::String.named("reduction").default("none"),
                TypeName::Integer.array().named("layout").default(false),
            ],
            &[("output", TypeName::Scalar.tensor())],
            load_scatter_nd,
        )
        .with_doc("ONNX ScatterND. With `layout` (a permutation), the scatter applies to")
        .with_doc("`transpose(input, layout)` and the output keeps the input's layout.");

    registry.register_dumper(dump_tensor_scatter);
    registry
        .register_primitive(
            TENSOR_SCATTER,
            &[
                TypeName::Scalar.tensor().named("past_cache"),
                TypeName::Scalar.tensor().named("update"),
                TypeName::Integer
                    .tensor()
                    .named("write_indices")
                    .default(false),
                TypeName::Integer.named("axis"),
                TypeName::String.named("mode").default("linear"),
            ],
            &[("output", TypeName::Scalar.tensor())],
            load_tensor_scatter,
        )
        .with_doc("ONNX TensorScatter (opset 24); write_indices is optional (false when absent).");

    registry.register_dumper(dump_scatter_elements_update);
    registry
        .register_primitive(
            SCATTER_ELEMENTS_UPDATE,
            &[
                TypeName::Scalar.tensor().named("input"),
                TypeName::Integer.tensor().named("indices"),
                TypeName::Scalar.tensor().named("updates"),
                TypeName::Integer.tensor().named("axis"),
                TypeName::String.named("reduction").default("none"),
                TypeName::Logical.named("use_init_val").default(true),
                TypeName::String
                    .named("onnx_op")
                    .default("ScatterElementsUpdate"),
            ],
            &[("output", TypeName::Scalar.tensor())],
            load_scatter_elements_update,
        )
        .with_doc("OpenVINO ScatterElementsUpdate whose axis is a tensor known only at run time.");
    registry
}

fn input(ast: &IntoAst, node: &TypedNode, ix: usize) -> TractResult<Arc<RValue>> {
    let outlet = node
        .inputs
        .get(ix)
        .with_context(|| format!("{} has no input {ix}", node.name))?;
    ast.mapping
        .get(outlet)
        .cloned()
        .with_context(|| format!("input {ix} of {} is not serialized", node.name))
}

fn inputs3(ast: &IntoAst, node: &TypedNode) -> TractResult<[Arc<RValue>; 3]> {
    Ok([
        input(ast, node, 0)?,
        input(ast, node, 1)?,
        input(ast, node, 2)?,
    ])
}

fn dump_scatter_elements(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &ScatterElements,
) -> TractResult<Option<Arc<RValue>>> {
    let [data, indices, updates] = inputs3(ast, node)?;
    let mut attributes = vec![
        ("axis", numeric(op.axis)),
        ("reduction", string(op.reduction.as_str())),
    ];
    if !op.use_init_val {
        attributes.push(("use_init_val", logical(false)));
    }
    if op.site.op != ScatterOp::ScatterElements {
        attributes.push(("onnx_op", string(op.site.op.onnx_name())));
    }
    Ok(Some(invocation(
        SCATTER_ELEMENTS,
        &[data, indices, updates],
        &attributes,
    )))
}

fn dump_scatter_nd(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &ScatterNd,
) -> TractResult<Option<Arc<RValue>>> {
    let [data, indices, updates] = inputs3(ast, node)?;
    let mut attributes = vec![("reduction", string(op.reduction.as_str()))];
    if let Some(perm) = &op.layout {
        attributes.push(("layout", tract_nnef::ser::ints(perm)));
    }
    Ok(Some(invocation(
        SCATTER_ND,
        &[data, indices, updates],
        &attributes,
    )))
}

fn dump_tensor_scatter(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &TensorScatter,
) -> TractResult<Option<Arc<RValue>>> {
    let past_cache = input(ast, node, 0)?;
    let update = input(ast, node, 1)?;
    let mut attributes = vec![];
    match node.inputs.len() {
        2 => (),
        3 => attributes.push(("write_indices", (*input(ast, node, 2)?).clone())),
        n => bail!(op.site.error(format!(
            "expects 2 or 3 inputs (past_cache, update, write_indices), got {n}"
        ))),
    }
    attributes.push(("axis", numeric(op.axis)));
    attributes.push(("mode", string(op.mode.as_str())));
    Ok(Some(invocation(
        TENSOR_SCATTER,
        &[past_cache, update],
        &attributes,
    )))
}

fn dump_scatter_elements_update(
    ast: &mut IntoAst,
    node: &TypedNode,
    op: &ScatterElementsUpdate,
) -> TractResult<Option<Arc<RValue>>> {
    let [data, indices, updates] = inputs3(ast, node)?;
    let axis = input(ast, node, 3)?;
    let mut attributes = vec![("reduction", string(op.reduction.as_str()))];
    if !op.use_init_val {
        attributes.push(("use_init_val", logical(false)));
    }
    if op.site.op != ScatterOp::ScatterElementsUpdate {
        attributes.push(("onnx_op", string(op.site.op.onnx_name())));
    }
    Ok(Some(invocation(
        SCATTER_ELEMENTS_UPDATE,
        &[data, indices, updates, axis],
        &attributes,
    )))
}

fn reduction(site: &NodeSite, name: &str) -> TractResult<Reduction> {
    Reduction::from_onnx(name).ok_or_else(|| {
        let all: Vec<&str> = Reduction::ALL.iter().map(|r| r.as_str()).collect();
        site.error(format!(
            "reduction '{name}' is unknown; expected one of: {}",
            all.join(", ")
        ))
    })
}

fn scatter_elements_op(name: &str) -> Option<ScatterOp> {
    [
        ScatterOp::ScatterElements,
        ScatterOp::Scatter,
        ScatterOp::ScatterElementsUpdate,
    ]
    .into_iter()
    .find(|op| op.onnx_name() == name)
}

/// The `input`, `indices` and `updates` arguments every scatter primitive
/// but TensorScatter takes.
fn data_indices_updates(
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
fn elements_site(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
    primitive: &str,
) -> TractResult<NodeSite> {
    let onnx_op: String = invocation.named_arg_as(builder, "onnx_op")?;
    let node = builder.generate_node_name();
    let op_kind = scatter_elements_op(&onnx_op).with_context(|| {
        format!("{primitive} '{node}': onnx_op '{onnx_op}' is not one of ScatterElements, Scatter, ScatterElementsUpdate")
    })?;
    Ok(NodeSite::new(op_kind, node, None))
}

fn load_scatter_elements(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<Value> {
    let [data, indices, updates] = data_indices_updates(builder, invocation)?;
    let axis: i64 = invocation.named_arg_as(builder, "axis")?;
    let reduction_name: String = invocation.named_arg_as(builder, "reduction")?;
    let use_init_val: bool = invocation.named_arg_as(builder, "use_init_val")?;
    let site = elements_site(builder, invocation, SCATTER_ELEMENTS)?;
    let rank = builder.model.outlet_fact(data)?.rank();
    let axis = crate::ops::scatter_elements::axis_position(&site, axis, rank)?;
    let reduction = reduction(&site, &reduction_name)?;
    builder.wire(
        ScatterElements {
            site,
            axis,
            reduction,
            use_init_val,
            output_pool: None,
        },
        &[data, indices, updates],
    )
}

fn load_scatter_nd(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<Value> {
    let [data, indices, updates] = data_indices_updates(builder, invocation)?;
    let reduction_name: String = invocation.named_arg_as(builder, "reduction")?;
    let site = NodeSite::new(ScatterOp::ScatterNd, builder.generate_node_name(), None);
    let reduction = reduction(&site, &reduction_name)?;
    // Absent, `layout` is its declared default `false`: a plain ScatterND.
    let layout = match invocation.get_named_arg_as::<Value>(builder, "layout")? {
        None | Some(Value::Bool(false)) => None,
        Some(v) => Some(v.to::<TVec<usize>>(builder)?),
    };
    builder.wire(
        ScatterNd {
            layout,
            ..ScatterNd::onnx(site, reduction)
        },
        &[data, indices, updates],
    )
}

fn load_tensor_scatter(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<Value> {
    let past_cache: OutletId = invocation.named_arg_as(builder, "past_cache")?;
    let update: OutletId = invocation.named_arg_as(builder, "update")?;
    let write_indices: Option<OutletId> =
        invocation.optional_named_arg_as(builder, "write_indices")?;
    let axis: i64 = invocation.named_arg_as(builder, "axis")?;
    let mode_name: String = invocation.named_arg_as(builder, "mode")?;
    let site = NodeSite::new(ScatterOp::TensorScatter, builder.generate_node_name(), None);
    let mode = TensorScatterMode::from_onnx(&mode_name).ok_or_else(|| {
        site.error(format!(
            "mode '{mode_name}' is unknown; expected one of: linear, circular"
        ))
    })?;
    let rank = builder.model.outlet_fact(past_cache)?.rank();
    let axis = crate::ops::tensor_scatter::axis_position(&site, axis, rank)?;
    let mut inputs = vec![past_cache, update];
    inputs.extend(write_indices);
    builder.wire(
        TensorScatter {
            site,
            axis,
            mode,
            output_pool: None,
        },
        &inputs,
    )
}

fn load_scatter_elements_update(
    builder: &mut ModelBuilder,
    invocation: &ResolvedInvocation,
) -> TractResult<Value> {
    let [data, indices, updates] = data_indices_updates(builder, invocation)?;
    let axis: OutletId = invocation.named_arg_as(builder, "axis")?;
    let reduction_name: String = invocation.named_arg_as(builder, "reduction")?;
    let use_init_val: bool = invocation.named_arg_as(builder, "use_init_val")?;
    let site = elements_site(builder, invocation, SCATTER_ELEMENTS_UPDATE)?;
    let reduction = reduction(&site, &reduction_name)?;
    builder.wire(
        ScatterElementsUpdate {
            site,
            reduction,
            use_init_val,
        },
        &[data, indices, updates, axis],
    )
}

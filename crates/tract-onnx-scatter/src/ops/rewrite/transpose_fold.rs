//! Declutter of scatters on a transposed view of their data: PyTorch's
//! dynamo writes `cache.index_copy_(2, pos, k)` and `y[..., 0:2] = v` as
//! `Transpose(data, perm)`, scatters, and `Transpose(out, inverse(perm))`.
//!
//! A *run* is a scatter whose data comes through a chain of `Move`s
//! ([`crate::ops::rewrite::move_chains`]), followed by scatters each reading
//! only the previous one's output as data, up to a chain that brings the
//! layout back. The run is rewired on the untransposed data: a
//! ScatterElements along `perm[axis]`; a ScatterND with a `layout`
//! ([`ScatterNd::layout`]), or, for one-component tuples, an `index_copy`
//! along `perm[0]` (Slice/Concat for a constant block, else ScatterElements).
//! Every form gives the unfolded graph's result bit for bit: each
//! destination receives the same updates in the same order, so a
//! ScatterND's batch axes never move. Anything else stays as it is.

use scatter_kernels::Reduction;
use scatter_kernels::mechanisms::Mechanism;
use tract_core::internal::*;
use tract_core::ops::array::MultiBroadcastTo;
use tract_core::ops::change_axes::AxisOp;

use crate::ops::rewrite::block_assignment::{find_block, wire_concat};
use crate::ops::rewrite::move_chains::{
    back_to_identity, chain_back, identity, inverse, is_identity, only_reader_at, source_through,
    wire_transpose,
};
use crate::ops::scatter_ops::ScatterElements;
use crate::ops::scatter_ops::ScatterNd;
use crate::parse::opset::ScatterOp;
use crate::parse::site::NodeSite;

/// A run of scatters in a transposed view, or a ScatterND on a layout
/// whose updates come transposed, rewired on the data's own layout.
pub(crate) fn fold_scatter_nd(
    op: &ScatterNd,
    model: &TypedModel,
    node: &TypedNode,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(Mechanism::TransposeFold.is_on());
    if let Some(layout) = &op.layout {
        return fold_updates(op, layout, model, node);
    }
    fold_run(model, node)
}

/// A run of scatters starting at this ScatterElements, rewired on the
/// data's own layout.
pub(crate) fn fold_scatter_elements(
    _op: &ScatterElements,
    model: &TypedModel,
    node: &TypedNode,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(Mechanism::TransposeFold.is_on());
    fold_run(model, node)
}

/// A scatter that can take part in a run: a plain ScatterND or a
/// ScatterElements, with its three inputs.
fn foldable(node: &TypedNode) -> bool {
    node.inputs.len() == 3
        && (node
            .op_as::<ScatterNd>()
            .is_some_and(|op| op.layout.is_none())
            || node.op_is::<ScatterElements>())
}

fn fold_run(model: &TypedModel, node: &TypedNode) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(foldable(node));
    let mut run = vec![node];
    while let Some(next) = only_reader_at(model, OutletId::new(run[run.len() - 1].id, 0), 0)
        .filter(|next| foldable(next))
    {
        run.push(next);
    }
    let last = OutletId::new(run[run.len() - 1].id, 0);
    // The nearest transpose whose inverse closes the run.
    for (source, perm) in chain_back(model, node.inputs[0])?.into_iter().skip(1) {
        if is_identity(&perm) {
            continue;
        }
        let Some(end) = back_to_identity(model, last, &perm) else {
            continue;
        };
        let mut patch = TypedModelPatch::new(format!(
            "{}: scatters on transpose({perm:?}) folded into the data's layout",
            node.name
        ));
        let mut wire = patch.tap_model(model, source)?;
        for scatter in &run {
            wire = if let Some(op) = scatter.op_as::<ScatterNd>() {
                wire_nd(&mut patch, model, scatter, op, wire, &perm)?
            } else {
                let op = scatter
                    .op_as::<ScatterElements>()
                    .context("a run holds ScatterND and ScatterElements only")?;
                wire_elements(&mut patch, model, scatter, op, wire, &perm)?
            };
        }
        patch.shunt_outside(model, end, wire)?;
        return Ok(Some(patch));
    }
    Ok(None)
}

/// A ScatterND with `layout` whose updates come through a transpose it can
/// take over ([`nd_in_data_layout`]).
fn fold_updates(
    op: &ScatterNd,
    layout: &[usize],
    model: &TypedModel,
    node: &TypedNode,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(node.inputs.len() == 3);
    let mut patch = TypedModelPatch::new(format!(
        "{}: updates' transpose folded into the layout",
        node.name
    ));
    let data = patch.tap_model(model, node.inputs[0])?;
    rule_if_some!(wire = nd_in_data_layout(&mut patch, model, node, op, data, layout)?);
    patch.shunt_outside(model, node.id.into(), wire)?;
    Ok(Some(patch))
}

/// `node` (a ScatterND on `transpose(data, view)`) on `data` itself.
fn wire_nd(
    patch: &mut TypedModelPatch,
    model: &TypedModel,
    node: &TypedNode,
    op: &ScatterNd,
    data: OutletId,
    view: &[usize],
) -> TractResult<OutletId> {
    if let Some(wire) = nd_in_data_layout(patch, model, node, op, data, view)? {
        return Ok(wire);
    }
    let indices = patch.tap_model(model, node.inputs[1])?;
    let updates = patch.tap_model(model, node.inputs[2])?;
    let op = op.with_layout(Some(view.into()));
    Ok(patch.wire_node(&node.name, op, &[data, indices, updates])?[0])
}

/// `node` (a ScatterND on `transpose(data, view)`) on `data` without its
/// updates' transpose, when the updates come through one that keeps their
/// batch axes leading or, for `[n, 1]` indices, through `view` itself.
/// The farthest such source wins: it leaves the fewest moves.
fn nd_in_data_layout(
    patch: &mut TypedModelPatch,
    model: &TypedModel,
    node: &TypedNode,
    op: &ScatterNd,
    data: OutletId,
    view: &[usize],
) -> TractResult<Option<OutletId>> {
    let indices = model.outlet_fact(node.inputs[1])?;
    let q = indices.rank();
    rule_if!(q >= 1);
    rule_if_some!(k = indices.shape[q - 1].to_usize().ok());
    let r = view.len();
    rule_if!(k <= r);
    let batch = q - 1;
    rule_if!(model.outlet_fact(node.inputs[2])?.rank() == batch + r - k);
    for (updates, perm) in chain_back(model, node.inputs[2])?.into_iter().skip(1).rev() {
        if perm[..batch] == identity(batch)[..] {
            // The slice axes' order moves into the layout: view position
            // k + s held the data axis the updates' slice axis s matched.
            let inv = inverse(&perm);
            let mut layout: TVec<usize> = view[..k].into();
            layout.extend((batch..perm.len()).map(|j| view[k + inv[j] - batch]));
            let indices = patch.tap_model(model, node.inputs[1])?;
            let updates = patch.tap_model(model, updates)?;
            let op = op.with_layout((!is_identity(&layout)).then_some(layout));
            return Ok(Some(
                patch.wire_node(&node.name, op, &[data, indices, updates])?[0],
            ));
        }
        if k == 1 && batch == 1 && &*perm == view {
            return wire_along_axis(patch, model, node, op, data, updates, view[0]).map(Some);
        }
    }
    Ok(None)
}

/// ScatterND with `[n, 1]` indices on `transpose(data, view)`, its updates
/// `transpose(updates, view)`: `updates` written along `axis = view[0]` of
/// `data` at the rows the indices give.
fn wire_along_axis(
    patch: &mut TypedModelPatch,
    model: &TypedModel,
    node: &TypedNode,
    op: &ScatterNd,
    data: OutletId,
    updates: OutletId,
    axis: usize,
) -> TractResult<OutletId> {
    let data_fact = patch.outlet_fact(data)?.clone();
    let updates_fact = model.outlet_fact(updates)?.clone();
    let indices_fact = model.outlet_fact(node.inputs[1])?;
    let updates_wire = patch.tap_model(model, updates)?;
    if let Some(rows) = constant_rows(op, indices_fact, &data_fact, axis)? {
        let axis_len = data_fact.shape[axis].to_usize()?;
        return wire_concat(patch, &node.name, data, updates_wire, axis, rows, axis_len);
    }
    // indices [n, 1] -> [1, .., n (at axis), .., 1] -> the updates' shape.
    let rank = data_fact.rank();
    let mut indices = patch.tap_model(model, node.inputs[1])?;
    let mut reshape = vec![AxisOp::Rm(1)];
    reshape.extend((0..axis).map(|_| AxisOp::Add(0)));
    reshape.extend((axis + 1..rank).map(AxisOp::Add));
    for (i, step) in reshape.into_iter().enumerate() {
        indices = patch.wire_node(format!("{}.indices.{i}", node.name), step, &[indices])?[0];
    }
    indices = patch.wire_node(
        format!("{}.indices.broadcast", node.name),
        MultiBroadcastTo::new(updates_fact.shape.clone()),
        &[indices],
    )?[0];
    // Errors keep naming the user's ScatterND node.
    let site = NodeSite::new(ScatterOp::ScatterNd, op.site.node.clone(), op.site.opset);
    let elements = ScatterElements {
        onnx_element: op.onnx_element,
        ..ScatterElements::onnx(site, axis, op.reduction)
    };
    Ok(patch.wire_node(&node.name, elements, &[data, indices, updates_wire])?[0])
}

/// The rows a constant `[n, 1]` indices tensor writes along `axis`, when
/// they are one range in order (a block, [`find_block`]) and the op
/// overwrites; out-of-bounds indices never qualify (they fail at load).
fn constant_rows(
    op: &ScatterNd,
    indices: &TypedFact,
    data: &TypedFact,
    axis: usize,
) -> TractResult<Option<std::ops::Range<usize>>> {
    rule_if!(op.reduction == Reduction::None);
    rule_if_some!(konst = &indices.konst);
    rule_if!(konst.is_plain_ram());
    rule_if_some!(axis_len = data.shape[axis].to_usize().ok());
    rule_if_some!(tuples = konst.cast_to::<i64>().ok());
    let tuples = tuples.try_as_plain_ram()?;
    rule_if_some!(block = find_block(tuples.as_slice::<i64>()?, &[axis_len]));
    Ok(Some(block.start..block.start + block.len))
}

/// `node` (a ScatterElements on `transpose(data, view)`) on `data` itself:
/// the axis moves, indices and updates come back to the data's layout.
fn wire_elements(
    patch: &mut TypedModelPatch,
    model: &TypedModel,
    node: &TypedNode,
    op: &ScatterElements,
    data: OutletId,
    view: &[usize],
) -> TractResult<OutletId> {
    let back = inverse(view);
    let mut moved = tvec![];
    for (slot, name) in [(1, "indices"), (2, "updates")] {
        let wire = match source_through(model, node.inputs[slot], view)? {
            Some(source) => patch.tap_model(model, source)?,
            None => {
                let tap = patch.tap_model(model, node.inputs[slot])?;
                wire_transpose(patch, &format!("{}.{name}", node.name), tap, &back)?
            }
        };
        moved.push(wire);
    }
    let op = op.with_axis(view[op.axis]);
    Ok(patch.wire_node(&node.name, op, &[data, moved[0], moved[1]])?[0])
}

//! Declutter of a scatter between a transpose and its inverse.
//!
//! PyTorch's dynamo exporter writes `cache.index_copy_(2, pos, k)` (every
//! static KV-cache update) and slice assignments such as `y[..., 0:2] = v`
//! as
//!
//! ```text
//! view = Transpose(data, perm); out = ScatterND(view, indices, updates); result = Transpose(out, inverse)
//! ```
//!
//! In tract, each transpose is a chain of `AxisOp::Move`s that moves the
//! whole tensor. When the chain after the scatter undoes the chain before
//! it, the scatter is rewired on `data` itself:
//! - ScatterND: the same op with `layout = perm` ([`ScatterNd::layout`]),
//!   which writes the update slices straight into `data`'s layout;
//! - ScatterElements: the inverse chain is applied to `indices` and
//!   `updates` (the size of the update, not of the data) and the axis
//!   becomes `perm[axis]`.
//!
//! `data` then stays exclusive and the scatter runs in place: the decode
//! step is O(update) again. Anything else (another `AxisOp` than `Move`, a
//! chain that does not return to `data`'s layout, the scatter's output read
//! elsewhere) leaves the graph as it is.

use tract_core::internal::*;
use tract_core::ops::change_axes::AxisOp;

use crate::ops::{ScatterElements, ScatterNd};

/// How the axes of a tensor are arranged relative to `data`:
/// `axes[i]` is the axis of `data` found at position `i`.
fn apply_move(axes: &mut TVec<usize>, op: &AxisOp) -> bool {
    match op {
        AxisOp::Move(from, to) if *from < axes.len() && *to < axes.len() => {
            let axis = axes.remove(*from);
            axes.insert(*to, axis);
            true
        }
        _ => false,
    }
}

fn as_move(node: &TypedNode) -> Option<&AxisOp> {
    node.op_as::<AxisOp>()
        .filter(|op| matches!(op, AxisOp::Move(..)))
}

/// The transpose chain feeding `node`'s data input: the outlet it starts
/// from and the permutation it applies (`view.shape[i] ==
/// data.shape[perm[i]]`), if it is made of `Move`s only and is not the
/// identity.
fn chain_before(model: &TypedModel, node: &TypedNode) -> Option<(OutletId, TVec<usize>)> {
    let rank = model.outlet_fact(node.inputs[0]).ok()?.rank();
    let mut moves = vec![];
    let mut outlet = node.inputs[0];
    while let Some(op) = as_move(model.node(outlet.node)) {
        moves.push(op.clone());
        outlet = model.node(outlet.node).inputs[0];
    }
    let mut perm: TVec<usize> = (0..rank).collect();
    for op in moves.iter().rev() {
        if !apply_move(&mut perm, op) {
            return None;
        }
    }
    (perm.iter().enumerate().any(|(i, &a)| i != a)).then_some((outlet, perm))
}

/// The `Move` chain reading `node`'s output, up to the node whose output
/// is back in `data`'s layout, if `perm` (the layout of `node`'s output)
/// comes back to the identity along a chain that nothing else reads.
fn chain_after(model: &TypedModel, node: &TypedNode, perm: &[usize]) -> Option<Vec<usize>> {
    let mut axes: TVec<usize> = perm.into();
    let mut chain = vec![];
    let mut current = node;
    loop {
        let [successor] = &*current.outputs[0].successors else {
            return None;
        };
        if model.outputs.contains(&OutletId::new(current.id, 0)) {
            return None;
        }
        let next = model.node(successor.node);
        if !apply_move(&mut axes, as_move(next)?) {
            return None;
        }
        chain.push(next.id);
        if axes.iter().enumerate().all(|(i, &a)| i == a) {
            return Some(chain);
        }
        current = next;
    }
}

/// `Transpose → ScatterND → inverse Transpose` as one ScatterND with a
/// layout, on the untransposed data.
pub fn fold_scatter_nd(
    op: &ScatterNd,
    model: &TypedModel,
    node: &TypedNode,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(op.layout.is_none());
    rule_if_some!((data, perm) = chain_before(model, node));
    rule_if_some!(after = chain_after(model, node, &perm));
    let mut patch = TypedModelPatch::default();
    let data = patch.tap_model(model, data)?;
    let indices = patch.tap_model(model, node.inputs[1])?;
    let updates = patch.tap_model(model, node.inputs[2])?;
    let folded = ScatterNd {
        layout: Some(perm),
        ..op.clone()
    };
    let out = patch.wire_node(&node.name, folded, &[data, indices, updates])?;
    let last = *after.last().expect("a chain that returns has a node");
    patch.shunt_outside(model, OutletId::new(last, 0), out[0])?;
    Ok(Some(patch))
}

/// `Transpose → ScatterElements → inverse Transpose` as one
/// ScatterElements on the untransposed data, its indices and updates moved
/// by the inverse chain.
pub fn fold_scatter_elements(
    op: &ScatterElements,
    model: &TypedModel,
    node: &TypedNode,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(node.inputs.len() == 3);
    rule_if_some!((data, perm) = chain_before(model, node));
    rule_if_some!(after = chain_after(model, node, &perm));
    let mut patch = TypedModelPatch::default();
    let data = patch.tap_model(model, data)?;
    let mut moved = tvec![];
    for input in [node.inputs[1], node.inputs[2]] {
        let mut wire = patch.tap_model(model, input)?;
        for (i, &id) in after.iter().enumerate() {
            let step = model.node(id);
            wire = patch.wire_node(
                format!("{}.{}.{i}", node.name, step.name),
                step.op.clone(),
                &[wire],
            )?[0];
        }
        moved.push(wire);
    }
    let folded = ScatterElements {
        axis: perm[op.axis],
        ..op.clone()
    };
    let out = patch.wire_node(&node.name, folded, &[data, moved[0], moved[1]])?;
    let last = *after.last().expect("a chain that returns has a node");
    patch.shunt_outside(model, OutletId::new(last, 0), out[0])?;
    Ok(Some(patch))
}

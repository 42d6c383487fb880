//! Permutations, and chains of tract's `AxisOp::Move` read as one.
//!
//! tract types an ONNX `Transpose` as a chain of `Move`s, decomposed so
//! that a transpose and its inverse are usually *not* mirror images of each
//! other (`[4, 1, 2, 3, 0]` is `Move(4, 0), Move(1, 4)` both ways). tract's
//! `ChangeAxes` pass cancels only a `Move` against its exact reciprocal, so
//! the rewrites that must see a whole transpose read the chain as one
//! permutation here.
//!
//! A permutation `perm` is ONNX `Transpose`'s: `out.shape[i] ==
//! in.shape[perm[i]]`. Nothing here names an op of this crate.

use tract_core::internal::*;
use tract_core::ops::change_axes::{AxisOp, perm_to_ops};
use tract_core::ops::identity::Identity;

/// `0..rank`.
pub(crate) fn identity(rank: usize) -> TVec<usize> {
    (0..rank).collect()
}

/// Whether `perm` leaves every axis in place (an empty `perm` does).
pub(crate) fn is_identity(perm: &[usize]) -> bool {
    perm.iter().enumerate().all(|(i, &p)| i == p)
}

/// `inv` with `inv[perm[i]] == i`: transposing by `perm` then by `inv` is
/// the identity.
pub(crate) fn inverse(perm: &[usize]) -> TVec<usize> {
    let mut inv: TVec<usize> = tvec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}

/// `axes` (what each position holds) after `op` moved the tensor's axes;
/// `false` when `op` is not a `Move` within the rank.
pub(crate) fn apply_move(axes: &mut TVec<usize>, op: &AxisOp) -> bool {
    match op {
        AxisOp::Move(from, to) if *from < axes.len() && *to < axes.len() => {
            let axis = axes.remove(*from);
            axes.insert(*to, axis);
            true
        }
        _ => false,
    }
}

/// The `Move`s that transpose a tensor by `perm`, as tract types an ONNX
/// `Transpose`.
pub(crate) fn moves_for(perm: &[usize]) -> TVec<AxisOp> {
    perm_to_ops(perm)
}

fn as_move(node: &TypedNode) -> Option<&AxisOp> {
    node.op_as::<AxisOp>()
        .filter(|op| matches!(op, AxisOp::Move(..)))
}

/// An `Identity` left by the ONNX graph (removed by tract's declutter, but
/// maybe not yet): a chain reads through it.
fn is_identity_op(node: &TypedNode) -> bool {
    node.op_is::<Identity>() && node.inputs.len() == 1
}

/// Walking back from `outlet` through `Move`s (and `Identity`s): every
/// outlet passed, with the permutation that takes it to `outlet`
/// (`outlet == transpose(source, perm)`), nearest first. The first entry is
/// `outlet` itself with the identity.
pub(crate) fn chain_back(
    model: &TypedModel,
    outlet: OutletId,
) -> TractResult<Vec<(OutletId, TVec<usize>)>> {
    let rank = model.outlet_fact(outlet)?.rank();
    let mut found = vec![(outlet, identity(rank))];
    let mut moves: Vec<AxisOp> = vec![];
    let mut current = outlet;
    loop {
        let node = model.node(current.node);
        if is_identity_op(node) {
            current = node.inputs[0];
            continue;
        }
        let Some(op) = as_move(node) else { break };
        moves.push(op.clone());
        current = node.inputs[0];
        // The moves apply source-first: replay them from here.
        let mut perm = identity(rank);
        if !moves.iter().rev().all(|op| apply_move(&mut perm, op)) {
            break;
        }
        found.push((current, perm));
    }
    Ok(found)
}

/// The outlet upstream of `outlet`, along its `Move` chain, of which
/// `outlet` is `transpose(source, perm)`, if there is one (the nearest).
pub(crate) fn source_through(
    model: &TypedModel,
    outlet: OutletId,
    perm: &[usize],
) -> TractResult<Option<OutletId>> {
    Ok(chain_back(model, outlet)?
        .into_iter()
        .skip(1)
        .find(|(_, p)| &**p == perm)
        .map(|(source, _)| source))
}

/// `outlet`'s one consumer, if nothing else reads it (not a model output
/// either).
pub(crate) fn only_successor(model: &TypedModel, outlet: OutletId) -> Option<InletId> {
    if model.outputs.contains(&outlet) {
        return None;
    }
    match &*model.node(outlet.node).outputs[outlet.slot].successors {
        [one] => Some(*one),
        _ => None,
    }
}

/// Following `outlet` (holding data transposed by `perm`) forward along a
/// chain of `Move`s (and `Identity`s) that nothing else reads, the outlet
/// where the layout is back to the data's, if the chain gets there.
pub(crate) fn back_to_identity(
    model: &TypedModel,
    outlet: OutletId,
    perm: &[usize],
) -> Option<OutletId> {
    let mut axes: TVec<usize> = perm.into();
    let mut current = outlet;
    loop {
        let next = model.node(only_successor(model, current)?.node);
        if !is_identity_op(next) && !apply_move(&mut axes, as_move(next)?) {
            return None;
        }
        current = OutletId::new(next.id, 0);
        if is_identity(&axes) {
            return Some(current);
        }
    }
}

/// Through `Identity`s, the node that alone reads `outlet` at input `slot`.
pub(crate) fn only_reader_at(
    model: &TypedModel,
    outlet: OutletId,
    slot: usize,
) -> Option<&TypedNode> {
    let mut current = outlet;
    loop {
        let inlet = only_successor(model, current)?;
        let node = model.node(inlet.node);
        if is_identity_op(node) {
            current = OutletId::new(node.id, 0);
            continue;
        }
        return (inlet.slot == slot).then_some(node);
    }
}

/// `wire` transposed by `perm` in `patch`, as `Move`s named after `name`.
pub(crate) fn wire_transpose(
    patch: &mut TypedModelPatch,
    name: &str,
    mut wire: OutletId,
    perm: &[usize],
) -> TractResult<OutletId> {
    for (i, op) in moves_for(perm).into_iter().enumerate() {
        wire = patch.wire_node(format!("{name}.move-{i}"), op, &[wire])?[0];
    }
    Ok(wire)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_moves_of_a_permutation_transpose_by_it() {
        for perm in [
            &[4usize, 1, 2, 3, 0][..],
            &[2, 0, 1, 3],
            &[1, 2, 0],
            &[0, 1],
            &[3, 2, 1, 0],
        ] {
            let mut axes = identity(perm.len());
            for op in moves_for(perm) {
                assert!(apply_move(&mut axes, &op));
            }
            assert_eq!(&*axes, perm);
        }
    }

    #[test]
    fn an_inverse_undoes_its_permutation() {
        let perm = [2usize, 0, 3, 1];
        let inv = inverse(&perm);
        let composed: Vec<usize> = inv.iter().map(|&i| perm[i]).collect();
        assert!(is_identity(&composed));
    }
}

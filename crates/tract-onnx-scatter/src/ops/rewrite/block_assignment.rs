//! Declutter of a constant-index `ScatterND` that assigns one block ([`rewrite`]).
//!
//! `ScatterND(data, indices, updates)` with reduction `none` and constant indices whose tuples
//! enumerate, in row-major order, a box of `data.shape[..k]` that is a contiguous range
//! `start..start + len` along one axis and covers every other of those axes fully
//! ([`find_block`]), is a block assignment:
//!
//! ```text
//! output = Concat(axis, [data[.., ..start, ..], reshape(updates), data[.., start + len.., ..]])
//! ```
//!
//! (empty head or tail dropped). Slices and a concat are ops the rest of tract understands:
//! they fold, fuse and stream where a scatter cannot.

use scatter_kernels::Reduction;
use tract_core::internal::*;
use tract_core::ops::array::{Slice, TypedConcat};

use crate::ops::scatter_ops::ScatterNd;

/// Where a constant set of index tuples writes, when it is a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// The one axis (among the first `k`) the block does not cover fully;
    /// `0` when it covers everything.
    pub(crate) axis: usize,
    /// The first position the block writes along `axis`, normalized to
    /// `[0, dim - 1]`.
    pub(crate) start: usize,
    /// The positions it writes along `axis`, from `start` (the whole
    /// dimension when the block covers everything).
    pub(crate) len: usize,
    /// The block's extent over the first `k` axes of data.
    pub(crate) shape: TVec<usize>,
}

/// The block that `tuples` (flat, `dims.len()` components per tuple)
/// enumerate in row-major order, if they do; `dims` is `data.shape[..k]`.
///
/// Negative components count from the end of their dimension, as ONNX says;
/// any component out of bounds, any duplicate or out-of-order tuple, and any
/// box that is partial along more than one axis give `None`.
pub(crate) fn find_block(tuples: &[i64], dims: &[usize]) -> Option<Block> {
    let k = dims.len();
    if k == 0 || tuples.is_empty() || !tuples.len().is_multiple_of(k) {
        return None;
    }
    let count = tuples.len() / k;
    let normalized = |c: i64, d: usize| -> Option<usize> {
        let d = i64::try_from(d).ok()?;
        let c = if c < 0 { c.checked_add(d)? } else { c };
        (0..d).contains(&c).then_some(c as usize)
    };
    // The bounding box of the tuples.
    let mut lo: TVec<usize> = tvec![usize::MAX; k];
    let mut hi: TVec<usize> = tvec![0; k];
    for tuple in tuples.chunks_exact(k) {
        for (i, (&c, &d)) in tuple.iter().zip(dims).enumerate() {
            let c = normalized(c, d)?;
            lo[i] = lo[i].min(c);
            hi[i] = hi[i].max(c);
        }
    }
    let shape: TVec<usize> = lo.iter().zip(&hi).map(|(l, h)| h - l + 1).collect();
    let volume = shape
        .iter()
        .try_fold(1usize, |acc, &s| acc.checked_mul(s))?;
    if volume != count {
        return None;
    }
    // The tuples must be exactly the box, in row-major order: walk the box
    // with an odometer alongside them.
    let mut odometer: TVec<usize> = tvec![0; k];
    for tuple in tuples.chunks_exact(k) {
        for i in 0..k {
            if normalized(tuple[i], dims[i])? != lo[i] + odometer[i] {
                return None;
            }
        }
        for i in (0..k).rev() {
            odometer[i] += 1;
            if odometer[i] < shape[i] {
                break;
            }
            odometer[i] = 0;
        }
    }
    let partial: TVec<usize> = (0..k).filter(|&i| shape[i] != dims[i]).collect();
    let axis = match partial[..] {
        [] => 0,
        [axis] => axis,
        _ => return None,
    };
    Some(Block {
        axis,
        start: lo[axis],
        len: shape[axis],
        shape,
    })
}

/// The Slice/Concat patch replacing `node` (a [`ScatterNd`]), when it is a
/// block assignment. The trailing dims `data.shape[k..]` are copied whole, so they may be
/// symbolic; the first `k` dims must be known. Anything else (another reduction, a permuted
/// or duplicated enumeration, a box partial along two axes, an index out of bounds, which
/// must keep failing at run time) leaves the op as it is.
pub(crate) fn rewrite(
    op: &ScatterNd,
    model: &TypedModel,
    node: &TypedNode,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(op.reduction == Reduction::None);
    rule_if!(node.inputs.len() == 3);
    let data = model.outlet_fact(node.inputs[0])?;
    let indices = model.outlet_fact(node.inputs[1])?;
    let updates = model.outlet_fact(node.inputs[2])?;
    rule_if_some!(konst = &indices.konst);
    rule_if!(data.datum_type == updates.datum_type && data.is_plain() && updates.is_plain());
    rule_if!(konst.is_plain_ram());
    let q = konst.rank();
    rule_if!(q >= 1);
    let k = konst.shape()[q - 1];
    let r = data.rank();
    rule_if!(k >= 1 && k <= r);
    rule_if_some!(
        dims = data.shape[..k]
            .iter()
            .map(|d| d.to_usize().ok())
            .collect::<Option<TVec<usize>>>()
    );
    // TDim indices (shape arithmetic) qualify once their values are known.
    rule_if_some!(tuples = konst.cast_to::<i64>().ok());
    let tuples = tuples.try_as_plain_ram()?;
    rule_if_some!(block = find_block(tuples.as_slice::<i64>()?, &dims));

    // updates.shape == indices.shape[:-1] ++ data.shape[k:], provably.
    let lead: TVec<TDim> = konst.shape()[..q - 1].iter().map(|d| d.to_dim()).collect();
    rule_if!(updates.rank() == q - 1 + r - k);
    rule_if!(updates.shape[..q - 1] == lead[..] && updates.shape[q - 1..] == data.shape[k..]);

    let mut patch = TypedModelPatch::new(format!("{} block assignment as Slice/Concat", node.name));
    let data_tap = patch.tap_model(model, node.inputs[0])?;
    let mut block_wire = patch.tap_model(model, node.inputs[2])?;
    // The updates, shaped as the block: indices.shape[:-1] -> block.shape.
    let block_shape: TVec<TDim> = block.shape.iter().map(|d| d.to_dim()).collect();
    if lead.is_empty() {
        for i in 0..k {
            block_wire = patch.wire_node(
                format!("{}.block_axis_{i}", node.name),
                AxisOp::Add(0),
                &[block_wire],
            )?[0];
        }
    } else if lead != block_shape {
        block_wire = patch.wire_node(
            format!("{}.block", node.name),
            AxisOp::Reshape(0, lead, block_shape),
            &[block_wire],
        )?[0];
    }
    let wire = wire_concat(
        &mut patch,
        &node.name,
        data_tap,
        block_wire,
        block.axis,
        block.start..block.start + block.len,
        dims[block.axis],
    )?;
    patch.shunt_outside(model, node.id.into(), wire)?;
    Ok(Some(patch))
}

/// `data` (of length `axis_len` along `axis`) with `rows` along `axis`
/// replaced by `block` (data's shape but `rows.len()` along `axis`), as
/// `Concat(axis, [data[..rows.start], block, data[rows.end..]])`, an empty
/// head or tail dropped.
pub(crate) fn wire_concat(
    patch: &mut TypedModelPatch,
    name: &str,
    data: OutletId,
    block: OutletId,
    axis: usize,
    rows: std::ops::Range<usize>,
    axis_len: usize,
) -> TractResult<OutletId> {
    let mut parts = tvec!();
    if rows.start > 0 {
        parts.push(
            patch.wire_node(
                format!("{name}.head"),
                Slice::new(axis, 0, rows.start),
                &[data],
            )?[0],
        );
    }
    parts.push(block);
    if rows.end < axis_len {
        parts.push(
            patch.wire_node(
                format!("{name}.tail"),
                Slice::new(axis, rows.end, axis_len),
                &[data],
            )?[0],
        );
    }
    if parts.len() == 1 {
        return Ok(parts[0]);
    }
    Ok(patch.wire_node(name, TypedConcat::new(axis), &parts)?[0])
}

/// The patch making `node`'s output its data input (input 0), for a scatter
/// that writes nothing. (tract's `TypedModelPatch::shunt_one_op` only takes
/// single-input nodes.)
pub(crate) fn shunt_to_data(
    model: &TypedModel,
    node: &TypedNode,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(!node.inputs.is_empty() && node.outputs.len() == 1);
    let output: OutletId = node.id.into();
    // Data already a model output: there is nothing to shunt to.
    rule_if!(!(model.outputs.contains(&output) && model.outputs.contains(&node.inputs[0])));
    let patch = TypedModelPatch::rewire(model, &node.inputs[..1], &[output], &|_patch, taps| {
        Ok(taps.into())
    })
    .with_context(|| format!("Shunting {node} to its data input"))?;
    Ok(Some(patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(axis: usize, start: usize, len: usize, shape: &[usize]) -> Option<Block> {
        Some(Block {
            axis,
            start,
            len,
            shape: shape.into(),
        })
    }

    #[test]
    fn rows_of_a_matrix_are_a_block() {
        // data[1:3, :] of a 4x2 matrix.
        assert_eq!(
            find_block(&[1, 0, 1, 1, 2, 0, 2, 1], &[4, 2]),
            block(0, 1, 2, &[2, 2])
        );
        // k < rank: rows 0 and 1 of anything.
        assert_eq!(find_block(&[0, 1], &[4]), block(0, 0, 2, &[2]));
        // Negative indices count from the end.
        assert_eq!(find_block(&[-2, -1], &[4]), block(0, 2, 2, &[2]));
    }

    #[test]
    fn a_column_range_is_a_block() {
        // data[:, 1:3] of a 2x4 matrix.
        assert_eq!(
            find_block(&[0, 1, 0, 2, 1, 1, 1, 2], &[2, 4]),
            block(1, 1, 2, &[2, 2])
        );
    }

    #[test]
    fn the_whole_tensor_is_a_block() {
        assert_eq!(find_block(&[0, 1, 2], &[3]), block(0, 0, 3, &[3]));
    }

    #[test]
    fn anything_else_is_not() {
        // Out of order.
        assert_eq!(find_block(&[1, 0], &[4]), None);
        // Duplicated.
        assert_eq!(find_block(&[1, 1], &[4]), None);
        // Out of bounds.
        assert_eq!(find_block(&[3, 4], &[4]), None);
        assert_eq!(find_block(&[-5], &[4]), None);
        // Not contiguous.
        assert_eq!(find_block(&[0, 2], &[4]), None);
        // Partial along two axes: data[0:1, 0:1] of 2x2.
        assert_eq!(find_block(&[0, 0], &[2, 2]), None);
        // Column-major order of a full box.
        assert_eq!(find_block(&[0, 0, 1, 0, 0, 1, 1, 1], &[2, 2]), None);
        // Nothing, or ragged.
        assert_eq!(find_block(&[], &[2]), None);
        assert_eq!(find_block(&[0, 1, 2], &[2, 2]), None);
        assert_eq!(find_block(&[i64::MIN], &[2]), None);
    }
}

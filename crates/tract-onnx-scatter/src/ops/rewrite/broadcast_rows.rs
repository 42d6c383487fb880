//! Declutter of a ScatterElements whose indices are one row index per update row, broadcast
//! along the other axes: GNN message passing. Exporters write `out.scatter_add_(0,
//! idx.unsqueeze(1).expand_as(msg), msg)` (PyTorch, TorchScript and dynamo alike) and PyTorch
//! Geometric's `scatter(msg, idx, dim=0, reduce='sum')` as
//!
//! ```text
//! rows = Unsqueeze(idx, [1]) (or Reshape(idx, [-1, 1])); index = Expand(rows, shape(msg))
//! out = ScatterElements(data, index, msg, axis = 0)
//! ```
//!
//! The op then reads and checks an `[E, F]` index that holds E values: for 17k edges of 128
//! features, 2.2 M int64 reads for 17 k distinct ones. [`rewrite`] makes it a row scatter (a
//! ScatterND on `[E, 1]` indices) when it is one, and says why that is exact.

use scatter_kernels::mechanisms::Mechanism;
use tract_core::internal::*;
use tract_core::ops::array::MultiBroadcastTo;
use tract_core::ops::change_axes::AxisOp;

use crate::ops::scatter_ops::ScatterElements;
use crate::ops::scatter_ops::ScatterNd;
use crate::parse::site::{IndexPositions, NodeSite};

/// `ScatterElements(data, Expand(rows), updates)` on axis 0 with whole-row
/// updates as `ScatterND(data, rows as [E, 1], updates)`.
///
/// When the index is `MultiBroadcastTo` (tract's `Expand`) of an `[E, 1, …, 1]` tensor, axis
/// 0, and the updates cover whole rows of data (`indices.shape == updates.shape`,
/// `updates.shape[1..] == data.shape[1..]`), the op is a row scatter: a ScatterND with
/// `[E, 1]` indices and the same reduction, wired on the unbroadcast index.
///
/// Exact, bit for bit: each output element `(n, f…)` receives the updates
/// `(e, f…)` with `idx[e] = n` in increasing `e` in both ops (row-major over
/// the indices; the parallel kernels keep each destination's serial order),
/// so float reductions round alike and `none` keeps the last write. Errors
/// read alike too: the ScatterND keeps the ScatterElements' site, and
/// reports an index out of bounds at the position the broadcast index has
/// it ([`IndexPositions::BroadcastRows`] in its site); every shape
/// is tied by the rule's guards, so no shape error can differ at run time.
pub(crate) fn rewrite(
    op: &ScatterElements,
    model: &TypedModel,
    node: &TypedNode,
) -> TractResult<Option<TypedModelPatch>> {
    rule_if!(Mechanism::BroadcastRowRewrite.is_on());
    // OpenVINO's `use_init_val = 0` and `mean` have no ScatterND form.
    rule_if!(op.axis == 0 && op.use_init_val);
    rule_if_some!(reduction = op.reduction.onnx());
    rule_if!(node.inputs.len() == 3);
    let data = model.outlet_fact(node.inputs[0])?;
    let indices = model.outlet_fact(node.inputs[1])?;
    let updates = model.outlet_fact(node.inputs[2])?;
    let rank = data.rank();
    // Rank 1 is already one index per row.
    rule_if!(rank >= 2 && indices.rank() == rank && updates.rank() == rank);
    rule_if!(indices.shape == updates.shape);
    rule_if!(updates.shape[1..] == data.shape[1..]);
    let broadcast = model.node(node.inputs[1].node);
    rule_if_some!(expand = broadcast.op_as::<MultiBroadcastTo>());
    rule_if!(expand.shape == indices.shape);
    let source = broadcast.inputs[0];
    let rows = model.outlet_fact(source)?;
    rule_if!(rows.rank() == rank && rows.shape[0] == indices.shape[0]);
    rule_if!(rows.shape[1..].iter().all(|d| *d == TDim::Val(1)));

    let mut patch = TypedModelPatch::default();
    let mut wire = patch.tap_model(model, source)?;
    // [E, 1, …, 1] to [E, 1]: drop the trailing unit axes, last first.
    for axis in (2..rank).rev() {
        wire = patch.wire_node(
            format!("{}.rows.{axis}", node.name),
            AxisOp::Rm(axis),
            &[wire],
        )?[0];
    }
    let data = patch.tap_model(model, node.inputs[0])?;
    let updates = patch.tap_model(model, node.inputs[2])?;
    let site = NodeSite {
        positions: IndexPositions::BroadcastRows { data_rank: rank },
        ..op.site.clone()
    };
    let rows = ScatterNd {
        onnx_element: op.onnx_element,
        ..ScatterNd::onnx(site, reduction)
    };
    let out = patch.wire_node(&node.name, rows, &[data, wire, updates])?;
    patch.shunt_outside(model, node.id.into(), out[0])?;
    Ok(Some(patch))
}

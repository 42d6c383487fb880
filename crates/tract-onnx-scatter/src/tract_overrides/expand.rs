//! ONNX `Expand` to a shape holding a symbol only the run binds.
//!
//! tract's `MultiBroadcastTo` evaluates a constant shape with the session's
//! symbol values but takes only the data as input, so the node that binds
//! a symbol of the shape (a `NonZero` count) may be pruned as dead:
//! "Undetermined symbol" (SLANet's decoder). The override orders the data
//! after those nodes ([`super::run_symbols::AfterBinders`]); an `Expand`
//! whose shape holds no such symbol is tract's own.

use tract_hir::internal::*;
use tract_onnx::model::ParsingContext;
use tract_onnx::pb::NodeProto;

use super::retyped::{Retyped, Typing};
use super::run_symbols::{AfterBinders, wire_after};

/// The builder registered for `Expand`: tract's, but when its shape is a
/// constant holding run-bound symbols (a `Shape` of a run-time slice,
/// folded at load), its data input first goes through [`AfterBinders`],
/// so the nodes binding those symbols stay in the plan and run first.
/// tract's `MultiBroadcastTo` evaluates the shape with the session's
/// values, but takes only the data as input: without this, the binding
/// node may be pruned as dead ("Undetermined symbol", SLANet's decoder).
pub(crate) fn expand(
    ctx: &ParsingContext,
    node: &NodeProto,
) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    Retyped::stock_built("Expand", ctx, node, DataAfterBinders)
}

/// Typing that orders input 0 after the nodes binding the run-bound
/// symbols of the other inputs' constants; then tract's own typing.
#[derive(Debug, Clone)]
pub(crate) struct DataAfterBinders;

impl Typing for DataAfterBinders {
    fn to_typed(
        &self,
        stock: &dyn InferenceOp,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        let outlets: TVec<OutletId> = node.inputs.iter().map(|i| mapping[i]).collect();
        let binders = match outlets.get(1..) {
            Some(rest) => super::run_symbols::binders(target, rest)?,
            None => tvec![],
        };
        if binders.is_empty() {
            return stock.to_typed(source, node, target, mapping);
        }
        let name = format!("{}.after_binders", node.name);
        let data = wire_after(target, name, AfterBinders, outlets[0], binders)?;
        let mut mapping = mapping.clone();
        mapping.insert(node.inputs[0], data);
        stock.to_typed(source, node, target, &mapping)
    }
}

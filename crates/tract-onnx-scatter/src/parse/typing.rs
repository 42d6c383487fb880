//! Inference rules and wiring shared by the scatter expansions.

use tract_core::ops::cast::cast;
use tract_hir::internal::*;

use crate::site::NodeSite;

/// The output element type for data of type `data` and updates of type
/// `updates`: they must be equal, except that int64 meets TDim (tract's
/// symbolic int64 for shape arithmetic), which stays TDim.
pub fn unified_type(
    site: &NodeSite,
    data: DatumType,
    updates: DatumType,
) -> TractResult<DatumType> {
    match (data, updates) {
        (a, b) if a == b => Ok(a),
        (DatumType::TDim, DatumType::I64) | (DatumType::I64, DatumType::TDim) => Ok(DatumType::TDim),
        _ => bail!(site.error(format!(
            "type: updates has element type {} but data has {}; they must be the same (no promotion)", crate::ops::types::onnx_type(updates), crate::ops::types::onnx_type(data)
        ))),
    }
}

/// Rules: output fact = data's shape; output type = [`unified_type`].
pub fn data_like_output<'r, 'p: 'r>(
    s: &mut Solver<'r>,
    site: &'p NodeSite,
    data: &'p TensorProxy,
    updates: &'p TensorProxy,
    output: &'p TensorProxy,
) -> InferenceResult {
    s.equals(&output.shape, &data.shape)?;
    s.given_2(&data.datum_type, &updates.datum_type, move |s, d, u| {
        s.equals(&output.datum_type, unified_type(site, d, u)?)
    })
}

/// Casts whichever of data/updates is int64 to TDim when the other is TDim;
/// returns the (data, updates) wires to use.
pub fn wire_unified(
    prefix: &str,
    site: &NodeSite,
    model: &mut TypedModel,
    data: OutletId,
    updates: OutletId,
) -> TractResult<(OutletId, OutletId)> {
    let dt = model.outlet_fact(data)?.datum_type;
    let ut = model.outlet_fact(updates)?.datum_type;
    let target = unified_type(site, dt, ut)?;
    let mut to = |wire: OutletId, from: DatumType, name: &str| -> TractResult<OutletId> {
        if from == target {
            Ok(wire)
        } else {
            Ok(model.wire_node(format!("{prefix}.{name}_as_tdim"), cast(target), &[wire])?[0])
        }
    };
    Ok((to(data, dt, "data")?, to(updates, ut, "updates")?))
}

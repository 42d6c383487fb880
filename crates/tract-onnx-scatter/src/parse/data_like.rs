//! Inference rules and wiring shared by the scatter expansions.

use tract_core::ops::cast::cast;
use tract_hir::internal::*;

use crate::parse::site::NodeSite;

/// The output element type for data of type `data` and updates of type
/// `updates`: they must be equal, except that int64 meets TDim (tract's
/// symbolic int64 for shape arithmetic), which stays TDim.
pub(crate) fn unified_type(
    site: &NodeSite,
    data: DatumType,
    updates: DatumType,
) -> TractResult<DatumType> {
    match (data, updates) {
        (a, b) if a == b => Ok(a),
        (DatumType::TDim, DatumType::I64) | (DatumType::I64, DatumType::TDim) => Ok(DatumType::TDim),
        _ => bail!(site.error(format!(
            "type: updates has element type {} but data has {}; they must be the same (no promotion)", onnx_type(updates), onnx_type(data)
        ))),
    }
}

/// Rules: output fact = data's shape; output type = [`unified_type`].
pub(crate) fn data_like_output<'r, 'p: 'r>(
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
pub(crate) fn wire_unified(
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

/// A scatter whose output is typed like its data, read from inputs
/// `(data, indices, updates, ..)`: what differs between them before
/// typing. [`DataLike`] is the one inference form they share.
pub(crate) trait DataLikeScatter: std::fmt::Debug + Clone + Send + Sync + 'static {
    /// How many inputs the node takes.
    const INPUTS: usize;

    /// The node it was built from; its op names the inference op.
    fn site(&self) -> &NodeSite;

    /// The attributes as `info` shows them.
    fn info(&self) -> String;

    /// Wires the typed op; `inputs` has data and updates already of one
    /// type ([`wire_unified`]).
    fn wire_typed(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>>;
}

/// The inference op of a [`DataLikeScatter`]: checks the arity, types the
/// output like data ([`data_like_output`]) and unifies data and updates
/// before the typed op is wired.
#[derive(Debug, Clone)]
pub(crate) struct DataLike<S>(pub(crate) S);

impl<S: DataLikeScatter> Expansion for DataLike<S> {
    fn name(&self) -> StaticName {
        self.0.site().op.onnx_name().into()
    }

    fn info(&self) -> TractResult<Vec<String>> {
        Ok(vec![self.0.info()])
    }

    fn rules<'r, 'p: 'r, 's: 'r>(
        &'s self,
        s: &mut Solver<'r>,
        inputs: &'p [TensorProxy],
        outputs: &'p [TensorProxy],
    ) -> InferenceResult {
        check_input_arity(inputs, S::INPUTS)?;
        check_output_arity(outputs, 1)?;
        data_like_output(s, self.0.site(), &inputs[0], &inputs[2], &outputs[0])
    }

    fn wire(
        &self,
        prefix: &str,
        model: &mut TypedModel,
        inputs: &[OutletId],
    ) -> TractResult<TVec<OutletId>> {
        let (data, updates) = wire_unified(prefix, self.0.site(), model, inputs[0], inputs[2])?;
        let mut wires: TVec<OutletId> = inputs.into();
        wires[0] = data;
        wires[2] = updates;
        self.0.wire_typed(prefix, model, &wires)
    }
}

/// The ONNX name of a tract element type, for messages (TDim is tract's
/// symbolic int64).
pub(crate) fn onnx_type(dt: DatumType) -> String {
    match dt {
        DatumType::Bool => "bool".into(),
        DatumType::I8 => "int8".into(),
        DatumType::I16 => "int16".into(),
        DatumType::I32 => "int32".into(),
        DatumType::I64 => "int64".into(),
        DatumType::U8 => "uint8".into(),
        DatumType::U16 => "uint16".into(),
        DatumType::U32 => "uint32".into(),
        DatumType::U64 => "uint64".into(),
        DatumType::F16 => "float16".into(),
        DatumType::F32 => "float".into(),
        DatumType::F64 => "double".into(),
        DatumType::String => "string".into(),
        DatumType::TDim => "int64 (symbolic)".into(),
        other => format!("{other:?}"),
    }
}

//! The checks every scatter of `(data, indices, updates)` runs before it
//! touches its data, in one order: input count, index type, data/updates
//! type, reduction; then, in the op, its own type rule, shapes (the
//! kernels' plan) and index values (the kernels' check). At run the op
//! calls [`scatter_inputs`] once; at load [`output_facts`] runs the same
//! checks on facts (symbolic dims through the kernels' `check_shapes`), so
//! a mistake the facts already show reads as the run would report it.

use std::borrow::Cow;

use scatter_kernels::{
    Bfloat16InFloat32, ComplexParts, Element, IndexValue, Reduction, ScatterError, UpdateReduction,
};
use tract_core::internal::*;
use tract_core::tract_data::TooEarly;

use crate::ops::shapes::{SymDim, all_concrete, sym_dims};
use crate::ops::types::{dispatch_element, onnx_type, with_index_slice};
use crate::parse::onnx_types::OnnxElement;
use crate::parse::site::NodeSite;

/// A scatter's inputs once [`scatter_inputs`] accepted them.
pub struct ScatterInputs {
    /// The data input, untouched.
    pub data: TValue,
    /// The indices as int32 or int64 values: the input itself, or its
    /// TDim values evaluated with the run's symbols.
    pub indices: TValue,
    /// The updates input, of data's type.
    pub updates: TValue,
    /// Whether someone besides this call holds the indices (a constant,
    /// the caller): they may come back, and their check may be kept.
    pub indices_held_elsewhere: bool,
}

/// The shared run-time checks of a scatter of `(data, indices, updates)`
/// holding `element` values with `reduction`: input count, index type,
/// data/updates type and reduction, each an error naming `site`.
pub fn scatter_inputs(
    site: &NodeSite,
    inputs: TVec<TValue>,
    symbols: &SymbolValues,
    element: OnnxElement,
    reduction: UpdateReduction,
) -> TractResult<ScatterInputs> {
    expect_three_inputs(site, inputs.len())?;
    let (data, indices, updates) = args_3!(inputs);
    check_indices_type(site, "indices", indices.datum_type())?;
    check_same_type(site, data.datum_type(), updates.datum_type())?;
    check_reduction_for(site, data.datum_type(), element, reduction)?;
    let (indices, indices_held_elsewhere) = match plain_indices(site, "indices", &indices, symbols)?
    {
        Cow::Borrowed(_) => {
            let held = indices
                .as_arc_tensor()
                .is_some_and(|a| std::sync::Arc::strong_count(a) >= 2);
            (indices, held)
        }
        Cow::Owned(values) => (values.into_tvalue(), false),
    };
    Ok(ScatterInputs {
        data,
        indices,
        updates,
        indices_held_elsewhere,
    })
}

/// `axis` as a position in `[0, rank - 1]`, or the kernels' "axis" error
/// for this node (the ScatterElements family: Scatter, ScatterElements,
/// ScatterElementsUpdate, ScatterElementsGrad).
pub fn elements_axis(site: &NodeSite, axis: i64, rank: usize) -> TractResult<usize> {
    scatter_kernels::elements_axis(axis, rank).map_err(|e| site.scatter_error(e))
}

/// An op's own rules, which the load-time checks ([`output_facts`]) call.
pub trait ScatterRules {
    /// The kernels' plan for concrete shapes.
    type Plan;

    /// The node the op was built from, named by every error.
    fn site(&self) -> &NodeSite;

    /// The op's reduction, checked against the data type before the
    /// shapes.
    fn reduction(&self) -> UpdateReduction;

    /// The ONNX element type data and updates hold: for complex values,
    /// the plan and its checks see the complex shapes.
    fn onnx_element(&self) -> OnnxElement;

    /// A type rule of this op beyond the reduction's (none by default).
    fn check_op_type(&self, dt: DatumType) -> TractResult<()> {
        let _ = dt;
        Ok(())
    }

    /// The plan's shape rules on dims the facts may not know.
    fn check_fact_shapes(
        &self,
        data: &[SymDim],
        indices: &[SymDim],
        updates: &[SymDim],
    ) -> Result<(), ScatterError>;

    /// The plan for concrete shapes, or the error naming this node.
    fn plan(&self, data: &[usize], indices: &[usize], updates: &[usize])
    -> TractResult<Self::Plan>;

    /// The plan's check of index values.
    fn check_index_values<I: IndexValue>(
        plan: &Self::Plan,
        indices: &[I],
    ) -> Result<(), ScatterError>;
}

/// The output fact of `op` (data's), once the checks on facts accepted the
/// inputs: everything the facts know, constant index values included.
pub fn output_facts<S: ScatterRules>(
    op: &S,
    inputs: &[&TypedFact],
) -> TractResult<TVec<TypedFact>> {
    let site = op.site();
    expect_three_inputs(site, inputs.len())?;
    let (data, indices, updates) = (inputs[0], inputs[1], inputs[2]);
    check_indices_type(site, "indices", indices.datum_type)?;
    check_same_type(site, data.datum_type, updates.datum_type)?;
    check_reduction_for(site, data.datum_type, op.onnx_element(), op.reduction())?;
    op.check_op_type(data.datum_type)?;
    let element = op.onnx_element();
    let (d, i, u) = (sym_dims(data), sym_dims(indices), sym_dims(updates));
    let (d, u) = element.data_and_updates_shapes(site, &d, &u)?;
    op.check_fact_shapes(d, &i, u)
        .map_err(|e| site.scatter_error(e))?;
    if let Some(shapes) = all_concrete(&[data, indices, updates]) {
        let (d, u) = element.data_and_updates_shapes(site, shapes[0], shapes[2])?;
        let plan = op.plan(d, shapes[1], u)?;
        // Constant indices are checked now: the error surfaces at load.
        if let Some(konst) = &indices.konst
            && let Some(konst) = known_indices(site, "indices", konst)?
        {
            with_index_slice!(konst, |idx| S::check_index_values(&plan, idx))
                .map_err(|e| site.scatter_error(e))?;
        }
    }
    Ok(tvec!(data.datum_type.fact(data.shape.clone())))
}

/// The three-input ops (data, indices, updates) refuse any other count.
pub fn expect_three_inputs(site: &NodeSite, given: usize) -> TractResult<()> {
    if given != 3 {
        bail!(site.error(format!(
            "expects 3 inputs (data, indices, updates), got {given}"
        )));
    }
    Ok(())
}

/// data and updates must be of one type: no promotion.
pub fn check_same_type(site: &NodeSite, data: DatumType, updates: DatumType) -> TractResult<()> {
    if data != updates {
        bail!(site.error(format!(
            "type: updates has element type {} but data has {}; they must be the same (no promotion)", onnx_type(updates), onnx_type(data)
        )));
    }
    Ok(())
}

/// Indices are int32 or int64; TDim is how tract carries int64 shape
/// arithmetic.
pub fn check_indices_type(site: &NodeSite, name: &str, dt: DatumType) -> TractResult<()> {
    if !matches!(dt, DatumType::I32 | DatumType::I64 | DatumType::TDim) {
        bail!(site.error(format!(
            "type: {name} has element type {}, expected int32 or int64",
            onnx_type(dt)
        )));
    }
    Ok(())
}

/// The data type is one the ops hold and it can do `reduction` (an ONNX
/// one, or OpenVINO's `mean`); for data holding another ONNX type
/// (`element`), that type can.
pub fn check_reduction_for(
    site: &NodeSite,
    dt: DatumType,
    element: OnnxElement,
    reduction: UpdateReduction,
) -> TractResult<()> {
    fn check<T: Element>(site: &NodeSite, r: UpdateReduction) -> TractResult<()> {
        T::check_reduction(r).map_err(|e| site.scatter_error(e))
    }
    match (element, dt) {
        (OnnxElement::Native, _) => (),
        (OnnxElement::Bfloat16, DatumType::F32) => {
            return check::<Bfloat16InFloat32>(site, reduction);
        }
        (OnnxElement::Complex, DatumType::F32) => {
            return check::<ComplexParts<f32>>(site, reduction);
        }
        (OnnxElement::Complex, DatumType::F64) => {
            return check::<ComplexParts<f64>>(site, reduction);
        }
        (element, dt) => bail!(site.error(format!(
            "type: data of element type {} cannot hold {} values",
            onnx_type(dt),
            element.as_str()
        ))),
    }
    dispatch_element!(dt, site, "data", |T| { check::<T>(site, reduction) }, tdim => {
        symbolic_reduction(site, reduction).map(drop)
    })
}

/// `reduction` as symbolic (TDim) data can do it: an ONNX one; `mean`
/// is refused.
pub fn symbolic_reduction(site: &NodeSite, reduction: UpdateReduction) -> TractResult<Reduction> {
    match reduction {
        UpdateReduction::Onnx(r) => Ok(r),
        UpdateReduction::Mean => {
            bail!(site.error("reduction 'mean' is not supported for symbolic (TDim) data"))
        }
    }
}

/// `t` as int32 or int64 indices: borrowed when it already is one, a
/// concrete int64 copy when tract carries it as TDim (shape arithmetic),
/// each value evaluated with `symbols` (the run's, in a plan). A value
/// still symbolic is an error whose root cause is tract's `TooEarly`:
/// ahead of the run (analysis, constant folding) that means "not yet",
/// which tract skips.
pub fn plain_indices<'a>(
    site: &NodeSite,
    name: &str,
    t: &'a Tensor,
    symbols: &SymbolValues,
) -> TractResult<Cow<'a, Tensor>> {
    match t.datum_type() {
        DatumType::I32 | DatumType::I64 => Ok(Cow::Borrowed(t)),
        DatumType::TDim => {
            let values = t
                .try_as_plain_ram()?
                .as_slice::<TDim>()?
                .iter()
                .map(|d| d.eval(symbols).to_i64())
                .collect::<Result<Vec<i64>, TooEarly>>()
                .map_err(|e| {
                    anyhow::Error::from(e).context(format!(
                        "{site}: type: {name} holds symbolic values that are not known yet"
                    ))
                })?;
            Ok(Cow::Owned(Tensor::from_shape(t.shape(), &values)?))
        }
        dt => bail!(site.error(format!(
            "type: {name} has element type {}, expected int32 or int64",
            onnx_type(dt)
        ))),
    }
}

/// Constant indices for a check at load: `None` while they hold symbols
/// only the run binds (the run checks them).
pub fn known_indices<'a>(
    site: &NodeSite,
    name: &str,
    konst: &'a Tensor,
) -> TractResult<Option<Cow<'a, Tensor>>> {
    match plain_indices(site, name, konst, &SymbolValues::default()) {
        Ok(indices) => Ok(Some(indices)),
        Err(e) if e.root_cause().is::<TooEarly>() => Ok(None),
        Err(e) => Err(e),
    }
}

//! Element-type rules shared by the scatter ops, and the dispatch from a
//! tract `DatumType` to a kernel element type.

use std::borrow::Cow;

use scatter_kernels::{
    Bfloat16InFloat32, ComplexPart, ComplexParts, Element, Reduction, UpdateReduction,
};
use tract_core::internal::*;
use tract_core::tract_data::TooEarly;

use crate::onnx_types::OnnxElement;
use crate::site::NodeSite;

/// Element types the scatter ops hold, in the order messages list them.
pub const SUPPORTED: &str = "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float, double, string";

/// Runs `$body` with `$T` bound to the kernel element type of `$dt`; TDim
/// (tract's symbolic integers) runs `$tdim`; anything else is a type error.
macro_rules! dispatch_element {
    ($dt:expr, $site:expr, $input:expr, |$T:ident| $body:block, tdim => $tdim:block) => {
        match $dt {
            DatumType::Bool => {
                type $T = bool;
                $body
            }
            DatumType::I8 => {
                type $T = i8;
                $body
            }
            DatumType::I16 => {
                type $T = i16;
                $body
            }
            DatumType::I32 => {
                type $T = i32;
                $body
            }
            DatumType::I64 => {
                type $T = i64;
                $body
            }
            DatumType::U8 => {
                type $T = u8;
                $body
            }
            DatumType::U16 => {
                type $T = u16;
                $body
            }
            DatumType::U32 => {
                type $T = u32;
                $body
            }
            DatumType::U64 => {
                type $T = u64;
                $body
            }
            DatumType::F16 => {
                type $T = half::f16;
                $body
            }
            DatumType::F32 => {
                type $T = f32;
                $body
            }
            DatumType::F64 => {
                type $T = f64;
                $body
            }
            DatumType::String => {
                type $T = String;
                $body
            }
            DatumType::TDim => $tdim,
            other => Err($crate::ops::types::unsupported($site, $input, other)),
        }
    };
}
pub(crate) use dispatch_element;

/// Runs `|$d, $u| $body` (generic in the element type) on the data of
/// `$view` and on `$updates` when they hold another ONNX type than their
/// own ([`OnnxElement`]): `Some` of its result for bfloat16 and complex
/// data, seen as the kernels' [`Bfloat16InFloat32`] or [`ComplexParts`]
/// elements; `None` for native data, which the caller dispatches on its
/// own type.
macro_rules! apply_as_onnx_element {
    ($element:expr, $site:expr, $view:expr, $updates:expr, |$d:ident, $u:ident| $body:expr) => {
        match ($element, $view.datum_type()) {
            ($crate::onnx_types::OnnxElement::Native, _) => None,
            ($crate::onnx_types::OnnxElement::Bfloat16, _) => {
                Some($crate::ops::types::apply_in_bfloat16(
                    $site,
                    $view.as_slice_mut::<f32>()?,
                    $updates,
                    |$d, $u| $body,
                ))
            }
            ($crate::onnx_types::OnnxElement::Complex, DatumType::F64) => {
                Some($crate::ops::types::apply_in_complex(
                    $site,
                    $view.as_slice_mut::<f64>()?,
                    $updates,
                    |$d, $u| $body,
                ))
            }
            ($crate::onnx_types::OnnxElement::Complex, _) => {
                Some($crate::ops::types::apply_in_complex(
                    $site,
                    $view.as_slice_mut::<f32>()?,
                    $updates,
                    |$d, $u| $body,
                ))
            }
        }
    };
}
pub(crate) use apply_as_onnx_element;

pub use crate::parse::typing::onnx_type;

/// Evaluates `$body` with `$idx` bound to `$tensor`'s values as an int32 or
/// int64 slice (the tensor has been through [`plain_indices`]), so the
/// kernels read indices in their stored type.
macro_rules! with_index_slice {
    ($tensor:expr, |$idx:ident| $body:expr) => {
        match $tensor.datum_type() {
            DatumType::I32 => {
                let $idx = $crate::ops::types::slice::<i32>(&$tensor)?;
                $body
            }
            _ => {
                let $idx = $crate::ops::types::slice::<i64>(&$tensor)?;
                $body
            }
        }
    };
}
pub(crate) use with_index_slice;

/// The three-input ops (data, indices, updates) refuse any other count.
pub fn expect_three_inputs(site: &NodeSite, given: usize) -> TractResult<()> {
    if given != 3 {
        bail!(site.error(format!(
            "expects 3 inputs (data, indices, updates), got {given}"
        )));
    }
    Ok(())
}

/// The "type" error for `input` of element type `dt`, which no scatter op
/// holds: names the node, the input, the type and the supported ones.
pub fn unsupported(site: &NodeSite, input: &str, dt: DatumType) -> anyhow::Error {
    site.error(format!(
        "type: {input} has element type {}, which scatter ops do not hold (supported: {SUPPORTED})",
        onnx_type(dt)
    ))
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

/// How a TDim destination combines with an update.
pub fn tdim_combiner(reduction: Reduction) -> fn(&mut TDim, &TDim) {
    match reduction {
        Reduction::None => |acc, u| acc.clone_from(u),
        Reduction::Add => |acc, u| *acc += u,
        Reduction::Mul => |acc, u| *acc *= u,
        Reduction::Max => |acc, u| *acc = TDim::Max(vec![acc.clone(), u.clone()]).simplify(),
        Reduction::Min => |acc, u| *acc = TDim::Min(vec![acc.clone(), u.clone()]).simplify(),
    }
}

/// The elements of `t` as `&[T]`; `Err` when `t` is not in plain memory or
/// does not hold `T`s.
pub fn slice<T: Datum>(t: &Tensor) -> TractResult<&[T]> {
    t.try_as_plain_ram()?.as_slice::<T>()
}

/// Runs `apply` on `data` and `updates`, float32 tensors holding bfloat16
/// values, seen as [`Bfloat16InFloat32`] elements: the kernels' bfloat16
/// arithmetic rounds after every update, as ONNX does on bfloat16 data,
/// in place.
pub fn apply_in_bfloat16(
    site: &NodeSite,
    data: &mut [f32],
    updates: &Tensor,
    apply: impl FnOnce(
        &mut [Bfloat16InFloat32],
        &[Bfloat16InFloat32],
    ) -> Result<(), scatter_kernels::ScatterError>,
) -> TractResult<()> {
    let updates = Bfloat16InFloat32::slice(slice::<f32>(updates)?);
    apply(Bfloat16InFloat32::slice_mut(data), updates).map_err(|e| site.scatter_error(e))
}

/// Runs `apply` on `data` and `updates`, float tensors of parts `P`
/// holding complex values, seen as [`ComplexParts`] elements, in place.
pub fn apply_in_complex<P: ComplexPart + Datum>(
    site: &NodeSite,
    data: &mut [P],
    updates: &Tensor,
    apply: impl FnOnce(
        &mut [ComplexParts<P>],
        &[ComplexParts<P>],
    ) -> Result<(), scatter_kernels::ScatterError>,
) -> TractResult<()> {
    // Both shapes end in the pair axis (checked with the plan): the part
    // counts are even.
    let odd = || site.error("shape: complex data or updates hold an odd count of parts");
    let updates = ComplexParts::slice(slice::<P>(updates)?).ok_or_else(odd)?;
    let data = ComplexParts::slice_mut(data).ok_or_else(odd)?;
    apply(data, updates).map_err(|e| site.scatter_error(e))
}

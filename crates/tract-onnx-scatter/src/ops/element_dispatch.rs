//! Element-type rules shared by the scatter ops, and the dispatch from a
//! tract `DatumType` to a kernel element type.

use scatter_kernels::{Bfloat16InFloat32, ComplexPart, ComplexParts, Reduction};
use tract_core::internal::*;

use crate::parse::site::NodeSite;

/// Element types the scatter ops hold, in the order messages list them.
pub(crate) const SUPPORTED: &str = "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float, double, string";

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
            other => Err($crate::ops::element_dispatch::unsupported(
                $site, $input, other,
            )),
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
            ($crate::parse::onnx_types::OnnxElement::Native, _) => None,
            ($crate::parse::onnx_types::OnnxElement::Bfloat16, _) => {
                Some($crate::ops::element_dispatch::apply_in_bfloat16(
                    $site,
                    $view.as_slice_mut::<f32>()?,
                    $updates,
                    |$d, $u| $body,
                ))
            }
            ($crate::parse::onnx_types::OnnxElement::Complex, DatumType::F64) => {
                Some($crate::ops::element_dispatch::apply_in_complex(
                    $site,
                    $view.as_slice_mut::<f64>()?,
                    $updates,
                    |$d, $u| $body,
                ))
            }
            ($crate::parse::onnx_types::OnnxElement::Complex, _) => {
                Some($crate::ops::element_dispatch::apply_in_complex(
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

pub(crate) use crate::parse::data_like::onnx_type;

/// Evaluates `$body` with `$idx` bound to `$tensor`'s values as an int32 or
/// int64 slice (the tensor has been through
/// [`crate::ops::run::input_checks::plain_indices`]), so the
/// kernels read indices in their stored type.
macro_rules! with_index_slice {
    ($tensor:expr, |$idx:ident| $body:expr) => {
        match $tensor.datum_type() {
            DatumType::I32 => {
                let $idx = $crate::ops::element_dispatch::slice::<i32>(&$tensor)?;
                $body
            }
            _ => {
                let $idx = $crate::ops::element_dispatch::slice::<i64>(&$tensor)?;
                $body
            }
        }
    };
}
pub(crate) use with_index_slice;

/// The "type" error for `input` of element type `dt`, which no scatter op
/// holds: names the node, the input, the type and the supported ones.
pub(crate) fn unsupported(site: &NodeSite, input: &str, dt: DatumType) -> anyhow::Error {
    site.error(format!(
        "type: {input} has element type {}, which scatter ops do not hold (supported: {SUPPORTED})",
        onnx_type(dt)
    ))
}

/// How a TDim destination combines with an update.
pub(crate) fn tdim_combiner(reduction: Reduction) -> fn(&mut TDim, &TDim) {
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
pub(crate) fn slice<T: Datum>(t: &Tensor) -> TractResult<&[T]> {
    t.try_as_plain_ram()?.as_slice::<T>()
}

/// Runs `apply` on `data` and `updates`, float32 tensors holding bfloat16
/// values, seen as [`Bfloat16InFloat32`] elements: the kernels' bfloat16
/// arithmetic rounds after every update, as ONNX does on bfloat16 data,
/// in place.
pub(crate) fn apply_in_bfloat16(
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
pub(crate) fn apply_in_complex<P: ComplexPart + Datum>(
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

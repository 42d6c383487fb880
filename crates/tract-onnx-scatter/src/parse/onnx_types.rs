//! The ONNX element types tract lacks: tensors of them to and from the float tensors a model
//! loaded through [`crate::onnx()`] takes and returns, and `OnnxElement`, the type a scatter's
//! float data hold. Contract: docs/contract.md, "bfloat16" and "complex64 and complex128".
//!
//! | ONNX type | what the model takes and returns | to it | from it |
//! |---|---|---|---|
//! | bfloat16 of dims `d` | float32 of dims `d`, each value a bfloat16 value | [`bf16_tensor`] | [`bf16_values`] |
//! | complex64 of dims `d` | float32 of dims `d ++ [2]`: (real, imaginary) | [`complex_tensor`] | [`complex_values`] |
//! | complex128 of dims `d` | float64 of dims `d ++ [2]`: (real, imaginary) | [`complex_tensor`] | [`complex_values`] |

use half::bf16;
use num_complex::Complex;
use scatter_kernels::{ComplexPart, FactDim};
use tract_core::internal::*;
use tract_core::ndarray::{ArrayD, IxDyn};

use crate::parse::site::NodeSite;

/// The float32 tensor of dims `shape` a bfloat16 model takes for
/// `values`: each value widened, exactly.
///
/// ```
/// use tract_onnx_scatter::half::bf16;
/// use tract_onnx_scatter::onnx_types::*;
///
/// let x = bf16_tensor(&[2], &[bf16::from_f32(1.5), bf16::from_f32(-2.0)])?;
/// assert_eq!(bf16_values(&x)?.as_slice().unwrap(), &[bf16::from_f32(1.5), bf16::from_f32(-2.0)]);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn bf16_tensor(shape: &[usize], values: &[bf16]) -> TractResult<Tensor> {
    check_volume(shape, values.len(), "bfloat16")?;
    let widened: Vec<f32> = values.iter().map(|v| v.to_f32()).collect();
    Tensor::from_shape(shape, &widened)
}

/// The bfloat16 values of a float32 tensor a bfloat16 model returns.
/// Exact for the values such a model produces (each is a bfloat16
/// value); any other float32 rounds to the nearest bfloat16, ties to even.
pub fn bf16_values(t: &Tensor) -> TractResult<ArrayD<bf16>> {
    let parts = float_slice::<f32>(t, "bfloat16")?;
    let values: Vec<bf16> = parts.iter().map(|v| bf16::from_f32(*v)).collect();
    Ok(ArrayD::from_shape_vec(IxDyn(t.shape()), values)?)
}

/// The float tensor of dims `shape ++ [2]` a complex model takes for
/// `values`: float32 parts for complex64 (`T = f32`), float64 for
/// complex128, (real, imaginary) interleaved as ONNX stores them.
///
/// ```
/// use tract_onnx_scatter::num_complex::Complex;
/// use tract_onnx_scatter::onnx_types::*;
///
/// let z = complex_tensor(&[1], &[Complex::new(1.0f32, 2.0)])?;
/// assert_eq!(z.shape(), &[1, 2]);
/// assert_eq!(complex_values::<f32>(&z)?[[0]], Complex::new(1.0, 2.0));
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn complex_tensor<T: ComplexPart + Datum>(
    shape: &[usize],
    values: &[Complex<T>],
) -> TractResult<Tensor> {
    check_volume(shape, values.len(), T::COMPLEX_NAME)?;
    let parts: Vec<T> = values.iter().flat_map(|c| [c.re, c.im]).collect();
    let mut dims = shape.to_vec();
    dims.push(2);
    Tensor::from_shape(&dims, &parts)
}

/// The complex values of a float tensor of dims `d ++ [2]` a complex
/// model returns, as an array of dims `d`.
pub fn complex_values<T: ComplexPart + Datum>(t: &Tensor) -> TractResult<ArrayD<Complex<T>>> {
    let parts = float_slice::<T>(t, T::COMPLEX_NAME)?;
    let Some((&2, dims)) = t.shape().split_last() else {
        bail!(
            "{} values are held on a last axis of 2 (real, imaginary); this tensor's shape is {:?}",
            T::COMPLEX_NAME,
            t.shape()
        );
    };
    let values: Vec<Complex<T>> = parts
        .chunks_exact(2)
        .map(|p| Complex::new(p[0], p[1]))
        .collect();
    Ok(ArrayD::from_shape_vec(IxDyn(dims), values)?)
}

/// The ONNX element type a scatter's data and updates hold, where tract
/// has no type of its own for it and the loader ([`crate::load`]) gave
/// the model a float tensor instead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(crate) enum OnnxElement {
    /// The tensor's own type.
    #[default]
    Native,
    /// float32 holding bfloat16 values ([`crate::load::bfloat16`]): `add`
    /// and `mul` round to bfloat16 after every update, as ONNX's do.
    Bfloat16,
    /// float32 or float64 holding complex64 or complex128 values as
    /// (real, imaginary) pairs on a trailing axis of 2
    /// ([`crate::load::complex`]). Shapes, axes, indices and messages are
    /// the complex tensor's: the pair axis is not one of them.
    Complex,
}

impl OnnxElement {
    /// The name the NNEF form gives it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OnnxElement::Native => "native",
            OnnxElement::Bfloat16 => "bfloat16",
            OnnxElement::Complex => "complex",
        }
    }

    /// The value [`OnnxElement::as_str`] names.
    pub(crate) fn from_name(name: &str) -> Option<OnnxElement> {
        [
            OnnxElement::Native,
            OnnxElement::Bfloat16,
            OnnxElement::Complex,
        ]
        .into_iter()
        .find(|e| e.as_str() == name)
    }

    /// The rank of the tensor a tensor of `rank` holds: one less for
    /// complex values (the pair axis).
    pub(crate) fn rank(self, rank: usize) -> usize {
        match self {
            OnnxElement::Complex => rank.saturating_sub(1),
            _ => rank,
        }
    }

    /// The bytes of one element of this type held in data of type `dt`.
    pub(crate) fn size_of(self, dt: DatumType) -> usize {
        match self {
            OnnxElement::Complex => dt.size_of().saturating_mul(2),
            _ => dt.size_of(),
        }
    }

    /// The shapes of the tensors `data` and `updates` hold ([`Self::shape`]).
    pub(crate) fn data_and_updates_shapes<'s, D: FactDim + std::fmt::Display>(
        self,
        site: &NodeSite,
        data: &'s [D],
        updates: &'s [D],
    ) -> TractResult<(&'s [D], &'s [D])> {
        Ok((
            self.shape(site, "data", data)?,
            self.shape(site, "updates", updates)?,
        ))
    }

    /// The shape of the tensor `input` of `shape` holds: without the pair
    /// axis for complex values. A complex input whose last dim is known
    /// and not 2 is an error naming it.
    pub(crate) fn shape<'s, D: FactDim + std::fmt::Display>(
        self,
        site: &NodeSite,
        input: &str,
        shape: &'s [D],
    ) -> TractResult<&'s [D]> {
        if self != OnnxElement::Complex {
            return Ok(shape);
        }
        match shape.split_last() {
            Some((pair, complex)) if pair.known().is_none_or(|d| d == 2) => Ok(complex),
            _ => bail!(site.error(format!(
                "shape: {input} holds complex values as (real, imaginary) pairs on a last axis of 2, but its shape is [{}]",
                shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")
            ))),
        }
    }
}

fn check_volume(shape: &[usize], len: usize, what: &str) -> TractResult<()> {
    let volume = shape.iter().try_fold(1usize, |acc, d| acc.checked_mul(*d));
    ensure!(
        volume == Some(len),
        "{len} {what} values do not fill the shape {shape:?}"
    );
    Ok(())
}

fn float_slice<'t, T: Datum>(t: &'t Tensor, what: &str) -> TractResult<&'t [T]> {
    ensure!(
        t.datum_type() == T::datum_type(),
        "{what} values are held in {:?}; this tensor holds {:?}",
        T::datum_type(),
        t.datum_type()
    );
    t.try_as_plain_ram()?.as_slice::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_values_round_trip_through_their_float32_tensor() {
        let values = [bf16::from_f32(0.1), bf16::MAX, bf16::NEG_INFINITY];
        let t = bf16_tensor(&[3], &values).unwrap();
        assert_eq!(t.datum_type(), DatumType::F32);
        assert_eq!(bf16_values(&t).unwrap().as_slice().unwrap(), &values);
    }

    #[test]
    fn complex128_values_round_trip_through_their_pair_axis() {
        let values = [Complex::new(1.0f64, -2.0), Complex::new(0.5, 3.0)];
        let t = complex_tensor(&[2, 1], &values).unwrap();
        assert_eq!(t.shape(), &[2, 1, 2]);
        assert_eq!(
            t.try_as_plain_ram().unwrap().as_slice::<f64>().unwrap(),
            &[1.0, -2.0, 0.5, 3.0]
        );
        let back = complex_values::<f64>(&t).unwrap();
        assert_eq!(back.shape(), &[2, 1]);
        assert_eq!(back.iter().copied().collect::<Vec<_>>(), values);
    }

    #[test]
    fn values_that_do_not_fill_the_shape_are_an_error_naming_both() {
        let err = complex_tensor(&[3], &[Complex::new(1.0f32, 1.0)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "1 complex64 values do not fill the shape [3]"
        );
    }

    #[test]
    fn a_tensor_without_the_pair_axis_is_no_complex_tensor() {
        let t = Tensor::from_shape(&[3], &[1.0f32, 2.0, 3.0]).unwrap();
        let err = complex_values::<f32>(&t).unwrap_err();
        assert_eq!(
            err.to_string(),
            "complex64 values are held on a last axis of 2 (real, imaginary); this tensor's shape is [3]"
        );
        let err = complex_values::<f64>(&t).unwrap_err();
        assert_eq!(
            err.to_string(),
            "complex128 values are held in F64; this tensor holds F32"
        );
    }
}

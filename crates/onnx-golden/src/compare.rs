//! Output comparison with the ONNX backend-test rules.

use half::f16;
use tract_onnx::prelude::tract_ndarray::Dimension;
use tract_onnx::prelude::{Datum, DatumType, TDim, Tensor};

/// Relative tolerance of ONNX's backend test runner (`numpy.testing.assert_allclose`).
pub const RTOL: f64 = 1e-3;
/// Absolute tolerance of ONNX's backend test runner.
pub const ATOL: f64 = 1e-7;

/// Float tolerances of a comparison: `|a - e| <= atol + rtol * |e|`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// Relative tolerance, scaled by the expected value's magnitude.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Default for Tolerance {
    /// ONNX's backend-test tolerances.
    fn default() -> Tolerance {
        Tolerance {
            rtol: RTOL,
            atol: ATOL,
        }
    }
}

/// Compares an actual output with its expectation, with ONNX's tolerances.
pub fn compare(got: &Tensor, expected: &Tensor) -> Result<(), String> {
    compare_with(got, expected, Tolerance::default())
}

/// Compares an actual output with its expectation.
///
/// Contract: returns `Err(short description)` when they differ, `Ok(())` otherwise.
/// * element types must be equal, except that a `TDim` output matches an
///   `int64` expectation when all its values are concrete integers;
/// * shapes must be equal;
/// * integers, bool and strings compare exactly;
/// * floats (f16/f32/f64) pass when `|a - e| <= atol + rtol * |e|`; NaN equals
///   NaN; an infinity equals only the same-signed infinity.
pub fn compare_with(got: &Tensor, expected: &Tensor, tolerance: Tolerance) -> Result<(), String> {
    let converted;
    let got = if got.datum_type() == DatumType::TDim && expected.datum_type() == DatumType::I64 {
        converted = concrete_tdims(got)?;
        &converted
    } else {
        got
    };
    if got.datum_type() != expected.datum_type() {
        return Err(format!(
            "type mismatch: got {:?} expected {:?}",
            got.datum_type(),
            expected.datum_type()
        ));
    }
    if got.shape() != expected.shape() {
        return Err(format!(
            "shape mismatch: got {:?} expected {:?}",
            got.shape(),
            expected.shape()
        ));
    }
    match got.datum_type() {
        DatumType::F16 => close(got, expected, tolerance, |x: &f16| x.to_f64()),
        DatumType::F32 => close(got, expected, tolerance, |x: &f32| *x as f64),
        DatumType::F64 => close(got, expected, tolerance, |x: &f64| *x),
        DatumType::Bool => exact::<bool>(got, expected),
        DatumType::I8 => exact::<i8>(got, expected),
        DatumType::I16 => exact::<i16>(got, expected),
        DatumType::I32 => exact::<i32>(got, expected),
        DatumType::I64 => exact::<i64>(got, expected),
        DatumType::U8 => exact::<u8>(got, expected),
        DatumType::U16 => exact::<u16>(got, expected),
        DatumType::U32 => exact::<u32>(got, expected),
        DatumType::U64 => exact::<u64>(got, expected),
        DatumType::String => exact::<String>(got, expected),
        other => Err(format!("cannot compare element type {other:?}")),
    }
}

/// ONNX float closeness, see [`compare`].
pub fn floats_close(got: f64, expected: f64) -> bool {
    floats_close_with(got, expected, Tolerance::default())
}

/// Float closeness with `tolerance`, see [`compare_with`].
pub fn floats_close_with(got: f64, expected: f64, tolerance: Tolerance) -> bool {
    if got.is_nan() || expected.is_nan() {
        return got.is_nan() && expected.is_nan();
    }
    if got.is_infinite() || expected.is_infinite() {
        return got == expected;
    }
    (got - expected).abs() <= tolerance.atol + tolerance.rtol * expected.abs()
}

fn concrete_tdims(t: &Tensor) -> Result<Tensor, String> {
    let view = t.to_plain_array_view::<TDim>().map_err(|e| e.to_string())?;
    let values = view
        .iter()
        .map(|d| {
            d.to_i64()
                .map_err(|_| format!("symbolic output value {d} (expected int64)"))
        })
        .collect::<Result<Vec<i64>, String>>()?;
    Tensor::from_shape(t.shape(), &values).map_err(|e| e.to_string())
}

fn exact<T: Datum + PartialEq>(got: &Tensor, expected: &Tensor) -> Result<(), String> {
    first_mismatch(got, expected, |g: &T, e: &T| g == e, |v| format!("{v:?}"))
}

fn close<T: Datum>(
    got: &Tensor,
    expected: &Tensor,
    tolerance: Tolerance,
    f: impl Fn(&T) -> f64,
) -> Result<(), String> {
    first_mismatch(
        got,
        expected,
        |g: &T, e: &T| floats_close_with(f(g), f(e), tolerance),
        |v| format!("{:?}", f(v)),
    )
}

fn first_mismatch<T: Datum>(
    got: &Tensor,
    expected: &Tensor,
    same: impl Fn(&T, &T) -> bool,
    show: impl Fn(&T) -> String,
) -> Result<(), String> {
    let g = got.to_plain_array_view::<T>().map_err(|e| e.to_string())?;
    let e = expected
        .to_plain_array_view::<T>()
        .map_err(|e| e.to_string())?;
    let mut mismatches = g
        .indexed_iter()
        .zip(e.iter())
        .filter(|((_, g), e)| !same(g, e));
    let Some(((index, g0), e0)) = mismatches.next() else {
        return Ok(());
    };
    let others = mismatches.count();
    let more = if others > 0 {
        format!(" (and {others} more)")
    } else {
        String::new()
    };
    Err(format!(
        "value mismatch at {:?}: got {} expected {}{more}",
        index.slice(),
        show(g0),
        show(e0)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::prelude::{tensor0, tensor1, tensor2};

    #[test]
    fn tolerance_edges() {
        assert!(floats_close(1.0 + 1e-3, 1.0));
        assert!(!floats_close(1.0 + 1.01e-3 + 1e-7, 1.0));
        assert!(floats_close(1e-7, 0.0));
        assert!(!floats_close(1.1e-7 + 1e-12, 0.0));
        assert!(floats_close(-1000.5, -1000.0));
        assert!(!floats_close(-1001.1, -1000.0));
    }

    #[test]
    fn nan_and_infinities() {
        assert!(floats_close(f64::NAN, f64::NAN));
        assert!(!floats_close(f64::NAN, 1.0));
        assert!(!floats_close(1.0, f64::NAN));
        assert!(floats_close(f64::INFINITY, f64::INFINITY));
        assert!(!floats_close(f64::NEG_INFINITY, f64::INFINITY));
        assert!(!floats_close(f64::MAX, f64::INFINITY));
        assert!(!floats_close(f64::INFINITY, f64::MAX));
    }

    #[test]
    fn reports_first_mismatch_with_coordinates() {
        let got = tensor2(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 3.5]]);
        let exp = tensor2(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 3.0]]);
        assert_eq!(
            compare(&got, &exp).unwrap_err(),
            "value mismatch at [1, 2]: got 3.5 expected 3.0"
        );
        assert!(compare(&exp, &exp).is_ok());
    }

    #[test]
    fn integers_are_exact_and_types_must_match() {
        assert!(compare(&tensor1(&[1i64, 2]), &tensor1(&[1i64, 3])).is_err());
        let err = compare(&tensor1(&[1i32, 2]), &tensor1(&[1i64, 2])).unwrap_err();
        assert!(err.starts_with("type mismatch"), "{err}");
        let err = compare(&tensor1(&[1i64, 2]), &tensor2(&[[1i64, 2]])).unwrap_err();
        assert!(err.starts_with("shape mismatch"), "{err}");
        assert!(compare(&tensor0(true), &tensor0(true)).is_ok());
        assert!(compare(&tensor0(true), &tensor0(false)).is_err());
    }

    #[test]
    fn nan_outputs_compare_equal_in_tensors() {
        let t = tensor1(&[f32::NAN, 1.0]);
        assert!(compare(&t, &t).is_ok());
        let h = tensor1(&[f16::NAN, f16::ONE]);
        assert!(compare(&h, &h).is_ok());
    }

    #[test]
    fn strings_exact() {
        let a = tensor1(&["x".to_string(), "y".to_string()]);
        let b = tensor1(&["x".to_string(), "z".to_string()]);
        assert!(compare(&a, &a).is_ok());
        assert_eq!(
            compare(&a, &b).unwrap_err(),
            "value mismatch at [1]: got \"y\" expected \"z\""
        );
    }

    #[test]
    fn tdim_matches_int64_only_when_concrete() {
        let dims = tensor1(&[TDim::from(2), TDim::from(3)]);
        assert!(compare(&dims, &tensor1(&[2i64, 3])).is_ok());
        let symbolic = tensor1(&[TDim::Sym(
            tract_onnx::prelude::SymbolScope::default().sym("N"),
        )]);
        let err = compare(&symbolic, &tensor1(&[2i64])).unwrap_err();
        assert!(err.contains("symbolic"), "{err}");
    }
}

use std::mem::MaybeUninit;

use half::{bf16, f16};

use crate::{Reduction, ScatterError, UpdateReduction};

/// An element type the kernels can scatter, with its reductions.
///
/// The arithmetic is the contract's, not Rust's defaults: integers wrap
/// (in debug builds too), floats round to their own type after every
/// update, float `max`/`min` propagate NaN from either side, bool uses
/// OR/AND, strings concatenate and compare bytewise.
pub trait Element: Clone + Send + Sync + 'static {
    /// The ONNX name of the type, for messages.
    const NAME: &'static str;

    /// Whether this type can do `reduction` (its combining function, or
    /// `mean`). Kernels check this before any write.
    fn supports(reduction: UpdateReduction) -> bool {
        let _ = reduction;
        true
    }

    /// `acc = acc + update`, the `add` (and `mean`) reduction: wrapping
    /// for integers, rounded to the type for floats, OR for bool,
    /// concatenation for strings.
    fn add(acc: &mut Self, update: &Self);
    /// `acc = acc * update`, the `mul` reduction: wrapping for integers,
    /// rounded to the type for floats, AND for bool. Never called for a
    /// type whose [`Element::supports`] refuses `mul`.
    fn mul(acc: &mut Self, update: &Self);
    /// `acc = max(acc, update)`, the `max` reduction: NaN from either side
    /// wins for floats, OR for bool, bytewise for strings.
    fn max(acc: &mut Self, update: &Self);
    /// `acc = min(acc, update)`, the `min` reduction: NaN from either side
    /// wins for floats, AND for bool, bytewise for strings.
    fn min(acc: &mut Self, update: &Self);
    /// `sum / count` for the `mean` reduction (`count >= 1`).
    fn mean(sum: &Self, count: usize) -> Self;

    /// `Err` naming the type and what it supports when `reduction` (an ONNX
    /// [`Reduction`] or an [`UpdateReduction`]) is not.
    fn check_reduction(reduction: impl Into<UpdateReduction>) -> Result<(), ScatterError> {
        let reduction = reduction.into();
        if Self::supports(reduction) {
            return Ok(());
        }
        let supported: Vec<&str> = UpdateReduction::ALL
            .into_iter()
            .filter(|r| Self::supports(*r))
            .map(UpdateReduction::as_str)
            .collect();
        Err(ScatterError::Reduction {
            reduction,
            element: Self::NAME,
            supported: supported.join(", "),
        })
    }
}

macro_rules! integer {
    ($($t:ty => $name:literal),*) => {$(
        impl Element for $t {
            const NAME: &'static str = $name;
            #[inline(always)]
            fn add(acc: &mut Self, update: &Self) {
                *acc = acc.wrapping_add(*update)
            }
            #[inline(always)]
            fn mul(acc: &mut Self, update: &Self) {
                *acc = acc.wrapping_mul(*update)
            }
            #[inline(always)]
            fn max(acc: &mut Self, update: &Self) {
                // A store either way: a select, not a branch mispredicted
                // on every other random update.
                *acc = (*acc).max(*update)
            }
            #[inline(always)]
            fn min(acc: &mut Self, update: &Self) {
                *acc = (*acc).min(*update)
            }
            fn mean(sum: &Self, count: usize) -> Self {
                // Rounds towards negative infinity; i128 holds every value
                // of every integer type and every usize count.
                (*sum as i128).div_euclid(count as i128) as $t
            }
        }
    )*};
}

integer!(i8 => "int8", i16 => "int16", i32 => "int32", i64 => "int64",
         u8 => "uint8", u16 => "uint16", u32 => "uint32", u64 => "uint64");

/// NaN-propagating max/min shared by every float type: if either side is
/// NaN the result is NaN; ties keep the existing value.
macro_rules! float_minmax {
    () => {
        #[inline(always)]
        fn max(acc: &mut Self, update: &Self) {
            // Stored either way, so the compiler selects instead of
            // branching: with random values a branch is mispredicted
            // about every other update (see docs/performance.md, "Why the
            // mechanisms exist"). NaN propagates: a NaN accumulator stays,
            // a NaN update is taken.
            let (a, u) = (*acc, *update);
            let take = !a.is_nan() & (u.is_nan() | (u > a));
            *acc = if take { u } else { a };
        }
        #[inline(always)]
        fn min(acc: &mut Self, update: &Self) {
            let (a, u) = (*acc, *update);
            let take = !a.is_nan() & (u.is_nan() | (u < a));
            *acc = if take { u } else { a };
        }
    };
}

macro_rules! native_float {
    ($($t:ty => $name:literal),*) => {$(
        impl Element for $t {
            const NAME: &'static str = $name;
            #[inline(always)]
            fn add(acc: &mut Self, update: &Self) {
                *acc += *update
            }
            #[inline(always)]
            fn mul(acc: &mut Self, update: &Self) {
                *acc *= *update
            }
            float_minmax!();
            fn mean(sum: &Self, count: usize) -> Self {
                *sum / count as $t
            }
        }
    )*};
}

native_float!(f32 => "float", f64 => "double");

macro_rules! half_float {
    ($($t:ty => $name:literal),*) => {$(
        impl Element for $t {
            const NAME: &'static str = $name;
            /// Computed in f32 and rounded back after every update, as
            /// the contract requires.
            #[inline(always)]
            fn add(acc: &mut Self, update: &Self) {
                *acc = <$t>::from_f32(acc.to_f32() + update.to_f32())
            }
            #[inline(always)]
            fn mul(acc: &mut Self, update: &Self) {
                *acc = <$t>::from_f32(acc.to_f32() * update.to_f32())
            }
            float_minmax!();
            fn mean(sum: &Self, count: usize) -> Self {
                <$t>::from_f64(sum.to_f64() / count as f64)
            }
        }
    )*};
}

half_float!(f16 => "float16", bf16 => "bfloat16");

/// A float32 that holds a bfloat16 value: an element of a bfloat16 tensor
/// widened to float32, for a host with no bfloat16 type (tract). Its
/// arithmetic is bfloat16's: `add` and `mul` compute in float32 and round
/// to the nearest bfloat16 (ties to even) after every update, as
/// [`bf16`]'s do; `max` and `min` move values, so they keep bfloat16
/// values. The kernels run on the float32 data in place, through
/// [`Bfloat16InFloat32::slice_mut`].
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Bfloat16InFloat32(pub f32);

impl Bfloat16InFloat32 {
    /// `value` rounded to the nearest bfloat16 value, ties to even, as
    /// float32: `bf16::from_f32(value).to_f32()` bit for bit (NaN stays a
    /// quiet NaN of the same sign and top payload bits), without branches,
    /// so a loop over a slice vectorizes.
    #[inline(always)]
    pub fn round(value: f32) -> f32 {
        let bits = value.to_bits();
        let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000;
        let quiet_nan = (bits | 0x0040_0000) & 0xffff_0000;
        let nan = (bits & 0x7fff_ffff) > 0x7f80_0000;
        f32::from_bits(if nan { quiet_nan } else { rounded })
    }

    #[inline(always)]
    fn rounded(value: f32) -> Self {
        Bfloat16InFloat32(Self::round(value))
    }

    /// The bits [`Bfloat16InFloat32::round`] would change in `value`: zero
    /// exactly when `value` is a bfloat16 value already.
    #[inline(always)]
    fn rounding_changes(value: f32) -> u32 {
        Self::round(value).to_bits() ^ value.to_bits()
    }

    /// Whether every value is a bfloat16 value already (rounding would
    /// change none): a read-only pass, one OR'd test per chunk of
    /// [`Bfloat16InFloat32::CHUNK`] values, that vectorizes.
    pub fn all_rounded(values: &[f32]) -> bool {
        values.chunks(Self::CHUNK).all(|chunk| {
            chunk
                .iter()
                .fold(0, |changed, x| changed | Self::rounding_changes(*x))
                == 0
        })
    }

    /// Rounds every value to bfloat16 in place, in one branchless pass
    /// that vectorizes.
    pub fn round_in_place(values: &mut [f32]) {
        values.iter_mut().for_each(|x| *x = Self::round(*x));
    }

    /// `dst = round(src)`, element by element, in one pass; `dst` written.
    ///
    /// # Panics
    /// When the lengths differ (a caller's bug, never a user's input).
    pub fn round_into<'a>(src: &[f32], dst: &'a mut [MaybeUninit<f32>]) -> &'a mut [f32] {
        assert_eq!(src.len(), dst.len(), "round_into: lengths differ");
        for (d, s) in dst.iter_mut().zip(src) {
            d.write(Self::round(*s));
        }
        // SAFETY: every element of `dst` was written just above, and
        // `MaybeUninit<f32>` has the layout of `f32`.
        unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast(), dst.len()) }
    }

    /// The values [`Bfloat16InFloat32::all_rounded`] tests at once (16
    /// KiB): a slice with a value that is no bfloat16 is read only up to
    /// the chunk holding it.
    pub const CHUNK: usize = 4096;

    #[inline(always)]
    fn is_nan(self) -> bool {
        self.0.is_nan()
    }

    /// `values` seen as elements holding bfloat16 values.
    pub fn slice(values: &[f32]) -> &[Bfloat16InFloat32] {
        // SAFETY: `Bfloat16InFloat32` is `repr(transparent)` over `f32`:
        // same size, alignment and validity, so the slice is the same
        // memory read as the wrapper, for the same lifetime.
        unsafe { std::slice::from_raw_parts(values.as_ptr().cast(), values.len()) }
    }

    /// `values` seen as elements holding bfloat16 values, for the kernels
    /// to write in place.
    pub fn slice_mut(values: &mut [f32]) -> &mut [Bfloat16InFloat32] {
        // SAFETY: as in `slice`; the exclusive borrow moves to the result.
        unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), values.len()) }
    }

    /// An output of float32 not written yet, seen as elements to write
    /// bfloat16 values into: the `out` of a [`crate::CopyOf`] the kernels
    /// fill with a copy of bfloat16 data fused with its scatter.
    pub fn uninit_slice_mut(
        values: &mut [MaybeUninit<f32>],
    ) -> &mut [MaybeUninit<Bfloat16InFloat32>] {
        // SAFETY: `MaybeUninit<Bfloat16InFloat32>` has the layout of
        // `MaybeUninit<f32>` (`repr(transparent)` all the way down) and
        // the same (no) validity requirement: the same memory, still not
        // assumed written, for the same exclusive borrow.
        unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), values.len()) }
    }

    /// Elements holding bfloat16 values seen as their float32s: what a
    /// host gets back from the kernels' `apply`.
    pub fn floats_mut(values: &mut [Bfloat16InFloat32]) -> &mut [f32] {
        // SAFETY: as in `slice_mut`, the other way round.
        unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr().cast(), values.len()) }
    }
}

impl Element for Bfloat16InFloat32 {
    const NAME: &'static str = "bfloat16";
    #[inline(always)]
    fn add(acc: &mut Self, update: &Self) {
        *acc = Self::rounded(acc.0 + update.0)
    }
    #[inline(always)]
    fn mul(acc: &mut Self, update: &Self) {
        *acc = Self::rounded(acc.0 * update.0)
    }
    float_minmax!();
    fn mean(sum: &Self, count: usize) -> Self {
        Bfloat16InFloat32(bf16::from_f64(f64::from(sum.0) / count as f64).to_f32())
    }
}

/// A complex number held as its real and imaginary parts, in ONNX's
/// interleaved layout: an element of a complex64 (`T = f32`) or complex128
/// (`T = f64`) tensor, for a host with no complex type (tract). `add` adds
/// the parts; `mul` is complex multiplication, `(a + bi)(c + di) = (ac - bd)
/// + (ad + bc)i`, rounded to `T` as computed; complex numbers have no
/// order, so `max` and `min` are refused. The kernels run on the float
/// data in place, through [`ComplexParts::slice_mut`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ComplexParts<T> {
    /// The real part.
    pub re: T,
    /// The imaginary part.
    pub im: T,
}

/// The float types that hold complex parts.
pub trait ComplexPart:
    Copy
    + Send
    + Sync
    + 'static
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    /// The ONNX name of the complex type with parts of this type.
    const COMPLEX_NAME: &'static str;
    /// `count` as this type.
    fn from_count(count: usize) -> Self;
}

impl ComplexPart for f32 {
    const COMPLEX_NAME: &'static str = "complex64";
    fn from_count(count: usize) -> Self {
        count as f32
    }
}

impl ComplexPart for f64 {
    const COMPLEX_NAME: &'static str = "complex128";
    fn from_count(count: usize) -> Self {
        count as f64
    }
}

impl<T: ComplexPart> ComplexParts<T> {
    /// `parts` (real, imaginary, real, ...) seen as complex elements;
    /// `None` when their count is odd.
    pub fn slice(parts: &[T]) -> Option<&[ComplexParts<T>]> {
        if !parts.len().is_multiple_of(2) {
            return None;
        }
        // SAFETY: `ComplexParts<T>` is `repr(C)` with two `T` fields: the
        // size of two `T`s, the alignment of `T`, no padding, and every
        // pair of `T`s is a valid value. The length is even, so the
        // elements cover exactly the same memory, for the same lifetime.
        Some(unsafe { std::slice::from_raw_parts(parts.as_ptr().cast(), parts.len() / 2) })
    }

    /// `parts` seen as complex elements, for the kernels to write in
    /// place; `None` when their count is odd.
    pub fn slice_mut(parts: &mut [T]) -> Option<&mut [ComplexParts<T>]> {
        if !parts.len().is_multiple_of(2) {
            return None;
        }
        // SAFETY: as in `slice`; the exclusive borrow moves to the result.
        Some(unsafe { std::slice::from_raw_parts_mut(parts.as_mut_ptr().cast(), parts.len() / 2) })
    }
}

impl<T: ComplexPart> Element for ComplexParts<T> {
    const NAME: &'static str = T::COMPLEX_NAME;
    fn supports(reduction: UpdateReduction) -> bool {
        !matches!(
            reduction,
            UpdateReduction::Onnx(Reduction::Max) | UpdateReduction::Onnx(Reduction::Min)
        )
    }
    #[inline(always)]
    fn add(acc: &mut Self, update: &Self) {
        acc.re = acc.re + update.re;
        acc.im = acc.im + update.im;
    }
    #[inline(always)]
    fn mul(acc: &mut Self, update: &Self) {
        let (a, b, c, d) = (acc.re, acc.im, update.re, update.im);
        acc.re = a * c - b * d;
        acc.im = a * d + b * c;
    }
    /// Never called: `supports(Max)` is false.
    fn max(_acc: &mut Self, _update: &Self) {}
    /// Never called: `supports(Min)` is false.
    fn min(_acc: &mut Self, _update: &Self) {}
    fn mean(sum: &Self, count: usize) -> Self {
        let count = T::from_count(count);
        ComplexParts {
            re: sum.re / count,
            im: sum.im / count,
        }
    }
}

impl Element for bool {
    const NAME: &'static str = "bool";
    fn supports(reduction: UpdateReduction) -> bool {
        reduction != UpdateReduction::Mean
    }
    #[inline(always)]
    fn add(acc: &mut Self, update: &Self) {
        *acc |= *update
    }
    #[inline(always)]
    fn mul(acc: &mut Self, update: &Self) {
        *acc &= *update
    }
    #[inline(always)]
    fn max(acc: &mut Self, update: &Self) {
        *acc |= *update
    }
    #[inline(always)]
    fn min(acc: &mut Self, update: &Self) {
        *acc &= *update
    }
    /// Never called: `supports(Mean)` is false.
    fn mean(sum: &Self, _count: usize) -> Self {
        *sum
    }
}

impl Element for String {
    const NAME: &'static str = "string";
    fn supports(reduction: UpdateReduction) -> bool {
        !matches!(
            reduction,
            UpdateReduction::Onnx(Reduction::Mul) | UpdateReduction::Mean
        )
    }
    fn add(acc: &mut Self, update: &Self) {
        acc.push_str(update)
    }
    /// Never called: `supports(Mul)` is false.
    fn mul(_acc: &mut Self, _update: &Self) {}
    fn max(acc: &mut Self, update: &Self) {
        if update.as_bytes() > acc.as_bytes() {
            acc.clone_from(update)
        }
    }
    fn min(acc: &mut Self, update: &Self) {
        if update.as_bytes() < acc.as_bytes() {
            acc.clone_from(update)
        }
    }
    /// Never called: `supports(Mean)` is false.
    fn mean(sum: &Self, _count: usize) -> Self {
        sum.clone()
    }
}

/// `acc = acc ⊕ update` (`None`: `acc = update`).
#[inline(always)]
pub(crate) fn combine<T: Element>(reduction: Reduction, acc: &mut T, update: &T) {
    match reduction {
        Reduction::None => acc.clone_from(update),
        Reduction::Add => T::add(acc, update),
        Reduction::Mul => T::mul(acc, update),
        Reduction::Max => T::max(acc, update),
        Reduction::Min => T::min(acc, update),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded<T: Element>(reduction: Reduction, start: T, updates: &[T]) -> T {
        let mut acc = start;
        for u in updates {
            combine(reduction, &mut acc, u);
        }
        acc
    }

    #[test]
    fn complex_mul_is_complex_multiplication_and_add_adds_the_parts() {
        let c = |re: f32, im: f32| ComplexParts { re, im };
        assert_eq!(
            folded(Reduction::Mul, c(1.0, 2.0), &[c(3.0, 4.0)]),
            c(-5.0, 10.0)
        );
        assert_eq!(
            folded(Reduction::Mul, c(0.0, 1.0), &[c(0.0, 1.0)]),
            c(-1.0, 0.0)
        );
        assert_eq!(
            folded(Reduction::Add, c(1.0, 2.0), &[c(3.0, 4.0)]),
            c(4.0, 6.0)
        );
    }

    #[test]
    fn complex_max_is_refused_naming_the_type_and_what_it_supports() {
        let err = ComplexParts::<f64>::check_reduction(Reduction::Max).unwrap_err();
        assert_eq!(
            err.to_string(),
            "reduction 'max' is not supported for complex128 data (supported: none, add, mul, mean)"
        );
    }

    #[test]
    fn an_odd_count_of_parts_is_no_complex_slice() {
        assert!(ComplexParts::slice(&[1.0f32, 2.0, 3.0]).is_none());
        let parts = [1.0f64, 2.0, 3.0, 4.0];
        let elements = ComplexParts::slice(&parts).unwrap();
        assert_eq!(elements[1], ComplexParts { re: 3.0, im: 4.0 });
    }

    #[test]
    fn integer_add_and_mul_wrap_instead_of_panicking() {
        assert_eq!(folded(Reduction::Add, 127i8, &[1]), -128);
        assert_eq!(folded(Reduction::Mul, u8::MAX, &[2]), 254);
        assert_eq!(folded(Reduction::Add, i64::MAX, &[i64::MAX]), -2);
    }

    #[test]
    fn bfloat16_rounding_of_float32_is_half_s_bit_for_bit() {
        let edges = [
            0u32,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7f7f_ffff,
            0x7f7f_8000,
            0x7f7f_7fff,
            0x3f80_8000,
            0x3f81_8000,
            0x0000_8000,
            0x0001_8000,
            0x7fc0_0000,
            0x7f80_0001,
            0xffff_ffff,
            0x7fbf_ffff,
        ];
        let sampled = (0..=u32::MAX).step_by(65_521);
        for bits in edges.into_iter().chain(sampled) {
            let x = f32::from_bits(bits);
            assert_eq!(
                Bfloat16InFloat32::round(x).to_bits(),
                bf16::from_f32(x).to_f32().to_bits(),
                "{bits:#010x}"
            );
        }
    }

    #[test]
    fn a_slice_of_bfloat16_values_is_all_rounded_nan_and_infinity_included() {
        let mut values: Vec<f32> = (0..3 * Bfloat16InFloat32::CHUNK)
            .map(|i| bf16::from_f32(i as f32 * 0.37 - 100.0).to_f32())
            .collect();
        values[5] = f32::NAN;
        values[6] = f32::INFINITY;
        values[7] = f32::NEG_INFINITY;
        values[8] = -0.0;
        assert!(Bfloat16InFloat32::all_rounded(&values));
        assert!(Bfloat16InFloat32::all_rounded(&[]));
    }

    #[test]
    fn a_value_that_is_no_bfloat16_in_any_chunk_is_found_and_rounded_as_bf16_does() {
        let chunk = Bfloat16InFloat32::CHUNK;
        let mut values = vec![1.0f32; 3 * chunk];
        values[chunk + 7] = 1.0 + 1.0 / 256.0; // a tie: to even, 1.0
        values[chunk + 8] = 1.0 + 3.0 / 256.0; // a tie: to even, 1 + 4/256
        values[chunk + 9] = f32::from_bits(0x3f80_0001); // just above 1.0
        // A signalling NaN whose low 16 bits are zero is no bfloat16 value
        // either: rounding makes it quiet.
        values[2 * chunk] = f32::from_bits(0x7f81_0000);
        values[3 * chunk - 1] = f32::from_bits(0xff80_0001); // a NaN's low bits
        let expected: Vec<u32> = values
            .iter()
            .map(|x| bf16::from_f32(*x).to_f32().to_bits())
            .collect();
        for at in [chunk + 7, chunk + 9, 2 * chunk, 3 * chunk - 1] {
            let mut one = vec![1.0f32; 3 * chunk];
            one[at] = values[at];
            assert!(!Bfloat16InFloat32::all_rounded(&one), "value at {at}");
        }
        let mut copy = vec![MaybeUninit::uninit(); values.len()];
        let copied: Vec<u32> = Bfloat16InFloat32::round_into(&values, &mut copy)
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(copied, expected);
        Bfloat16InFloat32::round_in_place(&mut values);
        let rounded: Vec<u32> = values.iter().map(|x| x.to_bits()).collect();
        assert_eq!(rounded, expected);
        assert!(Bfloat16InFloat32::all_rounded(&values));
    }

    #[test]
    fn bfloat16_in_float32_rounds_after_every_update_as_bf16_does() {
        let tiny = 1.0f32 / 256.0;
        let wide = folded(
            Reduction::Add,
            Bfloat16InFloat32(1.0),
            &[Bfloat16InFloat32(tiny); 4],
        );
        let narrow = folded(Reduction::Add, bf16::ONE, &[bf16::from_f32(tiny); 4]);
        assert_eq!(wide.0, 1.0);
        assert_eq!(wide.0, narrow.to_f32());
        let step = 1.296875f32;
        let wide = folded(
            Reduction::Mul,
            Bfloat16InFloat32(step),
            &[Bfloat16InFloat32(step); 3],
        );
        let narrow = folded(
            Reduction::Mul,
            bf16::from_f32(step),
            &[bf16::from_f32(step); 3],
        );
        assert_eq!(wide.0, narrow.to_f32());
        assert_eq!(wide.0, 2.8125);
    }

    #[test]
    fn float_max_and_min_propagate_nan_from_either_side() {
        assert!(folded(Reduction::Max, f32::NAN, &[1.0]).is_nan());
        assert!(folded(Reduction::Max, 1.0f32, &[f32::NAN, 5.0]).is_nan());
        assert!(folded(Reduction::Min, 1.0f64, &[f64::NAN]).is_nan());
        assert!(folded(Reduction::Min, f16::NAN, &[f16::ONE]).is_nan());
        assert_eq!(
            folded(Reduction::Max, 1.0f32, &[f32::INFINITY]),
            f32::INFINITY
        );
    }

    #[test]
    fn f16_add_rounds_after_every_update() {
        // 2048 + 1 is not representable in f16 and rounds back to 2048 each
        // time; summing in f32 first would give 2050.
        let start = f16::from_f32(2048.0);
        assert_eq!(folded(Reduction::Add, start, &[f16::ONE, f16::ONE]), start);
    }

    #[test]
    fn bool_reductions_are_or_and() {
        assert!(folded(Reduction::Add, false, &[false, true]));
        assert!(!folded(Reduction::Mul, true, &[true, false]));
        assert!(folded(Reduction::Max, false, &[true]));
        assert!(!folded(Reduction::Min, true, &[false]));
    }

    #[test]
    fn string_add_concatenates_and_max_compares_bytes() {
        let s = |x: &str| x.to_string();
        assert_eq!(folded(Reduction::Add, s("a"), &[s("b"), s("c")]), "abc");
        assert_eq!(folded(Reduction::Max, s("Z"), &[s("a")]), "a");
        assert_eq!(folded(Reduction::Min, s("b"), &[s("ab")]), "ab");
    }

    #[test]
    fn string_mul_and_bool_mean_are_refused() {
        assert!(String::check_reduction(Reduction::Mul).is_err());
        assert!(bool::check_reduction(UpdateReduction::Mean).is_err());
        assert!(f32::check_reduction(UpdateReduction::Mean).is_ok());
        let err = String::check_reduction(Reduction::Mul)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "reduction 'mul' is not supported for string data (supported: none, add, max, min)"
        );
    }

    #[test]
    fn integer_mean_rounds_towards_negative_infinity() {
        assert_eq!(i32::mean(&-7, 2), -4);
        assert_eq!(i32::mean(&7, 2), 3);
        assert_eq!(i8::mean(&-128, 300), -1);
        assert_eq!(u8::mean(&255, 2), 127);
    }

    /// bfloat16 values where rounding is hard: zeros, the smallest and
    /// largest subnormals, the smallest normal, ones and their neighbours
    /// (sums that tie), the largest finite value (sums that overflow),
    /// infinities and NaNs of both signs with payloads.
    const HARD_BFLOAT16: [u16; 24] = [
        0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x807f, 0x0080, 0x8080, 0x3f80, 0xbf80, 0x3f81,
        0x3b80, 0x3c00, 0xbb80, 0x7f7f, 0xff7f, 0x7f7e, 0x7300, 0x7380, 0x7f80, 0xff80, 0x7fc0,
        0xffc1, 0x7fa0,
    ];

    #[test]
    fn bfloat16_in_float32_add_and_mul_are_bf16_s_bit_for_bit_on_ties_nan_infinities_subnormals_and_overflow()
     {
        let check = |a: u16, b: u16| {
            let (x, y) = (bf16::from_bits(a), bf16::from_bits(b));
            for (reduction, narrow) in [(Reduction::Add, x + y), (Reduction::Mul, x * y)] {
                let mut wide = Bfloat16InFloat32(x.to_f32());
                combine(reduction, &mut wide, &Bfloat16InFloat32(y.to_f32()));
                if x.is_nan() && y.is_nan() {
                    // IEEE 754 leaves which of two NaNs' payloads comes
                    // out to the hardware and the operand order the
                    // compiler picks: both are quiet NaNs.
                    assert!(wide.0.is_nan() && narrow.is_nan(), "{a:#06x} {b:#06x}");
                    assert_eq!(wide.0.to_bits() & 0x0040_0000, 0x0040_0000);
                    continue;
                }
                assert_eq!(
                    wide.0.to_bits(),
                    narrow.to_f32().to_bits(),
                    "{a:#06x} {reduction:?} {b:#06x}"
                );
            }
        };
        for a in HARD_BFLOAT16 {
            for b in HARD_BFLOAT16 {
                check(a, b);
            }
        }
        // A sweep of every sign, exponent and spread of mantissas.
        for a in (0..=u16::MAX).step_by(97) {
            for b in (0..=u16::MAX).step_by(89) {
                check(a, b);
            }
        }
    }

    #[test]
    fn a_sum_that_ties_rounds_to_even_and_one_past_the_largest_overflows_to_infinity() {
        let add = |a: f32, b: f32| {
            let mut acc = Bfloat16InFloat32(a);
            Bfloat16InFloat32::add(&mut acc, &Bfloat16InFloat32(b));
            acc.0
        };
        let half_ulp_of_one = 1.0 / 256.0;
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even, 1.
        assert_eq!(add(1.0, half_ulp_of_one), 1.0);
        // (1 + 2^-7) + 2^-8: halfway to 1 + 2^-6, which is even.
        assert_eq!(add(1.0 + 1.0 / 128.0, half_ulp_of_one), 1.0 + 1.0 / 64.0);
        let largest = f32::from_bits(0x7f7f_0000);
        assert_eq!(add(largest, largest), f32::INFINITY);
        assert_eq!(add(-largest, -largest), f32::NEG_INFINITY);
        assert!(add(f32::INFINITY, f32::NEG_INFINITY).is_nan());
        // Two smallest subnormals sum exactly.
        let tiny = f32::from_bits(0x0001_0000);
        assert_eq!(add(tiny, tiny).to_bits(), 0x0002_0000);
    }
}

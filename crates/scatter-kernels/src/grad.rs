//! Gradients (vector-Jacobian products) of `ScatterElements` and
//! `ScatterND` for float element types.
//!
//! The forward op differentiated is `out = scatter(data, indices, updates)`
//! with a reduction and `include_self` (PyTorch `scatter_reduce`'s flag,
//! OpenVINO's `use_init_val`; ONNX is `include_self = true`). For an output
//! position `p`, `S(p)` is the update elements written to `p` (duplicates
//! included, in row-major order), plus `data[p]` first when `include_self`;
//! a position nobody writes passes its gradient to `grad_data[p]`. What each
//! reduction gives the members of `S(p)` (no division for `mul`, ties split
//! for `max`/`min`), and where it differs from PyTorch, is in docs/contract.md,
//! "Gradient ops". Both results are then multiplied by `lda_coeff`; f16
//! and bf16 compute in f32 and round once at the end.

use half::{bf16, f16};

use crate::fact_dim::known_ne_shape;
use crate::shape::check_len;
use crate::{
    CheckedElementsIndices, CheckedNdIndices, Dims, Element, FactDim, IndexValue, Input, Reduction,
    ScatterError, UpdateReduction,
};

/// What the forward op did, for its gradient.
///
/// The forward is ScatterElements with OpenVINO's and PyTorch's
/// generalization (`include_self`, and the `mean` reduction, hence an
/// [`UpdateReduction`]), or ScatterND with `include_self` and the ONNX
/// reductions (`mean` is refused there with an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GradSpec {
    /// The forward's reduction (`Mean` for ScatterElements only).
    pub reduction: UpdateReduction,
    /// Whether `data[p]` took part in the reduction at a written position
    /// (PyTorch `include_self`, OpenVINO `use_init_val`).
    pub include_self: bool,
}

impl GradSpec {
    /// The ONNX forward: the data value is the reduction's first operand.
    pub const fn onnx(reduction: Reduction) -> GradSpec {
        GradSpec {
            reduction: UpdateReduction::Onnx(reduction),
            include_self: true,
        }
    }
}

/// The shape rule of a gradient's `grad_output`, on dims that may be
/// unknown ([`FactDim`]): it has the shape of `data` (the forward's output).
/// The forward op's own rules are its plan's (`ElementsPlan::check_shapes`,
/// `NdPlan::check_shapes`).
pub fn check_grad_output_shape<D: FactDim>(
    data_shape: &[D],
    grad_output_shape: &[D],
) -> Result<(), ScatterError> {
    if known_ne_shape(grad_output_shape.iter(), data_shape.iter()) {
        return Err(ScatterError::Shape {
            input: Input::GradOutput,
            shape: Dims::of(grad_output_shape),
            expected: format!("{} (the shape of data)", Dims::of(data_shape)),
        });
    }
    Ok(())
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

/// The float type a gradient is computed in (f32 or f64).
pub trait GradCalc:
    sealed::Sealed
    + Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    /// `0.0`.
    const ZERO: Self;
    /// `1.0`.
    const ONE: Self;
    /// A quiet NaN.
    const NAN: Self;
    /// `count` as a float, rounded to the type: the `|S(p)|` a `mean` or a
    /// tie of `max`/`min` divides by.
    fn from_count(count: usize) -> Self;
    /// Whether the value is NaN.
    fn is_nan(self) -> bool;
}

macro_rules! grad_calc {
    ($($t:ty),*) => {$(
        impl GradCalc for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NAN: Self = <$t>::NAN;
            #[inline(always)]
            fn from_count(count: usize) -> Self {
                count as $t
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    )*};
}

grad_calc!(f32, f64);

/// A float element type with gradients: f32, f64, f16 and bf16 (the last
/// two computed in f32). Integer, bool and string data have no gradient:
/// their kernels do not compile.
///
/// ```compile_fail
/// let mut gd = [0i32; 2];
/// let mut gu = [0i32; 1];
/// scatter_kernels::scatter_elements_grad(
///     &[1i32, 2], &[2], &[0i64], &[1], &[5], 0, &[1, 1],
///     scatter_kernels::GradSpec::onnx(scatter_kernels::Reduction::Add), 1, &mut gd, &mut gu,
/// ).unwrap();
/// ```
pub trait GradElement: Element + Copy + sealed::Sealed {
    /// The type the gradient is computed in: the type itself for f32 and
    /// f64, f32 for f16 and bf16.
    type Calc: GradCalc;
    /// The value in [`Self::Calc`], exactly.
    fn to_calc(self) -> Self::Calc;
    /// A computed value back in this type, rounded once (to nearest).
    fn from_calc(value: Self::Calc) -> Self;
}

impl GradElement for f32 {
    type Calc = f32;
    #[inline(always)]
    fn to_calc(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_calc(value: f32) -> f32 {
        value
    }
}

impl GradElement for f64 {
    type Calc = f64;
    #[inline(always)]
    fn to_calc(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_calc(value: f64) -> f64 {
        value
    }
}

macro_rules! half_grad {
    ($($t:ty),*) => {$(
        impl GradElement for $t {
            type Calc = f32;
            #[inline(always)]
            fn to_calc(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn from_calc(value: f32) -> $t {
                <$t>::from_f32(value)
            }
        }
    )*};
}

half_grad!(f16, bf16);

/// What [`GradToken`] needs of a token; in a private module, so that only
/// this crate's tokens implement it.
mod pairs {
    use crate::{Element, ScatterError, UpdateReduction};

    /// A checked index token seen as (data offset, updates position) pairs.
    pub trait Pairs {
        fn data_shape(&self) -> &[usize];
        fn updates_shape(&self) -> Vec<usize>;
        fn check_buffers<T>(&self, data: &[T], updates: &[T]) -> Result<(), ScatterError>;
        /// Every pair in row-major order of the updates (the forward's fold
        /// order); offsets are in bounds for a data buffer that passed
        /// `check_buffers`, positions for its updates buffer.
        fn each(&self, f: impl FnMut(usize, usize));
        /// `Err` when the forward op has no such reduction (ScatterND has
        /// no `Mean`).
        fn check_grad_reduction<T: Element>(
            &self,
            reduction: UpdateReduction,
        ) -> Result<(), ScatterError>;
    }
}

use pairs::Pairs;

impl<I: IndexValue> Pairs for CheckedElementsIndices<'_, I> {
    fn data_shape(&self) -> &[usize] {
        self.plan().data_shape()
    }
    fn updates_shape(&self) -> Vec<usize> {
        self.plan().indices_shape().to_vec()
    }
    fn check_buffers<T>(&self, data: &[T], updates: &[T]) -> Result<(), ScatterError> {
        CheckedElementsIndices::check_buffers(self, data, updates)
    }
    fn each(&self, f: impl FnMut(usize, usize)) {
        self.visit(f)
    }
    /// Every reduction, `Mean` included (OpenVINO's, see
    /// [`crate::scatter_elements_update`]).
    fn check_grad_reduction<T: Element>(&self, _: UpdateReduction) -> Result<(), ScatterError> {
        Ok(())
    }
}

impl<I: IndexValue> Pairs for CheckedNdIndices<'_, I> {
    fn data_shape(&self) -> &[usize] {
        CheckedNdIndices::data_shape(self)
    }
    fn updates_shape(&self) -> Vec<usize> {
        CheckedNdIndices::updates_shape(self)
    }
    fn check_buffers<T>(&self, data: &[T], updates: &[T]) -> Result<(), ScatterError> {
        CheckedNdIndices::check_buffers(self, data, updates)
    }
    fn each(&self, f: impl FnMut(usize, usize)) {
        self.visit_elements(f)
    }
    fn check_grad_reduction<T: Element>(
        &self,
        reduction: UpdateReduction,
    ) -> Result<(), ScatterError> {
        // Grad elements are floats, which take every reduction: only Mean
        // is refused, ScatterND having none.
        match reduction {
            UpdateReduction::Onnx(_) => Ok(()),
            UpdateReduction::Mean => Err(ScatterError::Reduction {
                reduction,
                element: T::NAME,
                supported: "none, add, mul, max, min (mean is ScatterElements only)".into(),
            }),
        }
    }
}

/// The gradients of a checked index token, implemented by both forward
/// ops' tokens: what a host generic over the op calls.
///
/// ScatterElements takes every reduction, `Mean` included (OpenVINO's, see
/// [`crate::scatter_elements_update`]). ScatterND views its data as
/// `[prod(data.shape[:k]), slice]` with one offset per index tuple, and
/// refuses `Mean`; a permuted plan ([`crate::NdPlan::permuted`]) takes
/// `data`, `grad_output` and `grad_data` in the stored layout.
pub trait GradToken: Pairs {
    /// `grad_data` (len = data) and `grad_updates` (len = updates) of the
    /// forward scatter with `spec.reduction` and `spec.include_self` at
    /// `(data, updates)`, given `grad_output` (len = data), both
    /// multiplied by `lda_coeff`. Semantics: `crate::grad`'s module
    /// documentation. On `Err` nothing has been written.
    #[allow(clippy::too_many_arguments)]
    fn grad<T: GradElement>(
        &self,
        data: &[T],
        updates: &[T],
        grad_output: &[T],
        spec: GradSpec,
        lda_coeff: T,
        grad_data: &mut [T],
        grad_updates: &mut [T],
    ) -> Result<(), ScatterError> {
        T::check_reduction(spec.reduction)?;
        self.check_grad_reduction::<T>(spec.reduction)?;
        grad(
            self,
            data,
            updates,
            grad_output,
            spec,
            lda_coeff,
            grad_data,
            grad_updates,
        )
    }

    /// `grad_updates` alone of reduction `add` or `none`: the output
    /// gradient at each update's position times `lda_coeff` (what
    /// [`GradToken::grad`] writes there). With `add`, `include_self` and
    /// `lda_coeff = 1`, `grad_data` is `grad_output` itself, so a host can
    /// pass it through and call only this.
    fn grad_updates_of_add<T: GradElement>(
        &self,
        grad_output: &[T],
        lda_coeff: T,
        grad_updates: &mut [T],
    ) -> Result<(), ScatterError> {
        gather_scaled(self, grad_output, lda_coeff, grad_updates)
    }
}

impl<I: IndexValue> GradToken for CheckedElementsIndices<'_, I> {}

impl<I: IndexValue> GradToken for CheckedNdIndices<'_, I> {}

/// `grad_updates[u] = grad_output[o] * lda_coeff` for every pair, lengths
/// checked first.
fn gather_scaled<T: GradElement, P: Pairs + ?Sized>(
    pairs: &P,
    grad_output: &[T],
    lda_coeff: T,
    grad_updates: &mut [T],
) -> Result<(), ScatterError> {
    let shape = pairs.data_shape();
    let len = crate::element_count(shape).unwrap_or(usize::MAX);
    check_len(Input::GradOutput, shape, len, grad_output.len())?;
    let updates_shape = pairs.updates_shape();
    if Some(grad_updates.len()) != crate::element_count(&updates_shape) {
        return Err(ScatterError::Length {
            input: Input::GradUpdates,
            shape: updates_shape,
            len: grad_updates.len(),
        });
    }
    let c = lda_coeff.to_calc();
    pairs.each(|o, u| {
        // Safety: `each` yields offsets in bounds of a buffer of the data's
        // length and positions in bounds of one of the updates' length;
        // both lengths were checked above. A random gather is bound by
        // its cache misses; the unchecked reads keep the loop minimal.
        unsafe {
            *grad_updates.get_unchecked_mut(u) =
                T::from_calc(grad_output.get_unchecked(o).to_calc() * c);
        }
    });
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn grad<T: GradElement, P: Pairs + ?Sized>(
    pairs: &P,
    data: &[T],
    updates: &[T],
    grad_output: &[T],
    spec: GradSpec,
    lda_coeff: T,
    grad_data: &mut [T],
    grad_updates: &mut [T],
) -> Result<(), ScatterError> {
    pairs.check_buffers(data, updates)?;
    let shape = pairs.data_shape();
    check_len(Input::GradOutput, shape, data.len(), grad_output.len())?;
    check_len(Input::GradData, shape, data.len(), grad_data.len())?;
    if grad_updates.len() != updates.len() {
        return Err(ScatterError::Length {
            input: Input::GradUpdates,
            shape: pairs.updates_shape(),
            len: grad_updates.len(),
        });
    }
    // Every buffer is known good: from here on, nothing fails.
    let c = lda_coeff.to_calc();
    let g = |o: usize| grad_output[o].to_calc();
    let out = T::from_calc;
    let zero = out(T::Calc::ZERO);
    let n = data.len();
    match spec.reduction {
        UpdateReduction::Onnx(Reduction::None | Reduction::Add) => {
            for (d, go) in grad_data.iter_mut().zip(grad_output) {
                *d = out(go.to_calc() * c);
            }
            let keep = spec.reduction == Reduction::Add && spec.include_self;
            pairs.each(|o, u| {
                if !keep {
                    grad_data[o] = zero;
                }
                grad_updates[u] = out(g(o) * c);
            });
        }
        UpdateReduction::Mean => {
            // Updates taken per position; `include_self` adds one.
            let mut count = vec![0usize; n];
            pairs.each(|o, _| count[o] += 1);
            let own = usize::from(spec.include_self);
            for (o, d) in grad_data.iter_mut().enumerate() {
                *d = match count[o] {
                    0 => out(g(o) * c),
                    k if spec.include_self => out(g(o) / T::Calc::from_count(k + 1) * c),
                    _ => zero,
                };
            }
            pairs.each(|o, u| {
                grad_updates[u] = out(g(o) / T::Calc::from_count(count[o] + own) * c);
            });
        }
        UpdateReduction::Onnx(Reduction::Max | Reduction::Min) => {
            let max = spec.reduction == Reduction::Max;
            // The forward result and how many members equal it; 0 members
            // means nobody writes the position.
            let mut best = vec![T::Calc::ZERO; n];
            let mut ties = vec![0usize; n];
            pairs.each(|o, u| {
                let v = updates[u].to_calc();
                if ties[o] == 0 {
                    ties[o] = 1;
                    if spec.include_self {
                        best[o] = data[o].to_calc();
                    } else {
                        best[o] = v;
                        return;
                    }
                }
                let acc = best[o];
                if acc.is_nan() {
                } else if v.is_nan() {
                    best[o] = v;
                } else if if max { v > acc } else { v < acc } {
                    best[o] = v;
                    ties[o] = 1;
                } else if v == acc {
                    ties[o] += 1;
                }
            });
            let share = |o: usize, v: T::Calc| {
                let b = best[o];
                if b.is_nan() {
                    T::Calc::NAN
                } else if v == b {
                    g(o) / T::Calc::from_count(ties[o]) * c
                } else {
                    T::Calc::ZERO
                }
            };
            for (o, d) in grad_data.iter_mut().enumerate() {
                *d = match ties[o] {
                    0 => out(g(o) * c),
                    _ if spec.include_self => out(share(o, data[o].to_calc())),
                    _ => zero,
                };
            }
            pairs.each(|o, u| grad_updates[u] = out(share(o, updates[u].to_calc())));
        }
        UpdateReduction::Onnx(Reduction::Mul) => {
            // Pass 1, in fold order: the product of the members before each
            // update (`before`), the running product per position (`run`).
            let mut run = vec![T::Calc::ONE; n];
            let mut hit = vec![false; n];
            let mut before = vec![T::Calc::ONE; updates.len()];
            let mut order = Vec::with_capacity(updates.len());
            pairs.each(|o, u| {
                if !hit[o] {
                    hit[o] = true;
                    if spec.include_self {
                        run[o] = data[o].to_calc();
                    }
                }
                before[u] = run[o];
                run[o] = run[o] * updates[u].to_calc();
                order.push((o, u));
            });
            // Pass 2, in reverse: the product of the updates after each.
            run.fill(T::Calc::ONE);
            for &(o, u) in order.iter().rev() {
                grad_updates[u] = out(g(o) * (before[u] * run[o]) * c);
                run[o] = run[o] * updates[u].to_calc();
            }
            // `run` now holds the product of every update at a position:
            // the other members of the data value.
            for (o, d) in grad_data.iter_mut().enumerate() {
                *d = if !hit[o] {
                    out(g(o) * c)
                } else if spec.include_self {
                    out(g(o) * run[o] * c)
                } else {
                    zero
                };
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        BlockSort, ElementsPlan, Execution, NdPlan, scatter_elements_grad, scatter_nd_grad,
    };

    /// 1-D ScatterElements gradient: (grad_data, grad_updates).
    fn grad1(
        data: &[f64],
        indices: &[i64],
        updates: &[f64],
        grad_output: &[f64],
        reduction: impl Into<UpdateReduction>,
        include_self: bool,
    ) -> (Vec<f64>, Vec<f64>) {
        let mut gd = vec![f64::NAN; data.len()];
        let mut gu = vec![f64::NAN; updates.len()];
        scatter_elements_grad(
            data,
            &[data.len()],
            indices,
            &[indices.len()],
            updates,
            0,
            grad_output,
            GradSpec {
                reduction: reduction.into(),
                include_self,
            },
            1.0,
            &mut gd,
            &mut gu,
        )
        .unwrap();
        (gd, gu)
    }

    #[test]
    fn none_zeroes_written_data_and_gives_every_duplicate_the_output_gradient() {
        let (gd, gu) = grad1(
            &[1.0, 2.0, 3.0],
            &[2, -1, 0],
            &[7.0, 8.0, 9.0],
            &[10.0, 20.0, 30.0],
            Reduction::None,
            true,
        );
        assert_eq!(gd, [0.0, 20.0, 0.0]);
        assert_eq!(gu, [30.0, 30.0, 10.0]);
        let (gd2, gu2) = grad1(
            &[1.0, 2.0, 3.0],
            &[2, -1, 0],
            &[7.0, 8.0, 9.0],
            &[10.0, 20.0, 30.0],
            Reduction::None,
            false,
        );
        assert_eq!((gd2, gu2), (gd, gu), "include_self is irrelevant");
    }

    #[test]
    fn add_passes_the_output_gradient_to_data_only_with_include_self() {
        let go = [10.0, 20.0, 30.0];
        let (gd, gu) = grad1(
            &[1.0, 2.0, 3.0],
            &[0, 0, -1],
            &[4.0, 5.0, 6.0],
            &go,
            Reduction::Add,
            true,
        );
        assert_eq!(gd, [10.0, 20.0, 30.0]);
        assert_eq!(gu, [10.0, 10.0, 30.0]);
        let (gd, gu) = grad1(
            &[1.0, 2.0, 3.0],
            &[0, 0, -1],
            &[4.0, 5.0, 6.0],
            &go,
            Reduction::Add,
            false,
        );
        assert_eq!(gd, [0.0, 20.0, 0.0]);
        assert_eq!(gu, [10.0, 10.0, 30.0]);
    }

    #[test]
    fn mul_gives_each_member_the_product_of_the_others() {
        // out[0] = 2 * 3 * 5 = 30.
        let (gd, gu) = grad1(
            &[2.0, 7.0],
            &[0, 0],
            &[3.0, 5.0],
            &[1.0, 1.0],
            Reduction::Mul,
            true,
        );
        assert_eq!(gd, [15.0, 1.0]);
        assert_eq!(gu, [10.0, 6.0]);
        let (gd, gu) = grad1(
            &[2.0, 7.0],
            &[0, 0],
            &[3.0, 5.0],
            &[2.0, 1.0],
            Reduction::Mul,
            false,
        );
        assert_eq!(gd, [0.0, 1.0]);
        assert_eq!(gu, [10.0, 6.0]);
    }

    #[test]
    fn mul_with_one_zero_gives_the_product_of_the_others_to_the_zero_only() {
        let (gd, gu) = grad1(
            &[2.0],
            &[0, 0, 0],
            &[3.0, 0.0, 5.0],
            &[1.0],
            Reduction::Mul,
            true,
        );
        assert_eq!(gd, [0.0]);
        assert_eq!(gu, [0.0, 30.0, 0.0]);
        let (gd, gu) = grad1(&[0.0], &[0, 0], &[3.0, 5.0], &[1.0], Reduction::Mul, true);
        assert_eq!(gd, [15.0]);
        assert_eq!(gu, [0.0, 0.0]);
    }

    #[test]
    fn mul_with_two_zeros_gives_zero_to_everyone() {
        let (gd, gu) = grad1(
            &[0.0],
            &[0, 0, 0],
            &[3.0, 0.0, 5.0],
            &[1.0],
            Reduction::Mul,
            true,
        );
        assert_eq!(gd, [0.0]);
        assert_eq!(gu, [0.0, 0.0, 0.0]);
        assert!(gu.iter().chain(&gd).all(|x| !x.is_nan()));
    }

    #[test]
    fn mul_with_an_infinite_member_stays_finite_for_it() {
        let (_, gu) = grad1(
            &[2.0],
            &[0, 0],
            &[f64::INFINITY, 3.0],
            &[1.0],
            Reduction::Mul,
            true,
        );
        assert_eq!(gu, [6.0, f64::INFINITY]);
    }

    #[test]
    fn max_ties_split_the_gradient_evenly() {
        // data 5 ties with two updates: three members share.
        let (gd, gu) = grad1(
            &[5.0, 1.0],
            &[0, 0, 0],
            &[5.0, 2.0, 5.0],
            &[6.0, 1.0],
            Reduction::Max,
            true,
        );
        assert_eq!(gd, [2.0, 1.0]);
        assert_eq!(gu, [2.0, 0.0, 2.0]);
    }

    #[test]
    fn max_without_include_self_never_counts_the_data_in_the_split() {
        let (gd, gu) = grad1(&[5.0], &[0, 0], &[5.0, 2.0], &[6.0], Reduction::Max, false);
        assert_eq!(gd, [0.0]);
        assert_eq!(gu, [6.0, 0.0]);
    }

    #[test]
    fn min_goes_to_the_smallest_member_and_treats_signed_zeros_as_tied() {
        let (gd, gu) = grad1(&[4.0], &[0, 0], &[-0.0, 0.0], &[1.0], Reduction::Min, true);
        assert_eq!(gd, [0.0]);
        assert_eq!(gu, [0.5, 0.5]);
        let (gd, gu) = grad1(
            &[-3.0],
            &[-1, 0],
            &[1.0, -2.0],
            &[1.0],
            Reduction::Min,
            true,
        );
        assert_eq!(gd, [1.0]);
        assert_eq!(gu, [0.0, 0.0]);
    }

    #[test]
    fn a_nan_max_gives_nan_to_every_member_and_leaves_unwritten_positions_alone() {
        let (gd, gu) = grad1(
            &[1.0, f64::NAN],
            &[0, 0],
            &[f64::NAN, 3.0],
            &[1.0, 1.0],
            Reduction::Max,
            true,
        );
        assert!(gd[0].is_nan());
        assert!(gu.iter().all(|x| x.is_nan()));
        assert_eq!(
            gd[1].to_bits(),
            1.0f64.to_bits(),
            "not written: passes through"
        );
        let (gd, _) = grad1(&[1.0], &[0], &[f64::NAN], &[1.0], Reduction::Max, false);
        assert_eq!(gd, [0.0], "without include_self the data is not a member");
    }

    #[test]
    fn mean_divides_the_gradient_by_the_members_counted() {
        let (gd, gu) = grad1(
            &[1.0, 2.0],
            &[0, 0, 0],
            &[1.0, 2.0, 3.0],
            &[8.0, 5.0],
            UpdateReduction::Mean,
            true,
        );
        assert_eq!(gd, [2.0, 5.0]);
        assert_eq!(gu, [2.0, 2.0, 2.0]);
        let (gd, gu) = grad1(
            &[1.0, 2.0],
            &[0, 0, -2],
            &[1.0, 2.0, 3.0],
            &[9.0, 5.0],
            UpdateReduction::Mean,
            false,
        );
        assert_eq!(gd, [0.0, 5.0]);
        assert_eq!(gu, [3.0, 3.0, 3.0]);
    }

    #[test]
    fn lda_coeff_multiplies_both_outputs() {
        let mut gd = [0.0f32; 2];
        let mut gu = [0.0f32; 1];
        let plan = ElementsPlan::new(&[2], &[1], &[1], 0).unwrap();
        plan.check_indices(&[1i32], Execution::SERIAL)
            .unwrap()
            .grad(
                &[1.0, 2.0],
                &[3.0],
                &[1.0, 2.0],
                GradSpec::onnx(Reduction::Mul),
                -0.5,
                &mut gd,
                &mut gu,
            )
            .unwrap();
        assert_eq!(gd, [-0.5, -3.0]);
        assert_eq!(gu, [-2.0]);
    }

    #[test]
    fn axis_one_of_a_matrix_routes_each_row_to_its_own_row() {
        // data 2x3, indices 2x2 along axis 1.
        let mut gd = [0.0f64; 6];
        let mut gu = [0.0f64; 4];
        scatter_elements_grad(
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            &[2, 3],
            &[2i64, 2, 0, -1],
            &[2, 2],
            &[10.0, 20.0, 30.0, 40.0],
            1,
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            GradSpec::onnx(Reduction::Add),
            1.0,
            &mut gd,
            &mut gu,
        )
        .unwrap();
        assert_eq!(gd, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(gu, [3.0, 3.0, 4.0, 6.0]);
    }

    #[test]
    fn half_precision_computes_in_f32_and_rounds_once() {
        let h = |x: f32| f16::from_f32(x);
        let mut gd = [f16::ZERO; 1];
        let mut gu = [f16::ZERO; 2];
        scatter_elements_grad(
            &[h(2.0)],
            &[1],
            &[0i64, 0],
            &[2],
            &[h(3.0), h(0.5)],
            0,
            &[h(1.0)],
            GradSpec::onnx(Reduction::Mul),
            h(1.0),
            &mut gd,
            &mut gu,
        )
        .unwrap();
        assert_eq!(gd, [h(1.5)]);
        assert_eq!(gu, [h(1.0), h(6.0)]);
        let mut gd = [bf16::ZERO; 1];
        let mut gu = [bf16::ZERO; 2];
        scatter_elements_grad(
            &[bf16::from_f32(1.0)],
            &[1],
            &[0i64, 0],
            &[2],
            &[bf16::from_f32(1.0), bf16::from_f32(-1.0)],
            0,
            &[bf16::from_f32(3.0)],
            GradSpec::onnx(Reduction::Max),
            bf16::ONE,
            &mut gd,
            &mut gu,
        )
        .unwrap();
        assert_eq!(gd, [bf16::from_f32(1.5)]);
        assert_eq!(gu, [bf16::from_f32(1.5), bf16::ZERO]);
    }

    #[test]
    fn nd_routes_whole_slices_and_splits_max_ties() {
        // data 3x2, two tuples writing rows 2 and -1 (= 2 again).
        let mut gd = [0.0f64; 6];
        let mut gu = [0.0f64; 4];
        scatter_nd_grad(
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            &[3, 2],
            &[2i64, -1],
            &[2, 1],
            &[5.0, 0.0, 5.0, 7.0],
            &[2, 2],
            &[1.0, 1.0, 1.0, 1.0, 4.0, 8.0],
            GradSpec::onnx(Reduction::Max),
            1.0,
            &mut gd,
            &mut gu,
        )
        .unwrap();
        // Row 2: max(5, 5, 5) = 5 three-way tie; max(6, 0, 7) = 7.
        assert_eq!(gd, [1.0, 1.0, 1.0, 1.0, 4.0 / 3.0, 0.0]);
        assert_eq!(gu, [4.0 / 3.0, 0.0, 4.0 / 3.0, 8.0]);
    }

    #[test]
    fn nd_on_a_permuted_plan_reads_and_writes_the_stored_layout() {
        // Stored [2, 3], viewed transposed as [3, 2]: tuple (1) writes view
        // row 1 = stored column 1.
        let plan = NdPlan::permuted(&[2, 3], &[1, 0], &[1, 1], &[1, 2]).unwrap();
        let mut gd = [0.0f64; 6];
        let mut gu = [0.0f64; 2];
        plan.check_indices(&[1i64][..], Execution::SERIAL, BlockSort::Off)
            .unwrap()
            .grad(
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                &[10.0, 20.0],
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                GradSpec::onnx(Reduction::Mul),
                1.0,
                &mut gd,
                &mut gu,
            )
            .unwrap();
        assert_eq!(gd, [1.0, 20.0, 3.0, 4.0, 100.0, 6.0]);
        assert_eq!(gu, [4.0, 25.0]);
    }

    #[test]
    fn nd_refuses_mean_naming_it() {
        let mut gd = [0.0f32; 2];
        let mut gu = [0.0f32; 1];
        let err = scatter_nd_grad(
            &[1.0, 2.0],
            &[2],
            &[0i64],
            &[1, 1],
            &[3.0],
            &[1],
            &[1.0, 1.0],
            GradSpec {
                reduction: UpdateReduction::Mean,
                include_self: true,
            },
            1.0,
            &mut gd,
            &mut gu,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "reduction 'mean' is not supported for float data \
             (supported: none, add, mul, max, min (mean is ScatterElements only))"
        );
        assert_eq!((gd, gu), ([0.0; 2], [0.0; 1]), "nothing written");
    }

    #[test]
    fn wrong_buffer_lengths_are_errors_before_any_write() {
        let plan = ElementsPlan::new(&[3], &[2], &[2], 0).unwrap();
        let checked = plan.check_indices(&[0i64, 2], Execution::SERIAL).unwrap();
        let (data, updates, go) = ([1.0f64; 3], [1.0f64; 2], [1.0f64; 3]);
        let spec = GradSpec::onnx(Reduction::Add);
        let run = |d: &[f64], u: &[f64], g: &[f64], gd_len: usize, gu_len: usize| {
            let mut gd = vec![7.0; gd_len];
            let mut gu = vec![7.0; gu_len];
            let err = checked
                .grad(d, u, g, spec, 1.0, &mut gd, &mut gu)
                .unwrap_err();
            assert!(
                gd.iter().chain(&gu).all(|&x| x == 7.0),
                "written before {err}"
            );
            err.to_string()
        };
        assert_eq!(
            run(&data, &updates, &go[..2], 3, 2),
            "shape: grad_output buffer holds 2 elements but its shape [3] describes a different count"
        );
        assert_eq!(
            run(&data, &updates, &go, 4, 2),
            "shape: grad_data buffer holds 4 elements but its shape [3] describes a different count"
        );
        assert_eq!(
            run(&data, &updates, &go, 3, 1),
            "shape: grad_updates buffer holds 1 elements but its shape [2] describes a different count"
        );
        assert!(run(&data[..2], &updates, &go, 3, 2).starts_with("shape: data buffer"));
        assert!(run(&data, &updates[..1], &go, 3, 2).starts_with("shape: updates buffer"));
        let nd = NdPlan::new(&[3, 2], &[2, 1], &[2, 2]).unwrap();
        let mut gd = [0.0f64; 6];
        let mut gu = [0.0f64; 3];
        let err = nd
            .check_indices(&[0i64, 1][..], Execution::SERIAL, BlockSort::Off)
            .unwrap()
            .grad(&[0.0; 6], &[0.0; 4], &[0.0; 6], spec, 1.0, &mut gd, &mut gu)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "shape: grad_updates buffer holds 3 elements but its shape [2, 2] describes a different count"
        );
    }

    #[test]
    fn invalid_indices_are_refused_by_the_free_functions() {
        let mut gd = [0.0f64; 2];
        let mut gu = [0.0f64; 1];
        let err = scatter_elements_grad(
            &[1.0, 2.0],
            &[2],
            &[2i64],
            &[1],
            &[1.0],
            0,
            &[1.0, 1.0],
            GradSpec::onnx(Reduction::Add),
            1.0,
            &mut gd,
            &mut gu,
        )
        .unwrap_err();
        assert!(matches!(err, ScatterError::OutOfBounds { value: 2, .. }));
    }

    #[test]
    fn updates_of_add_alone_equal_what_the_full_gradient_writes() {
        let plan = ElementsPlan::new(&[4], &[5], &[5], 0).unwrap();
        let token = plan
            .check_indices(&[3i64, -1, 0, 2, 0], Execution::SERIAL)
            .unwrap();
        let go = [0.5f32, -1.0, 2.0, 4.0];
        let (mut gd, mut gu) = ([0f32; 4], [0f32; 5]);
        let spec = GradSpec::onnx(Reduction::Add);
        token
            .grad(&[1.0; 4], &[1.0; 5], &go, spec, 1.5, &mut gd, &mut gu)
            .unwrap();
        let mut alone = [f32::NAN; 5];
        token.grad_updates_of_add(&go, 1.5, &mut alone).unwrap();
        assert_eq!(alone, gu);
        let err = token
            .grad_updates_of_add(&go, 1.0, &mut [0f32; 4])
            .unwrap_err();
        assert!(err.to_string().contains("grad_updates"), "{err}");
        let nd = NdPlan::new(&[4, 2], &[2, 1], &[2, 2]).unwrap();
        let token = nd
            .check_indices(&[-1i64, 1], Execution::SERIAL, BlockSort::Off)
            .unwrap();
        let mut gu = [0f64; 4];
        token
            .grad_updates_of_add(&[0., 1., 2., 3., 4., 5., 6., 7.], 2.0, &mut gu)
            .unwrap();
        assert_eq!(gu, [12., 14., 4., 6.]);
    }
}

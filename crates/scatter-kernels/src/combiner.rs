//! One combining function per reduction, chosen once, for kernels generic
//! over how they visit (the split and blocked kernels).

use crate::{Element, Reduction};

/// A computation run with a combining function `f(acc, update)`.
pub(crate) trait WithCombiner<T> {
    type Out;
    fn call<F: Fn(&mut T, &T) + Copy + Send + Sync>(self, f: F) -> Self::Out;
}

/// Runs `w` with `reduction`'s function: the one the serial kernels use,
/// element by element (f32 max/min: the branchless select, bit for bit
/// `Element::max/min`).
#[inline(always)]
pub(crate) fn with_combiner<T: Element, W: WithCombiner<T>>(reduction: Reduction, w: W) -> W::Out {
    let is_f32 = std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>();
    match reduction {
        Reduction::None => w.call(|acc: &mut T, u: &T| acc.clone_from(u)),
        Reduction::Add => w.call(T::add),
        Reduction::Mul => w.call(T::mul),
        Reduction::Max if is_f32 => w.call(select_as_f32::<T, true>),
        Reduction::Min if is_f32 => w.call(select_as_f32::<T, false>),
        Reduction::Max => w.call(T::max),
        Reduction::Min => w.call(T::min),
    }
}

/// `select_f32` on a `T` that is `f32`: only ever passed by
/// [`with_combiner`] after checking the `TypeId`.
#[inline(always)]
fn select_as_f32<T: 'static, const MAX: bool>(acc: &mut T, update: &T) {
    debug_assert_eq!(std::any::TypeId::of::<T>(), std::any::TypeId::of::<f32>());
    // SAFETY: `with_combiner` hands this function out only when `T` is
    // `f32` (same `TypeId`), so both casts are identities.
    let (acc, update) = unsafe {
        (
            &mut *(acc as *mut T).cast::<f32>(),
            *(update as *const T).cast::<f32>(),
        )
    };
    let better = if MAX { update > *acc } else { update < *acc };
    select_f32(acc, update, better)
}

/// `Element::max`/`min` for f32 without a branch: `acc = update` when `acc`
/// is not NaN and (`update` is NaN or `better`), bitwise select otherwise.
#[inline(always)]
pub(crate) fn select_f32(acc: &mut f32, update: f32, better: bool) {
    let take = !acc.is_nan() & (update.is_nan() | better);
    let mask = (take as u32).wrapping_neg();
    *acc = f32::from_bits((update.to_bits() & mask) | (acc.to_bits() & !mask));
}

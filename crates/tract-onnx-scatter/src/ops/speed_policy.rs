//! Every speed decision of a scatter call, in one place: the schedule the
//! kernels check and apply with (sort by destination block, split over
//! tract's threads), whether the copy of shared data is fused with the
//! scatter, and how a copy nothing is fused into is made. The thresholds
//! are the named constants here and the kernels' [`Schedule::DEFAULT`];
//! the measurements behind them are in docs/performance.md ("Why the
//! mechanisms exist").
//!
//! An op asks once per decision, with what it knows at that point: the
//! schedule before it checks its indices, the fused copy once they are
//! checked and before it takes its data.
//!
//! **Architecture invariant:** no op builds a [`Schedule`] or compares a
//! size with a threshold itself; none of these decisions changes a result.

use scatter_kernels::{CheckedElementsIndices, CheckedNdIndices, IndexValue, NdPlan, Reduction};
use scatter_kernels::{Parallel, Schedule};
use tract_core::internal::*;

use crate::onnx_types::OnnxElement;

/// Data smaller than this is copied, then scattered (the copy stays in
/// cache anyway): ScatterElements.
pub const ELEMENTS_FUSED_FROM_BYTES: usize = 1 << 20;
/// The largest ScatterElements slab (`data_shape[axis..]`) copied and then
/// scattered into while in cache (half of a 512 KiB L2).
pub const ELEMENTS_FUSED_MAX_SLAB_BYTES: usize = 256 << 10;
/// Data smaller than this is copied whole, then scattered: ScatterND.
pub const ND_FUSED_FROM_BYTES: usize = 1 << 20;
/// ScatterND slices smaller than this are copied, then overwritten:
/// skipping them saves less than sorting their offsets costs.
pub const ND_FUSED_FROM_SLICE_BYTES: usize = 64 << 10;

/// The data types whose copy a scatter can fuse
/// ([`crate::ops::copy_target::scatter_copying`]).
pub const COPYING_TYPES: [DatumType; 4] = [
    DatumType::F32,
    DatumType::F64,
    DatumType::I32,
    DatumType::I64,
];

/// The kernels' schedule, sorting included.
static SORTED: Schedule = Schedule::DEFAULT;
/// The kernels' schedule with ScatterND's sort by destination block out
/// of reach.
static UNSORTED: Schedule = Schedule {
    blocked_from_bytes: usize::MAX,
    ..Schedule::DEFAULT
};

/// The schedule ScatterND checks its indices with. Large random-index
/// scatters get their updates sorted by destination block in the pass
/// that checks them, except when the data is written in place on one
/// thread and the check is not kept for indices that come back: there
/// the sort costs more than the cache misses it saves; it pays for a
/// copy, for threads, or when it is reused.
pub fn scatter_nd_check_schedule(
    data_exclusive: bool,
    check_kept: bool,
    threads: &dyn Parallel,
) -> &'static Schedule {
    if data_exclusive && !check_kept && threads.threads() == 1 {
        &UNSORTED
    } else {
        &SORTED
    }
}

/// The reduction with which ScatterND copies shared `data` as it scatters
/// ([`scatter_kernels::CopyOf`]), when it does: for a type it covers, when
/// the updates were sorted by destination block (each block is copied
/// just before its updates land), or, with no reduction, around large
/// row-major slices the updates overwrite whole. Never when data hold
/// another ONNX type ([`OnnxElement`]): the fused copy computes in the
/// data's own type.
pub fn scatter_nd_fused_copy<I: IndexValue>(
    reduction: Reduction,
    element: OnnxElement,
    plan: &NdPlan,
    sorted: &CheckedNdIndices<I>,
    data: &Tensor,
) -> Option<Reduction> {
    let size = data.datum_type().size_of();
    let around_slices = reduction == Reduction::None
        && data.len().saturating_mul(size) >= ND_FUSED_FROM_BYTES
        && plan.slice_len().saturating_mul(size) >= ND_FUSED_FROM_SLICE_BYTES
        && sorted.copies_around_slices();
    let fuses = element == OnnxElement::Native
        && COPYING_TYPES.contains(&data.datum_type())
        && (sorted.is_sorted() || around_slices);
    fuses.then_some(reduction)
}

/// The reduction with which ScatterElements copies shared `data` slab by
/// slab as it scatters ([`scatter_kernels::CopyOf`]), when it does:
/// `onnx` semantics (the op's reduction when ONNX's), a type it covers,
/// data beyond the cache and slabs (`data_shape[axis..]`) within it, so
/// never for axis 0; never when data hold another ONNX type.
pub fn scatter_elements_fused_copy<I: IndexValue>(
    onnx: Option<Reduction>,
    element: OnnxElement,
    checked: &CheckedElementsIndices<I>,
    data: &Tensor,
) -> Option<Reduction> {
    let size = data.datum_type().size_of();
    let slab = checked.copying_slab_len().saturating_mul(size);
    let pays = element == OnnxElement::Native
        && COPYING_TYPES.contains(&data.datum_type())
        && data.len().saturating_mul(size) >= ELEMENTS_FUSED_FROM_BYTES
        && slab > 0
        && slab <= ELEMENTS_FUSED_MAX_SLAB_BYTES;
    onnx.filter(|_| pays)
}

/// How a copy of shared data that nothing is fused into is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlainCopy {
    /// Split over the caller's threads, when large: such a copy is the
    /// whole cost of a copy-bound scatter (TensorScatter's cache).
    Split(&'static Schedule),
    /// Whole: into fresh pages glibc's streaming stores win, skipping the
    /// read of the lines they fill.
    Whole,
    /// In pieces that stay in cache, into a pooled output.
    InPieces,
}

/// How to copy into a `fresh` buffer (else a pooled output) on `threads`.
pub fn plain_copy(threads: &dyn Parallel, fresh: bool) -> PlainCopy {
    if threads.threads() > 1 {
        PlainCopy::Split(&SORTED)
    } else if fresh {
        PlainCopy::Whole
    } else {
        PlainCopy::InPieces
    }
}

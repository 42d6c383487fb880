//! Every speed decision of a scatter call, in one place: the schedule the
//! kernels check and apply with (sort by destination block, split over
//! tract's threads), whether the copy of shared data is fused with the
//! scatter, and how a copy nothing is fused into is made. The thresholds
//! are the named constants here and the kernels' [`Schedule::DEFAULT`];
//! the measurements behind them are in docs/performance.md ("Why the
//! mechanisms exist").
//!
//! An op asks once per call, before it checks its indices
//! ([`scatter_nd`], [`scatter_elements`], [`plain_copy`]), and carries
//! the answer through the call. The one decision that waits on the check
//! is spelled out in the answer: [`FusedCopy::WhenSorted`].
//!
//! **Architecture invariant:** no op builds a [`Schedule`] or compares a
//! size with a threshold itself; none of these decisions changes a result.

use scatter_kernels::mechanisms::Mechanism;
use scatter_kernels::{BlockSort, ElementsPlan, NdPlan, Parallel, Reduction, Schedule};
use tract_core::internal::*;

use crate::ops::run::fresh_buffer::{COPYING_TYPES, CopyKind};
use crate::parse::onnx_types::OnnxElement;

/// Data smaller than this is copied, then scattered (the copy stays in
/// cache anyway): ScatterElements.
pub(crate) const ELEMENTS_FUSED_FROM_BYTES: usize = 1 << 20;
/// The largest ScatterElements slab (`data_shape[axis..]`) copied and then
/// scattered into while in cache (half of a 512 KiB L2).
pub(crate) const ELEMENTS_FUSED_MAX_SLAB_BYTES: usize = 256 << 10;
/// Data smaller than this is copied whole, then scattered: ScatterND.
pub(crate) const ND_FUSED_FROM_BYTES: usize = 1 << 20;
/// ScatterND slices smaller than this are copied, then overwritten:
/// skipping them saves less than sorting their offsets costs.
pub(crate) const ND_FUSED_FROM_SLICE_BYTES: usize = 64 << 10;

/// The kernels' schedule, sorting included.
const SORTED: &Schedule = &Schedule::DEFAULT;
/// The kernels' schedule with ScatterND's sort by destination block out
/// of reach.
static UNSORTED: Schedule = Schedule {
    blocked_from_bytes: usize::MAX,
    ..Schedule::DEFAULT
};

/// What one ScatterND call does, decided before it checks its indices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NdCall {
    /// Whether the check of the indices is kept for their next call
    /// ([`crate::ops::run::check_cache`]).
    pub(crate) keeps_check: bool,
    /// The bytes of one element of the data's ONNX type: what the sorts
    /// and a kept check are made for.
    pub(crate) element_bytes: usize,
    /// The schedule its indices are checked (and sorted) with.
    pub(crate) check_schedule: &'static Schedule,
    /// Whether the check sorts the update slices by destination block.
    pub(crate) block_sort: BlockSort,
    /// Whether a kept check of indices that came back is sorted by
    /// destination once, for a split over threads
    /// ([`scatter_kernels::CheckedNdIndices::sorted_for_split`]).
    pub(crate) sort_for_split: bool,
    /// Whether the copy of shared data is fused with the scatter.
    pub(crate) fused_copy: FusedCopy,
    /// How a copy nothing is fused into is made.
    pub(crate) plain_copy: PlainCopy,
}

/// What one ScatterElements (or Scatter) call does, decided before it
/// checks its indices.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ElementsCall {
    /// Whether the check of the indices is kept for their next call
    /// ([`crate::ops::run::check_cache`]).
    pub(crate) keeps_check: bool,
    /// Whether the copy of shared data is fused with the scatter.
    pub(crate) fused_copy: FusedCopy,
    /// How a copy nothing is fused into is made.
    pub(crate) plain_copy: PlainCopy,
}

/// Whether a scatter copies shared data as it scatters
/// ([`scatter_kernels::CopyOf`]), and with which reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FusedCopy {
    /// Copy, then scatter.
    Never,
    /// Fused when the check sorted the updates by destination block: each
    /// block is copied just before its updates land.
    WhenSorted(Reduction),
    /// Fused.
    Always(Reduction),
}

/// How a copy of shared data that nothing is fused into is made, by where
/// it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlainCopy {
    /// Into a fresh buffer.
    pub(crate) into_fresh: CopyKind,
    /// Into an output the pool kept.
    pub(crate) into_pooled: CopyKind,
}

/// What a ScatterND call with `reduction` on `data` (holding `element`
/// values) does on `threads`; `indices_held_elsewhere`: its indices may
/// come back, so their check is kept.
///
/// Large random-index scatters get their updates sorted by destination
/// block in the pass that checks them, except when the data is written in
/// place on one thread and the check is not kept: there the sort costs
/// more than the cache misses it saves; it pays for a copy, for threads,
/// or when it is reused. The copy is fused for a type it covers when the
/// updates were sorted, or, with no reduction, around large row-major
/// slices the updates overwrite whole; for bfloat16 values too, never
/// for complex ones ([`OnnxElement`]).
pub(crate) fn scatter_nd(
    reduction: Reduction,
    element: OnnxElement,
    plan: &NdPlan,
    data: &TValue,
    indices_held_elsewhere: bool,
    threads: &dyn Parallel,
) -> NdCall {
    let keeps_check = indices_held_elsewhere && Mechanism::CheckCache.is_on();
    let element_bytes = element.size_of(data.datum_type());
    let in_place_alone = data.is_exclusive() && !keeps_check && threads.threads() == 1;
    let block_sort = if Mechanism::SortByBlock.is_on() {
        BlockSort::ForElementBytes(element_bytes)
    } else {
        BlockSort::Off
    };
    let size = data.datum_type().size_of();
    let around_slices = reduction == Reduction::None
        && data.len().saturating_mul(size) >= ND_FUSED_FROM_BYTES
        && plan.slice_len().saturating_mul(size) >= ND_FUSED_FROM_SLICE_BYTES
        && plan.copies_around_slices();
    let fused_copy = if !fuses_type(element, data.datum_type()) {
        FusedCopy::Never
    } else if around_slices {
        FusedCopy::Always(reduction)
    } else {
        FusedCopy::WhenSorted(reduction)
    };
    NdCall {
        keeps_check,
        element_bytes,
        check_schedule: if in_place_alone || block_sort == BlockSort::Off {
            &UNSORTED
        } else {
            SORTED
        },
        block_sort,
        sort_for_split: Mechanism::SortForSplit.is_on(),
        fused_copy,
        plain_copy: plain_copy(threads),
    }
}

/// What a ScatterElements call with ONNX semantics `onnx` (`None`:
/// OpenVINO's own, which the fused copy does not cover) on `data`
/// (holding `element` values) does on `threads`: the copy is fused slab by
/// slab (`data_shape[axis..]`) for large data whose slabs stay in cache;
/// the check is kept for indices held elsewhere.
pub(crate) fn scatter_elements(
    onnx: Option<Reduction>,
    element: OnnxElement,
    plan: &ElementsPlan,
    data: &Tensor,
    indices_held_elsewhere: bool,
    threads: &dyn Parallel,
) -> ElementsCall {
    let size = data.datum_type().size_of();
    let slab = plan.copying_slab_len().saturating_mul(size);
    let pays = fuses_type(element, data.datum_type())
        && data.len().saturating_mul(size) >= ELEMENTS_FUSED_FROM_BYTES
        && slab > 0
        && slab <= ELEMENTS_FUSED_MAX_SLAB_BYTES;
    ElementsCall {
        keeps_check: indices_held_elsewhere && Mechanism::CheckCache.is_on(),
        fused_copy: match onnx {
            Some(reduction) if pays => FusedCopy::Always(reduction),
            _ => FusedCopy::Never,
        },
        plain_copy: plain_copy(threads),
    }
}

/// Whether a fused copy covers data of tract type `dt` holding `element`
/// values: its own values of [`COPYING_TYPES`], or float32 holding
/// bfloat16 values (the same bytes to copy; the scatter rounds as
/// bfloat16's does). Not complex values.
fn fuses_type(element: OnnxElement, dt: DatumType) -> bool {
    Mechanism::FusedCopy.is_on()
        && match element {
            OnnxElement::Native => COPYING_TYPES.contains(&dt),
            OnnxElement::Bfloat16 => dt == DatumType::F32,
            OnnxElement::Complex => false,
        }
}

/// How plain copies are made on `threads`: split when there are several,
/// else whole into fresh pages and in pieces into a pooled output.
pub(crate) fn plain_copy(threads: &dyn Parallel) -> PlainCopy {
    if threads.threads() > 1 {
        PlainCopy {
            into_fresh: CopyKind::Split(SORTED),
            into_pooled: CopyKind::Split(SORTED),
        }
    } else {
        PlainCopy {
            into_fresh: CopyKind::Whole,
            into_pooled: CopyKind::InPieces,
        }
    }
}

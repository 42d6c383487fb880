//! The parallelism hook of the kernels, and when they use it.
//!
//! The kernels own no threads. A host hands them a [`Parallel`] (tract's executor, a rayon
//! pool, [`Serial`]) in an [`crate::Execution`], and the `check_indices` and `apply` entry
//! points split their work by **destination**: every task owns a set of output positions no
//! other task writes, and applies, in the original update order, exactly the updates that land
//! there. Each output position thus sees the same updates in the same order as in the serial
//! kernel, so the result is **bit-identical at any thread count and in any task order** (floats
//! included: no reassociation, no atomics).
//!
//! [`Schedule`] holds every threshold: when work is too small to split, when a random-index
//! scatter is applied block by block, how big a block is. [`Schedule::DEFAULT`] is what
//! [`crate::Execution::on`] uses; [`Schedule::SERIAL`] (in [`crate::Execution::SERIAL`]) never
//! splits nor blocks.

use std::marker::PhantomData;
use std::sync::Mutex;

/// Runs numbered tasks, possibly at the same time. Implemented by the
/// host (a thread pool); [`Serial`] runs them in order on the caller's
/// thread.
///
/// Contract: `for_each(tasks, task)` calls `task(i)` exactly once for every
/// `i` in `0..tasks`, in any order and on any threads, and returns only
/// after every call has returned. A panic in a task may be propagated
/// (the output is then unspecified, as after any panic).
pub trait Parallel: Sync {
    /// How many tasks can usefully run at once (1: no parallelism). The
    /// kernels never split work into more than this many tasks.
    fn threads(&self) -> usize;

    /// Runs `task(0)`, ..., `task(tasks - 1)`; see the trait's contract.
    fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync));
}

/// No parallelism: every task in order on the calling thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Serial;

impl Parallel for Serial {
    fn threads(&self) -> usize {
        1
    }

    fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        (0..tasks).for_each(task)
    }
}

/// When the kernels split work, and when they apply a
/// random-index scatter block by block. Sizes are in bytes of the element
/// type the kernel runs on.
///
/// **Split rule.** Work is split over `min(par.threads(), units)` tasks
/// only when `par.threads() > 1` and the bytes the kernel moves (the
/// output for the copying kernels; updates plus indices for the others)
/// reach [`Schedule::parallel_from_bytes`]. Otherwise the serial kernel
/// runs, unchanged. The units: ScatterElements' slabs (one per
/// coordinate before the axis), or, with fewer slabs than threads, bands
/// of inner columns of at least [`Schedule::min_split_row_bytes`] per
/// row; ScatterND's destination blocks; TensorScatter's cache windows
/// (one per coordinate before the axis).
///
/// **Blocking rule** (random-index scatters, any thread count). A scatter
/// whose output reaches [`Schedule::blocked_from_bytes`] (beyond what a
/// core's L2 cache and L2 TLB cover, where each random write is a miss)
/// and that writes at most [`Schedule::blocked_max_slice_bytes`] per
/// index (small slices: a large slice is already a sequential copy) is
/// applied one destination block of about [`Schedule::block_bytes`] at a
/// time, each block in the original update order:
/// - ScatterElements along an axis with inner dimensions (data `[.., n,
///   inner..]`, indices covering every inner dimension): the block is a
///   band of `block_bytes / (n * size)` inner columns, when that is at
///   least [`Schedule::min_tile_columns`] (a band of `n` rows then fits
///   the block) and less than the row; no sorting is needed, since an
///   update never leaves its column. Each band is copied into a
///   contiguous buffer, scattered into there and copied back (types with
///   no drop glue): in place its rows are a page apart.
/// - ScatterND (row-major data): the updates are counting-sorted
///   (stable) by destination block, in the same pass that checks the
///   indices ([`crate::NdPlan::check_indices`] with
///   [`crate::BlockSort::ForElementBytes`]), when there are at
///   least [`Schedule::sorted_from_updates_per_block`] updates per block on
///   average (fewer, and the sort costs more than the misses it saves).
///
/// **Copy split.** A copying kernel whose scatter is not split still
/// splits its copy by the split rule ([`crate::write_copy_par`]) and then
/// applies serially (ScatterND: when the update slices cover at most half
/// the output; more, and copying around them saves more than a thread).
///
/// ScatterND splits only slices of at least
/// [`Schedule::nd_split_from_slice_bytes`]; smaller ones run serially
/// (blocked when the blocking rule holds) whatever the threads, unless a
/// host sorted them once for the split, for indices that came back
/// ([`crate::CheckedNdIndices::sorted_for_split`]).
///
/// **Row split** (split ScatterND of whole rows). A split ScatterND whose
/// index tuples pick rows of row-major data (`k == 1`) of at least
/// [`Schedule::row_scan_from_row_bytes`] each, and has at least
/// [`Schedule::row_scan_from_rows_per_task`] rows per task, groups the
/// update rows by destination row once (a stable counting sort, on the
/// caller's thread), and each task owns a range of whole rows, applying
/// each row's updates in their original order (GNN message passing:
/// every update row read once; a scan of every index per task streamed
/// the update array once per task and lost to one thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Bytes moved below which a kernel runs serially.
    pub parallel_from_bytes: usize,
    /// Output bytes from which random-index scatters are blocked.
    pub blocked_from_bytes: usize,
    /// Output bytes of one destination block.
    pub block_bytes: usize,
    /// Largest bytes written per index for which blocking is considered.
    pub blocked_max_slice_bytes: usize,
    /// Fewest inner columns of a ScatterElements band (16 f32: a line).
    pub min_tile_columns: usize,
    /// Fewest updates per destination block, on average, for ScatterND to
    /// sort its updates by block.
    pub sorted_from_updates_per_block: usize,
    /// Fewest bytes of each row a task owns when ScatterElements splits
    /// by columns: every task reads its part of every row of indices and
    /// updates, and narrower parts waste the bandwidth the prefetchers
    /// spend on the neighbours' columns (a 128-feature f32 scatter-add
    /// split in two halves of 256 bytes runs slower than unsplit; see
    /// docs/performance.md, "Why the mechanisms exist").
    pub min_split_row_bytes: usize,
    /// Fewest bytes per row for a split ScatterND of rows to scan rather
    /// than sort (a cache line: shorter slices are element scatters).
    pub row_scan_from_row_bytes: usize,
    /// Fewest rows per task for the row scan: every task reads every
    /// index, so the rows must outweigh that.
    pub row_scan_from_rows_per_task: usize,
    /// Fewest bytes per slice for ScatterND to split by sorting its
    /// updates by block (the row split of whole rows is not bound by it).
    /// Below it two threads gain little or lose against one: the sort
    /// costs more than the misses it saves. Large slices gain, through the
    /// copy split (see docs/performance.md, "Why the mechanisms exist").
    pub nd_split_from_slice_bytes: usize,
}

impl Schedule {
    /// The thresholds of [`crate::Execution::on`]. First estimates on a
    /// 2-core AMD EPYC (1 MiB L2 per core, 32 MiB shared L3, 4 KiB pages):
    /// a task hand-off costs microseconds, so 1 MiB of work; blocks of
    /// 256 KiB sit in L2 with room for the streams of indices and updates;
    /// from 8 MiB of output the L2 TLB (2048 entries of 4 KiB) no longer
    /// covers the output.
    pub const DEFAULT: Schedule = Schedule {
        parallel_from_bytes: 1 << 20,
        blocked_from_bytes: 8 << 20,
        block_bytes: 256 << 10,
        blocked_max_slice_bytes: 64,
        min_tile_columns: 16,
        sorted_from_updates_per_block: 64,
        min_split_row_bytes: 4096,
        row_scan_from_row_bytes: 64,
        row_scan_from_rows_per_task: 64,
        nd_split_from_slice_bytes: 4096,
    };

    /// Nothing split, blocked or sorted: the plain serial kernels
    /// ([`crate::Execution::SERIAL`]). [`Schedule::DEFAULT`] with the
    /// thresholds of splitting and blocking out of reach.
    pub const SERIAL: Schedule = Schedule {
        parallel_from_bytes: usize::MAX,
        blocked_from_bytes: usize::MAX,
        ..Schedule::DEFAULT
    };

    /// Everything split and blocked, with the smallest blocks: for tests
    /// that drive the parallel and blocked paths on small inputs.
    pub const EAGER: Schedule = Schedule {
        parallel_from_bytes: 0,
        blocked_from_bytes: 0,
        block_bytes: 1,
        blocked_max_slice_bytes: usize::MAX,
        min_tile_columns: 1,
        sorted_from_updates_per_block: 0,
        min_split_row_bytes: 0,
        // The sort by block stays what EAGER drives; the row scan has a
        // schedule of its own in the tests.
        row_scan_from_row_bytes: usize::MAX,
        row_scan_from_rows_per_task: usize::MAX,
        nd_split_from_slice_bytes: 0,
    };

    /// Tasks for `bytes` of work over `units` independent units.
    pub(crate) fn tasks(&self, par: &dyn Parallel, bytes: usize, units: usize) -> usize {
        let threads = par.threads().max(1);
        if threads == 1 || bytes < self.parallel_from_bytes {
            1
        } else {
            threads.min(units).max(1)
        }
    }
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule::DEFAULT
    }
}

/// Splits `0..units` into `tasks` contiguous ranges of near-equal length;
/// returns the `tasks + 1` bounds.
pub(crate) fn even_bounds(units: usize, tasks: usize) -> Vec<usize> {
    let tasks = tasks.max(1);
    (0..=tasks)
        .map(|t| units / tasks * t + (units % tasks).min(t))
        .collect()
}

/// Runs `f(i, part)` for every part on `par`, each part owned by one task.
/// Safe splitting: the parts are disjoint `&mut` slices, handed out
/// through uncontended mutexes.
pub(crate) fn for_each_part<T: Send, X: Send>(
    par: &dyn Parallel,
    parts: Vec<(&mut [T], X)>,
    f: impl Fn(usize, &mut [T], X) + Sync,
) {
    if parts.len() == 1 {
        let (part, x) = parts.into_iter().next().expect("one part");
        return f(0, part, x);
    }
    type Cell<'a, T, X> = Mutex<Option<(&'a mut [T], X)>>;
    let cells: Vec<Cell<T, X>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
    par.for_each(cells.len(), &|i| {
        let taken = cells[i]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some((part, x)) = taken {
            f(i, part, x)
        }
    });
}

/// Cuts `data` at the increasing `bounds` (first 0, last `data.len()`).
pub(crate) fn split_at_bounds<'a, T>(mut data: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut parts = Vec::with_capacity(bounds.len().saturating_sub(1));
    for w in bounds.windows(2) {
        let (head, tail) = std::mem::take(&mut data).split_at_mut(w[1] - w[0]);
        parts.push(head);
        data = tail;
    }
    parts
}

/// A task's part of an output, taken as blocks of values to scatter
/// into, front to back: in place (`[T]`, already holding data's values) or
/// copying ([`crate::uninit::Filling`]: each block copied from data as it is taken, the
/// gaps before it too, in 64 KiB pieces).
pub(crate) trait Blocks<T> {
    /// `[lo, hi)` of the part, holding data's values. Blocks are taken in
    /// increasing order, none overlapping another.
    fn block(&mut self, lo: usize, hi: usize) -> &mut [T];
}

impl<T> Blocks<T> for [T] {
    #[inline(always)]
    fn block(&mut self, lo: usize, hi: usize) -> &mut [T] {
        &mut self[lo..hi]
    }
}

/// What every task of a run does with its part, whatever the part's kind:
/// `run(index, start, part)`, `start` being where the part begins in the
/// output.
pub(crate) trait PartTask<T>: Sync {
    fn run<B: Blocks<T> + ?Sized>(&self, index: usize, start: usize, part: &mut B);
}

/// The output of a parallel run, cut into parts each owned by one task:
/// in place (`&mut [T]`) or copying ([`crate::uninit::Copying`]). The runs are written
/// once over this trait, for both.
pub(crate) trait Output<T> {
    /// Whether the parts are filled by copying (and so weigh their
    /// length in work).
    const COPIES: bool;

    fn len(&self) -> usize;

    /// Runs `task` on every part cut at `bounds` (increasing, from 0 to
    /// [`Self::len`]) on `par`, each part owned by one task.
    fn for_each_part(self, par: &dyn Parallel, bounds: &[usize], task: &impl PartTask<T>);
}

impl<T: Send> Output<T> for &mut [T] {
    const COPIES: bool = false;

    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    fn for_each_part(self, par: &dyn Parallel, bounds: &[usize], task: &impl PartTask<T>) {
        let parts = split_at_bounds(self, bounds)
            .into_iter()
            .zip(bounds.iter().copied())
            .collect();
        for_each_part(par, parts, |i, part, start| task.run(i, start, part));
    }
}

/// A `&mut [T]` shared by tasks that write **disjoint** positions (bands
/// of columns of one slab, which no safe split can express: they
/// interleave in memory).
pub(crate) struct DisjointSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a `DisjointSlice` is a `&mut [T]` lent to several tasks, each of
// which (by the contract of `as_mut_ptr`) touches positions no other
// touches;
// that is sound to send and share whenever `&mut [T]` may be sent, i.e.
// `T: Send`.
unsafe impl<T: Send> Sync for DisjointSlice<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for DisjointSlice<'_, T> {}

impl<'a, T> DisjointSlice<'a, T> {
    pub(crate) fn new(data: &'a mut [T]) -> DisjointSlice<'a, T> {
        DisjointSlice {
            ptr: data.as_mut_ptr(),
            len: data.len(),
            _borrow: PhantomData,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The start of the slice, to index from a local (a pointer kept in a
    /// register, not reloaded after every write through it). A task may
    /// write through it only at positions below [`Self::len`] that no
    /// other task accesses while it runs.
    pub(crate) fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_bounds_cover_every_unit_once() {
        assert_eq!(even_bounds(10, 3), [0, 4, 7, 10]);
        assert_eq!(even_bounds(2, 4), [0, 1, 2, 2, 2]);
        assert_eq!(even_bounds(0, 1), [0, 0]);
    }

    #[test]
    fn split_at_bounds_gives_disjoint_parts_in_order() {
        let mut data = [0, 1, 2, 3, 4];
        let parts = split_at_bounds(&mut data, &[0, 2, 2, 5]);
        let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
        assert_eq!(lens, [2, 0, 3]);
        assert_eq!(parts[2][0], 2);
    }

    #[test]
    fn serial_runs_every_task_in_order() {
        let seen = Mutex::new(vec![]);
        Serial.for_each(4, &|i| seen.lock().unwrap().push(i));
        assert_eq!(*seen.lock().unwrap(), [0, 1, 2, 3]);
        assert_eq!(Serial.threads(), 1);
    }
}

//! ScatterND on a [`Parallel`] host, and block by block.
//!
//! The output (row-major data only) is cut into destination blocks of whole slices; the update
//! slices are counting-sorted by the block they write, stably, so within a block they keep
//! their order. A task owns a contiguous range of blocks (a safe `split_at_mut` part of the
//! output) and applies that range's updates in order: every element sees the serial sequence
//! of updates, and the result is the serial one bit for bit. One task walking every block is
//! the *blocked* application of a large random-index scatter: each block stays in cache while
//! its updates land ([`Schedule`]'s blocking rule).
//!
//! [`NdPlan::check_indices`] with [`crate::BlockSort::ForElementBytes`] checks the indices and
//! sorts them in one read of the indices ([`check_sorted`]); the [`CheckedNdIndices`] it
//! returns owns the sort, so a host may keep it as long as the indices do not change.

use crate::exec::SplitKernels;
use crate::scatter_nd::Buckets;
use crate::{BlockSort, Execution};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::combiner::{WithCombiner, with_combiner};
use crate::index::out_of_range;
use crate::mechanisms::Mechanism;
use crate::parallel::{
    Blocks, DisjointSlice, Output, PartTask, even_bounds, for_each_part, split_at_bounds,
};
use crate::shape::check_len;
use crate::uninit::{Copying, copy_tasks, write_copy_par};
use crate::{
    CheckedNdIndices, Element, IndexValue, Input, NdPlan, Parallel, Reduction, ScatterError,
    Schedule,
};

/// Whether a plan's slices can be sorted at all: row-major data (one run
/// per slice), something written, offsets and tuple numbers within `u32`.
pub(crate) fn sortable(plan: &NdPlan) -> bool {
    plan.runs.len() == 1
        && plan.slice_len > 0
        && plan.tuples > 0
        && plan.data_len > 0
        && u32::try_from(plan.data_len).is_ok()
        && u32::try_from(plan.tuples).is_ok()
}

/// Elements per block for blocks of about `bytes` (at least one slice,
/// at most the data, so that it fits `u32` when the data does).
fn block_len(plan: &NdPlan, bytes: usize, element_bytes: usize) -> usize {
    let slices = (bytes / element_bytes.max(1) / plan.slice_len.max(1)).max(1);
    slices
        .saturating_mul(plan.slice_len)
        .min(plan.data_len.max(plan.slice_len))
}

/// `n / d` for `u32` numerators by one multiplication (Lemire, Kaser and
/// Kurz, "Faster remainder by direct computation", 2019): exact for every
/// `u32` `n` and `1 <= d <= u32::MAX`. A division per update (twice in the
/// counting sort) costs more than the rest of the sort.
#[derive(Debug, Clone, Copy)]
struct FastDiv {
    /// `ceil(2^64 / d)`, 0 for `d == 1`.
    m: u64,
}

impl FastDiv {
    fn new(d: u32) -> FastDiv {
        let d = d.max(1) as u64;
        FastDiv {
            m: if d == 1 { 0 } else { u64::MAX / d + 1 },
        }
    }

    #[inline(always)]
    fn div(self, n: u32) -> usize {
        if self.m == 0 {
            n as usize
        } else {
            ((self.m as u128 * n as u128) >> 64) as usize
        }
    }
}

/// The block of an offset, for blocks of `block_len` elements (which fits
/// `u32` when the data does: `sortable`, `block_len`).
fn block_divider(block_len: usize) -> FastDiv {
    FastDiv::new(block_len.min(u32::MAX as usize) as u32)
}

/// How many of `offsets` fall in each of `blocks` blocks. An offset past
/// the last block (a bad tuple's, whose check then fails) is not counted.
fn count_blocks(offsets: &[u32], blocks: usize, block_of: FastDiv) -> Vec<usize> {
    let mut counts = vec![0usize; blocks];
    for &o in offsets {
        if let Some(c) = counts.get_mut(block_of.div(o)) {
            *c += 1;
        }
    }
    counts
}

/// Counting sort of `offsets` (one per tuple, in order) by block, on the
/// calling thread. `data_len` and `block_len` fit `u32` (`sortable`).
fn bucket(offsets: &[u32], data_len: usize, block_len: usize) -> Buckets {
    let block_of = block_divider(block_len);
    let counts = count_blocks(offsets, data_len.div_ceil(block_len), block_of);
    place(
        offsets,
        &[0, offsets.len()],
        &[counts],
        block_len,
        block_of,
        &crate::Serial,
    )
}

/// [`NdPlan::check_indices`] with [`crate::BlockSort::ForElementBytes`]:
/// the plain check (the same first error), and, when `schedule`'s blocking
/// rule holds for elements of `element_bytes` bytes, the update slices
/// sorted by destination block in the same pass over the indices. On
/// `par`, by the split rule over the bytes of the indices, each task
/// checks a contiguous range of tuples and counts them per block, then
/// places them; the tuples of a block are placed task after task, so the
/// sort is the serial one, entry for entry, at any thread count.
pub(crate) fn check_sorted<'a, I: IndexValue>(
    plan: &'a NdPlan,
    indices: &'a [I],
    element_bytes: usize,
    schedule: &Schedule,
    par: &dyn Parallel,
) -> Result<CheckedNdIndices<'a, I>, ScatterError> {
    let bytes = |n: usize| n.saturating_mul(element_bytes);
    let block_len = block_len(plan, schedule.block_bytes, element_bytes);
    let blocks = plan.data_len.div_ceil(block_len.max(1));
    let sort = sortable(plan)
        && indices.len() == plan.tuples * plan.k
        && bytes(plan.data_len) >= schedule.blocked_from_bytes
        && bytes(plan.slice_len) <= schedule.blocked_max_slice_bytes
        && plan.tuples >= blocks.saturating_mul(schedule.sorted_from_updates_per_block);
    if !sort {
        return plan.check_serial(indices);
    }
    let tasks = schedule.tasks(par, std::mem::size_of_val(indices), plan.tuples);
    let bounds = even_bounds(plan.tuples, tasks);
    let block_of = block_divider(block_len);
    // One pass per task over its tuples: every component checked
    // (errors deferred to `check_indices`, which finds the first),
    // every offset computed and counted in its block.
    let mut offsets = vec![0u32; plan.tuples];
    let counted: Vec<Mutex<Option<Counted>>> = (0..tasks).map(|_| Mutex::new(None)).collect();
    let parts = split_at_bounds(&mut offsets, &bounds).into_iter();
    for_each_part(par, parts.zip(0..tasks).collect(), |t, part, _| {
        let first = bounds[t] * plan.k;
        let tuples = &indices[first..first + part.len() * plan.k];
        let bad = offsets_into(plan, tuples, part);
        *lock(&counted[t]) = Some((count_blocks(part, blocks, block_of), bad));
    });
    let counted: Vec<Counted> = counted
        .into_iter()
        .map(|c| c.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect::<Option<_>>()
        // A host that skipped a task: the whole pass here, serially.
        .unwrap_or_else(|| {
            let bad = offsets_into(plan, indices, &mut offsets);
            let count = |w: &[usize]| count_blocks(&offsets[w[0]..w[1]], blocks, block_of);
            bounds.windows(2).map(|w| (count(w), bad)).collect()
        });
    if counted.iter().any(|(_, bad)| *bad) {
        // The first bad component, worded as `check_indices` words it.
        return Err(plan
            .check_serial(indices)
            .err()
            .unwrap_or_else(|| disagreement(plan)));
    }
    let counts: Vec<Vec<usize>> = counted.into_iter().map(|(c, _)| c).collect();
    let buckets = place(&offsets, &bounds, &counts, block_len, block_of, par);
    Ok(CheckedNdIndices {
        plan,
        indices,
        buckets: Some(Arc::new(buckets)),
    })
}

/// Writes the data offset of each tuple of `tuples` (whole tuples)
/// into `offsets`; whether some component is out of its range.
fn offsets_into<I: IndexValue>(plan: &NdPlan, tuples: &[I], offsets: &mut [u32]) -> bool {
    let mut bad = false;
    if plan.k == 0 {
        offsets.fill(0);
        return false;
    }
    let (strides, dims) = (&plan.data_strides[..plan.k], &plan.data_shape[..plan.k]);
    for (tuple, slot) in tuples.chunks_exact(plan.k).zip(offsets) {
        let mut offset = 0usize;
        for ((i, &stride), &dim) in tuple.iter().zip(strides).zip(dims) {
            // `sortable`: the data's length, so each dim, fits `u32`.
            let (i, d) = (i.to_i64(), dim as i64);
            bad |= out_of_range(i, d);
            let j = if i < 0 { i.wrapping_add(d) } else { i } as usize;
            offset = offset.wrapping_add(j.wrapping_mul(stride));
        }
        *slot = offset as u32;
    }
    bad
}

/// The sort of [`CheckedNdIndices::sorted_for_split`], when it pays.
pub(crate) fn sort_for_split<I: IndexValue>(
    token: &CheckedNdIndices<'_, I>,
    element_bytes: usize,
    par: &dyn Parallel,
    schedule: &Schedule,
) -> Option<Buckets> {
    let plan = token.plan;
    let short = plan.slice_len.saturating_mul(element_bytes) <= schedule.blocked_max_slice_bytes;
    if token.buckets.is_some() || !sortable(plan) || !short {
        return None;
    }
    let slices = plan.data_len / plan.slice_len;
    // As `apply_buckets` will count them, in place.
    let updated = plan.tuples.saturating_mul(plan.slice_len);
    let tasks = schedule.tasks(par, indices_bytes::<I>(updated, element_bytes), slices);
    if tasks == 1 || plan.tuples < tasks.saturating_mul(schedule.sorted_from_updates_per_block) {
        return None;
    }
    let block_len = slices.div_ceil(tasks) * plan.slice_len;
    Some(sorted_by_blocks(token, block_len))
}

/// One task's tuples counted per destination block, and whether one of
/// them is out of bounds.
type Counted = (Vec<usize>, bool);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The second half of the counting sort: each task places its tuples
/// (`bounds[t]..bounds[t + 1]`, counted per block in `counts[t]`) at the
/// block's start plus what earlier tasks placed in the block, in order;
/// the entries are the serial stable sort's.
fn place(
    offsets: &[u32],
    bounds: &[usize],
    counts: &[Vec<usize>],
    block_len: usize,
    block_of: FastDiv,
    par: &dyn Parallel,
) -> Buckets {
    let blocks = counts.first().map_or(0, Vec::len);
    let tasks = counts.len();
    // firsts[t][b]: the first slot of task t's tuples in block b.
    let mut firsts = vec![vec![0usize; blocks]; tasks];
    let mut starts = vec![0usize; blocks + 1];
    let mut at = 0usize;
    for b in 0..blocks {
        starts[b] = at;
        for t in 0..tasks {
            firsts[t][b] = at;
            at += counts[t][b];
        }
    }
    starts[blocks] = at;
    debug_assert_eq!(at, offsets.len());
    let mut entries = vec![(0u32, 0u32); offsets.len()];
    let out = DisjointSlice::new(&mut entries);
    let done: Vec<AtomicBool> = (0..tasks).map(|_| AtomicBool::new(false)).collect();
    let run = |t: usize| {
        let mut next = firsts[t].clone();
        let to = out.as_mut_ptr();
        for (j, &o) in offsets
            .iter()
            .enumerate()
            .take(bounds[t + 1])
            .skip(bounds[t])
        {
            let slot = &mut next[block_of.div(o)];
            assert!(*slot < out.len(), "a slot past the entries");
            // SAFETY: `slot < out.len()` (asserted). Task t's tuples of
            // block b go to `firsts[t][b]..firsts[t][b] + counted[t][b]`,
            // ranges disjoint over every (t, b) (prefix sums of the
            // counts); `offsets` and `block_of` are the ones counted, so
            // no task writes past its range, and no other task writes
            // there (each task runs once at a time, by `Parallel`'s
            // contract and the `done` flags below).
            unsafe { to.add(*slot).write((o, j as u32)) };
            *slot += 1;
        }
        done[t].store(true, Ordering::Release);
    };
    par.for_each(tasks, &run);
    // A task the host skipped: placed here (the same entries).
    for (t, done) in done.iter().enumerate() {
        if !done.load(Ordering::Acquire) {
            run(t);
        }
    }
    Buckets {
        block_len,
        starts,
        entries,
    }
}

/// The fused pass and `check_indices` disagreed (a bug): report it as an
/// error naming the indices rather than panic.
#[cold]
fn disagreement(plan: &NdPlan) -> ScatterError {
    ScatterError::Shape {
        input: Input::Indices,
        shape: crate::Dims::of(&plan.indices_shape),
        expected: "indices the sorted check and the plain check agree on (internal error)".into(),
    }
}

impl<I: IndexValue> SplitKernels for CheckedNdIndices<'_, I> {
    /// [`CheckedNdIndices::apply`] in place on `par`, bit for bit the serial result: a
    /// sorted token block by block; else a row split, or the slices sorted
    /// by destination (after the check, a second read of the indices),
    /// only when the work is split; else the serial apply.
    fn apply_split<T: Element>(
        &self,
        data: &mut [T],
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<(), ScatterError> {
        let (token, par, schedule) = (self, exec.par, exec.schedule);
        if let Some(b) = &token.buckets {
            token.check_buffers(data, updates)?;
            apply_buckets(token, data, updates, reduction, par, schedule, b);
            return Ok(());
        }
        token.check_buffers(data, updates)?;
        let bytes = indices_bytes::<I>(updates.len(), std::mem::size_of::<T>());
        if let Some(bounds) = row_scan_bounds::<T, _>(token, par, schedule, bytes) {
            apply_row_scan(token, data, updates, reduction, par, &bounds);
            return Ok(());
        }
        match split_buckets::<T, _>(token, par, schedule, bytes) {
            Some(b) => {
                apply_buckets(token, data, updates, reduction, par, schedule, &b);
                Ok(())
            }
            _ => token.apply_serial(data, updates, reduction),
        }
    }

    /// `dst = src`, then [`apply_split`], bit for bit: a sorted
    /// token, or split by destination blocks when the split rule holds,
    /// each block copied just before its updates land; else
    /// [`crate::fused_copy::write_copying_nd`].
    ///
    /// Contract (what [`CheckedNdIndices::apply`] hands `dst` back on): on `Ok`, every
    /// element of `dst` has been written: by `write_copying_nd` (its
    /// proof there), by a whole copy (`write_copy_par`) before the serial
    /// apply, or by a run over `Copying` parts, each filled whole
    /// (`fill_parts`).
    fn copying_split<T: Element + Copy>(
        &self,
        dst: &mut [MaybeUninit<T>],
        src: &[T],
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<(), ScatterError> {
        let (token, par, schedule) = (self, exec.par, exec.schedule);
        token.check_buffers(dst, updates)?;
        check_len(Input::Data, &token.plan.data_shape, dst.len(), src.len())?;
        if let Some(b) = &token.buckets {
            // Each block is copied just before its updates land.
            apply_buckets(
                token,
                Copying { dst, src },
                updates,
                reduction,
                par,
                schedule,
                b,
            );
            return Ok(());
        }
        let bytes = dst.len().saturating_mul(std::mem::size_of::<T>());
        if let Some(bounds) = row_scan_bounds::<T, _>(token, par, schedule, bytes) {
            apply_row_scan(
                token,
                Copying { dst, src },
                updates,
                reduction,
                par,
                &bounds,
            );
            return Ok(());
        }
        match split_buckets::<T, _>(token, par, schedule, bytes) {
            Some(b) => {
                apply_buckets(
                    token,
                    Copying { dst, src },
                    updates,
                    reduction,
                    par,
                    schedule,
                    &b,
                );
                Ok(())
            }
            // Serial scatter, parallel copy: a whole copy then the
            // serial apply, bit for bit the fused result. The copy around
            // the slices (`write_copying`) stays when the slices cover
            // more than half the output, where it saves most of a copy.
            None if copy_tasks::<T>(par, schedule, dst.len()) > 1
                && updates.len() <= dst.len() / 2 =>
            {
                let data = write_copy_par(par, schedule, dst, src);
                token.apply_serial(data, updates, reduction)
            }
            None => crate::fused_copy::write_copying_nd(token, dst, src, updates, reduction),
        }
    }
}

/// The output's task bounds (whole rows) for a row split
/// ([`Schedule`]'s row-split rule), when the split rule holds: rows of
/// row-major data, picked one per tuple (`k == 1`).
fn row_scan_bounds<T, I: IndexValue>(
    token: &CheckedNdIndices<'_, I>,
    par: &dyn Parallel,
    schedule: &Schedule,
    bytes: usize,
) -> Option<Vec<usize>> {
    if !Mechanism::RowSplit.is_on() {
        return None;
    }
    let plan = token.plan;
    let len = plan.slice_len;
    let rows_of_data = plan.k == 1
        && plan.runs[..] == [0]
        && plan.run_len == len
        && len > 0
        && plan.data_strides[0] == len
        && plan.data_len == plan.data_shape[0].checked_mul(len)?;
    let row_bytes = len.saturating_mul(std::mem::size_of::<T>());
    if !rows_of_data
        || row_bytes < schedule.row_scan_from_row_bytes
        || u32::try_from(plan.tuples).is_err()
    {
        return None;
    }
    let rows = plan.data_shape[0];
    let tasks = schedule.tasks(par, bytes, rows);
    if tasks == 1 || plan.tuples < tasks.saturating_mul(schedule.row_scan_from_rows_per_task) {
        return None;
    }
    Some(
        even_bounds(rows, tasks)
            .into_iter()
            .map(|r| r * len)
            .collect(),
    )
}

/// Each task owns whole rows `bounds[t]..bounds[t + 1]` (in elements)
/// and applies, row by row, the update rows landing on each in their
/// original order ([`RowOrder`], built once here): each element sees
/// the serial sequence. Copying
/// (`data` a [`Copying`]), a task copies its rows first. Callers
/// checked the reduction and the buffers, and
/// [`row_scan_bounds`] the layout.
fn apply_row_scan<T: Element, O: Output<T>, I: IndexValue>(
    token: &CheckedNdIndices<'_, I>,
    data: O,
    updates: &[T],
    reduction: Reduction,
    par: &dyn Parallel,
    bounds: &[usize],
) {
    debug_assert_eq!(data.len(), token.plan.data_len);
    debug_assert_eq!(updates.len(), token.plan.tuples * token.plan.slice_len);
    let prefetch = Mechanism::Prefetch.is_on()
        && (std::mem::size_of_val(updates) >= crate::prefetch::FROM_BYTES
            || token.plan.data_len.saturating_mul(std::mem::size_of::<T>())
                >= crate::prefetch::FROM_BYTES);
    let by_row = RowOrder::new(token);
    with_combiner(
        reduction,
        RowScanRun {
            by_row: &by_row,
            len: token.plan.slice_len,
            bounds,
            data,
            par,
            updates,
            prefetch,
        },
    );
}

/// Buckets for a split over `par`, when the split rule holds: about
/// four blocks per task, no larger than the schedule's blocks.
fn split_buckets<T, I: IndexValue>(
    token: &CheckedNdIndices<'_, I>,
    par: &dyn Parallel,
    schedule: &Schedule,
    bytes: usize,
) -> Option<Buckets> {
    let plan = token.plan;
    let slice_bytes = plan.slice_len.saturating_mul(std::mem::size_of::<T>());
    if !sortable(plan) || slice_bytes < schedule.nd_split_from_slice_bytes {
        return None;
    }
    let slices = plan.data_len / plan.slice_len;
    let tasks = schedule.tasks(par, bytes, slices);
    if tasks == 1 {
        return None;
    }
    let size = std::mem::size_of::<T>();
    let per_task = slices.div_ceil(4 * tasks).max(1) * plan.slice_len;
    let block_len = block_len(plan, schedule.block_bytes, size).min(per_task);
    Some(sorted_by_blocks(token, block_len))
}

/// The update slices of checked indices stably sorted by destination
/// block of `block_len` elements (a multiple of the slice length), on
/// the calling thread. The plan is [`sortable`].
fn sorted_by_blocks<I: IndexValue>(token: &CheckedNdIndices<'_, I>, block_len: usize) -> Buckets {
    let mut offsets = Vec::with_capacity(token.plan.tuples);
    token.visit(|o, _| offsets.push(o as u32));
    bucket(&offsets, token.plan.data_len, block_len)
}

/// Applies sorted slices, tasks owning contiguous ranges of blocks
/// balanced by the work they hold; copying (`data` a [`Copying`]),
/// each block is copied just before its updates land. Callers checked
/// the reduction and the buffers.
fn apply_buckets<T: Element, O: Output<T>, I: IndexValue>(
    token: &CheckedNdIndices<'_, I>,
    data: O,
    updates: &[T],
    reduction: Reduction,
    par: &dyn Parallel,
    schedule: &Schedule,
    buckets: &Buckets,
) {
    debug_assert_eq!(data.len(), token.plan.data_len);
    debug_assert_eq!(updates.len(), token.plan.tuples * token.plan.slice_len);
    let blocks = buckets.starts.len() - 1;
    // Copying, a task also writes its blocks whole.
    let moved = updates.len() + if O::COPIES { data.len() } else { 0 };
    let tasks = schedule.tasks(
        par,
        indices_bytes::<I>(moved, std::mem::size_of::<T>()),
        blocks,
    );
    // Balance: each block weighs its elements written (copied, when
    // copying) plus four per updated element (a read-modify-write).
    let slice_len = token.plan.slice_len;
    let weight = |b: usize| {
        let n = buckets.starts[b + 1] - buckets.starts[b];
        let copied = if O::COPIES { buckets.block_len } else { 1 };
        copied + 4 * n * slice_len
    };
    let total: usize = (0..blocks).map(weight).sum();
    let mut block_bounds = vec![0usize];
    let mut acc = 0usize;
    for b in 0..blocks {
        acc += weight(b);
        let t = block_bounds.len();
        if t < tasks && acc >= total / tasks * t {
            block_bounds.push(b + 1);
        }
    }
    block_bounds.push(blocks);
    block_bounds.dedup();
    let len = data.len();
    let bounds: Vec<usize> = block_bounds
        .iter()
        .map(|&b| (b * buckets.block_len).min(len))
        .collect();
    with_combiner(
        reduction,
        BucketRun {
            buckets,
            block_bounds: &block_bounds,
            bounds: &bounds,
            data,
            par,
            updates,
            slice_len,
        },
    );
}

/// The bytes an apply of `n` updated elements of `element_bytes` bytes
/// moves: its updates and their indices (`I`).
fn indices_bytes<I>(n: usize, element_bytes: usize) -> usize {
    n.saturating_mul(element_bytes.saturating_add(std::mem::size_of::<I>()))
}

/// One bucketed application, run with a combining function.
struct BucketRun<'r, T, O> {
    buckets: &'r Buckets,
    /// Task `t` owns blocks `block_bounds[t]..block_bounds[t + 1]`, the
    /// output's `bounds[t]..bounds[t + 1]`.
    block_bounds: &'r [usize],
    bounds: &'r [usize],
    /// In place, or copying (each block copied as its task takes it).
    data: O,
    par: &'r dyn Parallel,
    updates: &'r [T],
    slice_len: usize,
}

impl<T: Element, O: Output<T>> WithCombiner<T> for BucketRun<'_, T, O> {
    type Out = ();

    fn call<F: Fn(&mut T, &T) + Copy + Send + Sync>(self, f: F) {
        let task = BucketTask {
            buckets: self.buckets,
            block_bounds: self.block_bounds,
            bounds: self.bounds,
            updates: self.updates,
            slice_len: self.slice_len,
            f,
        };
        self.data.for_each_part(self.par, self.bounds, &task);
    }
}

/// The update rows grouped by destination row (compressed sparse rows):
/// `order[starts[r]..starts[r + 1]]` are the tuples landing on row `r`,
/// in their original order (a stable counting sort), so that each
/// destination row sees the serial sequence of its updates. Built once,
/// on the caller's thread, from validated indices.
struct RowOrder {
    starts: Vec<usize>,
    order: Vec<u32>,
}

impl RowOrder {
    /// From a token whose tuples pick whole rows (`k == 1`).
    fn new<I: IndexValue>(token: &CheckedNdIndices<'_, I>) -> RowOrder {
        let rows = token.plan.data_shape[0];
        let mut starts = vec![0usize; rows + 1];
        for i in token.indices {
            starts[token.first_axis_position(i) + 1] += 1;
        }
        for r in 0..rows {
            starts[r + 1] += starts[r];
        }
        let mut next = starts[..rows].to_vec();
        // `row_scan_bounds` checked that the tuple count fits u32.
        let mut order = vec![0u32; token.indices.len()];
        for (t, i) in token.indices.iter().enumerate() {
            let r = token.first_axis_position(i);
            order[next[r]] = t as u32;
            next[r] += 1;
        }
        RowOrder { starts, order }
    }
}

/// One row-split application ([`apply_row_scan`]), run
/// with a combining function.
struct RowScanRun<'r, T, O> {
    by_row: &'r RowOrder,
    /// Elements per row.
    len: usize,
    /// Task `t` owns the output's `bounds[t]..bounds[t + 1]`.
    bounds: &'r [usize],
    data: O,
    par: &'r dyn Parallel,
    updates: &'r [T],
    /// Ask for each update row ahead ([`crate::prefetch`]).
    prefetch: bool,
}

impl<T: Element, O: Output<T>> WithCombiner<T> for RowScanRun<'_, T, O> {
    type Out = ();

    fn call<F: Fn(&mut T, &T) + Copy + Send + Sync>(self, f: F) {
        let task = RowScanTask {
            by_row: self.by_row,
            len: self.len,
            bounds: self.bounds,
            updates: self.updates,
            prefetch: self.prefetch,
            f,
        };
        self.data.for_each_part(self.par, self.bounds, &task);
    }
}

/// What the task owning a range of whole rows does: its rows in order,
/// each with the update rows landing on it, in their original order.
struct RowScanTask<'r, T, F> {
    by_row: &'r RowOrder,
    len: usize,
    bounds: &'r [usize],
    updates: &'r [T],
    prefetch: bool,
    f: F,
}

impl<T: Element, F: Fn(&mut T, &T) + Copy + Send + Sync> PartTask<T> for RowScanTask<'_, T, F> {
    fn run<B: Blocks<T> + ?Sized>(&self, t: usize, start: usize, part: &mut B) {
        let RowScanTask {
            by_row,
            len,
            bounds,
            updates,
            prefetch,
            f,
        } = *self;
        let (first, end) = (start / len, bounds[t + 1] / len);
        let block = part.block(0, bounds[t + 1] - start);
        let mine = &by_row.order[by_row.starts[first]..by_row.starts[end]];
        let mut k = 0;
        for r in first..end {
            let d = (r - first) * len;
            for _ in by_row.starts[r]..by_row.starts[r + 1] {
                if prefetch && let Some(&ahead) = mine.get(k + crate::prefetch::DISTANCE) {
                    // Only an address: nothing is read through it.
                    let at = updates.as_ptr().wrapping_add(ahead as usize * len);
                    crate::prefetch::lines(at, len * std::mem::size_of::<T>());
                }
                let u = mine[k] as usize * len;
                k += 1;
                for (d, u) in block[d..d + len].iter_mut().zip(&updates[u..u + len]) {
                    f(d, u)
                }
            }
        }
    }
}

/// What the task owning a range of blocks does, with its combining
/// function: each block in turn, its slices in their sorted (stable) order.
struct BucketTask<'r, T, F> {
    buckets: &'r Buckets,
    block_bounds: &'r [usize],
    bounds: &'r [usize],
    updates: &'r [T],
    slice_len: usize,
    f: F,
}

impl<T: Element, F: Fn(&mut T, &T) + Copy + Send + Sync> PartTask<T> for BucketTask<'_, T, F> {
    fn run<B: Blocks<T> + ?Sized>(&self, t: usize, start: usize, part: &mut B) {
        let BucketTask {
            buckets,
            block_bounds,
            bounds,
            updates,
            slice_len,
            f,
        } = *self;
        let block_len = buckets.block_len;
        let (b0, b1) = (block_bounds[t], block_bounds[t + 1]);
        for b in b0..b1 {
            // The last block of the output may be short.
            let lo = b * block_len - start;
            let hi = ((b + 1) * block_len).min(bounds[t + 1]) - start;
            let entries = &buckets.entries[buckets.starts[b]..buckets.starts[b + 1]];
            let block = part.block(lo, hi);
            let base = start + lo;
            if slice_len == 1 {
                for &(o, t) in entries {
                    f(&mut block[o as usize - base], &updates[t as usize]);
                }
            } else {
                for &(o, t) in entries {
                    let d = o as usize - base;
                    let u = t as usize * slice_len;
                    for (d, u) in block[d..d + slice_len]
                        .iter_mut()
                        .zip(&updates[u..u + slice_len])
                    {
                        f(d, u)
                    }
                }
            }
        }
    }
}

impl NdPlan {
    /// Reads every index component once and returns the proof that each is
    /// in range; `Err` names the first one (row-major) outside `[-d, d - 1]`
    /// for its own data dimension `d`, or an indices buffer whose length is
    /// not its shape's.
    ///
    /// With [`BlockSort::ForElementBytes`], when `exec`'s blocking rule
    /// holds, the same read also sorts the update slices by destination
    /// block (on `exec`'s threads, by its split rule over the bytes of the
    /// indices: each task checks a contiguous range of tuples and counts
    /// them per block, then places them, task after task, so the sort is
    /// the serial one, entry for entry). The token applies block by block
    /// with the unsorted token's results, bit for bit; keep it
    /// ([`CheckedNdIndices::kept_check`]) while the indices do not change
    /// to reuse the sort. Same token or same first error whatever `exec`.
    pub fn check_indices<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        exec: Execution<'_>,
        sort: BlockSort,
    ) -> Result<CheckedNdIndices<'a, I>, ScatterError> {
        match sort {
            BlockSort::Off => self.check_serial(indices),
            BlockSort::ForElementBytes(bytes) => {
                check_sorted(self, indices, bytes, exec.schedule, exec.par)
            }
        }
    }
}

impl<'a, I: IndexValue> CheckedNdIndices<'a, I> {
    /// For indices that come back (a host applies a kept check again): an
    /// unsorted token's update slices sorted by destination for a split
    /// over `exec`, one block per task, when the slices are short (at most
    /// [`crate::Schedule::blocked_max_slice_bytes`] of
    /// `element_bytes`-byte elements), the split rule gives more than one
    /// task, and there are
    /// [`crate::Schedule::sorted_from_updates_per_block`] tuples per
    /// block; `None` otherwise, and for a token already sorted.
    ///
    /// Short slices are not split otherwise
    /// ([`crate::Schedule::nd_split_from_slice_bytes`]): sorting them for
    /// each call costs more than the second thread saves (`snd_add_hist`:
    /// 1M element adds into 256 KiB). Indices that come back pay the sort
    /// once. One block per task, not the four of a per-call split: each
    /// block's slices read the updates in ascending order, so every block
    /// streams most of the update array through the caches.
    pub fn sorted_for_split(
        &self,
        element_bytes: usize,
        exec: Execution<'_>,
    ) -> Option<CheckedNdIndices<'a, I>> {
        let buckets = sort_for_split(self, element_bytes, exec.par, exec.schedule)?;
        Some(CheckedNdIndices {
            plan: self.plan,
            indices: self.indices,
            buckets: Some(Arc::new(buckets)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::FastDiv;

    #[test]
    fn fast_division_is_exact_at_the_edges_of_u32() {
        for d in [
            1u32,
            2,
            3,
            7,
            640,
            65_536,
            65_537,
            1 << 31,
            u32::MAX - 1,
            u32::MAX,
        ] {
            let f = FastDiv::new(d);
            for n in [
                0u32,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u32::MAX / 2,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(f.div(n), (n / d) as usize, "{n} / {d}");
            }
        }
    }
}

//! ScatterElements on a [`Parallel`] host, and block by block.
//!
//! An update at indices coordinates `(outer, r, inner)` (`r` along the axis) writes data at
//! `(outer, index, inner)`: it never leaves its *slab* (`outer` fixed, `data_shape[axis..]`,
//! contiguous) nor its *column* (`outer` and `inner` fixed). So the destinations split, with no
//! index read: by slabs (task `t` owns a contiguous range of data slabs and applies the indices
//! slabs that target them, safe `split_at_mut` parts), or by bands of inner columns, when there
//! are fewer slabs than tasks and the indices cover every inner dimension (task `t` owns
//! columns `[c0, c1)` of every slab, which interleave in memory: [`DisjointSlice`]).
//!
//! Within a column the updates arrive in increasing `r` in both the serial order and every
//! task's order, so each data element sees the serial sequence of updates: bit-identical
//! results. The same bands, processed one after the other by one task, are the *blocked*
//! application of a large random-index scatter ([`Schedule`]'s blocking rule): one band's
//! destinations stay in cache while every update of the band is applied (staged or not: `bands`).

use crate::Execution;
use crate::exec::SplitKernels;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::combiner::{WithCombiner, with_combiner};
use crate::index::first_out_of_range;
use crate::mechanisms::Mechanism;
use crate::parallel::{Blocks, DisjointSlice, Output, PartTask, even_bounds};
use crate::shape::{check_len, element_count};
use crate::uninit::{Copying, copy_par, copy_tasks, write_copy_par};
use crate::{
    CheckedElementsIndices, Element, ElementsPlan, IndexValue, Input, Parallel, Reduction,
    ScatterError, Schedule,
};

/// How a checked ScatterElements divides into slabs and columns.
struct Geometry {
    /// Indices slabs (`product(indices_shape[..axis])`).
    slabs: usize,
    /// Elements of one indices slab (`product(indices_shape[axis..])`).
    indices_slab: usize,
    /// Elements of one data slab (`product(data_shape[axis..])`).
    data_slab: usize,
    /// `data_shape[axis]`.
    dim: usize,
    /// `product(data_shape[axis + 1..])`: one row of a slab.
    inner: usize,
    /// Whether `indices_shape[axis + 1..] == data_shape[axis + 1..]`.
    inner_full: bool,
}

/// The work of one task over whole slabs: indices slabs `k0..k1`, every
/// column, banded by `tile` columns when `tile < inner` (only with
/// `inner_full`).
#[derive(Clone, Copy)]
struct SlabPart {
    k0: usize,
    k1: usize,
    tile: usize,
}

/// The work of one task over columns: columns `c0..c1` of every slab,
/// banded by `tile`.
#[derive(Clone, Copy)]
struct ColumnPart {
    c0: usize,
    c1: usize,
    tile: usize,
}

/// A split into tasks, all of one kind.
enum Parts {
    Slabs(Vec<SlabPart>),
    Columns(Vec<ColumnPart>),
}

/// [`ElementsPlan::check_indices`] on `par`: each task reads a
/// contiguous range of the indices; when one finds an index out of range
/// (or the host skipped one), the serial check runs again and names the
/// first, as it alone would.
pub(crate) fn check_split<'a, I: IndexValue>(
    plan: &'a ElementsPlan,
    indices: &'a [I],
    par: &dyn Parallel,
    schedule: &Schedule,
) -> Result<CheckedElementsIndices<'a, I>, ScatterError> {
    let tasks = schedule.tasks(par, std::mem::size_of_val(indices), indices.len());
    if tasks == 1 || indices.len() != plan.indices_len {
        return plan.check_serial(indices);
    }
    let dim = plan.data_shape()[plan.axis()];
    let bounds = even_bounds(indices.len(), tasks);
    let clean: Vec<AtomicBool> = (0..tasks).map(|_| AtomicBool::new(false)).collect();
    par.for_each(tasks, &|t| {
        let range = &indices[bounds[t]..bounds[t + 1]];
        clean[t].store(first_out_of_range(range, dim).is_none(), Ordering::Release);
    });
    if clean.iter().all(|c| c.load(Ordering::Acquire)) {
        Ok(CheckedElementsIndices { plan, indices })
    } else {
        plan.check_serial(indices)
    }
}

fn geometry<I: IndexValue>(token: &CheckedElementsIndices<'_, I>) -> Option<Geometry> {
    let plan = token.plan();
    let axis = plan.axis();
    let (ds, is) = (plan.data_shape(), plan.indices_shape());
    if plan.indices_len == 0 || plan.data_len() == 0 {
        return None;
    }
    // Every count below divides a non-zero countable shape: no overflow.
    Some(Geometry {
        slabs: element_count(&is[..axis])?,
        indices_slab: element_count(&is[axis..])?,
        data_slab: element_count(&ds[axis..])?,
        dim: ds[axis],
        inner: element_count(&ds[axis + 1..])?,
        inner_full: is[axis + 1..] == ds[axis + 1..],
    })
}

/// The plan of one slab (axis 0 of `data_shape[axis..]`), needed when
/// the indices do not cover every inner dimension.
fn slab_plan<I: IndexValue>(
    token: &CheckedElementsIndices<'_, I>,
    g: &Geometry,
) -> Result<Option<ElementsPlan>, ScatterError> {
    if g.inner_full {
        return Ok(None);
    }
    let plan = token.plan();
    let tail = &plan.indices_shape()[plan.axis()..];
    ElementsPlan::new(&plan.data_shape()[plan.axis()..], tail, tail, 0).map(Some)
}

/// The data slab of every indices slab, increasing.
fn slab_targets<I: IndexValue>(token: &CheckedElementsIndices<'_, I>, g: &Geometry) -> Vec<usize> {
    let plan = token.plan();
    let axis = plan.axis();
    let outer = &plan.indices_shape()[..axis];
    let strides = crate::row_major_strides(&plan.data_shape()[..axis]);
    let mut coords = vec![0usize; axis];
    let mut targets = Vec::with_capacity(g.slabs);
    for _ in 0..g.slabs {
        targets.push(coords.iter().zip(&strides).map(|(c, s)| c * s).sum());
        for d in (0..axis).rev() {
            coords[d] += 1;
            if coords[d] < outer[d] {
                break;
            }
            coords[d] = 0;
        }
    }
    targets
}

/// Columns per band under `schedule`'s blocking rule, or `None` when
/// the scatter is not blocked.
fn band_width<T>(g: &Geometry, schedule: &Schedule) -> Option<usize> {
    let size = std::mem::size_of::<T>().max(1);
    let width = schedule.block_bytes / g.dim.saturating_mul(size);
    let blocked = g.inner_full
        && g.data_slab.saturating_mul(size) >= schedule.blocked_from_bytes
        && width >= schedule.min_tile_columns
        && width < g.inner;
    blocked.then_some(width.max(1))
}

/// How the work splits into tasks (one part: serial, maybe blocked),
/// or `None` for the plain serial kernel.
fn parts<T>(
    g: &Geometry,
    par: &dyn Parallel,
    schedule: &Schedule,
    bytes: usize,
    data_addr: usize,
) -> Option<Parts> {
    let band = band_width::<T>(g, schedule);
    let tile = band.unwrap_or(g.inner);
    let size = std::mem::size_of::<T>().max(1);
    let columns = g.inner_full
        && g.inner >= 2
        && g.inner.saturating_mul(size) >= schedule.min_split_row_bytes.saturating_mul(2);
    let units = if g.slabs >= par.threads() || !columns {
        g.slabs
    } else {
        g.inner
    };
    let mut tasks = schedule.tasks(par, bytes, units);
    if units == g.inner {
        // Each task's share of a row at least `min_split_row_bytes`.
        tasks = tasks.min((g.inner * size / schedule.min_split_row_bytes.max(1)).max(1));
    }
    if tasks == 1 && band.is_none() {
        return None;
    }
    if g.slabs >= tasks || !columns {
        let tasks = tasks.min(g.slabs);
        let b = even_bounds(g.slabs, tasks);
        return Some(Parts::Slabs(
            b.windows(2)
                .map(|w| SlabPart {
                    k0: w[0],
                    k1: w[1],
                    tile,
                })
                .collect(),
        ));
    }
    // Bands of whole cache lines when there are enough columns, cut
    // where the output's lines start (rows of a multiple of 64 bytes
    // all start at the same place in a line): tasks sharing a line
    // would invalidate it in each other's cache on every row.
    let line = (64 / size).max(1);
    let unit = if g.inner >= line * tasks { line } else { 1 };
    let first = if unit > 1 && (g.inner * size).is_multiple_of(64) && data_addr.is_multiple_of(size)
    {
        (64 - data_addr % 64) % 64 / size
    } else {
        0
    };
    let mut bounds: Vec<usize> = even_bounds(g.inner.div_ceil(unit), tasks)
        .into_iter()
        .map(|b| (b * unit).min(g.inner))
        .collect();
    let last = bounds.len() - 1;
    for i in 1..last {
        let b = bounds[i];
        let aligned = b - (b + unit - first) % unit;
        bounds[i] = aligned.max(bounds[i - 1]);
    }
    Some(Parts::Columns(
        bounds
            .windows(2)
            .map(|w| ColumnPart {
                c0: w[0],
                c1: w[1],
                tile,
            })
            .collect(),
    ))
}

impl<I: IndexValue> SplitKernels for CheckedElementsIndices<'_, I> {
    /// [`CheckedElementsIndices::apply`] in place on `par` (or block by block), bit for bit
    /// the serial result. Errors: those of the serial apply, before any
    /// write.
    fn apply_split<T: Element>(
        &self,
        data: &mut [T],
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<(), ScatterError> {
        let (token, par, schedule) = (self, exec.par, exec.schedule);
        token.check_buffers(data, updates)?;
        let bytes = updates
            .len()
            .saturating_mul(std::mem::size_of::<T>() + std::mem::size_of::<I>());
        let addr = data.as_ptr() as usize;
        let plan =
            geometry(token).and_then(|g| Some((parts::<T>(&g, par, schedule, bytes, addr)?, g)));
        let Some((parts, g)) = plan else {
            // Small, serial or empty.
            return token.apply_serial(data, updates, reduction);
        };
        run_in_place(token, &g, &parts, data, updates, reduction, par)
    }

    /// `dst = src` then [`apply_split`], bit for bit. Slab parts:
    /// each task copies the part of `dst` it owns, slab by slab, before
    /// scattering into it. Column parts (which interleave): `dst` copied in
    /// contiguous chunks first, then scattered into in place. Serially,
    /// [`crate::fused_copy::write_copying_elements`].
    ///
    /// Contract (what [`CheckedElementsIndices::apply`] hands `dst` back on): on `Ok`, every
    /// element of `dst` has been written, in the serial (`write_copying_elements`,
    /// its proof there), through a whole copy (`write_copy_par`, `copy_par`)
    /// before an in-place run, or by a run over `Copying` parts, each
    /// filled whole (`fill_parts`).
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
        check_len(Input::Data, token.plan().data_shape(), dst.len(), src.len())?;
        let bytes = dst.len().saturating_mul(std::mem::size_of::<T>());
        let addr = dst.as_ptr() as usize;
        let plan =
            geometry(token).and_then(|g| Some((parts::<T>(&g, par, schedule, bytes, addr)?, g)));
        let Some((parts, g)) = plan else {
            if copy_tasks::<T>(par, schedule, dst.len()) > 1 {
                // The scatter stays serial, but the copy (most of a large
                // copying scatter's time) need not: the same values, then
                // the serial apply, bit for bit the fused result.
                let data = write_copy_par(par, schedule, dst, src);
                return token.apply_serial(data, updates, reduction);
            }
            return crate::fused_copy::write_copying_elements(token, dst, src, updates, reduction);
        };
        match &parts {
            Parts::Columns(columns) => {
                let data = copy_par(par, dst, src, columns.len());
                run_in_place(token, &g, &parts, data, updates, reduction, par)
            }
            Parts::Slabs(slabs) => run_slabs(
                token,
                &g,
                slabs,
                Copying { dst, src },
                updates,
                reduction,
                par,
            ),
        }
    }
}

/// Applies `updates` in place on the tasks `parts` describe.
fn run_in_place<T: Element, I: IndexValue>(
    token: &CheckedElementsIndices<'_, I>,
    g: &Geometry,
    parts: &Parts,
    data: &mut [T],
    updates: &[T],
    reduction: Reduction,
    par: &dyn Parallel,
) -> Result<(), ScatterError> {
    let parts = match parts {
        Parts::Slabs(slabs) => return run_slabs(token, g, slabs, data, updates, reduction, par),
        Parts::Columns(columns) => columns,
    };
    let targets = slab_targets(token, g);
    with_combiner(
        reduction,
        ColumnsRun {
            token,
            g,
            targets: &targets,
            parts,
            par,
            data,
            updates,
        },
    );
    Ok(())
}

/// Applies `updates` on slab parts, in place or copying (`data`).
fn run_slabs<T: Element, O: Output<T>, I: IndexValue>(
    token: &CheckedElementsIndices<'_, I>,
    g: &Geometry,
    parts: &[SlabPart],
    data: O,
    updates: &[T],
    reduction: Reduction,
    par: &dyn Parallel,
) -> Result<(), ScatterError> {
    let targets = slab_targets(token, g);
    let sub = slab_plan(token, g)?;
    with_combiner(
        reduction,
        SlabsRun {
            sub: sub.as_ref(),
            token,
            g,
            targets: &targets,
            parts,
            par,
            data,
            updates,
        },
    );
    Ok(())
}

/// One parallel application over slab parts, run with a combining
/// function.
struct SlabsRun<'r, 't, T, I, O> {
    /// The plan of one slab, when the indices do not cover every inner
    /// dimension.
    sub: Option<&'r ElementsPlan>,
    token: &'r CheckedElementsIndices<'t, I>,
    g: &'r Geometry,
    targets: &'r [usize],
    parts: &'r [SlabPart],
    par: &'r dyn Parallel,
    /// In place, or copying: each slab is copied (with the slabs before it
    /// no update writes) as its task takes it.
    data: O,
    updates: &'r [T],
}

impl<T: Element, I: IndexValue, O: Output<T>> WithCombiner<T> for SlabsRun<'_, '_, T, I, O> {
    type Out = ();

    fn call<F: Fn(&mut T, &T) + Copy + Send + Sync>(self, f: F) {
        let SlabsRun {
            sub,
            token,
            g,
            targets,
            parts,
            par,
            data,
            updates,
        } = self;
        // Task t owns data slabs from its first target (0 for the first
        // task) to the next task's first target (the end for the last):
        // contiguous, disjoint, in order.
        let mut bounds: Vec<usize> = parts.iter().map(|p| targets[p.k0] * g.data_slab).collect();
        bounds[0] = 0;
        bounds.push(data.len());
        let task = SlabsTask {
            sub,
            indices: token.indices,
            g,
            targets,
            parts,
            updates,
            f,
        };
        data.for_each_part(par, &bounds, &task);
    }
}

/// What the task owning a range of slabs does, with its combining function.
struct SlabsTask<'r, T, I, F> {
    sub: Option<&'r ElementsPlan>,
    indices: &'r [I],
    g: &'r Geometry,
    targets: &'r [usize],
    parts: &'r [SlabPart],
    updates: &'r [T],
    f: F,
}

impl<T: Element, I: IndexValue, F: Fn(&mut T, &T) + Copy + Send + Sync> PartTask<T>
    for SlabsTask<'_, T, I, F>
{
    fn run<B: Blocks<T> + ?Sized>(&self, t: usize, start: usize, part: &mut B) {
        let SlabsTask {
            sub,
            indices,
            g,
            targets,
            parts,
            updates,
            f,
        } = *self;
        let SlabPart { k0, k1, tile } = parts[t];
        for (k, &target) in targets.iter().enumerate().take(k1).skip(k0) {
            let base = target * g.data_slab - start;
            let slab = part.block(base, base + g.data_slab);
            let idx = &indices[k * g.indices_slab..(k + 1) * g.indices_slab];
            let upd = &updates[k * g.indices_slab..(k + 1) * g.indices_slab];
            match sub {
                Some(sub) => slab_plain(sub, slab, idx, upd, f),
                None => {
                    let slab = DisjointSlice::new(slab);
                    // SAFETY: this task owns the whole slab.
                    unsafe { bands(&slab, 0, idx, upd, g, 0, g.inner, tile, f) }
                }
            }
        }
    }
}

/// One parallel application over column parts, in place, run with a
/// combining function.
struct ColumnsRun<'r, 't, T, I> {
    token: &'r CheckedElementsIndices<'t, I>,
    g: &'r Geometry,
    targets: &'r [usize],
    parts: &'r [ColumnPart],
    par: &'r dyn Parallel,
    data: &'r mut [T],
    updates: &'r [T],
}

impl<T: Element, I: IndexValue> WithCombiner<T> for ColumnsRun<'_, '_, T, I> {
    type Out = ();

    fn call<F: Fn(&mut T, &T) + Copy + Send + Sync>(self, f: F) {
        let ColumnsRun {
            token,
            g,
            targets,
            parts,
            par,
            data,
            updates,
        } = self;
        let indices = token.indices;
        let shared = DisjointSlice::new(data);
        par.for_each(parts.len(), &|t| {
            let ColumnPart { c0, c1, tile } = parts[t];
            for (k, &target) in targets.iter().enumerate() {
                let idx = &indices[k * g.indices_slab..(k + 1) * g.indices_slab];
                let upd = &updates[k * g.indices_slab..(k + 1) * g.indices_slab];
                // SAFETY: task t writes only columns c0..c1 of each slab;
                // the parts' column ranges are disjoint.
                unsafe { bands(&shared, target * g.data_slab, idx, upd, g, c0, c1, tile, f) }
            }
        });
    }
}

/// Applies one slab's updates (`idx`, `upd`: `[n, inner]`, the indices
/// covering every inner dimension) to columns `c0..c1` of the data slab at
/// `base` of `dst`, `tile` columns at a time, each band in increasing `r`.
///
/// # Safety
/// The indices are checked against the plan, `base + data_slab <=
/// dst.len()`, and no other task accesses columns `c0..c1` of this slab
/// while this runs.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn bands<T, I: IndexValue>(
    dst: &DisjointSlice<T>,
    base: usize,
    idx: &[I],
    upd: &[T],
    g: &Geometry,
    c0: usize,
    c1: usize,
    tile: usize,
    f: impl Fn(&mut T, &T),
) {
    debug_assert!(base + g.data_slab <= dst.len());
    let (dim, inner) = (g.dim as i64, g.inner);
    // Writes go through a local pointer: through `dst` the compiler would
    // reload the base after every store.
    let ptr = dst.as_mut_ptr();
    if inner == 1 {
        // The last axis: one column, the updates in order.
        for (i, u) in idx.iter().zip(upd) {
            let i = i.to_i64();
            let j = if i < 0 { i + dim } else { i } as usize;
            // SAFETY: `j < dim` (checked index): inside the slab, which is
            // inside `dst`; the slab's only column is this task's.
            unsafe { f(&mut *ptr.add(base + j), u) }
        }
        return;
    }
    // A blocked band in place spans `dim` rows a whole row apart, a page
    // each for rows of 4 KiB or more, so its random writes miss the TLB
    // as well as L1. Staged (copied into a contiguous buffer, scattered
    // into there, copied back), the same writes land in a few contiguous
    // pages, and the two copies cost less than the misses they save (see
    // docs/performance.md, "Why the mechanisms exist"). Only for types
    // with no drop glue: the band is copied bitwise and both copies exist
    // for a while.
    let staged = Mechanism::StagedBands.is_on() && tile < inner && !std::mem::needs_drop::<T>();
    // The widest band this call applies (the last may be narrower).
    let widest = tile.min(c1 - c0);
    // A band (or a task's columns) reads part of each row of the indices
    // and updates, a row apart: a page apart or more for long rows, where
    // the hardware prefetchers lose the stream and every row waits on a
    // miss. Asking for those rows ahead overlaps the misses (see
    // docs/performance.md, "Why the mechanisms exist").
    let (t_bytes, i_bytes) = (std::mem::size_of::<T>(), std::mem::size_of::<I>());
    let strided = Mechanism::Prefetch.is_on()
        && widest < inner
        && inner.saturating_mul(t_bytes.max(i_bytes)) >= crate::prefetch::STRIDED_FROM_BYTES;
    let mut stage: Vec<MaybeUninit<T>> =
        Vec::with_capacity(if staged { g.dim * widest } else { 0 });
    let s = stage.as_mut_ptr() as *mut T;
    let mut b0 = c0;
    while b0 < c1 {
        let b1 = (b0 + tile).min(c1);
        let w = b1 - b0;
        let (rows, stride) = if staged {
            // SAFETY: rows `0..dim` of columns `b0..b1` are inside the slab
            // (this task's columns); the stage holds `dim * w` elements;
            // `T` has no drop glue, so a bitwise copy is a value.
            unsafe { copy_rows(ptr.add(base + b0), inner, s, w, g.dim, w) };
            (s, w)
        } else {
            // SAFETY: `base + b0` is the band's first column in row 0 of
            // the slab, inside the allocation `ptr` points into.
            (unsafe { ptr.add(base + b0) }, inner)
        };
        for (r, (ri, ru)) in idx
            .chunks_exact(inner)
            .zip(upd.chunks_exact(inner))
            .enumerate()
        {
            if strided {
                // The band's part of the row `DISTANCE` ahead; the hint
                // cannot fault, so past the last row (or a wrapped
                // address) is harmless too.
                let ahead = r
                    .wrapping_add(crate::prefetch::DISTANCE)
                    .wrapping_mul(inner)
                    .wrapping_add(b0);
                crate::prefetch::lines(idx.as_ptr().wrapping_add(ahead), w * i_bytes);
                crate::prefetch::lines(upd.as_ptr().wrapping_add(ahead), w * t_bytes);
            }
            for (c, (i, u)) in ri[b0..b1].iter().zip(&ru[b0..b1]).enumerate() {
                let i = i.to_i64();
                let j = if i < 0 { i + dim } else { i } as usize;
                // SAFETY: `j < dim` (checked index) and `c < w`: row `j`,
                // column `b0 + c` of the band, in place (inside the slab,
                // a column in `c0..c1`, this task's) or staged (copied in
                // above).
                unsafe { f(&mut *rows.add(j * stride + c), u) }
            }
        }
        if staged {
            // SAFETY: the copy in above, back: the same rows and columns of
            // the slab, from the stage it filled.
            unsafe { copy_rows(s, w, ptr.add(base + b0), inner, g.dim, w) };
        }
        b0 = b1;
    }
}

/// Copies `rows` rows of `w` elements, `src_stride` apart at `src`, to
/// rows `dst_stride` apart at `dst`.
///
/// # Safety
/// Every row read is inside `src`'s allocation, every row written inside
/// `dst`'s, and they do not overlap.
#[inline(always)]
unsafe fn copy_rows<T>(
    src: *const T,
    src_stride: usize,
    dst: *mut T,
    dst_stride: usize,
    rows: usize,
    w: usize,
) {
    for r in 0..rows {
        // SAFETY: the caller's contract.
        unsafe {
            std::ptr::copy_nonoverlapping(src.add(r * src_stride), dst.add(r * dst_stride), w)
        }
    }
}

/// One slab whose indices do not cover every inner dimension: the serial
/// visit of the slab's own plan (`sub`), bounds-checked.
fn slab_plain<T, I: IndexValue>(
    sub: &ElementsPlan,
    slab: &mut [T],
    idx: &[I],
    upd: &[T],
    f: impl Fn(&mut T, &T),
) {
    let part = CheckedElementsIndices {
        plan: sub,
        indices: idx,
    };
    part.visit(|o, p| f(&mut slab[o], &upd[p]));
}

impl ElementsPlan {
    /// Reads every index once and returns the proof that each is in range;
    /// `Err` names the first one (row-major) out of `[-s, s - 1]` on the
    /// axis of size `s`, or an indices buffer whose length is not its
    /// shape's.
    ///
    /// On a parallel `exec` (by its schedule's split rule over the bytes of
    /// the indices) each task reads a contiguous range of the indices; when
    /// one finds an index out of range (or the host skipped one), the
    /// serial check runs again and names the first, as it alone would: the
    /// same token, or the same error, at any thread count.
    pub fn check_indices<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        exec: Execution<'_>,
    ) -> Result<CheckedElementsIndices<'a, I>, ScatterError> {
        check_split(self, indices, exec.par, exec.schedule)
    }
}

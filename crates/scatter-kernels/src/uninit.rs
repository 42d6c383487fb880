//! Writing into memory that may not be initialized.
//!
//! A copying scatter's destination is `&mut [MaybeUninit<T>]`: a fresh
//! output buffer has never been written, and a `&mut [T]` over it would be
//! undefined behaviour for every element type (an integer or a float must
//! be initialized). The kernels never form one. They write through the
//! primitives here, each of which hands back what it wrote as `&mut [T]`:
//! [`write_copy`] and [`write_copy_in_pieces`] for one range,
//! [`Filling`] for a destination filled front to back block by block
//! (copied from the source up to each block, then scattered into), and
//! [`fill_parts`] for such destinations cut into parts on a
//! [`Parallel`] host. The `unsafe` of this crate's uninitialized memory is
//! in this file, each block with its proof.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::parallel::{Blocks, Output, PartTask, for_each_part, split_at_bounds};
use crate::{Parallel, Schedule};

/// Bytes per `memcpy` call of the copies in pieces ([`crate::copy_in_pieces`]
/// says why).
const COPY_PIECE: usize = 64 << 10;

/// Elements of `T` in one [`COPY_PIECE`].
pub(crate) fn piece_len<T>() -> usize {
    (COPY_PIECE / std::mem::size_of::<T>().max(1)).max(1)
}

/// `dst = src`, then `dst` as the values it now holds. Panics when the
/// lengths differ, as `copy_from_slice` does (the kernels check every
/// length first).
///
/// ```
/// use std::mem::MaybeUninit;
/// let mut out = [MaybeUninit::<f32>::uninit(); 3];
/// let written: &mut [f32] = scatter_kernels::write_copy(&mut out, &[1.0, 2.0, 3.0]);
/// written[1] += 0.5;
/// assert_eq!(written, [1.0, 2.5, 3.0]);
/// ```
pub fn write_copy<'a, T: Copy>(dst: &'a mut [MaybeUninit<T>], src: &[T]) -> &'a mut [T] {
    copy_pieces(dst, src, usize::MAX)
}

/// [`write_copy`] in 64 KiB pieces, for a destination that may be warm in
/// cache (see [`crate::copy_in_pieces`]).
pub fn write_copy_in_pieces<'a, T: Copy>(dst: &'a mut [MaybeUninit<T>], src: &[T]) -> &'a mut [T] {
    copy_pieces(dst, src, piece_len::<T>())
}

/// `dst = src`, `piece` elements per `memcpy`; `dst` written.
#[inline]
fn copy_pieces<'a, T: Copy>(dst: &'a mut [MaybeUninit<T>], src: &[T], piece: usize) -> &'a mut [T] {
    assert_eq!(dst.len(), src.len(), "write_copy: lengths differ");
    let (len, piece) = (dst.len(), piece.max(1));
    let to = dst.as_mut_ptr().cast::<T>();
    let from = src.as_ptr();
    let mut at = 0;
    while at < len {
        let n = piece.min(len - at);
        // SAFETY: `at + n <= len`, and both slices hold `len` elements, so
        // both ranges are in bounds; `dst` is borrowed exclusively and
        // `src` shared, so they do not overlap; `MaybeUninit<T>` has the
        // layout of `T`.
        unsafe { std::ptr::copy_nonoverlapping(from.add(at), to.add(at), n) };
        at += n;
    }
    // SAFETY: the loop wrote every element of `dst` with a copy of a `T`
    // (`T: Copy`, so the bits are a valid `T` and nothing is dropped);
    // the returned slice reborrows `dst` for `'a`, exclusively.
    unsafe { assume_written(dst) }
}

/// `dst` as the values written into it.
///
/// # Safety
/// Every element of `dst` has been written with a valid `T`.
pub(crate) unsafe fn assume_written<T>(dst: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: `MaybeUninit<T>` has the layout of `T`, and the caller
    // promises every element is initialized; same pointer, same length,
    // same exclusive borrow.
    unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<T>(), dst.len()) }
}

/// An uninitialized destination filled front to back from `src` (same
/// length): [`Filling::block`] copies `src` up to the end of the block
/// it is asked for and hands the block back as values, to scatter into;
/// [`Filling::finish`] copies the rest. Everything before
/// [`Filling::written`] has been written.
pub(crate) struct Filling<'a, T> {
    dst: &'a mut [MaybeUninit<T>],
    src: &'a [T],
    /// `dst[..at]` is written.
    at: usize,
}

impl<'a, T: Copy> Filling<'a, T> {
    pub(crate) fn new(dst: &'a mut [MaybeUninit<T>], src: &'a [T]) -> Filling<'a, T> {
        debug_assert_eq!(dst.len(), src.len());
        Filling { dst, src, at: 0 }
    }

    /// How far the destination is written.
    #[cfg(test)]
    pub(crate) fn written(&self) -> usize {
        self.at
    }

    /// `[lo, hi)` holding `src`'s values: what lies between the end of the
    /// written part and `hi` is copied first, whole (one `memcpy`). A block
    /// before the end of the written part is copied again.
    pub(crate) fn block(&mut self, lo: usize, hi: usize) -> &mut [T] {
        let from = lo.min(self.at);
        self.at = self.at.max(hi);
        let copied = write_copy(&mut self.dst[from..hi], &self.src[from..hi]);
        &mut copied[lo - from..]
    }

    /// [`Self::block`] with the copy in 64 KiB pieces.
    pub(crate) fn block_in_pieces(&mut self, lo: usize, hi: usize) -> &mut [T] {
        let from = lo.min(self.at);
        self.at = self.at.max(hi);
        let copied = write_copy_in_pieces(&mut self.dst[from..hi], &self.src[from..hi]);
        &mut copied[lo - from..]
    }

    /// Copies the rest (in pieces): the whole destination is written.
    pub(crate) fn finish(self) {
        let at = self.at;
        write_copy_in_pieces(&mut self.dst[at..], &self.src[at..]);
    }
}

/// Fills `dst` from `src` (same length) on `par`: the part
/// `dst[bounds[i]..bounds[i + 1]]` by task `i`, which runs
/// `task(i, bounds[i], &mut filling)` on its part (taking blocks of it,
/// front to back, offsets relative to the part) and then copies what the
/// task left ([`Filling::finish`]). `bounds` increase from 0 to
/// `dst.len()`. Returns `dst` written whole.
///
/// A host that breaks [`Parallel`]'s contract (a task never run, a task's
/// panic swallowed) would leave parts unwritten: those parts are filled
/// here, on the calling thread, so `dst` is written whatever the host
/// does.
pub(crate) fn fill_parts<'a, T: Copy + Send + Sync>(
    par: &dyn Parallel,
    dst: &'a mut [MaybeUninit<T>],
    src: &[T],
    bounds: &[usize],
    task: impl Fn(usize, usize, &mut Filling<'_, T>) + Sync,
) -> &'a mut [T] {
    assert!(
        bounds.first() == Some(&0)
            && bounds.last() == Some(&dst.len())
            && bounds.is_sorted()
            && src.len() == dst.len(),
        "fill_parts: parts must cover the destination"
    );
    let run = |i: usize, part: &mut [MaybeUninit<T>], start: usize| {
        let mut filling = Filling::new(part, &src[start..start + part.len()]);
        task(i, start, &mut filling);
        filling.finish();
    };
    let done: Vec<AtomicBool> = bounds.windows(2).map(|_| AtomicBool::new(false)).collect();
    let parts = split_at_bounds(dst, bounds)
        .into_iter()
        .zip(bounds.iter().copied())
        .collect();
    for_each_part(par, parts, |i, part, start| {
        run(i, part, start);
        done[i].store(true, Ordering::Release);
    });
    for (i, w) in bounds.windows(2).enumerate() {
        if !done[i].load(Ordering::Acquire) {
            run(i, &mut dst[w[0]..w[1]], w[0]);
        }
    }
    // SAFETY: the parts `bounds` cut cover `dst` (asserted above), and
    // each part was written whole by `run` (its `Filling` writes `[0, at)`
    // as it goes and `finish` writes `[at, len)`): on a task, which set its
    // `done` flag after `run` returned (the Release store pairs with the
    // Acquire load above, so those writes happen before this read), or in
    // the loop above.
    unsafe { assume_written(dst) }
}

/// `dst = src` (equal lengths) on `par` when [`Schedule`]'s split rule
/// holds for the bytes copied (contiguous chunks, one per task, each in
/// 64 KiB pieces), else [`write_copy_in_pieces`] on the calling thread:
/// `dst` written. A copy that no scatter is fused into (or one whose
/// scatter cannot be split) still takes every core's bandwidth: one core
/// alone leaves memory bandwidth unused (see docs/performance.md, "Why
/// the mechanisms exist").
///
/// ```
/// use std::mem::MaybeUninit;
/// use scatter_kernels::{Schedule, Serial, write_copy_par};
/// let mut out = vec![MaybeUninit::<i32>::uninit(); 5];
/// let written = write_copy_par(&Serial, &Schedule::DEFAULT, &mut out, &[1, 2, 3, 4, 5]);
/// assert_eq!(written, [1, 2, 3, 4, 5]);
/// ```
pub fn write_copy_par<'a, T: Copy + Send + Sync>(
    par: &dyn Parallel,
    schedule: &Schedule,
    dst: &'a mut [MaybeUninit<T>],
    src: &[T],
) -> &'a mut [T] {
    assert_eq!(dst.len(), src.len(), "write_copy_par: lengths differ");
    let tasks = copy_tasks::<T>(par, schedule, dst.len());
    if tasks == 1 {
        return write_copy_in_pieces(dst, src);
    }
    copy_par(par, dst, src, tasks)
}

/// The tasks [`write_copy_par`] copies `len` elements of `T` in: the
/// split rule over the bytes copied, one element the smallest unit.
pub(crate) fn copy_tasks<T>(par: &dyn Parallel, schedule: &Schedule, len: usize) -> usize {
    schedule.tasks(par, len.saturating_mul(std::mem::size_of::<T>()), len)
}

/// `dst = src` on `par`, in `tasks` contiguous chunks copied in pieces:
/// `dst` written.
pub(crate) fn copy_par<'a, T: Copy + Send + Sync>(
    par: &dyn Parallel,
    dst: &'a mut [MaybeUninit<T>],
    src: &[T],
    tasks: usize,
) -> &'a mut [T] {
    let bounds = crate::parallel::even_bounds(dst.len(), tasks);
    fill_parts(par, dst, src, &bounds, |_, _, _| {})
}

impl<T: Copy> Blocks<T> for Filling<'_, T> {
    #[inline(always)]
    fn block(&mut self, lo: usize, hi: usize) -> &mut [T] {
        self.block_in_pieces(lo, hi)
    }
}

/// The output of a copying run: `dst` may hold anything, and every part
/// is filled from `src` (same length) block by block as its task takes
/// them, the rest after the task ([`fill_parts`]): on return, `dst` is
/// written whole.
pub(crate) struct Copying<'a, T> {
    pub(crate) dst: &'a mut [MaybeUninit<T>],
    pub(crate) src: &'a [T],
}

impl<T: Copy + Send + Sync> Output<T> for Copying<'_, T> {
    const COPIES: bool = true;

    fn len(&self) -> usize {
        self.dst.len()
    }

    fn for_each_part(self, par: &dyn Parallel, bounds: &[usize], task: &impl PartTask<T>) {
        fill_parts(par, self.dst, self.src, bounds, |i, start, part| {
            task.run(i, start, part)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Serial;

    /// Tasks the host never runs: a host breaking `Parallel`'s contract.
    struct Skips(Vec<usize>);

    impl Parallel for Skips {
        fn threads(&self) -> usize {
            4
        }

        fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
            (0..tasks).filter(|i| !self.0.contains(i)).for_each(task)
        }
    }

    /// A fresh allocation nothing wrote (valgrind sees it as undefined).
    fn uninit(n: usize) -> Vec<MaybeUninit<i32>> {
        Box::<[i32]>::new_uninit_slice(n).into_vec()
    }

    #[test]
    fn write_copy_hands_back_the_copied_values() {
        let src: Vec<i32> = (0..100_000).collect();
        let mut dst = uninit(src.len());
        assert_eq!(write_copy_in_pieces(&mut dst, &src), &src[..]);
        let mut dst = uninit(3);
        assert_eq!(write_copy(&mut dst, &[4, 5, 6]), [4, 5, 6]);
        assert_eq!(write_copy(&mut uninit(0), &[]), [0i32; 0]);
    }

    #[test]
    fn a_filling_copies_the_gaps_between_its_blocks_and_the_rest() {
        let src: Vec<i32> = (0..10).collect();
        let mut dst = uninit(10);
        let out = fill_parts(&Serial, &mut dst, &src, &[0, 10], |_, _, filling| {
            filling.block(2, 4).iter_mut().for_each(|v| *v *= 10);
            assert_eq!(filling.written(), 4);
            filling.block_in_pieces(6, 8).fill(-1);
            // Taken again: copied again.
            assert_eq!(filling.block(3, 5), [3, 4]);
            assert_eq!(filling.written(), 8);
        });
        assert_eq!(out, [0, 1, 20, 3, 4, 5, -1, -1, 8, 9]);
    }

    #[test]
    fn parts_a_host_never_ran_are_filled_on_the_calling_thread() {
        let src: Vec<i32> = (0..40).collect();
        let bounds = [0, 10, 10, 25, 40];
        for par in [&Skips(vec![0, 3]) as &dyn Parallel, &Skips(vec![]), &Serial] {
            let mut dst = uninit(40);
            let out = fill_parts(par, &mut dst, &src, &bounds, |i, _, part| {
                if i == 3 {
                    part.block(0, 1)[0] = -1;
                }
            });
            let mut want = src.clone();
            want[25] = -1;
            assert_eq!(out, want);
        }
        let mut dst = uninit(40);
        assert_eq!(copy_par(&Skips(vec![1]), &mut dst, &src, 3), &src[..]);
    }
}

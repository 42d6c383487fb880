//! The two arguments every `apply` takes besides its updates: where the
//! result goes ([`Destination`]) and how the work may run ([`Execution`]);
//! and the `apply` of both checked tokens, which hands the destination to
//! the token's split kernel for its kind (one writer, [`write`]).

use std::mem::MaybeUninit;

use crate::uninit::assume_written;
use crate::{
    CheckedElementsIndices, CheckedNdIndices, Element, IndexValue, Parallel, Reduction,
    ScatterError, Schedule, Serial,
};

/// How a kernel may run: the host's threads ([`Parallel`]) and the
/// thresholds that decide when it splits its work or applies it block by
/// block ([`Schedule`]).
///
/// Whatever the execution, a kernel's result is the serial one bit for bit
/// and its errors are the serial ones, before any write
/// (`crate::parallel`). [`Execution::SERIAL`] (the [`Default`]) is the
/// plain serial kernel: no split, no blocking, no sort.
#[derive(Clone, Copy)]
pub struct Execution<'a> {
    /// The host's threads; [`Serial`] runs everything on the caller's.
    pub par: &'a dyn Parallel,
    /// When to split, block or sort.
    pub schedule: &'a Schedule,
}

impl Execution<'static> {
    /// The plain serial kernel: [`Serial`] with [`Schedule::SERIAL`].
    pub const SERIAL: Execution<'static> = Execution {
        par: &Serial,
        schedule: &Schedule::SERIAL,
    };
}

impl<'a> Execution<'a> {
    /// On `par`, with [`Schedule::DEFAULT`]'s thresholds.
    pub fn on(par: &'a dyn Parallel) -> Execution<'a> {
        Execution {
            par,
            schedule: &Schedule::DEFAULT,
        }
    }

    /// The same threads with `schedule`'s thresholds.
    pub fn with_schedule(self, schedule: &'a Schedule) -> Execution<'a> {
        Execution {
            par: self.par,
            schedule,
        }
    }
}

impl Default for Execution<'static> {
    fn default() -> Execution<'static> {
        Execution::SERIAL
    }
}

impl std::fmt::Debug for Execution<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Execution")
            .field("threads", &self.par.threads())
            .field("schedule", self.schedule)
            .finish()
    }
}

/// A copy of `data` into `out`, fused with the scatter: the destination of
/// an `apply` that writes `out = data` with the updates applied, in one
/// pass where that pays (ScatterElements slab by slab, ScatterND around
/// its slices or block by block).
///
/// `out` may hold anything on entry, a buffer never written included: it
/// is `&mut [MaybeUninit<T>]`, written through [`crate::write_copy`] and
/// its kin, never read before it is written, and the `apply` hands it
/// back as `&mut [T]` only once every element is written. An initialized
/// buffer is no destination:
///
/// ```compile_fail
/// use scatter_kernels::{CopyOf, ElementsPlan, Execution, Reduction};
/// let plan = ElementsPlan::new(&[4], &[1], &[1], 0).unwrap();
/// let token = plan.check_indices(&[1i64], Execution::SERIAL).unwrap();
/// let mut out = vec![0f32; 4];
/// let dst = CopyOf { data: &[1.0; 4], out: &mut out };
/// token.apply(dst, &[5.0], Reduction::None, Execution::SERIAL);
/// ```
///
/// ```
/// use std::mem::MaybeUninit;
/// use scatter_kernels::{CopyOf, ElementsPlan, Execution, Reduction};
/// let plan = ElementsPlan::new(&[4], &[1], &[1], 0).unwrap();
/// let token = plan.check_indices(&[1i64], Execution::SERIAL).unwrap();
/// let mut out = vec![MaybeUninit::<f32>::uninit(); 4];
/// let dst = CopyOf { data: &[1.0; 4], out: &mut out };
/// let written = token.apply(dst, &[5.0], Reduction::None, Execution::SERIAL).unwrap();
/// assert_eq!(written, [1.0, 5.0, 1.0, 1.0]);
/// ```
#[derive(Debug)]
pub struct CopyOf<'s, 'd, T> {
    /// The data the scatter reads (the op's `data` input).
    pub data: &'s [T],
    /// Where the output is written, of `data`'s length.
    pub out: &'d mut [MaybeUninit<T>],
}

/// Where an `apply` writes: in place (`&mut [T]`, `&mut Vec<T>` or
/// `&mut [T; N]`), or into a copy of the data fused with the scatter
/// ([`CopyOf`], element types that are `Copy`). Implemented by those only.
///
/// The `apply` returns the destination written, as `&mut [T]`: the data
/// scattered into in place, or `CopyOf::out` once every element of it
/// holds its value.
pub trait Destination<'d, T>: sealed::Visit<'d, T> {}

impl<'d, T: Element> Destination<'d, T> for &'d mut [T] {}
impl<'d, T: Element> Destination<'d, T> for &'d mut Vec<T> {}
impl<'d, T: Element, const N: usize> Destination<'d, T> for &'d mut [T; N] {}
impl<'d, T: Element + Copy> Destination<'d, T> for CopyOf<'_, 'd, T> {}

/// What the kernels see of a [`Destination`]: the destination handed to
/// the path that writes it, with `T: Copy` known on the copying one.
pub(crate) mod sealed {
    use std::mem::MaybeUninit;

    use crate::{CopyOf, Element};

    /// A kernel's two ways to write, one per kind of destination.
    pub trait Writer<'d, T> {
        /// What the kernel returns.
        type Out;
        /// Scatter into `data` in place.
        fn in_place(self, data: &'d mut [T]) -> Self::Out;
        /// Write `out = data` and scatter into `out`, fused.
        fn copy_of(self, data: &[T], out: &'d mut [MaybeUninit<T>]) -> Self::Out
        where
            T: Copy;
    }

    /// A destination handing itself to the matching [`Writer`] method.
    pub trait Visit<'d, T> {
        /// `w.in_place` or `w.copy_of`.
        fn visit<W: Writer<'d, T>>(self, w: W) -> W::Out;
    }

    impl<'d, T: Element> Visit<'d, T> for &'d mut [T] {
        fn visit<W: Writer<'d, T>>(self, w: W) -> W::Out {
            w.in_place(self)
        }
    }

    impl<'d, T: Element> Visit<'d, T> for &'d mut Vec<T> {
        fn visit<W: Writer<'d, T>>(self, w: W) -> W::Out {
            w.in_place(self.as_mut_slice())
        }
    }

    impl<'d, T: Element, const N: usize> Visit<'d, T> for &'d mut [T; N] {
        fn visit<W: Writer<'d, T>>(self, w: W) -> W::Out {
            w.in_place(self.as_mut_slice())
        }
    }

    impl<'d, T: Element + Copy> Visit<'d, T> for CopyOf<'_, 'd, T> {
        fn visit<W: Writer<'d, T>>(self, w: W) -> W::Out {
            w.copy_of(self.data, self.out)
        }
    }
}

/// A checked token of indices, as a host generic over the op sees it:
/// [`crate::CheckedElementsIndices`] and [`crate::CheckedNdIndices`].
pub trait CheckedIndices {
    /// Whether the check sorted the updates by destination block (a copy
    /// fused with such a scatter copies each block just before its
    /// updates land).
    fn is_sorted(&self) -> bool;

    /// The token's `apply`: `updates` scattered into `dest` with
    /// `reduction` on `exec`, bit for bit the serial in-place result.
    fn apply<'d, T: Element, D: Destination<'d, T>>(
        &self,
        dest: D,
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError>;
}

impl<I: IndexValue> CheckedElementsIndices<'_, I> {
    /// Writes `updates` into `dest` with `reduction`, in row-major order of
    /// the indices (duplicates: last write wins, or fold in that order),
    /// and returns `dest` written. OpenVINO's `mean` and `use_init_val`
    /// are [`Self::apply_update`]'s.
    ///
    /// `dest` is the data, in place, or a [`crate::CopyOf`] the data: then
    /// each slab (`data_shape[axis..]`, what the updates at fixed leading
    /// coordinates write) is copied, then its updates applied while it is
    /// in cache. On a parallel `exec`, tasks own disjoint slabs or bands of
    /// columns (`crate::parallel`); on large data the updates land band
    /// by band ([`crate::Schedule`]'s blocking rule). Whatever the
    /// destination and execution, the result is the serial in-place one,
    /// bit for bit. `Err` (a reduction `T` cannot do, a buffer whose length
    /// is not its shape's) comes before any write.
    pub fn apply<'d, T: Element, D: Destination<'d, T>>(
        &self,
        dest: D,
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError> {
        write(self, dest, updates, reduction, exec)
    }
}

impl<I: IndexValue> CheckedNdIndices<'_, I> {
    /// Writes every update slice into `dest` with `reduction`, in row-major
    /// order of the index tuples (duplicates: last write wins, or fold in
    /// order), and returns `dest` written.
    ///
    /// `dest` is the data, in place, or a [`crate::CopyOf`] the data: then
    /// without reduction only the gaps between the written slices are
    /// copied ([`Self::copies_around_slices`]), and a sorted token copies
    /// each block just before its updates land. A token sorted by
    /// destination block ([`crate::BlockSort`]) applies block by block. On a
    /// parallel `exec`, tasks own disjoint ranges of whole rows or of
    /// destination blocks (`crate::parallel`; unsorted slices are then
    /// sorted for the split, a second read of the indices). Whatever the
    /// destination and execution, the result is the serial in-place one,
    /// bit for bit. `Err` (a reduction `T` cannot do, a buffer whose length
    /// is not its shape's) comes before any write.
    pub fn apply<'d, T: Element, D: Destination<'d, T>>(
        &self,
        dest: D,
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError> {
        write(self, dest, updates, reduction, exec)
    }
}

impl<I: IndexValue> CheckedIndices for CheckedElementsIndices<'_, I> {
    fn is_sorted(&self) -> bool {
        false
    }

    fn apply<'d, T: Element, D: Destination<'d, T>>(
        &self,
        dest: D,
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError> {
        CheckedElementsIndices::apply(self, dest, updates, reduction, exec)
    }
}

impl<I: IndexValue> CheckedIndices for CheckedNdIndices<'_, I> {
    fn is_sorted(&self) -> bool {
        CheckedNdIndices::is_sorted(self)
    }

    fn apply<'d, T: Element, D: Destination<'d, T>>(
        &self,
        dest: D,
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError> {
        CheckedNdIndices::apply(self, dest, updates, reduction, exec)
    }
}

/// A token's two split kernels: in place, and fused with a copy. What
/// [`write`] calls, with a `reduction` it checked `T` can do: the kernels
/// below it do not check it again.
pub(crate) trait SplitKernels {
    /// Scatters `updates` into `data` in place.
    fn apply_split<T: Element>(
        &self,
        data: &mut [T],
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<(), ScatterError>;

    /// `dst = src` then [`SplitKernels::apply_split`], bit for bit.
    /// Contract: on `Ok`, every element of `dst` has been written.
    fn copying_split<T: Element + Copy>(
        &self,
        dst: &mut [MaybeUninit<T>],
        src: &[T],
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<(), ScatterError>;
}

/// The one writer of both tokens' `apply`: hands `dest` to the split
/// kernel that writes its kind.
pub(crate) fn write<'d, K: SplitKernels, T: Element, D: Destination<'d, T>>(
    token: &K,
    dest: D,
    updates: &[T],
    reduction: Reduction,
    exec: Execution<'_>,
) -> Result<&'d mut [T], ScatterError> {
    // The one check of the reduction in an apply: the split kernels below
    // take it as valid for `T`.
    T::check_reduction(reduction)?;
    dest.visit(TokenWriter {
        token,
        updates,
        reduction,
        exec,
    })
}

/// [`write`]'s two paths.
struct TokenWriter<'r, K, T> {
    token: &'r K,
    updates: &'r [T],
    reduction: Reduction,
    exec: Execution<'r>,
}

impl<'d, K: SplitKernels, T: Element> sealed::Writer<'d, T> for TokenWriter<'_, K, T> {
    type Out = Result<&'d mut [T], ScatterError>;

    fn in_place(self, data: &'d mut [T]) -> Self::Out {
        (self.token).apply_split(data, self.updates, self.reduction, self.exec)?;
        Ok(data)
    }

    fn copy_of(self, data: &[T], out: &'d mut [MaybeUninit<T>]) -> Self::Out
    where
        T: Copy,
    {
        (self.token).copying_split(out, data, self.updates, self.reduction, self.exec)?;
        // SAFETY: `copying_split` returned `Ok`: by its contract every
        // element of `out` has been written.
        Ok(unsafe { assume_written(out) })
    }
}

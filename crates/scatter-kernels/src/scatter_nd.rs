//! ONNX `ScatterND`.

use crate::fact_dim::known_ne_shape;
use crate::index::{CHECK_CHUNK, out_of_range};
use crate::mechanisms::Mechanism;
use crate::shape::{check_len, checked_count, coords_of, element_count, row_major_strides};
use std::sync::Arc;

use crate::{Dims, Element, FactDim, IndexValue, Input, Reduction, ScatterError};

/// The validated geometry of one `ScatterND`: shapes are known good, index
/// values are not checked yet.
///
/// Contract: data rank `r >= 1`, indices rank `q >= 1`,
/// `k = indices.shape[-1]` with `0 <= k <= r`, and
/// `updates.shape == indices.shape[:-1] ++ data.shape[k:]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NdPlan {
    pub(crate) data_shape: Vec<usize>,
    pub(crate) indices_shape: Vec<usize>,
    pub(crate) data_strides: Vec<usize>,
    /// Length of an index tuple.
    pub(crate) k: usize,
    /// Number of index tuples (= number of update slices).
    pub(crate) tuples: usize,
    /// Elements in one update slice: `product(data.shape[k:])`.
    pub(crate) slice_len: usize,
    pub(crate) data_len: usize,
    /// Where the contiguous runs of one slice start, relative to the slice's
    /// offset, in row-major order of the slice; each run is `run_len`
    /// elements. `[0]` and `slice_len` for row-major data (one run);
    /// several for a permuted layout ([`NdPlan::permuted`]).
    pub(crate) runs: Vec<usize>,
    pub(crate) run_len: usize,
}

/// Proof that every index component is in range for its plan; the only
/// way to write. It may also hold the update slices sorted by destination
/// block ([`BlockSort`]), which [`CheckedNdIndices::apply`] then follows.
#[derive(Debug)]
pub struct CheckedNdIndices<'a, I> {
    pub(crate) plan: &'a NdPlan,
    pub(crate) indices: &'a [I],
    /// The update slices sorted by destination block, when they were.
    pub(crate) buckets: Option<Arc<Buckets>>,
}

/// What a host keeps of a [`CheckedNdIndices`] to apply the same indices
/// again without reading them ([`NdPlan::reuse_check`]): that they passed
/// the check, and their sort by destination block when they were sorted.
/// Owned and cheap to clone.
#[derive(Debug, Clone)]
pub struct NdKeptCheck {
    /// The data dimensions the index components were checked against.
    pub(crate) dims: Vec<usize>,
    pub(crate) buckets: Option<Arc<Buckets>>,
}

impl NdKeptCheck {
    /// Whether the kept token was sorted by destination block (else it
    /// keeps only that the indices were checked).
    pub fn is_sorted(&self) -> bool {
        self.buckets.is_some()
    }
}

/// Whether [`NdPlan::check_indices`] also sorts the update slices by
/// destination block, for a blocked application of a large random-index
/// scatter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BlockSort {
    /// Only check.
    #[default]
    Off,
    /// Check, and sort in the same read of the indices when the
    /// execution's [`crate::Schedule`] blocking rule holds for elements of
    /// this many bytes (`size_of::<T>()` of the scatter to come).
    ForElementBytes(usize),
}

impl NdPlan {
    /// The plan of a `ScatterND` of these shapes, on row-major data. `Err`
    /// names the first rule of the contract the shapes break
    /// ([`Self::check_shapes`]), or an input whose element count does not
    /// fit in `usize`.
    pub fn new(
        data_shape: &[usize],
        indices_shape: &[usize],
        updates_shape: &[usize],
    ) -> Result<NdPlan, ScatterError> {
        let k = NdPlan::check_shapes(data_shape, indices_shape, updates_shape)?
            .expect("a usize tuple length is known");
        let batch = &indices_shape[..indices_shape.len() - 1];
        let data_len = checked_count(Input::Data, data_shape)?;
        let tuples = checked_count(Input::Indices, batch)?;
        checked_count(Input::Indices, indices_shape)?;
        checked_count(Input::Updates, updates_shape)?;
        // data_shape[k..] is a suffix of a countable shape, but its product
        // still overflows when a dimension before k is 0 (data [0, MAX, 2]).
        // Then the countable updates shape (batch ++ data_shape[k..]) forces
        // tuples == 0, and a slice length of 0 (nothing to write) is exact
        // enough: no tuple exists to use it.
        let slice_len = element_count(&data_shape[k..]).unwrap_or(0);
        Ok(NdPlan {
            data_shape: data_shape.to_vec(),
            indices_shape: indices_shape.to_vec(),
            data_strides: row_major_strides(data_shape),
            k,
            tuples,
            slice_len,
            data_len,
            runs: vec![0],
            run_len: slice_len,
        })
    }

    /// The shape rules of [`NdPlan::new`], on dims that may be unknown
    /// ([`FactDim`]): `Err` when a rule is known to be broken, with the
    /// words the plan uses; `Ok` with the tuple length `k` when it is known
    /// (the rules on updates wait for it). In the plan's order: data rank,
    /// indices rank, `k <= rank`, updates shape.
    pub fn check_shapes<D: FactDim>(
        data_shape: &[D],
        indices_shape: &[D],
        updates_shape: &[D],
    ) -> Result<Option<usize>, ScatterError> {
        let rank = data_shape.len();
        if rank == 0 {
            return Err(ScatterError::Rank {
                input: Input::Data,
                rank,
                expected: "rank >= 1".into(),
            });
        }
        let Some((k, batch)) = indices_shape.split_last() else {
            return Err(ScatterError::Rank {
                input: Input::Indices,
                rank: 0,
                expected: "rank >= 1 (the last dimension holds the index tuples)".into(),
            });
        };
        let Some(k) = k.known() else {
            return Ok(None);
        };
        if k > rank {
            return Err(ScatterError::Rank {
                input: Input::Indices,
                rank: indices_shape.len(),
                expected: format!(
                    "index tuples no longer than the rank of data: indices shape {} \
                     has tuples of length {k}, data shape {} has rank {rank}",
                    Dims::of(indices_shape),
                    Dims::of(data_shape)
                ),
            });
        }
        let expected_updates = || batch.iter().chain(&data_shape[k..]);
        if known_ne_shape(updates_shape.iter(), expected_updates()) {
            return Err(ScatterError::Shape {
                input: Input::Updates,
                shape: Dims::of(updates_shape),
                expected: format!(
                    "{} (indices.shape[:-1] ++ data.shape[{k}:], with indices shape \
                     {} and data shape {})",
                    Dims::of(expected_updates()),
                    Dims::of(indices_shape),
                    Dims::of(data_shape)
                ),
            });
        }
        Ok(Some(k))
    }

    /// The plan of a `ScatterND` whose data is `transpose(stored, perm)`
    /// (`data.shape[i] == stored_shape[perm[i]]`), applied to the stored
    /// (row-major) buffer directly: the output is the stored layout, as if
    /// the scatter's result were transposed back. Shapes and indices are
    /// those of the transposed data, so every rule and message is
    /// [`NdPlan::new`]'s on `data.shape`. This is how a
    /// `Transpose → ScatterND → inverse Transpose` runs without moving the
    /// data: only the update slices are written, as strided runs.
    pub fn permuted(
        stored_shape: &[usize],
        perm: &[usize],
        indices_shape: &[usize],
        updates_shape: &[usize],
    ) -> Result<NdPlan, ScatterError> {
        NdPlan::check_layout(stored_shape, perm)?;
        let view: Vec<usize> = perm.iter().map(|&p| stored_shape[p]).collect();
        let mut plan = NdPlan::new(&view, indices_shape, updates_shape)?;
        let stored_strides = row_major_strides(stored_shape);
        plan.data_strides = perm.iter().map(|&p| stored_strides[p]).collect();
        // The slice is view[k..] with the stored strides: the innermost
        // axes whose strides are row-major within it form one run.
        let (dims, strides) = (&view[plan.k..], &plan.data_strides[plan.k..]);
        let mut inner = dims.len();
        let mut run_len = 1usize;
        while inner > 0 && strides[inner - 1] == run_len {
            inner -= 1;
            run_len *= dims[inner];
        }
        plan.run_len = run_len;
        plan.runs = if plan.tuples == 0 || plan.slice_len == 0 {
            // Nothing is written; the dims may not even be countable.
            vec![]
        } else {
            // `slice_len / run_len` offsets: the update slice is that long.
            let mut runs = vec![0usize];
            for axis in (0..inner).rev() {
                let step = strides[axis];
                let current = std::mem::take(&mut runs);
                runs.reserve(current.len() * dims[axis]);
                for c in 0..dims[axis] {
                    runs.extend(current.iter().map(|r| c * step + r));
                }
            }
            // Each pass puts its axis outside the ones before it: the
            // outermost axis varies slowest, as in the update slice.
            runs
        };
        Ok(plan)
    }

    /// The layout rule of [`NdPlan::permuted`], on dims that may be
    /// unknown: `perm` permutes the axes of `stored_shape`.
    pub fn check_layout<D: FactDim>(
        stored_shape: &[D],
        perm: &[usize],
    ) -> Result<(), ScatterError> {
        let rank = stored_shape.len();
        let mut seen = vec![false; rank];
        let is_permutation = perm.len() == rank
            && perm
                .iter()
                .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true));
        if !is_permutation {
            return Err(ScatterError::Shape {
                input: Input::Data,
                shape: Dims::of(stored_shape),
                expected: format!("a layout permutation of its {rank} axes, got {perm:?}"),
            });
        }
        Ok(())
    }

    /// The shape of `data` as the index tuples address it: for a
    /// [`NdPlan::permuted`] plan, the transposed view, not the stored shape.
    pub fn data_shape(&self) -> &[usize] {
        &self.data_shape
    }

    /// Whether a copying apply ([`crate::CopyOf`]) without reduction
    /// copies around the written slices: row-major slices (not a permuted
    /// layout) of at least one element.
    pub fn copies_around_slices(&self) -> bool {
        self.runs.len() == 1 && self.slice_len > 0
    }

    /// Length of an index tuple (`indices.shape[-1]`).
    pub fn tuple_len(&self) -> usize {
        self.k
    }

    /// Elements written per index tuple.
    pub fn slice_len(&self) -> usize {
        self.slice_len
    }

    /// The plain check, on the calling thread, unsorted.
    pub(crate) fn check_serial<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
    ) -> Result<CheckedNdIndices<'a, I>, ScatterError> {
        check_len(
            Input::Indices,
            &self.indices_shape,
            self.tuples * self.k,
            indices.len(),
        )?;
        // Chunk by chunk, without a branch per component; a chunk with a
        // bad one is read again for the first error. A dim past `i64` (a
        // zero-size tensor's) leaves every chunk to the exact check.
        let scan = self.data_shape[..self.k]
            .iter()
            .all(|&d| i64::try_from(d).is_ok());
        if let Some(per_chunk) = CHECK_CHUNK.checked_div(self.k) {
            let per_chunk = per_chunk.max(1);
            for (c, chunk) in indices.chunks(per_chunk * self.k).enumerate() {
                if !scan || self.any_out_of_range(chunk) {
                    self.first_out_of_bounds(chunk, c * per_chunk)?;
                }
            }
        }
        Ok(CheckedNdIndices {
            plan: self,
            indices,
            buckets: None,
        })
    }

    /// The token [`Self::check_indices`] returned for `indices` and kept as
    /// `kept` ([`CheckedNdIndices::kept_check`]), sorted or not, without
    /// reading the indices: neither checked nor sorted again. `Err` when
    /// the indices are not of this plan's length, the check not against
    /// its dimensions, or the sort not of its tuple count and data length.
    ///
    /// # Safety
    /// `indices` are the very values that a `check_indices` call of a plan
    /// equal to this one (the same data, indices and updates shapes, the
    /// same layout) accepted when it made `kept`, unchanged since: the
    /// token's methods index the data by them unchecked.
    pub unsafe fn reuse_check<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        kept: &NdKeptCheck,
    ) -> Result<CheckedNdIndices<'a, I>, ScatterError> {
        let fits = indices.len() == self.tuples * self.k
            && kept.dims[..] == self.data_shape[..self.k]
            && kept.buckets.as_ref().is_none_or(|b| {
                b.entries.len() == self.tuples
                    && b.block_len > 0
                    && b.starts.len() == self.data_len.div_ceil(b.block_len) + 1
            });
        if !fits {
            return Err(ScatterError::Shape {
                input: Input::Indices,
                shape: crate::Dims::of(&self.indices_shape),
                expected: "the indices a kept sort was made for (internal error)".into(),
            });
        }
        Ok(CheckedNdIndices {
            plan: self,
            indices,
            buckets: kept.buckets.clone(),
        })
    }

    /// Whether a component of `tuples` (whole tuples) is out of its range,
    /// computed without a branch per component. The first `k` dims fit
    /// `i64` (the caller's guard).
    fn any_out_of_range<I: IndexValue>(&self, tuples: &[I]) -> bool {
        let dims = &self.data_shape[..self.k];
        if let [d] = *dims {
            let d = d as i64;
            return tuples
                .iter()
                .fold(false, |b, i| b | out_of_range(i.to_i64(), d));
        }
        tuples.chunks_exact(self.k).fold(false, |b, tuple| {
            tuple
                .iter()
                .zip(dims)
                .fold(b, |b, (i, &d)| b | out_of_range(i.to_i64(), d as i64))
        })
    }

    /// The error of the first out-of-range component of `tuples` (whole
    /// tuples, the first of them tuple number `first`), if any.
    fn first_out_of_bounds<I: IndexValue>(
        &self,
        tuples: &[I],
        first: usize,
    ) -> Result<(), ScatterError> {
        for (t, tuple) in tuples.chunks_exact(self.k).enumerate() {
            for (axis, (i, &dim)) in tuple.iter().zip(&self.data_shape).enumerate() {
                if crate::index::normalize(i.to_i64(), dim).is_none() {
                    return Err(ScatterError::OutOfBounds {
                        input: Input::Indices,
                        position: coords_of((first + t) * self.k + axis, &self.indices_shape),
                        value: i.to_i64(),
                        axis,
                        dim,
                    });
                }
            }
        }
        Ok(())
    }
}

impl<I: IndexValue> CheckedNdIndices<'_, I> {
    /// A validated index of a `k == 1` token as a position along data's
    /// first axis, negative indices counted from its end.
    #[inline(always)]
    pub(crate) fn first_axis_position(&self, i: &I) -> usize {
        let i = i.to_i64();
        (if i < 0 {
            i + self.plan.data_shape[0] as i64
        } else {
            i
        }) as usize
    }

    /// Calls `f(data_offset, tuple_number)` for every index tuple in
    /// row-major order; the slice written is
    /// `data[offset..offset + slice_len]`.
    #[inline(always)]
    pub(crate) fn visit(&self, mut f: impl FnMut(usize, usize)) {
        let plan = self.plan;
        if plan.slice_len == 0 {
            return;
        }
        if plan.k == 0 {
            for t in 0..plan.tuples {
                f(0, t);
            }
            return;
        }
        if plan.k == 1 {
            let stride = plan.data_strides[0];
            for (t, i) in self.indices.iter().enumerate() {
                f(self.first_axis_position(i) * stride, t);
            }
            return;
        }
        let strides = &plan.data_strides[..plan.k];
        let dims = &plan.data_shape[..plan.k];
        for (t, tuple) in self.indices.chunks_exact(plan.k).enumerate() {
            let mut offset = 0usize;
            for ((i, &stride), &dim) in tuple.iter().zip(strides).zip(dims) {
                let i = i.to_i64();
                let j = if i < 0 { i + dim as i64 } else { i } as usize;
                offset += j * stride;
            }
            f(offset, t);
        }
    }

    pub(crate) fn check_buffers<D, T>(
        &self,
        data: &[D],
        updates: &[T],
    ) -> Result<(), ScatterError> {
        let plan = self.plan;
        check_len(Input::Data, &plan.data_shape, plan.data_len, data.len())?;
        // tuples * slice_len == element count of the validated updates shape.
        let updates_len = plan.tuples * plan.slice_len;
        if updates.len() != updates_len {
            return Err(ScatterError::Length {
                input: Input::Updates,
                shape: self.updates_shape(),
                len: updates.len(),
            });
        }
        Ok(())
    }

    /// `indices.shape[:-1] ++ data.shape[k:]`, the validated updates shape.
    pub(crate) fn updates_shape(&self) -> Vec<usize> {
        let plan = self.plan;
        plan.indices_shape[..plan.indices_shape.len() - 1]
            .iter()
            .chain(&plan.data_shape[plan.k..])
            .copied()
            .collect()
    }

    pub(crate) fn data_shape(&self) -> &[usize] {
        &self.plan.data_shape
    }

    /// Calls `f(data_offset, updates_position)` for every updated element,
    /// in row-major order of the updates (the order [`Self::apply`] folds
    /// in). Offsets are in bounds for a data buffer that passed
    /// [`Self::check_buffers`].
    #[inline(always)]
    pub(crate) fn visit_elements(&self, mut f: impl FnMut(usize, usize)) {
        let (len, run, runs) = (self.plan.slice_len, self.plan.run_len, &self.plan.runs[..]);
        self.visit(|o, t| {
            for (j, &r) in runs.iter().enumerate() {
                let (d, u) = (o + r, t * len + j * run);
                for e in 0..run {
                    f(d + e, u + e);
                }
            }
        })
    }

    /// As [`NdPlan::copies_around_slices`].
    pub fn copies_around_slices(&self) -> bool {
        self.plan.copies_around_slices()
    }

    /// The serial in-place apply, unsorted.
    /// `reduction` is one `T` can do (checked once per apply, by
    /// `crate::exec::write`).
    pub(crate) fn apply_serial<T: Element>(
        &self,
        data: &mut [T],
        updates: &[T],
        reduction: Reduction,
    ) -> Result<(), ScatterError> {
        self.check_buffers(data, updates)?;
        match reduction {
            Reduction::None if self.plan.slice_len == 1 => {
                self.fold(data, updates, |d, u| d.clone_from(u))
            }
            Reduction::None => self.visit_slices(data, updates, |d, u| d.clone_from_slice(u)),
            Reduction::Add => self.fold(data, updates, T::add),
            Reduction::Mul => self.fold(data, updates, T::mul),
            Reduction::Max => self.fold(data, updates, T::max),
            Reduction::Min => self.fold(data, updates, T::min),
        }
        Ok(())
    }

    /// `f(dst, src)` on every element pair of every (data slice, update
    /// slice); single-element slices (`k == rank`) skip the inner loop.
    #[inline(always)]
    fn fold<T>(&self, data: &mut [T], updates: &[T], mut f: impl FnMut(&mut T, &T)) {
        if self.plan.slice_len == 1 {
            // One element per tuple: no loop over runs and no slices in
            // the loop. The run-by-run visit spends more instructions per
            // update, and a scatter of single elements into cache-resident
            // data is bound by them (see docs/performance.md, "Why the
            // mechanisms exist").
            debug_assert!(self.plan.runs.iter().all(|&r| r == 0));
            debug_assert_eq!(updates.len(), self.plan.tuples);
            self.visit(|o, t| {
                debug_assert!(o < data.len() && t < updates.len());
                // SAFETY: `visit_slices`' proof, for slices of one element:
                // every axis past the first k has dim 1, so the one run
                // starts at the tuple's offset (`runs == [0]`) and `o + 1
                // <= data.len()`; `t < tuples == updates.len()`
                // (`check_buffers`, `slice_len == 1`).
                unsafe { f(data.get_unchecked_mut(o), updates.get_unchecked(t)) }
            })
        } else {
            self.visit_slices(data, updates, |d, u| {
                for (d, u) in d.iter_mut().zip(u) {
                    f(d, u)
                }
            })
        }
    }

    /// Calls `f(data run, update run)` (both of `run_len` elements; one
    /// run of `slice_len` for row-major data) for every tuple in row-major
    /// order, without bounds checks. Callers run [`Self::check_buffers`]
    /// first.
    #[inline(always)]
    fn visit_slices<T>(&self, data: &mut [T], updates: &[T], mut f: impl FnMut(&mut [T], &[T])) {
        let (len, run, runs) = (self.plan.slice_len, self.plan.run_len, &self.plan.runs[..]);
        debug_assert_eq!(data.len(), self.plan.data_len);
        debug_assert_eq!(updates.len(), self.plan.tuples * len);
        if self.prefetches_rows::<T>() {
            return self.visit_rows_prefetching(data, updates, f);
        }
        self.visit(|o, t| {
            for (j, &r) in runs.iter().enumerate() {
                let (d, u) = (o + r, t * len + j * run);
                debug_assert!(d + run <= data.len() && u + run <= updates.len());
                // SAFETY: in bounds by construction. `check_buffers` proved
                // `data.len() == product(data_shape)` and `updates.len() ==
                // tuples * slice_len`; `visit` yields `t < tuples` and `o` =
                // sum over the first k axes of a coordinate validated by
                // `check_indices` into `[0, dim - 1]` times its stride, and
                // `r` is a sum over the other axes of a coordinate in
                // `[0, dim - 1]` times its stride, the last `run_len`
                // elements excluded; the strides are the stored row-major
                // strides, permuted, so `o + r + run_len <= data.len()`.
                // `runs.len() * run_len == slice_len` gives `u + run_len <=
                // (t + 1) * slice_len`.
                unsafe {
                    f(
                        data.get_unchecked_mut(d..d + run),
                        updates.get_unchecked(u..u + run),
                    )
                }
            }
        })
    }

    /// Whether [`Self::visit_slices`] asks for each destination row ahead
    /// ([`crate::prefetch`]): whole rows of row-major data (`k == 1`, one
    /// run per slice) at least a cache line long, into data beyond L2.
    fn prefetches_rows<T>(&self) -> bool {
        let size = std::mem::size_of::<T>();
        let plan = self.plan;
        Mechanism::Prefetch.is_on()
            && plan.k == 1
            && plan.runs.len() == 1
            && plan.run_len == plan.slice_len
            && plan.slice_len.saturating_mul(size) >= crate::prefetch::MIN_ROW_BYTES
            && plan.data_len.saturating_mul(size) >= crate::prefetch::FROM_BYTES
    }

    /// [`Self::visit_slices`] for [`Self::prefetches_rows`] plans: the same
    /// calls in the same order, each row's destination asked for
    /// [`crate::prefetch::DISTANCE`] rows before it is written.
    #[inline(always)]
    fn visit_rows_prefetching<T>(
        &self,
        data: &mut [T],
        updates: &[T],
        mut f: impl FnMut(&mut [T], &[T]),
    ) {
        let plan = self.plan;
        let (len, stride, dim) = (
            plan.slice_len,
            plan.data_strides[0],
            plan.data_shape[0] as i64,
        );
        // One run per slice: the run is the slice, at `runs[0]` past the
        // tuple's offset.
        let run = plan.runs[0];
        let offset = |i: &I| {
            let i = i.to_i64();
            (if i < 0 { i + dim } else { i }) as usize * stride + run
        };
        let base = data.as_ptr();
        let bytes = len * std::mem::size_of::<T>();
        let ahead = self.indices.iter().skip(crate::prefetch::DISTANCE);
        let mut ahead = ahead.map(offset);
        for (t, i) in self.indices.iter().enumerate() {
            if let Some(next) = ahead.next() {
                // Only an address: nothing is read through it.
                crate::prefetch::lines(base.wrapping_add(next), bytes);
            }
            let (d, u) = (offset(i), t * len);
            debug_assert!(d + len <= data.len() && u + len <= updates.len());
            // SAFETY: the offsets `visit_slices` computes, for `k == 1`
            // and one run per slice (`run_len == slice_len`): `d = o + r`
            // with `o = j * stride`, `j` the index validated by
            // `check_indices` into `[0, dim - 1]`, and `r = runs[0]`, so
            // `d + len <= data.len()` by `visit_slices`' proof; `t <
            // tuples` and `updates.len() == tuples * len` (`check_buffers`)
            // give `u + len <= updates.len()`.
            unsafe {
                f(
                    data.get_unchecked_mut(d..d + len),
                    updates.get_unchecked(u..u + len),
                )
            }
        }
    }

    /// [`Self::apply`] for any `Clone` type, in place and serially, with a
    /// caller-given combination `combine_fn(destination, update)` (e.g.
    /// symbolic dimensions in a host framework), called in row-major order
    /// of the updates. `Err` (a buffer whose length is not its shape's)
    /// comes before any write.
    pub fn apply_with<T: Clone>(
        &self,
        data: &mut [T],
        updates: &[T],
        mut combine_fn: impl FnMut(&mut T, &T),
    ) -> Result<(), ScatterError> {
        self.check_buffers(data, updates)?;
        let (len, run, runs) = (self.plan.slice_len, self.plan.run_len, &self.plan.runs[..]);
        self.visit(|o, t| {
            for (j, &r) in runs.iter().enumerate() {
                let (d, u) = (o + r, t * len + j * run);
                for (d, u) in data[d..d + run].iter_mut().zip(&updates[u..u + run]) {
                    combine_fn(d, u)
                }
            }
        });
        Ok(())
    }
}

impl<'a, I: IndexValue> CheckedNdIndices<'a, I> {
    /// Whether the update slices were sorted by destination block
    /// ([`BlockSort`]).
    pub fn is_sorted(&self) -> bool {
        self.buckets.is_some()
    }

    /// What to keep with the indices to apply them again through
    /// [`NdPlan::reuse_check`]: the check, and the sort when the slices
    /// were sorted.
    pub fn kept_check(&self) -> NdKeptCheck {
        let plan = self.plan;
        NdKeptCheck {
            dims: plan.data_shape[..plan.k].to_vec(),
            buckets: self.buckets.clone(),
        }
    }
}

/// The update slices of one ScatterND, stably sorted by destination block.
#[derive(Debug, Clone)]
pub(crate) struct Buckets {
    /// Elements per block, a multiple of the slice length.
    pub(crate) block_len: usize,
    /// Block `b`'s entries are `entries[starts[b]..starts[b + 1]]`.
    pub(crate) starts: Vec<usize>,
    /// `(data offset, tuple number)` of every update slice.
    pub(crate) entries: Vec<(u32, u32)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Execution, scatter_nd};

    /// `transpose(stored, perm)`, materialized row-major.
    fn transposed(stored: &[i32], shape: &[usize], perm: &[usize]) -> Vec<i32> {
        let view: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let strides = row_major_strides(shape);
        (0..stored.len())
            .map(|flat| {
                let c = coords_of(flat, &view);
                stored[c
                    .iter()
                    .zip(perm)
                    .map(|(&i, &p)| i * strides[p])
                    .sum::<usize>()]
            })
            .collect()
    }

    #[test]
    fn a_permuted_plan_writes_the_stored_layout_as_transpose_scatter_transpose_back() {
        // KV-cache shape: [batch 1, heads 2, seq 4, dim 3], sequence axis first.
        let shape = [1usize, 2, 4, 3];
        let perm = [2usize, 0, 1, 3];
        let inverse = [1usize, 2, 0, 3];
        let stored: Vec<i32> = (0..24).collect();
        let indices = [2i64, -1];
        let updates: Vec<i32> = (100..112).collect();
        for reduction in [Reduction::None, Reduction::Add] {
            // Reference: materialize the transpose, scatter, transpose back.
            let mut view = transposed(&stored, &shape, &perm);
            let view_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
            scatter_nd(
                &mut view,
                &view_shape,
                &indices,
                &[2, 1],
                &updates,
                &[2, 1, 2, 3],
                reduction,
            )
            .unwrap();
            let want = transposed(&view, &view_shape, &inverse);
            let plan = NdPlan::permuted(&shape, &perm, &[2, 1], &[2, 1, 2, 3]).unwrap();
            let mut got = stored.clone();
            plan.check_indices(&indices[..], Execution::SERIAL, BlockSort::Off)
                .unwrap()
                .apply(&mut got, &updates, reduction, Execution::SERIAL)
                .unwrap();
            assert_eq!(got, want, "{reduction:?}");
        }
    }

    #[test]
    fn a_permuted_plan_with_the_last_axis_first_writes_single_element_runs() {
        // YOLO-style slice assignment y[..., 0:2] on [3, 2, 5] through perm [2, 1, 0].
        let shape = [3usize, 2, 5];
        let perm = [2usize, 1, 0];
        let stored: Vec<i32> = (0..30).collect();
        let plan = NdPlan::permuted(&shape, &perm, &[2, 1], &[2, 2, 3]).unwrap();
        assert_eq!((plan.run_len, plan.runs.len()), (1, 6));
        let updates: Vec<i32> = (100..112).collect();
        let mut got = stored.clone();
        plan.check_indices(&[0i64, 1][..], Execution::SERIAL, BlockSort::Off)
            .unwrap()
            .apply(&mut got, &updates, Reduction::None, Execution::SERIAL)
            .unwrap();
        let mut view = transposed(&stored, &shape, &perm);
        scatter_nd(
            &mut view,
            &[5, 2, 3],
            &[0i64, 1],
            &[2, 1],
            &updates,
            &[2, 2, 3],
            Reduction::None,
        )
        .unwrap();
        assert_eq!(got, transposed(&view, &[5, 2, 3], &perm));
    }

    #[test]
    fn the_identity_permutation_is_one_run_per_slice() {
        let plan = NdPlan::permuted(&[4, 3, 2], &[0, 1, 2], &[5, 1], &[5, 3, 2]).unwrap();
        assert_eq!((plan.runs.as_slice(), plan.run_len), (&[0usize][..], 6));
    }

    #[test]
    fn a_permuted_plan_checks_indices_against_the_transposed_shape() {
        let plan = NdPlan::permuted(&[2, 5], &[1, 0], &[1, 1], &[1, 2]).unwrap();
        assert!(
            plan.check_indices(&[4i64][..], Execution::SERIAL, BlockSort::Off)
                .is_ok()
        );
        let err = plan
            .check_indices(&[5i64][..], Execution::SERIAL, BlockSort::Off)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "indices[0, 0] = 5 is out of bounds for data axis 0 of size 5 (valid range [-5, 4])"
        );
    }

    #[test]
    fn a_layout_that_is_not_a_permutation_is_a_shape_error() {
        for perm in [&[0usize, 0][..], &[0], &[0, 2]] {
            let err = NdPlan::permuted(&[2, 5], perm, &[1, 1], &[1, 5]).unwrap_err();
            assert!(err.to_string().starts_with("shape: data"), "{err}");
        }
    }

    #[test]
    fn onnx_example_1_element_writes() {
        let mut data = vec![1i32, 2, 3, 4, 5, 6, 7, 8];
        scatter_nd(
            &mut data,
            &[8],
            &[4i64, 3, 1, 7],
            &[4, 1],
            &[9, 10, 11, 12],
            &[4],
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [1, 11, 3, 10, 9, 6, 7, 12]);
    }

    #[test]
    fn onnx_example_2_slice_writes() {
        let mut data: Vec<i32> = (0..4 * 4 * 4).collect();
        let updates: Vec<i32> = (100..100 + 2 * 16).collect();
        scatter_nd(
            &mut data,
            &[4, 4, 4],
            &[0i64, 2],
            &[2, 1],
            &updates,
            &[2, 4, 4],
            Reduction::None,
        )
        .unwrap();
        assert_eq!(&data[..16], &updates[..16]);
        assert_eq!(&data[16..32], &(16..32).collect::<Vec<_>>()[..]);
        assert_eq!(&data[32..48], &updates[16..]);
    }

    #[test]
    fn negative_components_count_from_the_end_of_their_own_dimension() {
        let mut data = vec![0i32; 6];
        scatter_nd(
            &mut data,
            &[2, 3],
            &[-1i64, -3],
            &[1, 2],
            &[5],
            &[1],
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [0, 0, 0, 5, 0, 0]);
    }

    #[test]
    fn component_out_of_its_dimension_is_refused_even_if_the_flat_offset_fits() {
        // (0, 3) in a 2x3 tensor would be flat offset 3 = (1, 0).
        let mut data = vec![0i32; 6];
        let err = scatter_nd(
            &mut data,
            &[2, 3],
            &[0i64, 3],
            &[1, 2],
            &[5],
            &[1],
            Reduction::None,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "indices[0, 1] = 3 is out of bounds for data axis 1 of size 3 (valid range [-3, 2])"
        );
        assert_eq!(data, [0; 6]);
    }

    #[test]
    fn k_zero_replaces_the_whole_tensor_per_tuple() {
        let mut data = vec![0i32; 4];
        let updates = [1, 2, 3, 4, 5, 6, 7, 8];
        scatter_nd(
            &mut data,
            &[2, 2],
            &[] as &[i64],
            &[2, 0],
            &updates,
            &[2, 2, 2],
            Reduction::Add,
        )
        .unwrap();
        assert_eq!(data, [6, 8, 10, 12]);
    }

    #[test]
    fn duplicates_fold_in_row_major_order() {
        let mut data = vec![1i64, 1, 1];
        scatter_nd(
            &mut data,
            &[3],
            &[0i64, 0, 2],
            &[3, 1],
            &[2, 3, 4],
            &[3],
            Reduction::Mul,
        )
        .unwrap();
        assert_eq!(data, [6, 1, 4]);
        let mut data = vec![0i64; 3];
        scatter_nd(
            &mut data,
            &[3],
            &[1i64, 1],
            &[2, 1],
            &[2, 3],
            &[2],
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [0, 3, 0]);
    }

    #[test]
    fn batched_indices_with_q_3() {
        let mut data = vec![0i32; 4];
        scatter_nd(
            &mut data,
            &[2, 2],
            &[0i64, 0, 1, 1, 0, 1, 1, 0],
            &[2, 2, 2],
            &[1, 2, 3, 4],
            &[2, 2],
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [1, 3, 4, 2]);
    }

    #[test]
    fn shape_rules_are_enforced() {
        assert!(matches!(
            NdPlan::new(&[], &[1, 0], &[1]),
            Err(ScatterError::Rank {
                input: Input::Data,
                ..
            })
        ));
        assert!(matches!(
            NdPlan::new(&[3], &[], &[]),
            Err(ScatterError::Rank {
                input: Input::Indices,
                ..
            })
        ));
        let err = NdPlan::new(&[3], &[1, 2], &[1]).unwrap_err().to_string();
        assert!(err.contains("rank") && err.contains("shape"), "{err}");
        let err = NdPlan::new(&[4, 5], &[3, 1], &[3, 4])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "shape: updates has shape [3, 4], expected [3, 5] (indices.shape[:-1] ++ data.shape[1:], \
             with indices shape [3, 1] and data shape [4, 5])"
        );
    }

    #[test]
    fn the_first_bad_component_is_reported_past_a_chunk() {
        let tuples = 3 * CHECK_CHUNK;
        let plan = NdPlan::new(&[3, 4], &[tuples, 2], &[tuples]).unwrap();
        let mut indices = vec![-3i64; 2 * tuples];
        assert!(
            plan.check_indices(&indices, Execution::SERIAL, BlockSort::Off)
                .is_ok()
        );
        indices[2 * (CHECK_CHUNK + 7) + 1] = 4;
        indices[4 * CHECK_CHUNK] = -4; // tuple 2 * CHECK_CHUNK, axis 0
        let err = plan
            .check_indices(&indices, Execution::SERIAL, BlockSort::Off)
            .unwrap_err();
        let ScatterError::OutOfBounds {
            position,
            value,
            axis,
            dim,
            ..
        } = err
        else {
            panic!("{err:?}")
        };
        assert_eq!(
            (position, value, axis, dim),
            (vec![CHECK_CHUNK + 7, 1], 4, 1, 4)
        );
    }

    #[test]
    fn no_tuples_of_single_elements_write_nothing_with_any_reduction() {
        for reduction in Reduction::ALL {
            for plan in [
                NdPlan::new(&[2, 3], &[0, 2], &[0]).unwrap(),
                NdPlan::permuted(&[2, 3], &[1, 0], &[0, 2], &[0]).unwrap(),
            ] {
                let mut data = vec![1f32; 6];
                plan.check_indices(&[] as &[i64], Execution::SERIAL, BlockSort::Off)
                    .unwrap()
                    .apply(&mut data, &[], reduction, Execution::SERIAL)
                    .unwrap();
                assert_eq!(data, [1.0; 6], "{reduction:?}");
            }
        }
    }

    #[test]
    fn empty_indices_and_zero_size_slices_write_nothing() {
        let mut data = vec![1f32, 2.0];
        scatter_nd(
            &mut data,
            &[2],
            &[] as &[i32],
            &[0, 1],
            &[],
            &[0],
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [1.0, 2.0]);
        let mut empty: Vec<f32> = vec![];
        scatter_nd(
            &mut empty,
            &[3, 0],
            &[1i64],
            &[1, 1],
            &[],
            &[1, 0],
            Reduction::None,
        )
        .unwrap();
        let err = scatter_nd(
            &mut empty,
            &[0, 3],
            &[0i64],
            &[1, 1],
            &[],
            &[1, 3],
            Reduction::None,
        )
        .unwrap_err();
        assert!(matches!(err, ScatterError::OutOfBounds { .. }));
    }
}

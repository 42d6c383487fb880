//! ONNX `ScatterElements` (and the deprecated `Scatter`).

use crate::combiner::select_f32;
use crate::fact_dim::known_ne_shape;
use crate::index::first_out_of_range;
use crate::mechanisms::Mechanism;
use crate::prefetch::ELEMENTS_AHEAD;
use crate::shape::{check_len, checked_count, coords_of, element_count, row_major_strides};
use crate::{Dims, Element, FactDim, IndexValue, Input, Reduction, ScatterError};

/// The validated geometry of one `ScatterElements`: shapes and axis are
/// known good, index values are not checked yet.
///
/// Contract: data rank `r >= 1`; indices and updates both of rank `r` and
/// equal shape; on every axis but `axis`, `indices.shape[i] <= data.shape[i]`;
/// along `axis` any length; `axis` in `[-r, r - 1]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementsPlan {
    data_shape: Vec<usize>,
    indices_shape: Vec<usize>,
    data_strides: Vec<usize>,
    axis: usize,
    data_len: usize,
    pub(crate) indices_len: usize,
}

/// Proof that every index value is in range for its plan; the only way to
/// write.
#[derive(Debug)]
pub struct CheckedElementsIndices<'a, I> {
    pub(crate) plan: &'a ElementsPlan,
    pub(crate) indices: &'a [I],
}

/// What a host keeps of a [`CheckedElementsIndices`] to apply the same
/// indices again without reading them ([`ElementsPlan::reuse_check`]):
/// the range they were checked against. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElementsKeptCheck {
    axis: usize,
    dim: usize,
    len: usize,
}

impl ElementsPlan {
    /// The plan of a `ScatterElements` of these shapes along `axis` (ONNX's
    /// attribute, in `[-r, r - 1]`). `Err` names the first rule of the
    /// contract the shapes or the axis break ([`Self::check_shapes`]), or an
    /// input whose element count does not fit in `usize`.
    pub fn new(
        data_shape: &[usize],
        indices_shape: &[usize],
        updates_shape: &[usize],
        axis: i64,
    ) -> Result<ElementsPlan, ScatterError> {
        let axis =
            ElementsPlan::check_shapes(data_shape, indices_shape, updates_shape, Some(axis))?
                .expect("check_shapes normalizes a given axis");
        let data_len = checked_count(Input::Data, data_shape)?;
        let indices_len = checked_count(Input::Indices, indices_shape)?;
        Ok(ElementsPlan {
            data_shape: data_shape.to_vec(),
            indices_shape: indices_shape.to_vec(),
            data_strides: row_major_strides(data_shape),
            axis,
            data_len,
            indices_len,
        })
    }

    /// The shape rules of [`ElementsPlan::new`], on dims that may be
    /// unknown ([`FactDim`]): `Err` when a rule is known to be broken, with
    /// the words the plan uses; `Ok` with the normalized axis (`None` when
    /// `axis` is: OpenVINO's axis input before the run, the rules needing
    /// it wait). In the plan's order: data rank, axis, indices rank,
    /// updates shape, indices dims off the axis.
    pub fn check_shapes<D: FactDim>(
        data_shape: &[D],
        indices_shape: &[D],
        updates_shape: &[D],
        axis: Option<i64>,
    ) -> Result<Option<usize>, ScatterError> {
        let rank = data_shape.len();
        if rank == 0 {
            return Err(ScatterError::Rank {
                input: Input::Data,
                rank,
                expected: "rank >= 1".to_string(),
            });
        }
        let axis = axis
            .map(|axis| crate::axis::elements_axis(axis, rank))
            .transpose()?;
        if indices_shape.len() != rank {
            return Err(ScatterError::Rank {
                input: Input::Indices,
                rank: indices_shape.len(),
                expected: format!("{rank} (the rank of data, shape {})", Dims::of(data_shape)),
            });
        }
        if known_ne_shape(updates_shape.iter(), indices_shape.iter()) {
            return Err(ScatterError::Shape {
                input: Input::Updates,
                shape: Dims::of(updates_shape),
                expected: format!("{} (the shape of indices)", Dims::of(indices_shape)),
            });
        }
        if let Some(axis) = axis {
            for (i, (n, d)) in indices_shape.iter().zip(data_shape).enumerate() {
                if i != axis && n.known_gt(d) {
                    return Err(ScatterError::Shape {
                        input: Input::Indices,
                        shape: Dims::of(indices_shape),
                        expected: format!(
                            "dim {i} <= {d} (data shape {}; only axis {axis} may be longer)",
                            Dims::of(data_shape)
                        ),
                    });
                }
            }
        }
        Ok(axis)
    }

    /// The normalized axis, in `[0, rank - 1]`.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// The shape of `data` (and of the output).
    pub fn data_shape(&self) -> &[usize] {
        &self.data_shape
    }

    /// Elements of one slab a copying apply ([`crate::CopyOf`]) copies and
    /// then scatters into: `data_shape[axis..]`'s volume (the whole data
    /// for axis 0, where nothing is gained). 0 when the data is empty (a
    /// suffix of a shape with a zero could even overflow).
    pub fn copying_slab_len(&self) -> usize {
        element_count(&self.data_shape[self.axis..]).unwrap_or(0)
    }

    /// The shape of `indices` (and of `updates`).
    pub fn indices_shape(&self) -> &[usize] {
        &self.indices_shape
    }

    pub(crate) fn data_len(&self) -> usize {
        self.data_len
    }

    /// [`Self::check_indices`] on the calling thread.
    pub(crate) fn check_serial<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
    ) -> Result<CheckedElementsIndices<'a, I>, ScatterError> {
        check_len(
            Input::Indices,
            &self.indices_shape,
            self.indices_len,
            indices.len(),
        )?;
        match first_out_of_range(indices, self.data_shape[self.axis]) {
            Some(pos) => Err(self.out_of_bounds(indices, pos)),
            None => Ok(CheckedElementsIndices {
                plan: self,
                indices,
            }),
        }
    }

    /// The token [`Self::check_indices`] returned for `indices` and kept as
    /// `kept` ([`CheckedElementsIndices::kept_check`]), without reading the
    /// indices. `Err` when `kept` was not checked against this plan's axis
    /// and dimension along it, or `indices` are not of its length.
    ///
    /// # Safety
    /// `indices` are the very values that a check of `kept`'s plan
    /// accepted when it made `kept`, unchanged since: the token's methods
    /// index the data by them unchecked.
    pub unsafe fn reuse_check<'a, I: IndexValue>(
        &'a self,
        indices: &'a [I],
        kept: &ElementsKeptCheck,
    ) -> Result<CheckedElementsIndices<'a, I>, ScatterError> {
        let fits = kept.axis == self.axis
            && kept.dim == self.data_shape[self.axis]
            && kept.len == self.indices_len
            && indices.len() == self.indices_len;
        if !fits {
            return Err(ScatterError::Shape {
                input: Input::Indices,
                shape: Dims::of(&self.indices_shape),
                expected: "the indices a kept check was made for (internal error)".into(),
            });
        }
        Ok(CheckedElementsIndices {
            plan: self,
            indices,
        })
    }

    /// Steps the odometer over the leading `rank - 1` coordinates of
    /// indices (`coords`) to the next row, keeping `base`, the data offset
    /// of those coordinates with the axis left out; past the last row it
    /// wraps to the first.
    #[inline(always)]
    fn next_row(&self, coords: &mut [usize], base: &mut usize) {
        for d in (0..coords.len()).rev() {
            coords[d] += 1;
            if d != self.axis {
                *base += self.data_strides[d];
            }
            if coords[d] < self.indices_shape[d] {
                break;
            }
            if d != self.axis {
                *base -= self.data_strides[d] * self.indices_shape[d];
            }
            coords[d] = 0;
        }
    }

    /// The error naming `indices[pos]`, out of range on the axis.
    #[cold]
    fn out_of_bounds<I: IndexValue>(&self, indices: &[I], pos: usize) -> ScatterError {
        ScatterError::OutOfBounds {
            input: Input::Indices,
            position: coords_of(pos, &self.indices_shape),
            value: indices[pos].to_i64(),
            axis: self.axis,
            dim: self.data_shape[self.axis],
        }
    }
}

/// `data` and `updates` as f32 slices when `T` is f32.
fn f32_slices<'a, T: 'static>(
    data: &'a mut [T],
    updates: &'a [T],
) -> Option<(&'a mut [f32], &'a [f32])> {
    if std::any::TypeId::of::<T>() != std::any::TypeId::of::<f32>() {
        return None;
    }
    // SAFETY: `T` is `f32` (same TypeId), so both casts are identities of
    // type, length, alignment and lifetime.
    unsafe {
        Some((
            std::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<f32>(), data.len()),
            std::slice::from_raw_parts(updates.as_ptr().cast::<f32>(), updates.len()),
        ))
    }
}

impl<I: IndexValue> CheckedElementsIndices<'_, I> {
    /// What to keep with the indices to apply them again through
    /// [`ElementsPlan::reuse_check`].
    pub fn kept_check(&self) -> ElementsKeptCheck {
        let plan = self.plan;
        ElementsKeptCheck {
            axis: plan.axis,
            dim: plan.data_shape[plan.axis],
            len: plan.indices_len,
        }
    }

    /// Calls `f(data_offset, indices_position)` for every index, in
    /// row-major order of the indices.
    #[inline(always)]
    pub(crate) fn visit(&self, mut f: impl FnMut(usize, usize)) {
        let plan = self.plan;
        if plan.indices_len == 0 {
            return;
        }
        let rank = plan.indices_shape.len();
        let axis = plan.axis;
        let dim = plan.data_shape[axis] as i64;
        let axis_stride = plan.data_strides[axis];
        let row_len = plan.indices_shape[rank - 1];
        // Odometer over the leading rank-1 coordinates of indices; `base`
        // is the data offset of those coordinates, the axis left out.
        let mut coords = vec![0usize; rank - 1];
        let mut base = 0usize;
        for (row, row_indices) in self.indices.chunks_exact(row_len).enumerate() {
            let first = row * row_len;
            if axis == rank - 1 {
                for (c, i) in row_indices.iter().enumerate() {
                    let i = i.to_i64();
                    let j = if i < 0 { i + dim } else { i } as usize;
                    f(base + j, first + c);
                }
            } else {
                for (c, i) in row_indices.iter().enumerate() {
                    let i = i.to_i64();
                    let j = if i < 0 { i + dim } else { i } as usize;
                    f(base + j * axis_stride + c, first + c);
                }
            }
            plan.next_row(&mut coords, &mut base);
        }
    }

    /// [`Self::visit`]'s calls in the same order, with `ahead(offset)`
    /// before each: the data offset of the update [`ELEMENTS_AHEAD`]
    /// positions later (none near the end). A second odometer runs that
    /// far ahead of the first, so rows of any length are followed.
    #[inline(always)]
    fn visit_ahead(&self, mut ahead: impl FnMut(usize), mut f: impl FnMut(usize, usize)) {
        let plan = self.plan;
        if plan.indices_len == 0 {
            return;
        }
        let rank = plan.indices_shape.len();
        let axis = plan.axis;
        let dim = plan.data_shape[axis] as i64;
        let axis_stride = plan.data_strides[axis];
        // Along the last axis the index replaces the column; before it,
        // the column adds to the offset.
        let column_stride = usize::from(axis != rank - 1);
        let row_len = plan.indices_shape[rank - 1];
        let offset = |base: usize, c: usize, i: &I| {
            let i = i.to_i64();
            let j = if i < 0 { i + dim } else { i } as usize;
            base + j * axis_stride + c * column_stride
        };
        let mut coords = vec![0usize; rank - 1];
        let mut base = 0usize;
        // The ahead cursor: position `p`, column `c` of its row, and the
        // row's odometer. `row_len > 0` (indices_len is not zero).
        let (mut ahead_coords, mut ahead_base) = (vec![0usize; rank - 1], 0usize);
        let mut ahead_p = ELEMENTS_AHEAD.min(plan.indices_len);
        for _ in 0..ahead_p / row_len {
            plan.next_row(&mut ahead_coords, &mut ahead_base);
        }
        let mut ahead_c = ahead_p % row_len;
        for (row, row_indices) in self.indices.chunks_exact(row_len).enumerate() {
            let first = row * row_len;
            for (c, i) in row_indices.iter().enumerate() {
                if let Some(next) = self.indices.get(ahead_p) {
                    ahead(offset(ahead_base, ahead_c, next));
                    ahead_p += 1;
                    ahead_c += 1;
                    if ahead_c == row_len {
                        ahead_c = 0;
                        plan.next_row(&mut ahead_coords, &mut ahead_base);
                    }
                }
                f(offset(base, c, i), first + c);
            }
            plan.next_row(&mut coords, &mut base);
        }
    }

    pub(crate) fn plan(&self) -> &ElementsPlan {
        self.plan
    }

    pub(crate) fn check_buffers<D, T>(
        &self,
        data: &[D],
        updates: &[T],
    ) -> Result<(), ScatterError> {
        let plan = self.plan;
        check_len(Input::Data, &plan.data_shape, plan.data_len, data.len())?;
        check_len(
            Input::Updates,
            &plan.indices_shape,
            plan.indices_len,
            updates.len(),
        )
    }

    /// As [`ElementsPlan::copying_slab_len`].
    pub fn copying_slab_len(&self) -> usize {
        self.plan().copying_slab_len()
    }

    /// The serial in-place apply.
    /// `reduction` is one `T` can do (checked once per apply, by
    /// `crate::exec::write`).
    pub(crate) fn apply_serial<T: Element>(
        &self,
        data: &mut [T],
        updates: &[T],
        reduction: Reduction,
    ) -> Result<(), ScatterError> {
        self.check_buffers(data, updates)?;
        if self.prefetches::<T>(reduction) {
            // `prefetches` holds for `add` and `mul` alone.
            match reduction {
                Reduction::Mul => self.visit_prefetching(data, updates, T::mul),
                _ => self.visit_prefetching(data, updates, T::add),
            }
            return Ok(());
        }
        match reduction {
            Reduction::None => self.visit_unchecked(data, updates, |d, u| d.clone_from(u)),
            Reduction::Add => self.visit_unchecked(data, updates, T::add),
            Reduction::Mul => self.visit_unchecked(data, updates, T::mul),
            Reduction::Max | Reduction::Min if f32_slices(data, updates).is_some() => {
                // Random max/min mispredicts the `update > acc` branch about
                // half the time: f32 (the common case) takes a branchless
                // select with the same NaN semantics as `Element::max/min`.
                let (d, u) = f32_slices(data, updates).expect("checked above");
                if reduction == Reduction::Max {
                    self.visit_unchecked(d, u, |a, u| select_f32(a, *u, *u > *a))
                } else {
                    self.visit_unchecked(d, u, |a, u| select_f32(a, *u, *u < *a))
                }
            }
            Reduction::Max => self.visit_unchecked(data, updates, T::max),
            Reduction::Min => self.visit_unchecked(data, updates, T::min),
        }
        Ok(())
    }

    /// Whether [`Self::apply_serial`] asks for each destination ahead
    /// ([`crate::prefetch`]): into data beyond L2, whose random
    /// destinations miss the cache. Out of order, the core overlaps only
    /// the misses of the updates its reorder buffer holds; an update that
    /// costs more instructions (bfloat16's rounding) leaves fewer of them
    /// in flight, unless each destination was asked for ahead (see
    /// docs/performance.md, "Why the mechanisms exist").
    ///
    /// Only for `add` and `mul`, which read their destination before they
    /// write it: a plain write (`none`) waits for no line, and f32's
    /// `max`/`min` take the branchless select, which this path would not.
    fn prefetches<T>(&self, reduction: Reduction) -> bool {
        matches!(reduction, Reduction::Add | Reduction::Mul)
            && Mechanism::ElementsPrefetch.is_on()
            && self.plan.data_len.saturating_mul(std::mem::size_of::<T>())
                >= crate::prefetch::FROM_BYTES
    }

    /// [`Self::visit_unchecked`], each destination asked for
    /// [`ELEMENTS_AHEAD`] updates before it is written: the same calls in
    /// the same order. `f` is `T`'s own combining function (the branchless
    /// f32 max/min select is `Element::max/min` bit for bit, and the
    /// misses, not the branches, are what this path is for).
    #[inline(always)]
    fn visit_prefetching<T>(&self, data: &mut [T], updates: &[T], f: impl Fn(&mut T, &T)) {
        debug_assert_eq!(data.len(), self.plan.data_len);
        debug_assert_eq!(updates.len(), self.plan.indices_len);
        let data = data.as_mut_ptr();
        self.visit_ahead(
            // Only an address: nothing is read through it, and the hint
            // cannot fault.
            |o| crate::prefetch::lines(data.cast_const().wrapping_add(o), 1),
            |o, p| {
                debug_assert!(o < self.plan.data_len && p < updates.len());
                // SAFETY: as in `visit_unchecked`: `visit_ahead` yields
                // the offsets and positions `visit` does, in bounds by
                // `check_buffers` and `check_indices`; `data` is the
                // exclusive borrow's pointer, used for one element at a
                // time.
                unsafe { f(&mut *data.add(o), updates.get_unchecked(p)) }
            },
        )
    }

    /// [`Self::visit`] with `f(&mut data[offset], &updates[position])`,
    /// without bounds checks. Callers run [`Self::check_buffers`] first.
    #[inline(always)]
    fn visit_unchecked<T>(&self, data: &mut [T], updates: &[T], mut f: impl FnMut(&mut T, &T)) {
        debug_assert_eq!(data.len(), self.plan.data_len);
        debug_assert_eq!(updates.len(), self.plan.indices_len);
        self.visit(|o, p| {
            debug_assert!(o < data.len() && p < updates.len());
            // SAFETY: in bounds by construction. `check_buffers` proved
            // `data.len() == product(data_shape)` and `updates.len() ==
            // product(indices_shape)`; `visit` yields `p` in
            // `[0, indices_len)` and `o` = sum of coordinates times
            // row-major data strides where every coordinate is below its
            // data dimension: the axis one because `check_indices`
            // validated every index into `[-dim, dim - 1]` (normalized to
            // `[0, dim - 1]`), the others because the plan proved
            // `indices_shape[i] <= data_shape[i]` for `i != axis`.
            unsafe { f(data.get_unchecked_mut(o), updates.get_unchecked(p)) }
        })
    }

    /// [`Self::apply`] for any `Clone` type, in place and serially, with a
    /// caller-given combination `combine_fn(destination, update)` (e.g.
    /// symbolic dimensions in a host framework), called in row-major order
    /// of the indices. `Err` (a buffer whose length is not its shape's)
    /// comes before any write.
    pub fn apply_with<T: Clone>(
        &self,
        data: &mut [T],
        updates: &[T],
        mut combine_fn: impl FnMut(&mut T, &T),
    ) -> Result<(), ScatterError> {
        self.check_buffers(data, updates)?;
        self.visit(|o, p| combine_fn(&mut data[o], &updates[p]));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Execution, scatter_elements};

    #[test]
    fn f32_branchless_max_min_match_the_generic_element_path() {
        // f32 takes the branchless select; f64 the generic `Element` path.
        let values = [1.0, f32::NAN, -0.0, 0.0, 3.0, -2.5, f32::INFINITY, 7.0];
        let indices: Vec<i64> = (0..64).map(|i| (i * 5 + i / 3) % 8).collect();
        let updates: Vec<f32> = (0..64).map(|i| values[(i * 3 + 1) % 8]).collect();
        for reduction in [Reduction::Max, Reduction::Min] {
            let mut d32 = values.to_vec();
            let mut d64: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            let u64s: Vec<f64> = updates.iter().map(|&v| v as f64).collect();
            scatter_elements(&mut d32, &[8], &indices, &[64], &updates, 0, reduction).unwrap();
            scatter_elements(&mut d64, &[8], &indices, &[64], &u64s, 0, reduction).unwrap();
            for (a, b) in d32.iter().zip(&d64) {
                assert_eq!(
                    a.to_bits(),
                    (*b as f32).to_bits(),
                    "{reduction}: {d32:?} vs {d64:?}"
                );
            }
        }
    }

    #[test]
    fn onnx_example_1_axis_0() {
        let mut data = vec![0f32; 9];
        let indices = [1i64, 0, 2, 0, 2, 1];
        let updates = [1.0, 1.1, 1.2, 2.0, 2.1, 2.2];
        scatter_elements(
            &mut data,
            &[3, 3],
            &indices,
            &[2, 3],
            &updates,
            0,
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2]);
    }

    #[test]
    fn onnx_example_2_axis_1() {
        let mut data = vec![1f32, 2., 3., 4., 5.];
        scatter_elements(
            &mut data,
            &[1, 5],
            &[1i32, 3],
            &[1, 2],
            &[1.1, 2.1],
            1,
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [1.0, 1.1, 3.0, 2.1, 5.0]);
    }

    #[test]
    fn negative_indices_count_from_the_end() {
        let mut data = vec![1f32, 2., 3., 4., 5.];
        scatter_elements(
            &mut data,
            &[1, 5],
            &[1i64, -3],
            &[1, 2],
            &[1.1, 2.1],
            1,
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [1.0, 1.1, 2.1, 4.0, 5.0]);
    }

    #[test]
    fn duplicates_fold_in_row_major_order() {
        let mut data = vec![1f32, 2., 3., 4., 5.];
        scatter_elements(
            &mut data,
            &[1, 5],
            &[1i64, 1],
            &[1, 2],
            &[1.1, 2.1],
            1,
            Reduction::Add,
        )
        .unwrap();
        assert_eq!(data, [1.0, 5.2, 3.0, 4.0, 5.0]);
        let mut data = vec![0i32; 3];
        scatter_elements(
            &mut data,
            &[3],
            &[2i64, 2, 2],
            &[3],
            &[7, 8, 9],
            0,
            Reduction::None,
        )
        .unwrap();
        assert_eq!(data, [0, 0, 9]);
    }

    #[test]
    fn indices_may_be_longer_than_data_along_the_axis_only() {
        let mut data = vec![0i64; 4];
        scatter_elements(
            &mut data,
            &[2, 2],
            &[0i64, 0, 0, 1, 1, 1],
            &[2, 3],
            &[1, 2, 3, 4, 5, 6],
            1,
            Reduction::Add,
        )
        .unwrap();
        assert_eq!(data, [6, 0, 0, 15]);
        let err = ElementsPlan::new(&[2, 2], &[3, 1], &[3, 1], 1).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("shape: indices has shape [3, 1], expected dim 0 <= 2"),
            "{err}"
        );
    }

    #[test]
    fn last_axis_rejects_index_past_the_end() {
        let mut data = vec![0f32; 6];
        let err = scatter_elements(
            &mut data,
            &[2, 3],
            &[0i64, 3],
            &[1, 2],
            &[1.0, 1.0],
            -1,
            Reduction::None,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "indices[0, 1] = 3 is out of bounds for data axis 1 of size 3 (valid range [-3, 2])"
        );
        assert_eq!(data, [0.0; 6], "nothing written before the error");
    }

    #[test]
    fn index_below_minus_dim_is_out_of_bounds() {
        let mut data = vec![0u8; 3];
        for bad in [-4i64, i64::MIN, i64::MAX, 3] {
            let err = scatter_elements(&mut data, &[3], &[bad], &[1], &[1], 0, Reduction::None)
                .unwrap_err();
            assert!(matches!(err, ScatterError::OutOfBounds { value, .. } if value == bad));
        }
    }

    #[test]
    fn axis_equal_to_rank_is_refused() {
        let err = ElementsPlan::new(&[2, 2], &[1, 1], &[1, 1], 2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "axis 2 is invalid for data of rank 2: expected a value in [-2, 1]"
        );
        assert!(ElementsPlan::new(&[2, 2], &[1, 1], &[1, 1], -3).is_err());
        assert_eq!(
            ElementsPlan::new(&[2, 2], &[1, 1], &[1, 1], -2)
                .unwrap()
                .axis(),
            0
        );
    }

    #[test]
    fn rank_zero_data_and_rank_mismatch_are_refused() {
        assert!(matches!(
            ElementsPlan::new(&[], &[], &[], 0),
            Err(ScatterError::Rank { .. })
        ));
        assert!(matches!(
            ElementsPlan::new(&[3], &[1, 1], &[1, 1], 0),
            Err(ScatterError::Rank {
                input: Input::Indices,
                ..
            })
        ));
        assert!(matches!(
            ElementsPlan::new(&[3], &[1], &[2], 0),
            Err(ScatterError::Shape {
                input: Input::Updates,
                ..
            })
        ));
    }

    #[test]
    fn empty_indices_leave_data_unchanged() {
        let mut data = vec![1i32, 2, 3];
        scatter_elements(&mut data, &[3], &[] as &[i64], &[0], &[], 0, Reduction::Mul).unwrap();
        assert_eq!(data, [1, 2, 3]);
        let mut empty: Vec<i32> = vec![];
        scatter_elements(
            &mut empty,
            &[0, 3],
            &[] as &[i64],
            &[0, 3],
            &[],
            1,
            Reduction::None,
        )
        .unwrap();
    }

    #[test]
    fn any_index_into_an_empty_axis_is_out_of_bounds() {
        let mut empty: Vec<i32> = vec![];
        let err = scatter_elements(&mut empty, &[0], &[0i64], &[1], &[1], 0, Reduction::None)
            .unwrap_err();
        assert!(err.to_string().contains("no valid index"), "{err}");
    }

    #[test]
    fn rank_3_middle_axis_with_partial_index_shape() {
        // data 2x3x4, indices 1x2x3 along axis 1 (non-axis dims smaller).
        let mut data = vec![0i32; 24];
        let indices = [2i64, 0, 1, -1, 1, 0];
        let updates = [1, 2, 3, 4, 5, 6];
        scatter_elements(
            &mut data,
            &[2, 3, 4],
            &indices,
            &[1, 2, 3],
            &updates,
            1,
            Reduction::None,
        )
        .unwrap();
        let mut expected = vec![0i32; 24];
        // (0, idx, c) for row r of indices: coords (0, r, c)
        expected[2 * 4] = 1;
        expected[1] = 2;
        expected[4 + 2] = 3;
        expected[2 * 4] = 4;
        expected[4 + 1] = 5;
        expected[2] = 6;
        assert_eq!(data, expected);
    }

    #[test]
    fn buffer_length_mismatch_is_an_error_not_a_panic() {
        let plan = ElementsPlan::new(&[3], &[1], &[1], 0).unwrap();
        let checked = plan.check_indices(&[0i64], Execution::SERIAL).unwrap();
        let mut short = vec![0f32; 2];
        assert!(matches!(
            checked.apply(&mut short, &[1.0], Reduction::None, Execution::SERIAL),
            Err(ScatterError::Length { .. })
        ));
        assert!(matches!(
            plan.check_indices(&[0i64, 1], Execution::SERIAL),
            Err(ScatterError::Length { .. })
        ));
    }

    /// `(i * 7919 + i / 3) mod 2 dim - dim`: every index of `[-dim, dim)`,
    /// negatives included, and duplicates in every row.
    fn spread_indices(n: usize, dim: usize) -> Vec<i64> {
        let dim = dim as i64;
        (0..n as i64)
            .map(|i| (i * 7919 + i / 3) % (2 * dim) - dim)
            .collect()
    }

    #[test]
    fn a_serial_scatter_into_large_data_asking_ahead_writes_what_the_plain_visit_writes_on_every_axis()
     {
        // 1.2 MB of f32: beyond `prefetch::FROM_BYTES`. Rows of indices
        // longer than `ELEMENTS_AHEAD`, shorter (the ahead cursor crosses
        // several rows), and fewer updates than it.
        let data_shape = [40usize, 96, 80];
        let data: Vec<f32> = (0..40 * 96 * 80)
            .map(|i| (i % 1013) as f32 * 0.25)
            .collect();
        for axis in 0..3 {
            for mut indices_shape in [[3usize, 50, 45], [13, 9, 3], [1, 1, 1]] {
                indices_shape[axis] += 70;
                let n: usize = indices_shape.iter().product();
                let indices = spread_indices(n, data_shape[axis]);
                let updates: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 7.0).collect();
                let plan =
                    ElementsPlan::new(&data_shape, &indices_shape, &indices_shape, axis as i64)
                        .unwrap();
                let checked = plan.check_indices(&indices, Execution::SERIAL).unwrap();
                assert!(
                    checked.prefetches::<f32>(Reduction::Add),
                    "the case asks ahead"
                );
                assert!(
                    !checked.prefetches::<f32>(Reduction::None),
                    "a plain write does not"
                );
                assert!(
                    !checked.prefetches::<f32>(Reduction::Max),
                    "f32 max takes the select"
                );
                for reduction in [
                    Reduction::None,
                    Reduction::Add,
                    Reduction::Mul,
                    Reduction::Max,
                    Reduction::Min,
                ] {
                    let mut asked_ahead = data.clone();
                    checked
                        .apply(&mut asked_ahead, &updates, reduction, Execution::SERIAL)
                        .unwrap();
                    let mut plain = data.clone();
                    checked
                        .apply_with(&mut plain, &updates, |a, u| {
                            crate::element::combine(reduction, a, u)
                        })
                        .unwrap();
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert!(
                        bits(&asked_ahead) == bits(&plain),
                        "axis {axis}, indices {indices_shape:?}, {reduction:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_bfloat16_add_or_mul_into_large_data_asking_ahead_is_half_s_bf16_arithmetic_bit_for_bit() {
        use crate::Bfloat16InFloat32;
        use half::bf16;
        // 1.25 MB of f32; 160 updates per row into 20 of its columns, so
        // each destination rounds after each of 8 updates in turn. Among
        // the updates: sums that tie, the largest finite value (sums that
        // overflow), subnormals, infinities and NaNs with payloads.
        let (rows, cols, per_row) = (512usize, 640usize, 160usize);
        let hard: [u16; 12] = [
            0x3b80, 0xbb80, 0x3c00, 0x7f7f, 0xff7f, 0x0001, 0x807f, 0x0080, 0x7f80, 0xff80, 0x7fc0,
            0xffc1,
        ];
        let narrow_data: Vec<bf16> = (0..rows * cols)
            .map(|i| bf16::from_f32(((i * 7) % 1000) as f32 * 0.01 - 3.0))
            .collect();
        let narrow_updates: Vec<bf16> = (0..rows * per_row)
            .map(|i| {
                if i % 37 == 0 {
                    bf16::from_bits(hard[(i / 37) % hard.len()])
                } else {
                    bf16::from_f32(((i * 13) % 101) as f32 * 0.0625 - 3.0)
                }
            })
            .collect();
        let indices: Vec<i64> = (0..rows * per_row)
            .map(|i| ((i * 7) % 20) as i64 * 31 - 320)
            .collect();
        let wide = |v: &[bf16]| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
        let (data, updates) = (wide(&narrow_data), wide(&narrow_updates));
        let plan = ElementsPlan::new(&[rows, cols], &[rows, per_row], &[rows, per_row], 1).unwrap();
        let checked = plan.check_indices(&indices, Execution::SERIAL).unwrap();
        assert!(
            checked.prefetches::<Bfloat16InFloat32>(Reduction::Add),
            "the case asks ahead"
        );
        for reduction in [Reduction::Add, Reduction::Mul] {
            let mut asked_ahead = data.clone();
            checked
                .apply(
                    Bfloat16InFloat32::slice_mut(&mut asked_ahead),
                    Bfloat16InFloat32::slice(&updates),
                    reduction,
                    Execution::SERIAL,
                )
                .unwrap();
            let mut reference = narrow_data.clone();
            checked
                .apply_with(&mut reference, &narrow_updates, |a, u| {
                    crate::element::combine(reduction, a, u)
                })
                .unwrap();
            let got: Vec<u32> = asked_ahead.iter().map(|x| x.to_bits()).collect();
            let expected: Vec<u32> = reference.iter().map(|x| x.to_f32().to_bits()).collect();
            assert!(got == expected, "{reduction:?}");
            assert!(
                got.iter().any(|b| f32::from_bits(*b).is_nan()),
                "NaN reached"
            );
        }
    }
}

//! ONNX `TensorScatter` (opset 24): KV-cache writes along a sequence axis.

use crate::fact_dim::known_ne_shape;
use crate::parallel::{even_bounds, for_each_part, split_at_bounds};
use crate::shape::{check_len, checked_count, element_count};
use crate::{Dims, Execution, FactDim, Input, Parallel, ScatterError, Schedule};

/// Where a write past the end of the sequence axis goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TensorScatterMode {
    /// Past the end is an error.
    #[default]
    Linear,
    /// Positions wrap modulo the axis size.
    Circular,
}

impl TensorScatterMode {
    /// The ONNX spelling of the `mode` attribute (`linear`, `circular`).
    pub fn as_str(self) -> &'static str {
        match self {
            TensorScatterMode::Linear => "linear",
            TensorScatterMode::Circular => "circular",
        }
    }

    /// Parses the ONNX spelling; `None` for anything else (case matters).
    pub fn from_onnx(s: &str) -> Option<TensorScatterMode> {
        match s {
            "linear" => Some(TensorScatterMode::Linear),
            "circular" => Some(TensorScatterMode::Circular),
            _ => None,
        }
    }
}

/// The validated geometry of one `TensorScatter`.
///
/// Contract: `past_cache` of rank `r >= 2` (axis 0 is the batch);
/// `axis` in `[-r, r - 1]` and not the batch axis; `update` equal to
/// `past_cache` in shape except along `axis`, where it is no longer;
/// `write_indices`, when given, of shape `[batch]`. For every prefix index
/// before `axis` (its first component is the batch entry `b`) and every
/// `s < update.shape[axis]`:
/// `present[prefix, w_b + s, ..] = update[prefix, s, ..]`, with `w_b = 0`
/// when `write_indices` is absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorScatterPlan {
    cache_shape: Vec<usize>,
    update_shape: Vec<usize>,
    axis: usize,
    batch: usize,
    /// Product of the dims strictly between the batch axis and `axis`.
    heads: usize,
    seq: usize,
    update_seq: usize,
    /// Product of the dims after `axis`: one contiguous row.
    inner: usize,
    cache_len: usize,
    update_len: usize,
}

/// Proof that every write index fits the plan in its mode.
#[derive(Debug)]
pub struct CheckedWriteIndices<'a> {
    plan: &'a TensorScatterPlan,
    starts: Option<&'a [i64]>,
    mode: TensorScatterMode,
}

impl TensorScatterPlan {
    /// The plan of a `TensorScatter` of these shapes along `axis` (ONNX's
    /// attribute, in `[-r, r - 1]`, not 0); `write_indices_shape` is `None`
    /// when the optional input is absent. `Err` names the first rule of the
    /// contract the shapes or the axis break ([`Self::check_shapes`]), or
    /// an input whose element count does not fit in `usize`.
    pub fn new(
        cache_shape: &[usize],
        update_shape: &[usize],
        write_indices_shape: Option<&[usize]>,
        axis: i64,
    ) -> Result<TensorScatterPlan, ScatterError> {
        let axis =
            TensorScatterPlan::check_shapes(cache_shape, update_shape, write_indices_shape, axis)?;
        let cache_len = checked_count(Input::PastCache, cache_shape)?;
        let update_len = checked_count(Input::Update, update_shape)?;
        // Products of parts of a countable shape can still overflow when
        // another dimension is 0 (past_cache [0, 0, 2, usize::MAX]). `apply`
        // reads `heads` and `inner` only when update_len > 0, and then every
        // dimension of past_cache is non-zero, so they fit; 0 otherwise.
        let heads = element_count(&cache_shape[1..axis]).unwrap_or(0);
        let inner = element_count(&cache_shape[axis + 1..]).unwrap_or(0);
        Ok(TensorScatterPlan {
            cache_shape: cache_shape.to_vec(),
            update_shape: update_shape.to_vec(),
            axis,
            batch: cache_shape[0],
            heads,
            seq: cache_shape[axis],
            update_seq: update_shape[axis],
            inner,
            cache_len,
            update_len,
        })
    }

    /// The shape rules of [`TensorScatterPlan::new`], on dims that may be
    /// unknown ([`FactDim`]): `Err` when a rule is known to be broken, with
    /// the words the plan uses; `Ok` with the normalized axis. In the
    /// plan's order: past_cache rank and axis, update rank, update shape,
    /// write_indices shape.
    pub fn check_shapes<D: FactDim>(
        cache_shape: &[D],
        update_shape: &[D],
        write_indices_shape: Option<&[D]>,
        axis: i64,
    ) -> Result<usize, ScatterError> {
        let rank = cache_shape.len();
        let axis = crate::axis::tensor_scatter_axis(axis, rank)?;
        if update_shape.len() != rank {
            return Err(ScatterError::Rank {
                input: Input::Update,
                rank: update_shape.len(),
                expected: format!(
                    "{rank} (the rank of past_cache, shape {})",
                    Dims::of(cache_shape)
                ),
            });
        }
        for (i, (u, c)) in update_shape.iter().zip(cache_shape).enumerate() {
            if (i == axis && u.known_gt(c)) || (i != axis && u.known_ne(c)) {
                return Err(ScatterError::Shape {
                    input: Input::Update,
                    shape: Dims::of(update_shape),
                    expected: format!(
                        "the shape of past_cache {} except along axis {axis}, where it may be shorter",
                        Dims::of(cache_shape)
                    ),
                });
            }
        }
        if let Some(w) = write_indices_shape
            && known_ne_shape(w.iter(), cache_shape[..1].iter())
        {
            return Err(ScatterError::Shape {
                input: Input::WriteIndices,
                shape: Dims::of(w),
                expected: format!(
                    "[{}] (one start per batch entry of past_cache {})",
                    cache_shape[0],
                    Dims::of(cache_shape)
                ),
            });
        }
        Ok(axis)
    }

    /// The normalized axis.
    pub fn axis(&self) -> usize {
        self.axis
    }

    /// Checks every start: in linear mode `0 <= w_b <= seq - update_seq`
    /// when the update has at least one position (an empty update writes
    /// nothing, so no start is past the end); in circular mode any value
    /// (positions wrap).
    pub fn check_write_indices<'a>(
        &'a self,
        starts: Option<&'a [i64]>,
        mode: TensorScatterMode,
    ) -> Result<CheckedWriteIndices<'a>, ScatterError> {
        if let Some(starts) = starts {
            check_len(Input::WriteIndices, &[self.batch], self.batch, starts.len())?;
            if mode == TensorScatterMode::Linear && self.update_seq > 0 {
                let last_start = (self.seq - self.update_seq) as i64;
                if let Some((b, &w)) = starts
                    .iter()
                    .enumerate()
                    .find(|(_, w)| !(0..=last_start).contains(*w))
                {
                    return Err(ScatterError::WriteOutOfBounds {
                        batch: b,
                        start: w,
                        len: self.update_seq,
                        axis: self.axis,
                        dim: self.seq,
                    });
                }
            }
        }
        Ok(CheckedWriteIndices {
            plan: self,
            starts,
            mode,
        })
    }
}

impl CheckedWriteIndices<'_> {
    /// Copies `update` into `cache` in place: O(update) work. On a parallel
    /// `exec` (by its schedule's split rule over the bytes of the update)
    /// each task owns whole `(batch, heads..)` windows of the cache
    /// (`cache[prefix, .., ..]`, contiguous): the same bytes as serially.
    /// `Err` (a buffer whose length is not its shape's) comes before any
    /// write.
    pub fn apply<T: Clone + Send + Sync>(
        &self,
        cache: &mut [T],
        update: &[T],
        exec: Execution<'_>,
    ) -> Result<(), ScatterError> {
        self.apply_split(cache, update, exec.par, exec.schedule)
    }

    /// The serial apply.
    fn apply_serial<T: Clone>(&self, cache: &mut [T], update: &[T]) -> Result<(), ScatterError> {
        let p = self.plan;
        check_len(Input::PastCache, &p.cache_shape, p.cache_len, cache.len())?;
        check_len(Input::Update, &p.update_shape, p.update_len, update.len())?;
        // Nothing to write; the dims of an empty tensor may multiply past
        // usize, so no product of them is taken.
        if p.cache_len == 0 || p.update_len == 0 {
            return Ok(());
        }
        let window = p.seq * p.inner;
        for (prefix, dst) in cache.chunks_exact_mut(window).enumerate() {
            self.write_prefix(prefix, dst, update);
        }
        Ok(())
    }

    /// [`Self::apply`] on `par`, split by whole windows.
    fn apply_split<T: Clone + Send + Sync>(
        &self,
        cache: &mut [T],
        update: &[T],
        par: &dyn Parallel,
        schedule: &Schedule,
    ) -> Result<(), ScatterError> {
        let p = self.plan;
        check_len(Input::PastCache, &p.cache_shape, p.cache_len, cache.len())?;
        check_len(Input::Update, &p.update_shape, p.update_len, update.len())?;
        if p.cache_len == 0 || p.update_len == 0 {
            return self.apply_serial(cache, update);
        }
        // Both tensors hold elements: every product of their dims fits.
        let prefixes = p.batch * p.heads;
        let bytes = update.len().saturating_mul(std::mem::size_of::<T>());
        let tasks = schedule.tasks(par, bytes, prefixes);
        if tasks == 1 {
            return self.apply_serial(cache, update);
        }
        let window = p.seq * p.inner;
        let bounds: Vec<usize> = even_bounds(prefixes, tasks)
            .into_iter()
            .map(|b| b * window)
            .collect();
        let parts = split_at_bounds(cache, &bounds)
            .into_iter()
            .zip(bounds.iter().map(|b| b / window))
            .collect();
        for_each_part(par, parts, |_, part, first| {
            for (i, dst) in part.chunks_exact_mut(window).enumerate() {
                self.write_prefix(first + i, dst, update);
            }
        });
        Ok(())
    }

    /// Writes the update rows of one prefix (`b * heads + h`) into its
    /// window `dst` of `seq * inner` elements. `update_len > 0`.
    fn write_prefix<T: Clone>(&self, prefix: usize, dst: &mut [T], update: &[T]) {
        let p = self.plan;
        let row = p.inner;
        let start = self.starts.map_or(0, |s| s[prefix / p.heads.max(1)]);
        let src = &update[prefix * p.update_seq * row..][..p.update_seq * row];
        match self.mode {
            TensorScatterMode::Linear => {
                // Checked: 0 <= start <= seq - update_seq.
                let start = start as usize;
                dst[start * row..(start + p.update_seq) * row].clone_from_slice(src);
            }
            TensorScatterMode::Circular => {
                // update_seq >= 1 here, so seq >= 1.
                let first = start.rem_euclid(p.seq as i64) as usize;
                let head = (p.seq - first).min(p.update_seq);
                dst[first * row..(first + head) * row].clone_from_slice(&src[..head * row]);
                // update_seq <= seq: the wrapped part never reaches `first`.
                let tail = p.update_seq - head;
                dst[..tail * row].clone_from_slice(&src[head * row..]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        cache: &[i32],
        cache_shape: &[usize],
        update: &[i32],
        update_shape: &[usize],
        starts: Option<&[i64]>,
        axis: i64,
        mode: TensorScatterMode,
    ) -> Result<Vec<i32>, ScatterError> {
        let plan = TensorScatterPlan::new(
            cache_shape,
            update_shape,
            starts.map(|s| [s.len()]).as_ref().map(|s| &s[..]),
            axis,
        )?;
        let checked = plan.check_write_indices(starts, mode)?;
        let mut out = cache.to_vec();
        checked.apply(&mut out, update, Execution::SERIAL)?;
        Ok(out)
    }

    #[test]
    fn linear_writes_each_batch_at_its_own_start() {
        // cache [2, 4, 1], update [2, 2, 1], axis 1
        let out = run(
            &[0; 8],
            &[2, 4, 1],
            &[1, 2, 3, 4],
            &[2, 2, 1],
            Some(&[1, 2]),
            1,
            TensorScatterMode::Linear,
        )
        .unwrap();
        assert_eq!(out, [0, 1, 2, 0, 0, 0, 3, 4]);
    }

    #[test]
    fn absent_write_indices_start_at_zero() {
        let out = run(
            &[0; 4],
            &[1, 4],
            &[7, 8],
            &[1, 2],
            None,
            -1,
            TensorScatterMode::Linear,
        )
        .unwrap();
        assert_eq!(out, [7, 8, 0, 0]);
    }

    #[test]
    fn circular_wraps_past_the_end() {
        let out = run(
            &[0; 4],
            &[1, 4],
            &[7, 8, 9],
            &[1, 3],
            Some(&[3]),
            1,
            TensorScatterMode::Circular,
        )
        .unwrap();
        assert_eq!(out, [8, 9, 0, 7]);
    }

    #[test]
    fn linear_past_the_end_is_out_of_bounds() {
        let err = run(
            &[0; 4],
            &[1, 4],
            &[7, 8, 9],
            &[1, 3],
            Some(&[2]),
            1,
            TensorScatterMode::Linear,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "write_indices[0] = 2 with 3 updated positions is out of bounds for axis 1 of size 4 in linear mode (valid range [0, 1])"
        );
        assert!(
            run(
                &[0; 4],
                &[1, 4],
                &[7],
                &[1, 1],
                Some(&[-1]),
                1,
                TensorScatterMode::Linear
            )
            .is_err()
        );
        assert!(
            run(
                &[0; 4],
                &[1, 4],
                &[7],
                &[1, 1],
                Some(&[i64::MAX]),
                1,
                TensorScatterMode::Circular
            )
            .is_ok()
        );
    }

    #[test]
    fn batch_axis_and_shape_errors_are_refused() {
        assert!(matches!(
            TensorScatterPlan::new(&[2, 4], &[2, 1], None, 0),
            Err(ScatterError::Axis { .. })
        ));
        assert!(matches!(
            TensorScatterPlan::new(&[2, 4], &[2, 1], None, -2),
            Err(ScatterError::Axis { .. })
        ));
        assert!(matches!(
            TensorScatterPlan::new(&[2, 4], &[2, 5], None, 1),
            Err(ScatterError::Shape { .. })
        ));
        assert!(matches!(
            TensorScatterPlan::new(&[2, 4], &[1, 1], None, 1),
            Err(ScatterError::Shape { .. })
        ));
        assert!(matches!(
            TensorScatterPlan::new(&[2, 4], &[2, 1], Some(&[3]), 1),
            Err(ScatterError::Shape { .. })
        ));
        assert!(matches!(
            TensorScatterPlan::new(&[4], &[1], None, -1),
            Err(ScatterError::Rank { .. })
        ));
    }
}

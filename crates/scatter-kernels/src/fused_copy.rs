//! Scatters into a copy of their data, fused with the copy: ScatterElements slab by slab
//! ([`write_copying_elements`]), ScatterND without reduction copying around its slices
//! ([`write_copying_nd`]).
//!
//! The destination is `&mut [MaybeUninit<T>]` ([`crate::CopyOf`]): it may hold anything on
//! entry (a fresh, never written buffer included), and it is written through
//! [`crate::uninit`]'s primitives, never read before it is written. Each copying write here
//! promises that, on `Ok`, every element has been written (its proof beside it); `apply` hands
//! the destination back as `&mut [T]` on that promise, and only then.

use std::mem::MaybeUninit;

use crate::shape::{check_len, element_count};
use crate::uninit::{Filling, write_copy, write_copy_in_pieces};
use crate::{
    CheckedElementsIndices, CheckedNdIndices, Element, ElementsPlan, IndexValue, Input, Reduction,
    ScatterError,
};

/// `dst = src` then the serial apply, slab by slab, bit for bit.
///
/// Copying a large data tensor and then scattering into the copy reads every written
/// position a second time, after the copy has pushed it out of cache. But the updates along
/// `axis` at fixed leading coordinates (those before the axis) only write the data slab at
/// the same leading coordinates (`data_shape[axis..]`, contiguous), and the indices list them
/// slab after slab. So each slab is copied, then its updates applied while it is in cache:
/// no scratch, no reordering, and the result of copy-then-apply bit for bit (every element
/// sees its updates in the same order).
///
/// Contract: on `Ok`, every element of `dst` has been written: the
/// short paths with one `write_copy`; the slab path through a
/// `Filling`, each slab's block copied up to its end before its
/// updates land and `finish` copying the rest.
pub(crate) fn write_copying_elements<T: Element + Copy, I: IndexValue>(
    token: &CheckedElementsIndices<'_, I>,
    dst: &mut [MaybeUninit<T>],
    src: &[T],
    updates: &[T],
    reduction: Reduction,
) -> Result<(), ScatterError> {
    let plan = token.plan();
    token.check_buffers(dst, updates)?;
    check_len(Input::Data, plan.data_shape(), dst.len(), src.len())?;
    let axis = plan.axis();
    let slab = token.copying_slab_len();
    let indices_slab = element_count(&plan.indices_shape()[axis..]).unwrap_or(0);
    if slab == 0 || indices_slab == 0 || plan.indices_len == 0 {
        return token.apply_serial(write_copy(dst, src), updates, reduction);
    }
    // The plan of one slab: the same checked index values, axis 0.
    let sub = ElementsPlan::new(
        &plan.data_shape()[axis..],
        &plan.indices_shape()[axis..],
        &plan.indices_shape()[axis..],
        0,
    )?;
    let outer = &plan.indices_shape()[..axis];
    let outer_strides = crate::row_major_strides(&plan.data_shape()[..axis]);
    let mut coords = vec![0usize; axis];
    let mut out = Filling::new(dst, src);
    for k in 0..plan.indices_len / indices_slab {
        // The data slab of the k-th indices slab (row-major over the
        // leading dims of indices, each within data's): copied, with
        // the slabs before it no update writes, then scattered into.
        let target: usize = coords.iter().zip(&outer_strides).map(|(c, s)| c * s).sum();
        let part = CheckedElementsIndices {
            plan: &sub,
            indices: &token.indices[k * indices_slab..(k + 1) * indices_slab],
        };
        part.apply_serial(
            out.block(target * slab, (target + 1) * slab),
            &updates[k * indices_slab..(k + 1) * indices_slab],
            reduction,
        )?;
        for d in (0..axis).rev() {
            coords[d] += 1;
            if coords[d] < outer[d] {
                break;
            }
            coords[d] = 0;
        }
    }
    out.finish();
    Ok(())
}

/// Writes every update slice into `dst` in row-major order of the index
/// tuples, each over whatever the slice held: the last write to a slice
/// wins, as in `apply` without reduction. Row-major slices only
/// ([`CheckedNdIndices::copies_around_slices`]); callers checked the buffers.
fn put_slices<T: Copy, I: IndexValue>(
    token: &CheckedNdIndices<'_, I>,
    dst: &mut [MaybeUninit<T>],
    updates: &[T],
) {
    let len = token.plan.slice_len;
    if len == 1 {
        // Single elements (`k == rank`): no copy loop around each.
        token.visit(|o, t| {
            dst[o].write(updates[t]);
        });
    } else {
        token.visit(|o, t| {
            write_copy(&mut dst[o..o + len], &updates[t * len..(t + 1) * len]);
        });
    }
}

/// `dst = src` then the serial apply, bit for bit. With
/// `Reduction::None` and [`CheckedNdIndices::copies_around_slices`],
/// the slices the updates overwrite are not copied first; otherwise a
/// copy, then the serial apply.
///
/// A slice an update overwrites whole need not be copied first: only the gaps between the
/// written slices are copied, then the update slices written in the order `apply` writes
/// them (the last write to a slice wins): every element of the output is written, the
/// slices' as `apply` leaves them.
///
/// Contract: on `Ok`, every element of `dst` has been written: with one
/// `write_copy` before the apply, or, around the slices, every gap
/// between the distinct slice starts (sorted; slices of one row-major
/// plan start `slice_len` apart at least, so they are disjoint) with
/// `write_copy_in_pieces`, and every slice by `put_slices` (each
/// distinct start is some tuple's, and `put_slices` writes every
/// tuple's slice).
pub(crate) fn write_copying_nd<T: Element + Copy, I: IndexValue>(
    token: &CheckedNdIndices<'_, I>,
    dst: &mut [MaybeUninit<T>],
    src: &[T],
    updates: &[T],
    reduction: Reduction,
) -> Result<(), ScatterError> {
    token.check_buffers(dst, updates)?;
    check_len(Input::Data, &token.plan.data_shape, dst.len(), src.len())?;
    if reduction != Reduction::None || !token.copies_around_slices() {
        return token.apply_serial(write_copy(dst, src), updates, reduction);
    }
    let mut starts = Vec::with_capacity(token.plan.tuples);
    token.visit(|o, _| starts.push(o));
    starts.sort_unstable();
    starts.dedup();
    let len = token.plan.slice_len;
    let mut copied = 0;
    for start in starts {
        write_copy_in_pieces(&mut dst[copied..start], &src[copied..start]);
        copied = start + len;
    }
    write_copy_in_pieces(&mut dst[copied..], &src[copied..]);
    put_slices(token, dst, updates);
    Ok(())
}

/// `dst = src` (equal lengths) in 64 KiB pieces, for a warm destination.
/// glibc copies a block above its non-temporal threshold (about 3/4 of
/// the L3) with streaming stores, which into a warm destination run
/// slower than ordinary stores copied in pieces (see docs/performance.md,
/// "Why the mechanisms exist"); ordinary stores also leave the end of the
/// output in cache for what follows.
/// Into fresh pages a whole copy wins instead (the streaming stores skip
/// reading the lines they fill).
pub fn copy_in_pieces<T: Copy>(dst: &mut [T], src: &[T]) {
    debug_assert_eq!(dst.len(), src.len());
    let piece = crate::uninit::piece_len::<T>();
    for (d, s) in dst.chunks_mut(piece).zip(src.chunks(piece)) {
        d.copy_from_slice(s);
    }
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;

    use crate::{BlockSort, CopyOf, ElementsPlan, Execution, Reduction};

    const SERIAL: Execution<'static> = Execution::SERIAL;

    /// Copy-then-apply and a copying apply on the same case.
    #[allow(clippy::too_many_arguments)]
    fn both<T: crate::Element + Copy + PartialEq + std::fmt::Debug>(
        data: &[T],
        data_shape: &[usize],
        indices: &[i64],
        indices_shape: &[usize],
        updates: &[T],
        axis: i64,
        reduction: Reduction,
        fill: T,
    ) -> (Vec<T>, Vec<T>) {
        let plan = ElementsPlan::new(data_shape, indices_shape, indices_shape, axis).unwrap();
        let checked = plan.check_indices(indices, SERIAL).unwrap();
        let mut reference = data.to_vec();
        checked
            .apply(&mut reference, updates, reduction, SERIAL)
            .unwrap();
        let mut out = vec![MaybeUninit::new(fill); data.len()];
        let fused = checked
            .apply(
                CopyOf {
                    data,
                    out: &mut out,
                },
                updates,
                reduction,
                SERIAL,
            )
            .unwrap();
        (reference, fused.to_vec())
    }

    #[test]
    fn every_axis_and_reduction_gives_copy_then_apply_bit_for_bit() {
        // data [5, 6, 7]; indices [3, 4, 9] (shorter on the leading dims,
        // longer on the axis where allowed), many duplicates, negatives.
        let data_shape = [5usize, 6, 7];
        let data: Vec<f32> = (0..210)
            .map(|i| ((i * 7) % 23) as f32 * 0.3 - 2.0)
            .collect();
        for axis in 0..3usize {
            let mut indices_shape = [3usize, 4, 5];
            indices_shape[axis] = 9;
            let n: usize = indices_shape.iter().product();
            let dim = data_shape[axis] as i64;
            let indices: Vec<i64> = (0..n as i64)
                .map(|i| (i * 5 + i / 7) % (2 * dim) - dim)
                .collect();
            let updates: Vec<f32> = (0..n)
                .map(|i| ((i * 31) % 17) as f32 * 0.37 - 3.0)
                .collect();
            for reduction in [
                Reduction::None,
                Reduction::Add,
                Reduction::Mul,
                Reduction::Max,
                Reduction::Min,
            ] {
                let (reference, fused) = both(
                    &data,
                    &data_shape,
                    &indices,
                    &indices_shape,
                    &updates,
                    axis as i64,
                    reduction,
                    f32::NAN,
                );
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&reference), bits(&fused), "axis {axis} {reduction:?}");
            }
        }
    }

    #[test]
    fn empty_updates_and_integers_match_copy_then_apply() {
        let data: Vec<i64> = (0..60).collect();
        let (reference, fused) = both(&data, &[6, 10], &[], &[6, 0], &[], 1, Reduction::Add, 7);
        assert_eq!(reference, fused);
        let indices: Vec<i64> = (0..20).map(|i| (i * 3) % 10).collect();
        let updates: Vec<i64> = (0..20).map(|i| -i).collect();
        let (reference, fused) = both(
            &data,
            &[6, 10],
            &indices,
            &[2, 10],
            &updates,
            1,
            Reduction::Max,
            7,
        );
        assert_eq!(reference, fused);
    }

    #[test]
    fn a_short_source_is_refused() {
        let plan = ElementsPlan::new(&[4], &[1], &[1], 0).unwrap();
        let checked = plan.check_indices(&[1i64], SERIAL).unwrap();
        let mut dst = [MaybeUninit::<f32>::uninit(); 4];
        let err = checked
            .apply(
                CopyOf {
                    data: &[1.0, 2.0],
                    out: &mut dst,
                },
                &[5.0],
                Reduction::None,
                SERIAL,
            )
            .unwrap_err();
        assert!(format!("{err}").contains("data"), "{err}");
    }

    #[test]
    fn scatter_nd_copies_around_its_slices_with_the_copy_then_apply_result() {
        use crate::NdPlan;
        // data [6, 4, 5]; tuples of 1 (slices of 20) and of 2 (slices of
        // 5), duplicates and negatives, every reduction.
        let data: Vec<f32> = (0..120).map(|i| i as f32 * 0.5 - 7.0).collect();
        for (indices, indices_shape, updates_shape) in [
            (vec![4i64, -6, 4, 2], vec![4usize, 1], vec![4usize, 4, 5]),
            (vec![1, 2, -1, 0, 1, 2, 5, 3], vec![4, 2], vec![4, 5]),
        ] {
            let plan = NdPlan::new(&[6, 4, 5], &indices_shape, &updates_shape).unwrap();
            let checked = plan
                .check_indices(&indices, SERIAL, BlockSort::Off)
                .unwrap();
            assert!(checked.copies_around_slices());
            let n: usize = updates_shape.iter().product();
            let updates: Vec<f32> = (0..n).map(|i| 100.0 + i as f32 * 0.25).collect();
            for reduction in [Reduction::None, Reduction::Add, Reduction::Max] {
                let mut reference = data.clone();
                checked
                    .apply(&mut reference, &updates, reduction, SERIAL)
                    .unwrap();
                let mut out = vec![MaybeUninit::new(f32::NAN); 120];
                let fused = checked
                    .apply(
                        CopyOf {
                            data: &data,
                            out: &mut out,
                        },
                        &updates,
                        reduction,
                        SERIAL,
                    )
                    .unwrap();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&reference), bits(fused), "{indices:?} {reduction:?}");
            }
        }
    }
}

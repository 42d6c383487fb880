//! Fresh output buffers: allocated uninitialized, advised to use huge pages
//! before their first touch. Above glibc's mmap threshold a new allocation
//! takes fresh pages on every run: a page fault and the kernel's zeroing
//! per 4 KiB, several times a warm memcpy; one per 2 MiB with huge pages
//! (see docs/performance.md, "Why the mechanisms exist").
//!
//! The only module that allocates uninitialized memory, and the home of
//! [`Unwritten`], the type of an output nothing may read before it is
//! written whole (a fresh buffer, or a pooled output about to be
//! overwritten), and of the two ways it is written whole: a plain copy
//! ([`Unwritten::fill_by_copy`]) and a copy fused with a scatter
//! ([`Unwritten::fill_by_scatter`], for any [`CheckedIndices`] token). It
//! must not depend on the pool or on any op.

use std::mem::MaybeUninit;

use scatter_kernels::{
    Bfloat16InFloat32, CheckedIndices, CopyOf, Destination, Element, Execution, Reduction,
    ScatterError, Schedule, write_copy, write_copy_in_pieces, write_copy_par,
};
use tract_core::internal::*;

use crate::ops::run::tract_threads::TractThreads;
use crate::parse::onnx_types::OnnxElement;
use crate::parse::site::NodeSite;

/// The data types whose copy a scatter can fuse
/// ([`Unwritten::fill_by_scatter`]).
pub(crate) const COPYING_TYPES: [DatumType; 4] = [
    DatumType::F32,
    DatumType::F64,
    DatumType::I32,
    DatumType::I64,
];

/// One way to make a plain copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopyKind {
    /// Split over the caller's threads, when large: such a copy is the
    /// whole cost of a copy-bound scatter (TensorScatter's cache).
    Split(&'static Schedule),
    /// Whole: into fresh pages glibc's streaming stores win, skipping the
    /// read of the lines they fill.
    Whole,
    /// In pieces that stay in cache, into a pooled output.
    InPieces,
}

/// A new plain tensor of `dt` and `shape` whose bytes are not initialized,
/// advised to use huge pages: for a kernel that writes every element
/// before anything reads it (the gradient kernels do).
///
/// # Safety
/// The caller writes every element before reading any, or drops the
/// tensor unread.
pub(crate) unsafe fn fresh_uninit(dt: DatumType, shape: &[usize]) -> TractResult<Tensor> {
    debug_assert!(dt.is_copy(), "uninitialized {dt:?} would be dropped unread");
    let mut out = unsafe { Tensor::uninitialized_dt(dt, shape)? };
    if let Some(storage) = out.as_plain_ram_storage_mut() {
        let len = storage.layout().size();
        advise_huge_pages(storage.as_mut_ptr(), len);
    }
    Ok(out)
}

/// The size of a transparent huge page on x86-64 and aarch64 (4 KiB pages).
const HUGE_PAGE: usize = 2 << 20;

/// Asks Linux to back the 2 MiB-aligned part of `[ptr, ptr + len)` with
/// transparent huge pages: one fault and one zeroing per 2 MiB instead of
/// per 4 KiB. Pays only for a fresh mapping (glibc mmaps blocks of 32 MiB
/// and more however often they are freed); harmless on reused heap memory,
/// where the pages are already there. Only advice: ignored when THP is
/// `never`, a no-op off Linux and for buffers holding no whole huge page.
#[allow(unused_variables)]
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
        let end = (ptr as usize).saturating_add(len) / HUGE_PAGE * HUGE_PAGE;
        if end > start {
            // Safety: madvise reads no memory; MADV_HUGEPAGE changes no
            // content, and the range lies inside the live allocation.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// A plain tensor whose elements may hold anything until they are written
/// whole: fresh uninitialized memory (`fresh_uninit`), or a pooled
/// output's stale values. Nothing reads it as values before
/// `Unwritten::fill` (or [`Unwritten::fill_bytes`]) proves every element
/// written; dropped unfilled, it is freed unread.
pub struct Unwritten(Tensor);

impl Unwritten {
    /// A new tensor of `dt` (plain bytes) and `shape`, not initialized,
    /// advised to use huge pages.
    pub fn fresh(dt: DatumType, shape: &[usize]) -> TractResult<Unwritten> {
        // SAFETY: `fresh_uninit`'s caller must write every element before
        // reading any: the tensor is wrapped at once, and `Unwritten` gives
        // it out only from `fill`, once written whole.
        Ok(Unwritten(unsafe { fresh_uninit(dt, shape)? }))
    }

    /// An initialized tensor about to be overwritten whole (a pooled output
    /// no caller holds).
    pub(crate) fn stale(tensor: Tensor) -> Unwritten {
        Unwritten(tensor)
    }

    /// The tensor, once `write` has written every element: it gets them as
    /// `T`s (the tensor's type, checked) that may be uninitialized, and
    /// returns them written, as the kernels' copying `apply` and
    /// `scatter_kernels::write_copy` hand them back. `Err` from `write` drops the tensor
    /// unread.
    pub(crate) fn fill<T: Datum>(
        self,
        write: impl FnOnce(&mut [MaybeUninit<T>]) -> TractResult<&mut [T]>,
    ) -> TractResult<Tensor> {
        self.fill_as(
            |tensor| {
                let mut view = tensor.try_as_plain_ram_mut()?;
                let len = view.len();
                Ok((view.as_ptr_mut::<T>()?, len))
            },
            write,
        )
    }

    /// `self = data`, made the way `kind` says; `input` names data in an
    /// error.
    pub(crate) fn fill_by_copy(
        self,
        site: &NodeSite,
        input: &str,
        data: &Tensor,
        kind: CopyKind,
    ) -> TractResult<Tensor> {
        let src = data.try_as_plain_ram()?;
        let src = src.as_bytes();
        self.fill_bytes(|dst| {
            ensure!(
                dst.len() == src.len(),
                site.error(format!(
                    "internal: output of {} bytes for {input} of {}",
                    dst.len(),
                    src.len()
                ))
            );
            Ok(match kind {
                CopyKind::Split(schedule) => {
                    write_copy_par(&TractThreads::current(), schedule, dst, src)
                }
                CopyKind::Whole => write_copy(dst, src),
                CopyKind::InPieces => write_copy_in_pieces(dst, src),
            })
        })
    }

    /// `self = data`, then `token`'s scatter of `updates`, fused
    /// ([`CheckedIndices`]), written whole. `data` is of one of
    /// [`COPYING_TYPES`] holding its own values, or float32 holding
    /// bfloat16 values (`element`), scattered with bfloat16's arithmetic.
    pub(crate) fn fill_by_scatter<K: CheckedIndices>(
        self,
        site: &NodeSite,
        token: &K,
        element: OnnxElement,
        data: &Tensor,
        updates: &Tensor,
        reduction: Reduction,
    ) -> TractResult<Tensor> {
        fn fused<T: Element + Copy + Datum, K: CheckedIndices>(
            out: Unwritten,
            site: &NodeSite,
            token: &K,
            data: &Tensor,
            updates: &Tensor,
            reduction: Reduction,
        ) -> TractResult<Tensor> {
            let (src, updates) = (data.try_as_plain_ram()?, updates.try_as_plain_ram()?);
            let (src, updates) = (src.as_slice::<T>()?, updates.as_slice::<T>()?);
            out.fill::<T>(|dst| {
                let threads = TractThreads::current();
                token
                    .apply(
                        CopyOf {
                            data: src,
                            out: dst,
                        },
                        updates,
                        reduction,
                        Execution::on(&threads),
                    )
                    .map_err(|e| site.scatter_error(e))
            })
        }
        fn fused_bfloat16<K: CheckedIndices>(
            out: Unwritten,
            site: &NodeSite,
            token: &K,
            data: &Tensor,
            updates: &Tensor,
            reduction: Reduction,
        ) -> TractResult<Tensor> {
            let (src, updates) = (data.try_as_plain_ram()?, updates.try_as_plain_ram()?);
            let (src, updates) = (src.as_slice::<f32>()?, updates.as_slice::<f32>()?);
            out.fill::<f32>(|dst| {
                let threads = TractThreads::current();
                let written = token
                    .apply(
                        CopyOf {
                            data: Bfloat16InFloat32::slice(src),
                            out: Bfloat16InFloat32::uninit_slice_mut(dst),
                        },
                        Bfloat16InFloat32::slice(updates),
                        reduction,
                        Execution::on(&threads),
                    )
                    .map_err(|e| site.scatter_error(e))?;
                Ok(Bfloat16InFloat32::floats_mut(written))
            })
        }
        match (element, data.datum_type()) {
            (OnnxElement::Native, DatumType::F32) => {
                fused::<f32, K>(self, site, token, data, updates, reduction)
            }
            (OnnxElement::Native, DatumType::F64) => {
                fused::<f64, K>(self, site, token, data, updates, reduction)
            }
            (OnnxElement::Native, DatumType::I32) => {
                fused::<i32, K>(self, site, token, data, updates, reduction)
            }
            (OnnxElement::Native, DatumType::I64) => {
                fused::<i64, K>(self, site, token, data, updates, reduction)
            }
            (OnnxElement::Bfloat16, DatumType::F32) => {
                fused_bfloat16(self, site, token, data, updates, reduction)
            }
            (element, dt) => bail!(site.error(format!(
                "internal: no fused copy for {dt:?} holding {} values (only {COPYING_TYPES:?}, \
                 and float32 holding bfloat16)",
                element.as_str()
            ))),
        }
    }

    /// [`Self::fill`] byte by byte, whatever the tensor's (plain) type.
    pub fn fill_bytes(
        self,
        write: impl FnOnce(&mut [MaybeUninit<u8>]) -> TractResult<&mut [u8]>,
    ) -> TractResult<Tensor> {
        self.fill_as(
            |tensor| {
                let storage = tensor
                    .as_plain_ram_storage_mut()
                    .context("an output that is not plain bytes")?;
                let len = storage.layout().size();
                Ok((storage.as_mut_ptr(), len))
            },
            write,
        )
    }

    /// Runs `write` on the `len` elements at the pointer `locate` gives
    /// (the start of the tensor's plain storage, as `T`s), then checks that
    /// what it returned written is those elements.
    fn fill_as<T>(
        mut self,
        locate: impl FnOnce(&mut Tensor) -> TractResult<(*mut T, usize)>,
        write: impl FnOnce(&mut [MaybeUninit<T>]) -> TractResult<&mut [T]>,
    ) -> TractResult<Tensor> {
        let (ptr, len) = locate(&mut self.0)?;
        if len == 0 {
            // An empty storage's pointer need not be aligned for `T`.
            write(&mut [])?;
            return Ok(self.0);
        }
        ensure!(ptr.is_aligned(), "internal: output storage not aligned");
        let start = ptr.cast::<MaybeUninit<T>>();
        // SAFETY: `ptr` is the start of the tensor's plain storage, which
        // tract allocated as `len` elements of its datum type (`T`, checked
        // by `as_ptr_mut`, or bytes), aligned (checked above) and live
        // while `self.0` is: `self` is held by value, and `self.0` is not
        // touched again until `elements` is dead. `MaybeUninit<T>` has the
        // layout of `T` and may hold any bytes, stale or uninitialized.
        // (tract's pointer accessors pass through its own byte slice of the
        // storage; they read nothing.)
        let elements = unsafe { std::slice::from_raw_parts_mut(start, len) };
        let written = write(elements)?;
        // Only a `&mut [T]` made from `elements` (by writing them all, as a
        // safe `write` must) starts at `ptr` with `len` elements.
        ensure!(
            std::ptr::eq(written.as_ptr(), ptr) && written.len() == len,
            "internal: the output was not written whole"
        );
        Ok(self.0)
    }
}

/// No scatter to fuse: the `K` of [`crate::ops::run::copy_target::take`] for an
/// op that only copies.
pub(crate) enum NoFusion {}

impl CheckedIndices for NoFusion {
    fn is_sorted(&self) -> bool {
        match *self {}
    }

    fn apply<'d, T: Element, D: Destination<'d, T>>(
        &self,
        _dest: D,
        _updates: &[T],
        _reduction: Reduction,
        _exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError> {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use scatter_kernels::write_copy;

    use super::*;

    #[test]
    fn a_fresh_output_filled_by_a_copy_holds_the_copied_values() {
        let data = tensor2(&[[1f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
        let src = crate::ops::element_dispatch::slice::<f32>(&data).unwrap();
        let out = Unwritten::fresh(DatumType::F32, &[2, 3]).unwrap();
        let filled = out.fill::<f32>(|dst| Ok(write_copy(dst, src))).unwrap();
        assert_eq!(filled, data);
        let out = Unwritten::fresh(DatumType::F32, &[2, 3]).unwrap();
        let filled = out
            .fill_bytes(|dst| Ok(write_copy(dst, data.as_bytes())))
            .unwrap();
        assert_eq!(filled, data);
    }

    #[test]
    fn an_empty_output_is_filled_by_writing_nothing() {
        let out = Unwritten::fresh(DatumType::I64, &[0, 4]).unwrap();
        let filled = out.fill::<i64>(|dst| Ok(write_copy(dst, &[]))).unwrap();
        assert_eq!(filled.shape(), [0, 4]);
    }

    #[test]
    fn an_output_is_refused_when_the_written_values_are_not_its_own() {
        // Values written elsewhere prove nothing about the output.
        let out = Unwritten::stale(tensor1(&[0f32; 4]));
        let err = out
            .fill::<f32>(|_| Ok(Box::leak(vec![1f32; 4].into_boxed_slice())))
            .unwrap_err();
        assert!(format!("{err}").contains("not written whole"), "{err}");
        // Part of the output is not all of it.
        let out = Unwritten::fresh(DatumType::F32, &[4]).unwrap();
        let err = out
            .fill::<f32>(|dst| Ok(write_copy(&mut dst[..3], &[1.0; 3])))
            .unwrap_err();
        assert!(format!("{err}").contains("not written whole"), "{err}");
    }

    #[test]
    fn an_output_is_filled_only_as_its_own_type() {
        let out = Unwritten::fresh(DatumType::F32, &[4]).unwrap();
        assert!(out.fill::<i32>(|dst| Ok(write_copy(dst, &[0; 4]))).is_err());
    }
}

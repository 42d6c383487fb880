//! Fresh output buffers: allocated uninitialized, advised to use huge pages
//! before their first touch. Above glibc's mmap threshold a new allocation
//! takes fresh pages on every run: a page fault and the kernel's zeroing
//! per 4 KiB, several times a warm memcpy; one per 2 MiB with huge pages
//! (32 MiB: 22.1 ms to 5.3 ms measured on the bench machine).
//!
//! The only module that allocates uninitialized memory; it must not depend
//! on the pool or on any op.

use tract_core::internal::*;

/// A new plain tensor of `dt` and `shape` whose bytes are not initialized,
/// advised to use huge pages: for a kernel that writes every element
/// before anything reads it (the gradient kernels do).
///
/// # Safety
/// The caller writes every element before reading any, or drops the
/// tensor unread.
pub unsafe fn fresh_uninit(dt: DatumType, shape: &[usize]) -> TractResult<Tensor> {
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

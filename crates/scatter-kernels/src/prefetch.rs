//! A cache hint ahead of random row writes and of strided reads.
//!
//! A ScatterND of whole rows at random destinations (GNN message passing: a million 256-byte
//! messages into a 25.6 MB node table) waits on a cache miss at every row: the hardware
//! prefetchers follow the updates' stream, not the destinations the indices pick. Asking for
//! the destination row of the update [`DISTANCE`] rows ahead overlaps those misses; it reads
//! nothing and changes no result.
//!
//! The same hint serves a blocked ScatterElements, whose bands read a few columns of every row
//! of the indices and updates (`scatter_elements_par.rs`), and a serial ScatterElements into
//! large data, whose single-element destinations it asks for [`ELEMENTS_AHEAD`] updates ahead
//! (`scatter_elements.rs`).

/// Rows ahead whose destination (or strided input) is asked for: the distance that runs
/// fastest of those tried on the benchmark's `gnn_large` shape (see docs/performance.md,
/// "Why the mechanisms exist").
pub(crate) const DISTANCE: usize = 8;

/// Updates ahead whose destination a serial ScatterElements asks for:
/// single elements, so further ahead than [`DISTANCE`] rows; the distance
/// that ran fastest of those tried on the benchmark's `se_add_axis1`
/// shape (see docs/performance.md, "Why the mechanisms exist").
pub(crate) const ELEMENTS_AHEAD: usize = 32;

/// Data at least this large (beyond a core's L2) gets the hint; smaller
/// data stays in cache and the hint would only cost instructions.
pub(crate) const FROM_BYTES: usize = 1 << 20;

/// Rows at least this far apart are a page apart or more: a stream that
/// reads part of each such row jumps a page every row, and the hardware
/// prefetchers, which stop at page boundaries, lose it.
pub(crate) const STRIDED_FROM_BYTES: usize = 4096;

/// Rows at least one cache line long get the hint: shorter ones are the
/// element scatters, whose misses the blocked application handles.
pub(crate) const MIN_ROW_BYTES: usize = 64;

/// Of a longer row, the first this many bytes: the hardware prefetchers
/// follow the rest once the row's stream starts.
const MAX_BYTES: usize = 1024;

const LINE: usize = 64;

/// Asks for the cache lines of `bytes` bytes from `start` (at most
/// [`MAX_BYTES`]). A hint: it never faults, whatever the address, and
/// only `start`'s address is used.
#[inline(always)]
pub(crate) fn lines<T>(start: *const T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = start.cast::<i8>();
        let mut offset = 0;
        while offset < bytes.min(MAX_BYTES) {
            // SAFETY: `prefetcht0` is a hint that cannot fault or change
            // memory, for any address; SSE, which it needs, is part of
            // the x86_64 baseline.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(offset)) };
            offset += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (start, bytes);
    }
}

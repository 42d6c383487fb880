//! Where a validated scatter writes: its data in place, or a copy of it,
//! made plainly or fused with the scatter.
//!
//! A scatter takes its data input only after every check passed. Owned
//! data is written in place; shared data is copied into a pooled output no
//! caller holds ([`crate::ops::run::output_pool`]) or a fresh buffer
//! ([`crate::ops::run::fresh_buffer`]), either held as an [`Unwritten`] until
//! it is written whole. For large data the copy and the scatter go in one
//! pass where the speed policy says so ([`FusedCopy`]): the kernels'
//! `apply` into a `CopyOf` takes the target as `&mut [MaybeUninit<T>]`
//! and hands it back written ([`Unwritten::fill_by_scatter`]).

use tract_core::internal::*;

use crate::ops::run::fresh_buffer::Unwritten;
use crate::ops::run::output_pool::{OutputPool, Returning};
use crate::ops::run::speed_policy::{FusedCopy, PlainCopy};
use crate::parse::onnx_types::OnnxElement;
use crate::parse::site::NodeSite;
use scatter_kernels::CheckedIndices;

/// What a validated scatter does with its data once taken.
pub(crate) enum Taken {
    /// Copied and scattered in one pass: the output is written.
    Scattered(Tensor),
    /// Holds data's values (data itself, or a copy), for the scatter to
    /// write in place.
    Data(Tensor),
}

/// A scatter fused with the copy of its data, when the policy allows:
/// the checked token, its updates and the policy's answer.
pub(crate) struct Fused<'a, K> {
    /// The checked indices.
    pub(crate) token: &'a K,
    /// The ONNX type the data's values are of: bfloat16 ones scatter
    /// with bfloat16's arithmetic.
    pub(crate) element: OnnxElement,
    /// The scatter's updates.
    pub(crate) updates: &'a Tensor,
    /// Whether (and with which reduction) the copy is fused.
    pub(crate) copy: FusedCopy,
}

/// Takes `data` for a scatter whose every check passed: `data` itself
/// when exclusively owned, else a copy (into an output of `pool` no
/// caller holds, else a fresh buffer) made as `plain` says, or fused with
/// `fused`'s scatter when the policy says so; and what `pool` must know
/// to keep the right buffer when the call returns.
///
/// This is where a retained output is consumed: call it once, after the
/// checks.
pub(crate) fn take<'p, K: CheckedIndices>(
    site: &NodeSite,
    input: &str,
    data: TValue,
    pool: Option<&'p OutputPool>,
    plain: PlainCopy,
    fused: Option<Fused<'_, K>>,
) -> TractResult<(Taken, Returning<'p>)> {
    let returning = OutputPool::before_taking(pool, &data);
    let data = match Arc::try_unwrap(data.into_arc_tensor()) {
        Ok(exclusive) => return Ok((Taken::Data(exclusive), returning)),
        Err(shared) => shared,
    };
    let dt = data.datum_type();
    if !dt.is_copy() || !data.is_plain_ram() {
        return Ok((Taken::Data((*data).clone()), returning));
    }
    let (out, kind) = match pool.and_then(|p| p.take_idle(dt, data.shape())) {
        Some(out) => (Unwritten::stale(out), plain.into_pooled),
        None => (Unwritten::fresh(dt, data.shape())?, plain.into_fresh),
    };
    if let Some(Fused {
        token,
        element,
        updates,
        copy,
    }) = fused
    {
        let reduction = match copy {
            FusedCopy::Always(r) => Some(r),
            FusedCopy::WhenSorted(r) => token.is_sorted().then_some(r),
            FusedCopy::Never => None,
        };
        if let Some(reduction) = reduction {
            let output = out.fill_by_scatter(site, token, element, &data, updates, reduction)?;
            return Ok((Taken::Scattered(output), returning));
        }
    }
    let output = out.fill_by_copy(site, input, &data, kind)?;
    Ok((Taken::Data(output), returning))
}

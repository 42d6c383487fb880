//! Where a validated scatter writes when it cannot write in place, and
//! when it copies as it scatters.
//!
//! A scatter takes its data input only after every check passed. Owned
//! data is written in place; shared data is copied into a pooled output no
//! caller holds ([`crate::ops::output_pool`]) or a fresh buffer
//! ([`crate::ops::fresh_buffer`]), either held as an [`Unwritten`] until
//! it is written whole. For large data the copy and the scatter go in one pass
//! where that pays ([`crate::ops::speed_policy`]): the kernels' `apply`
//! into a [`CopyOf`] takes the target as `&mut [MaybeUninit<T>]` and hands
//! it back written.

use std::mem::MaybeUninit;

use scatter_kernels::{
    CheckedElementsIndices, CheckedNdIndices, CopyOf, Element, Execution, IndexValue, Reduction,
    ScatterError, write_copy, write_copy_in_pieces, write_copy_par,
};
use tract_core::internal::*;

use crate::ops::fresh_buffer::Unwritten;
use crate::ops::output_pool::OutputPool;
use crate::ops::speed_policy::{self, COPYING_TYPES, PlainCopy};
use crate::ops::tract_threads::TractThreads;
use crate::site::NodeSite;

/// The tensor a validated scatter writes into, made from `data`:
/// - `data` itself, without a copy, when exclusively owned (in place);
/// - else a copy of `data` into an output of `pool` no caller holds, of
///   data's type and shape;
/// - else a copy into a fresh buffer ([`Unwritten::fresh`]).
///
/// Call only once every check has passed: this is where a retained output
/// is consumed.
pub fn take_output(
    site: &NodeSite,
    input: &str,
    data: TValue,
    pool: Option<&OutputPool>,
) -> TractResult<Tensor> {
    take_target(data, pool)?.into_filled(site, input)
}

/// Where a validated scatter writes: [`take_output`] before the copy, for
/// a kernel that copies as it scatters.
pub enum Target {
    /// Holds data's values: `data` itself when exclusively owned, else a
    /// clone of a type that is not plain bytes.
    Ready(Tensor),
    /// `out`, of data's plain type and shape, must receive `data`'s values
    /// before anything reads it: a pooled output no caller holds (`fresh:
    /// false`), or an uninitialized one advised to use huge pages.
    Copy {
        /// The output, nothing written yet.
        out: Unwritten,
        /// The shared data whose values `out` must receive.
        data: Arc<Tensor>,
        /// Whether `out` is a fresh buffer rather than a pooled output.
        fresh: bool,
    },
}

impl Target {
    /// The target holding data's values (the copy done).
    pub fn into_filled(self, site: &NodeSite, input: &str) -> TractResult<Tensor> {
        match self {
            Target::Ready(t) => Ok(t),
            Target::Copy { out, data, fresh } => {
                let src = data.try_as_plain_ram()?;
                let src = src.as_bytes();
                out.fill_bytes(|dst| {
                    ensure!(
                        dst.len() == src.len(),
                        site.error(format!(
                            "internal: output of {} bytes for {input} of {}",
                            dst.len(),
                            src.len()
                        ))
                    );
                    let threads = TractThreads::current();
                    Ok(match speed_policy::plain_copy(&threads, fresh) {
                        PlainCopy::Split(schedule) => write_copy_par(&threads, schedule, dst, src),
                        PlainCopy::Whole => write_copy(dst, src),
                        PlainCopy::InPieces => write_copy_in_pieces(dst, src),
                    })
                })
            }
        }
    }
}

/// What a validated scatter does with its data: the output already holds
/// the result (copied and scattered in one pass), or the tensor holding
/// data's values to scatter into.
pub enum Taken {
    /// The output, copied and scattered: nothing is left to write.
    Done(Tensor),
    /// A tensor holding data's values, for the scatter to write into in
    /// place.
    ScatterInto(Tensor),
}

/// A checked token of either op whose scatter can be fused with the copy
/// of its data: the kernels' `apply` into a [`CopyOf`], for callers
/// generic over the op.
pub trait CopyingScatter {
    /// `token.apply(CopyOf { data, out }, updates, reduction, exec)`: `out`
    /// written whole, as values.
    fn apply_copying<'d, T: Element + Copy>(
        &self,
        out: &'d mut [MaybeUninit<T>],
        data: &[T],
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError>;
}

impl<I: IndexValue> CopyingScatter for CheckedElementsIndices<'_, I> {
    fn apply_copying<'d, T: Element + Copy>(
        &self,
        out: &'d mut [MaybeUninit<T>],
        data: &[T],
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError> {
        self.apply(CopyOf { data, out }, updates, reduction, exec)
    }
}

impl<I: IndexValue> CopyingScatter for CheckedNdIndices<'_, I> {
    fn apply_copying<'d, T: Element + Copy>(
        &self,
        out: &'d mut [MaybeUninit<T>],
        data: &[T],
        updates: &[T],
        reduction: Reduction,
        exec: Execution<'_>,
    ) -> Result<&'d mut [T], ScatterError> {
        self.apply(CopyOf { data, out }, updates, reduction, exec)
    }
}

/// Takes `data` for a scatter whose indices `token` checked: a copy and the
/// scatter fused in one pass ([`scatter_copying`]) when the data must be
/// copied and the speed policy gave a reduction to `fuse` with, else
/// [`take_output`]'s tensor.
pub fn take_or_fuse<K: CopyingScatter>(
    site: &NodeSite,
    data: TValue,
    pool: Option<&OutputPool>,
    token: &K,
    updates: &Tensor,
    fuse: Option<Reduction>,
) -> TractResult<Taken> {
    match take_target(data, pool)? {
        Target::Copy { out, data, fresh } => match fuse {
            Some(reduction) => Ok(Taken::Done(scatter_copying(
                site, token, out, &data, updates, reduction,
            )?)),
            None => Ok(Taken::ScatterInto(
                Target::Copy { out, data, fresh }.into_filled(site, "data")?,
            )),
        },
        target => Ok(Taken::ScatterInto(target.into_filled(site, "data")?)),
    }
}

/// [`take_output`] without the copy: see [`Target`].
pub fn take_target(data: TValue, pool: Option<&OutputPool>) -> TractResult<Target> {
    if let Some(pool) = pool {
        pool.forget_if_only_other_holder(&data);
    }
    let data = match Arc::try_unwrap(data.into_arc_tensor()) {
        Ok(exclusive) => return Ok(Target::Ready(exclusive)),
        Err(shared) => shared,
    };
    let dt = data.datum_type();
    if !dt.is_copy() || !data.is_plain_ram() {
        return Ok(Target::Ready((*data).clone()));
    }
    if let Some(out) = pool.and_then(|p| p.take_idle(dt, data.shape())) {
        return Ok(Target::Copy {
            out: Unwritten::stale(out),
            data,
            fresh: false,
        });
    }
    Ok(Target::Copy {
        out: Unwritten::fresh(dt, data.shape())?,
        data,
        fresh: true,
    })
}

/// `out = data`, then `token`'s scatter of `updates`, fused
/// ([`CopyingScatter`]), written whole. `data` is of one of
/// [`COPYING_TYPES`].
pub fn scatter_copying<K: CopyingScatter>(
    site: &NodeSite,
    token: &K,
    out: Unwritten,
    data: &Tensor,
    updates: &Tensor,
    reduction: Reduction,
) -> TractResult<Tensor> {
    fn fused<T: Element + Copy + Datum, K: CopyingScatter>(
        site: &NodeSite,
        token: &K,
        out: Unwritten,
        data: &Tensor,
        updates: &Tensor,
        reduction: Reduction,
    ) -> TractResult<Tensor> {
        let src = crate::ops::types::slice::<T>(data)?;
        let updates = crate::ops::types::slice::<T>(updates)?;
        out.fill::<T>(|dst| {
            token
                .apply_copying(
                    dst,
                    src,
                    updates,
                    reduction,
                    Execution::on(&TractThreads::current()),
                )
                .map_err(|e| site.scatter_error(e))
        })
    }
    match data.datum_type() {
        DatumType::F32 => fused::<f32, K>(site, token, out, data, updates, reduction),
        DatumType::F64 => fused::<f64, K>(site, token, out, data, updates, reduction),
        DatumType::I32 => fused::<i32, K>(site, token, out, data, updates, reduction),
        DatumType::I64 => fused::<i64, K>(site, token, out, data, updates, reduction),
        dt => bail!(site.error(format!(
            "internal: no fused copy for {dt:?} (only {COPYING_TYPES:?})"
        ))),
    }
}

//! A deliberately naive reference for the scatter kernels.
//!
//! Everything here is written for obviousness, not speed: coordinates are
//! `Vec<usize>`, every tensor is walked with plain nested loops over all of
//! its coordinates, index normalisation happens in `i128`, and the values
//! written to one position are first collected (in row-major order of the
//! indices) and then folded. The element arithmetic is re-implemented from
//! the contract (not borrowed from the crate's `Element` impls).
//!
//! A module of the kernels' test binary (`tests/main.rs`), used by
//! `properties.rs`; its own tests check the oracle against hand-worked
//! examples from the ONNX and OpenVINO specifications.

#![allow(dead_code)]

use half::{bf16, f16};
use scatter_kernels::{Reduction, ScatterError, TensorScatterMode, UpdateReduction};

/// Why the oracle refuses an input. `Rank`, `Shape` and `Length` name the
/// input (as the kernel's `Input::as_str`), the rest carry the fields the
/// kernel must report exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Rank(&'static str),
    Axis,
    Shape(&'static str),
    OutOfBounds {
        position: Vec<usize>,
        value: i64,
        axis: usize,
        dim: usize,
    },
    WriteOutOfBounds {
        batch: usize,
        start: i64,
        len: usize,
        axis: usize,
        dim: usize,
    },
    Reduction,
    Length(&'static str),
    TooLarge(&'static str),
}

/// The kernel's error in the oracle's terms.
pub fn refusal_of(e: &ScatterError) -> Refusal {
    match e {
        ScatterError::Rank { input, .. } => Refusal::Rank(input.as_str()),
        ScatterError::Axis { .. } => Refusal::Axis,
        ScatterError::Shape { input, .. } => Refusal::Shape(input.as_str()),
        ScatterError::OutOfBounds {
            position,
            value,
            axis,
            dim,
            ..
        } => Refusal::OutOfBounds {
            position: position.clone(),
            value: *value,
            axis: *axis,
            dim: *dim,
        },
        ScatterError::WriteOutOfBounds {
            batch,
            start,
            len,
            axis,
            dim,
        } => Refusal::WriteOutOfBounds {
            batch: *batch,
            start: *start,
            len: *len,
            axis: *axis,
            dim: *dim,
        },
        ScatterError::Reduction { .. } => Refusal::Reduction,
        ScatterError::Length { input, .. } => Refusal::Length(input.as_str()),
        ScatterError::TooLarge { input, .. } => Refusal::TooLarge(input.as_str()),
    }
}

// ---------------------------------------------------------------------------
// Element arithmetic, from the contract.

/// The contract's arithmetic for one element type.
pub trait RefElem: Clone + std::fmt::Debug {
    fn supports(reduction: UpdateReduction) -> bool;
    fn r_add(acc: &Self, update: &Self) -> Self;
    fn r_mul(acc: &Self, update: &Self) -> Self;
    fn r_max(acc: &Self, update: &Self) -> Self;
    fn r_min(acc: &Self, update: &Self) -> Self;
    /// `sum / count`.
    fn r_mean(sum: &Self, count: usize) -> Self;
    /// Equality for test results: bitwise for floats, except that any NaN
    /// equals any NaN.
    fn same(a: &Self, b: &Self) -> bool;
}

macro_rules! ref_integer {
    ($($t:ty),*) => {$(
        impl RefElem for $t {
            fn supports(_: UpdateReduction) -> bool {
                true
            }
            // Exact in i128, then truncated to the type: two's complement
            // wrap-around, spelled out.
            fn r_add(acc: &Self, update: &Self) -> Self {
                (*acc as i128 + *update as i128) as $t
            }
            fn r_mul(acc: &Self, update: &Self) -> Self {
                // u64 * u64 may exceed i128; the low 64 bits of the wrapped
                // i128 product are still the exact low 64 bits.
                (*acc as i128).wrapping_mul(*update as i128) as $t
            }
            fn r_max(acc: &Self, update: &Self) -> Self {
                if update > acc { *update } else { *acc }
            }
            fn r_min(acc: &Self, update: &Self) -> Self {
                if update < acc { *update } else { *acc }
            }
            fn r_mean(sum: &Self, count: usize) -> Self {
                let s = *sum as i128;
                let n = count as i128;
                let q = s / n; // truncates towards zero
                let floor = if s % n != 0 && s < 0 { q - 1 } else { q };
                floor as $t
            }
            fn same(a: &Self, b: &Self) -> bool {
                a == b
            }
        }
    )*};
}

ref_integer!(i8, i16, i32, i64, u8, u16, u32, u64);

fn float_max<F: PartialOrd + Copy>(acc: F, update: F, is_nan: impl Fn(F) -> bool) -> F {
    if is_nan(acc) {
        acc
    } else if is_nan(update) || update > acc {
        update
    } else {
        acc // ties (including 0.0 vs -0.0) keep the existing value
    }
}

fn float_min<F: PartialOrd + Copy>(acc: F, update: F, is_nan: impl Fn(F) -> bool) -> F {
    if is_nan(acc) {
        acc
    } else if is_nan(update) || update < acc {
        update
    } else {
        acc
    }
}

impl RefElem for f32 {
    fn supports(_: UpdateReduction) -> bool {
        true
    }
    fn r_add(acc: &Self, update: &Self) -> Self {
        acc + update
    }
    fn r_mul(acc: &Self, update: &Self) -> Self {
        acc * update
    }
    fn r_max(acc: &Self, update: &Self) -> Self {
        float_max(*acc, *update, f32::is_nan)
    }
    fn r_min(acc: &Self, update: &Self) -> Self {
        float_min(*acc, *update, f32::is_nan)
    }
    fn r_mean(sum: &Self, count: usize) -> Self {
        sum / count as f32
    }
    fn same(a: &Self, b: &Self) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }
}

impl RefElem for f64 {
    fn supports(_: UpdateReduction) -> bool {
        true
    }
    fn r_add(acc: &Self, update: &Self) -> Self {
        acc + update
    }
    fn r_mul(acc: &Self, update: &Self) -> Self {
        acc * update
    }
    fn r_max(acc: &Self, update: &Self) -> Self {
        float_max(*acc, *update, f64::is_nan)
    }
    fn r_min(acc: &Self, update: &Self) -> Self {
        float_min(*acc, *update, f64::is_nan)
    }
    fn r_mean(sum: &Self, count: usize) -> Self {
        sum / count as f64
    }
    fn same(a: &Self, b: &Self) -> bool {
        (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
    }
}

/// f16 / bf16: every step computed in f32 and rounded back to the type.
macro_rules! ref_half {
    ($($t:ty),*) => {$(
        impl RefElem for $t {
            fn supports(_: UpdateReduction) -> bool {
                true
            }
            fn r_add(acc: &Self, update: &Self) -> Self {
                <$t>::from_f32(acc.to_f32() + update.to_f32())
            }
            fn r_mul(acc: &Self, update: &Self) -> Self {
                <$t>::from_f32(acc.to_f32() * update.to_f32())
            }
            fn r_max(acc: &Self, update: &Self) -> Self {
                float_max(*acc, *update, |x: $t| x.is_nan())
            }
            fn r_min(acc: &Self, update: &Self) -> Self {
                float_min(*acc, *update, |x: $t| x.is_nan())
            }
            fn r_mean(sum: &Self, count: usize) -> Self {
                <$t>::from_f32(sum.to_f32() / count as f32)
            }
            fn same(a: &Self, b: &Self) -> bool {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
        }
    )*};
}

ref_half!(f16, bf16);

impl RefElem for bool {
    fn supports(reduction: UpdateReduction) -> bool {
        reduction != UpdateReduction::Mean
    }
    fn r_add(acc: &Self, update: &Self) -> Self {
        *acc || *update
    }
    fn r_mul(acc: &Self, update: &Self) -> Self {
        *acc && *update
    }
    fn r_max(acc: &Self, update: &Self) -> Self {
        *acc || *update
    }
    fn r_min(acc: &Self, update: &Self) -> Self {
        *acc && *update
    }
    fn r_mean(_: &Self, _: usize) -> Self {
        unreachable!("bool has no mean")
    }
    fn same(a: &Self, b: &Self) -> bool {
        a == b
    }
}

impl RefElem for String {
    fn supports(reduction: UpdateReduction) -> bool {
        !matches!(
            reduction,
            UpdateReduction::Onnx(Reduction::Mul) | UpdateReduction::Mean
        )
    }
    fn r_add(acc: &Self, update: &Self) -> Self {
        format!("{acc}{update}")
    }
    fn r_mul(_: &Self, _: &Self) -> Self {
        unreachable!("string has no mul")
    }
    fn r_max(acc: &Self, update: &Self) -> Self {
        if update.as_bytes() > acc.as_bytes() {
            update.clone()
        } else {
            acc.clone()
        }
    }
    fn r_min(acc: &Self, update: &Self) -> Self {
        if update.as_bytes() < acc.as_bytes() {
            update.clone()
        } else {
            acc.clone()
        }
    }
    fn r_mean(_: &Self, _: usize) -> Self {
        unreachable!("string has no mean")
    }
    fn same(a: &Self, b: &Self) -> bool {
        a == b
    }
}

pub fn all_same<T: RefElem>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| T::same(x, y))
}

// ---------------------------------------------------------------------------
// Coordinates.

/// Every coordinate of `shape`, in row-major order. A rank-0 shape has one
/// coordinate (the empty one); a shape with a zero dimension has none.
pub fn all_coords(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &d in shape {
        let mut next = Vec::new();
        for prefix in &out {
            for i in 0..d {
                let mut c = prefix.clone();
                c.push(i);
                next.push(c);
            }
        }
        out = next;
    }
    out
}

/// The row-major position of `coord` in `shape`.
pub fn position(shape: &[usize], coord: &[usize]) -> usize {
    assert_eq!(shape.len(), coord.len());
    let mut p = 0;
    for (&d, &c) in shape.iter().zip(coord) {
        assert!(c < d);
        p = p * d + c;
    }
    p
}

/// Element count of `shape`, or `None` if it does not fit in `usize`.
pub fn count(shape: &[usize]) -> Option<usize> {
    let mut n: u128 = 1;
    for &d in shape {
        n *= d as u128;
        if n > usize::MAX as u128 {
            // A later zero would bring it back down: keep going exactly.
            return if shape.contains(&0) { Some(0) } else { None };
        }
    }
    Some(n as usize)
}

fn count_or(input: &'static str, shape: &[usize]) -> Result<usize, Refusal> {
    count(shape).ok_or(Refusal::TooLarge(input))
}

fn check_len(input: &'static str, expected: usize, len: usize) -> Result<(), Refusal> {
    if expected == len {
        Ok(())
    } else {
        Err(Refusal::Length(input))
    }
}

/// `index` on an axis of size `dim`, in `[0, dim)`, or `None` outside
/// `[-dim, dim - 1]`.
pub fn normalize(index: i64, dim: usize) -> Option<usize> {
    let i = index as i128;
    let d = dim as i128;
    if i >= 0 && i < d {
        Some(i as usize)
    } else if i < 0 && i >= -d {
        Some((i + d) as usize)
    } else {
        None
    }
}

fn normalize_axis(axis: i64, rank: usize) -> Result<usize, Refusal> {
    normalize(axis, rank).ok_or(Refusal::Axis)
}

// ---------------------------------------------------------------------------
// Folding what was written to one position.

/// The value of a position that received `taken` (non-empty, in order),
/// starting from `initial`.
fn fold<T: RefElem>(initial: &T, taken: &[T], reduction: UpdateReduction, use_init_val: bool) -> T {
    if reduction == Reduction::None {
        return taken.last().unwrap().clone();
    }
    let mut values: Vec<T> = Vec::new();
    if use_init_val {
        values.push(initial.clone());
    }
    values.extend(taken.iter().cloned());
    let mut acc = values[0].clone();
    // `mean` sums, then divides.
    let combine = reduction.onnx().unwrap_or(Reduction::Add);
    for v in &values[1..] {
        acc = match combine {
            Reduction::Add => T::r_add(&acc, v),
            Reduction::Mul => T::r_mul(&acc, v),
            Reduction::Max => T::r_max(&acc, v),
            Reduction::Min => T::r_min(&acc, v),
            Reduction::None => unreachable!(),
        };
    }
    if reduction == UpdateReduction::Mean {
        acc = T::r_mean(&acc, values.len());
    }
    acc
}

/// Applies the writes: `writes` holds (data coordinate, value) in the order
/// they happen.
fn apply_writes<T: RefElem>(
    data: &[T],
    data_shape: &[usize],
    writes: Vec<(Vec<usize>, T)>,
    reduction: UpdateReduction,
    use_init_val: bool,
) -> Vec<T> {
    let mut taken: Vec<Vec<T>> = vec![Vec::new(); data.len()];
    for (coord, value) in writes {
        taken[position(data_shape, &coord)].push(value);
    }
    let mut out = Vec::new();
    for (p, t) in taken.iter().enumerate() {
        if t.is_empty() {
            out.push(data[p].clone());
        } else {
            out.push(fold(&data[p], t, reduction, use_init_val));
        }
    }
    out
}

// ---------------------------------------------------------------------------
// ScatterElements and ScatterElementsUpdate.

#[allow(clippy::too_many_arguments)]
fn elements_core<T: RefElem>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    updates: &[T],
    updates_shape: &[usize],
    axis: i64,
    reduction: UpdateReduction,
    use_init_val: bool,
) -> Result<Vec<T>, Refusal> {
    let rank = data_shape.len();
    if rank == 0 {
        return Err(Refusal::Rank("data"));
    }
    let axis = normalize_axis(axis, rank)?;
    if indices_shape.len() != rank {
        return Err(Refusal::Rank("indices"));
    }
    if updates_shape != indices_shape {
        return Err(Refusal::Shape("updates"));
    }
    for i in 0..rank {
        if i != axis && indices_shape[i] > data_shape[i] {
            return Err(Refusal::Shape("indices"));
        }
    }
    let data_len = count_or("data", data_shape)?;
    let indices_len = count_or("indices", indices_shape)?;
    if !T::supports(reduction) {
        return Err(Refusal::Reduction);
    }
    check_len("indices", indices_len, indices.len())?;
    let dim = data_shape[axis];
    let index_coords = all_coords(indices_shape);
    for c in &index_coords {
        let value = indices[position(indices_shape, c)];
        if normalize(value, dim).is_none() {
            return Err(Refusal::OutOfBounds {
                position: c.clone(),
                value,
                axis,
                dim,
            });
        }
    }
    check_len("data", data_len, data.len())?;
    check_len("updates", indices_len, updates.len())?;
    let mut writes = Vec::new();
    for c in &index_coords {
        let p = position(indices_shape, c);
        let mut target = c.clone();
        target[axis] = normalize(indices[p], dim).unwrap();
        writes.push((target, updates[p].clone()));
    }
    Ok(apply_writes(
        data,
        data_shape,
        writes,
        reduction,
        use_init_val,
    ))
}

/// ONNX `ScatterElements` (updates shape given separately so that a
/// mismatch can be expressed).
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements<T: RefElem>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    updates: &[T],
    updates_shape: &[usize],
    axis: i64,
    reduction: Reduction,
) -> Result<Vec<T>, Refusal> {
    elements_core(
        data,
        data_shape,
        indices,
        indices_shape,
        updates,
        updates_shape,
        axis,
        reduction.into(),
        true,
    )
}

/// OpenVINO `ScatterElementsUpdate-12`.
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements_update<T: RefElem>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    updates: &[T],
    axis: i64,
    reduction: impl Into<UpdateReduction>,
    use_init_val: bool,
) -> Result<Vec<T>, Refusal> {
    elements_core(
        data,
        data_shape,
        indices,
        indices_shape,
        updates,
        indices_shape,
        axis,
        reduction.into(),
        use_init_val,
    )
}

// ---------------------------------------------------------------------------
// ScatterND.

pub fn scatter_nd<T: RefElem>(
    data: &[T],
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    updates: &[T],
    updates_shape: &[usize],
    reduction: Reduction,
) -> Result<Vec<T>, Refusal> {
    let r = data_shape.len();
    if r == 0 {
        return Err(Refusal::Rank("data"));
    }
    let q = indices_shape.len();
    if q == 0 {
        return Err(Refusal::Rank("indices"));
    }
    let k = indices_shape[q - 1];
    if k > r {
        return Err(Refusal::Rank("indices"));
    }
    let batch_shape = &indices_shape[..q - 1];
    let slice_shape = &data_shape[k..];
    let mut expected_updates = batch_shape.to_vec();
    expected_updates.extend_from_slice(slice_shape);
    if updates_shape != expected_updates {
        return Err(Refusal::Shape("updates"));
    }
    let data_len = count_or("data", data_shape)?;
    count_or("indices", batch_shape)?;
    let indices_len = count_or("indices", indices_shape)?;
    let updates_len = count_or("updates", updates_shape)?;
    if !T::supports(reduction.into()) {
        return Err(Refusal::Reduction);
    }
    check_len("indices", indices_len, indices.len())?;
    // Every component against its own dimension, row-major over indices.
    let mut tuples: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for b in all_coords(batch_shape) {
        let mut tuple = Vec::new();
        for (j, &dim) in data_shape.iter().enumerate().take(k) {
            let mut c = b.clone();
            c.push(j);
            let value = indices[position(indices_shape, &c)];
            match normalize(value, dim) {
                Some(n) => tuple.push(n),
                None => {
                    return Err(Refusal::OutOfBounds {
                        position: c,
                        value,
                        axis: j,
                        dim,
                    });
                }
            }
        }
        tuples.push((b, tuple));
    }
    check_len("data", data_len, data.len())?;
    check_len("updates", updates_len, updates.len())?;
    let mut writes = Vec::new();
    for (b, tuple) in &tuples {
        for s in all_coords(slice_shape) {
            let mut target = tuple.clone();
            target.extend_from_slice(&s);
            let mut from = b.clone();
            from.extend_from_slice(&s);
            writes.push((target, updates[position(updates_shape, &from)].clone()));
        }
    }
    Ok(apply_writes(
        data,
        data_shape,
        writes,
        reduction.into(),
        true,
    ))
}

// ---------------------------------------------------------------------------
// TensorScatter.

/// ONNX `TensorScatter`; `write_indices` is (values, shape).
pub fn tensor_scatter<T: Clone>(
    cache: &[T],
    cache_shape: &[usize],
    update: &[T],
    update_shape: &[usize],
    write_indices: Option<(&[i64], &[usize])>,
    axis: i64,
    mode: TensorScatterMode,
) -> Result<Vec<T>, Refusal> {
    let r = cache_shape.len();
    if r < 2 {
        return Err(Refusal::Rank("past_cache"));
    }
    let axis = normalize_axis(axis, r)?;
    if axis == 0 {
        return Err(Refusal::Axis);
    }
    if update_shape.len() != r {
        return Err(Refusal::Rank("update"));
    }
    for i in 0..r {
        let bad = if i == axis {
            update_shape[i] > cache_shape[i]
        } else {
            update_shape[i] != cache_shape[i]
        };
        if bad {
            return Err(Refusal::Shape("update"));
        }
    }
    let batch = cache_shape[0];
    if let Some((_, shape)) = write_indices
        && shape != [batch]
    {
        return Err(Refusal::Shape("write_indices"));
    }
    let cache_len = count_or("past_cache", cache_shape)?;
    let update_len = count_or("update", update_shape)?;
    let seq = cache_shape[axis] as i128;
    let update_seq = update_shape[axis] as i128;
    if let Some((starts, _)) = write_indices {
        check_len("write_indices", batch, starts.len())?;
        // An empty update writes nothing: any start is fine then.
        if mode == TensorScatterMode::Linear && update_seq > 0 {
            for (b, &w) in starts.iter().enumerate() {
                let w128 = w as i128;
                if w128 < 0 || w128 + update_seq > seq {
                    return Err(Refusal::WriteOutOfBounds {
                        batch: b,
                        start: w,
                        len: update_shape[axis],
                        axis,
                        dim: cache_shape[axis],
                    });
                }
            }
        }
    }
    check_len("past_cache", cache_len, cache.len())?;
    check_len("update", update_len, update.len())?;
    let mut out = cache.to_vec();
    for u in all_coords(update_shape) {
        let start = write_indices.map_or(0, |(starts, _)| starts[u[0]]) as i128;
        let mut pos = start + u[axis] as i128;
        if mode == TensorScatterMode::Circular {
            pos = pos.rem_euclid(seq);
        }
        let mut target = u.clone();
        target[axis] = pos as usize;
        out[position(cache_shape, &target)] = update[position(update_shape, &u)].clone();
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// The oracle's own tests: hand-worked examples from the specifications.

#[test]
fn oracle_onnx_scatter_elements_example_1() {
    let out = scatter_elements(
        &[0f32; 9],
        &[3, 3],
        &[1, 0, 2, 0, 2, 1],
        &[2, 3],
        &[1.0, 1.1, 1.2, 2.0, 2.1, 2.2],
        &[2, 3],
        0,
        Reduction::None,
    )
    .unwrap();
    assert_eq!(out, [2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2]);
}

#[test]
fn oracle_onnx_scatter_elements_negative_index_and_duplicates() {
    let out = scatter_elements(
        &[1f32, 2., 3., 4., 5.],
        &[1, 5],
        &[1, -3],
        &[1, 2],
        &[1.1, 2.1],
        &[1, 2],
        1,
        Reduction::None,
    )
    .unwrap();
    assert_eq!(out, [1.0, 1.1, 2.1, 4.0, 5.0]);
    let out = scatter_elements(
        &[1f32, 2., 3., 4., 5.],
        &[1, 5],
        &[1, 1],
        &[1, 2],
        &[1.1, 2.1],
        &[1, 2],
        1,
        Reduction::Add,
    )
    .unwrap();
    assert_eq!(out, [1.0, 5.2, 3.0, 4.0, 5.0]);
}

#[test]
fn oracle_onnx_scatter_nd_examples() {
    let out = scatter_nd(
        &[1i32, 2, 3, 4, 5, 6, 7, 8],
        &[8],
        &[4, 3, 1, 7],
        &[4, 1],
        &[9, 10, 11, 12],
        &[4],
        Reduction::None,
    )
    .unwrap();
    assert_eq!(out, [1, 11, 3, 10, 9, 6, 7, 12]);
    let data: Vec<i32> = (0..64).collect();
    let updates: Vec<i32> = (100..132).collect();
    let out = scatter_nd(
        &data,
        &[4, 4, 4],
        &[0, 2],
        &[2, 1],
        &updates,
        &[2, 4, 4],
        Reduction::None,
    )
    .unwrap();
    assert_eq!(&out[..16], &updates[..16]);
    assert_eq!(&out[16..32], &data[16..32]);
    assert_eq!(&out[32..48], &updates[16..]);
    assert_eq!(&out[48..], &data[48..]);
    let out = scatter_nd(
        &[1i64, 1, 1],
        &[3],
        &[0, 0, 2],
        &[3, 1],
        &[2, 3, 4],
        &[3],
        Reduction::Mul,
    )
    .unwrap();
    assert_eq!(out, [6, 1, 4]);
}

#[test]
fn oracle_openvino_scatter_elements_update_examples() {
    let run = |indices: &[i64], reduction, use_init_val| {
        scatter_elements_update(
            &[2i32, 3, 4, 6],
            &[4],
            indices,
            &[6],
            &[10, 20, 30, 40, 70, 60],
            0,
            reduction,
            use_init_val,
        )
        .unwrap()
    };
    assert_eq!(
        run(&[1, 0, 0, -2, -1, 2], Reduction::Add.into(), true),
        [52, 13, 104, 76]
    );
    assert_eq!(
        run(&[1, 0, 0, 2, 3, 2], Reduction::Add.into(), false),
        [50, 10, 100, 70]
    );
    // mean with init: (4 + 40 + 60) / 3 = 34.67 -> 34; without: 50
    assert_eq!(
        run(&[1, 0, 0, 2, 3, 2], UpdateReduction::Mean, true),
        [17, 6, 34, 38]
    );
    assert_eq!(
        run(&[1, 0, 0, 2, 3, 2], UpdateReduction::Mean, false),
        [25, 10, 50, 70]
    );
    assert_eq!(
        scatter_elements_update(
            &[0i8],
            &[1],
            &[0, 0],
            &[2],
            &[-3, -4],
            0,
            UpdateReduction::Mean,
            false
        ),
        Ok(vec![-4])
    );
}

#[test]
fn oracle_tensor_scatter_examples() {
    let out = tensor_scatter(
        &[0i32; 8],
        &[2, 4, 1],
        &[1, 2, 3, 4],
        &[2, 2, 1],
        Some((&[1, 2], &[2])),
        1,
        TensorScatterMode::Linear,
    )
    .unwrap();
    assert_eq!(out, [0, 1, 2, 0, 0, 0, 3, 4]);
    let out = tensor_scatter(
        &[0i32; 4],
        &[1, 4],
        &[7, 8, 9],
        &[1, 3],
        Some((&[3], &[1])),
        -1,
        TensorScatterMode::Circular,
    )
    .unwrap();
    assert_eq!(out, [8, 9, 0, 7]);
    assert_eq!(
        tensor_scatter(
            &[0i32; 4],
            &[1, 4],
            &[7, 8, 9],
            &[1, 3],
            Some((&[2], &[1])),
            1,
            TensorScatterMode::Linear,
        ),
        Err(Refusal::WriteOutOfBounds {
            batch: 0,
            start: 2,
            len: 3,
            axis: 1,
            dim: 4
        })
    );
}

#[test]
fn oracle_arithmetic_follows_the_contract() {
    assert_eq!(i8::r_add(&127, &1), -128);
    assert_eq!(u64::r_mul(&u64::MAX, &u64::MAX), 1);
    assert_eq!(i64::r_mul(&i64::MIN, &-1), i64::MIN);
    assert_eq!(i32::r_mean(&-7, 2), -4);
    assert_eq!(u8::r_mean(&255, 2), 127);
    assert!(f32::r_max(&1.0, &f32::NAN).is_nan());
    assert!(f32::r_min(&f32::NAN, &1.0).is_nan());
    assert_eq!(f32::r_max(&0.0, &-0.0).to_bits(), 0.0f32.to_bits());
    assert_eq!(f32::r_min(&-0.0, &0.0).to_bits(), (-0.0f32).to_bits());
    let big = f16::from_f32(2048.0);
    assert_eq!(f16::r_add(&big, &f16::ONE), big);
    assert_eq!(String::r_max(&"Z".into(), &"a".into()), "a");
    assert_eq!(normalize(i64::MIN, 3), None);
    assert_eq!(normalize(-3, 3), Some(0));
    assert_eq!(count(&[usize::MAX, 2, 0]), Some(0));
    assert_eq!(count(&[usize::MAX, 2]), None);
    assert_eq!(all_coords(&[2, 0]), Vec::<Vec<usize>>::new());
    assert_eq!(all_coords(&[]), vec![Vec::<usize>::new()]);
}

/// An integer type ONNX allows for scatter indices (`int32`, `int64`).
///
/// The kernels read indices in their stored type: no converted copy of a
/// large index tensor is ever made.
pub trait IndexValue: Copy + Send + Sync + 'static {
    /// The index as an `i64`, exactly (still unnormalized: negatives count
    /// from the end of the axis).
    fn to_i64(self) -> i64;
}

impl IndexValue for i32 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
}

impl IndexValue for i64 {
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self
    }
}

/// Maps `index` in `[-dim, dim - 1]` to `[0, dim - 1]`, or `None` outside.
#[inline(always)]
pub(crate) fn normalize(index: i64, dim: usize) -> Option<usize> {
    // dim <= isize::MAX because it is the length of an allocated slice axis,
    // so it fits in i64 on every supported target; the guard keeps this
    // total on exotic ones.
    let d = i64::try_from(dim).ok()?;
    if index >= 0 {
        (index < d).then_some(index as usize)
    } else {
        // index >= -d  <=>  index + d >= 0, computed without overflow
        // because d >= 0 and index < 0.
        let shifted = index + d;
        (shifted >= 0).then_some(shifted as usize)
    }
}

/// Whether `index` lies outside `[-d, d - 1]`, for `d >= 0`: the range
/// folds onto `[0, 2d - 1]` in wrapping arithmetic (`index + d`, read
/// unsigned), so one comparison and no branch; exact for every `i64`
/// `index` since `2d <= 2 * i64::MAX` fits `u64`.
#[inline(always)]
pub(crate) fn out_of_range(index: i64, d: i64) -> bool {
    (index.wrapping_add(d) as u64) >= (2 * d as u64)
}

/// Indices checked per chunk before looking for the first bad one: a
/// chunk is scanned without a branch per index (the compiler vectorizes
/// the OR of the comparisons), and only a chunk with a bad index is
/// scanned again to find it.
pub(crate) const CHECK_CHUNK: usize = 4096;

/// The position of the first of `indices` out of `[-dim, dim - 1]` (the
/// ScatterElements check, serial or one task's range of it).
pub(crate) fn first_out_of_range<I: IndexValue>(indices: &[I], dim: usize) -> Option<usize> {
    let Ok(d) = i64::try_from(dim) else {
        // No index reaches past an axis that long.
        return None;
    };
    let bad = |i: &I| out_of_range(i.to_i64(), d);
    indices
        .chunks(CHECK_CHUNK)
        .enumerate()
        .find(|(_, chunk)| chunk.iter().fold(false, |b, i| b | bad(i)))
        .and_then(|(c, chunk)| Some(c * CHECK_CHUNK + chunk.iter().position(bad)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_accepts_exactly_minus_dim_to_dim_minus_one() {
        assert_eq!(normalize(-3, 3), Some(0));
        assert_eq!(normalize(-1, 3), Some(2));
        assert_eq!(normalize(2, 3), Some(2));
        assert_eq!(normalize(3, 3), None);
        assert_eq!(normalize(-4, 3), None);
    }

    #[test]
    fn out_of_range_agrees_with_normalize_on_the_edges() {
        for d in [0i64, 1, 3, i64::MAX] {
            for i in [i64::MIN, -d - 1, -d, -1, 0, d - 1, d, i64::MAX] {
                assert_eq!(
                    out_of_range(i, d),
                    normalize(i, d as usize).is_none(),
                    "{i} {d}"
                );
            }
        }
    }

    #[test]
    fn first_out_of_range_finds_the_first_bad_index_past_a_chunk() {
        let mut indices = vec![1i64; 3 * CHECK_CHUNK];
        assert_eq!(first_out_of_range(&indices, 2), None);
        indices[2 * CHECK_CHUNK + 5] = -3;
        indices[3 * CHECK_CHUNK - 1] = 2;
        assert_eq!(first_out_of_range(&indices, 2), Some(2 * CHECK_CHUNK + 5));
        indices[CHECK_CHUNK - 1] = 2;
        assert_eq!(first_out_of_range(&indices, 2), Some(CHECK_CHUNK - 1));
    }

    #[test]
    fn normalize_survives_extreme_values() {
        assert_eq!(normalize(i64::MIN, 3), None);
        assert_eq!(normalize(i64::MAX, 3), None);
        assert_eq!(normalize(0, 0), None);
        assert_eq!(normalize(-1, 0), None);
    }
}

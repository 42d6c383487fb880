/// An integer type ONNX allows for scatter indices (`int32`, `int64`).
///
/// The kernels read indices in their stored type: no converted copy of a
/// large index tensor is ever made.
pub trait IndexValue: Copy + Send + Sync + 'static {
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

/// The position of the first of `indices` out of `[-dim, dim - 1]` (the
/// ScatterElements check, serial or one task's range of it).
pub(crate) fn first_out_of_range<I: IndexValue>(indices: &[I], dim: usize) -> Option<usize> {
    match i64::try_from(dim) {
        // `index as u64 + dim` folds [-dim, dim-1] onto [0, 2*dim-1]
        // without a branch; computed in wrapping arithmetic and exact
        // because dim <= i64::MAX.
        Ok(d) => indices
            .iter()
            .position(|i| (i.to_i64().wrapping_add(d) as u64) >= (2 * d as u64)),
        Err(_) => None,
    }
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
    fn normalize_survives_extreme_values() {
        assert_eq!(normalize(i64::MIN, 3), None);
        assert_eq!(normalize(i64::MAX, 3), None);
        assert_eq!(normalize(0, 0), None);
        assert_eq!(normalize(-1, 0), None);
    }
}

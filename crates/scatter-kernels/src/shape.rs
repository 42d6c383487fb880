use crate::{Input, ScatterError};

/// The number of elements of `shape`, or `None` when it overflows `usize`.
pub fn element_count(shape: &[usize]) -> Option<usize> {
    // A zero anywhere makes the count 0 even when other dims overflow.
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// Row-major strides, in elements. Only meaningful for a shape whose
/// [`element_count`] fits; wrapping keeps it total otherwise.
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1].wrapping_mul(shape[axis + 1]);
    }
    strides
}

pub(crate) fn checked_count(input: Input, shape: &[usize]) -> Result<usize, ScatterError> {
    element_count(shape).ok_or_else(|| ScatterError::TooLarge {
        input,
        shape: shape.to_vec(),
    })
}

pub(crate) fn check_len(
    input: Input,
    shape: &[usize],
    expected: usize,
    len: usize,
) -> Result<(), ScatterError> {
    if len == expected {
        Ok(())
    } else {
        Err(ScatterError::Length {
            input,
            shape: shape.to_vec(),
            len,
        })
    }
}

/// The coordinates of row-major position `flat` in `shape` (for messages).
pub(crate) fn coords_of(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut coords = vec![0; shape.len()];
    for (c, &d) in coords.iter_mut().zip(shape).rev() {
        if d > 0 {
            *c = flat % d;
            flat /= d;
        }
    }
    coords
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_count_detects_overflow() {
        assert_eq!(element_count(&[]), Some(1));
        assert_eq!(element_count(&[2, 0, usize::MAX]), Some(0));
        assert_eq!(element_count(&[usize::MAX, 2]), None);
        assert_eq!(element_count(&[usize::MAX, 2, 0]), Some(0));
    }

    #[test]
    fn strides_are_row_major() {
        assert_eq!(row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(row_major_strides(&[5]), vec![1]);
        assert_eq!(row_major_strides(&[]), Vec::<usize>::new());
    }

    #[test]
    fn coords_of_inverts_row_major_position() {
        assert_eq!(coords_of(7, &[2, 3, 4]), vec![0, 1, 3]);
        assert_eq!(coords_of(23, &[2, 3, 4]), vec![1, 2, 3]);
    }
}

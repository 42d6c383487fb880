//! The axis rules of every op, in one place: the plans use them, and so do
//! the hosts that check an axis before the shapes are known (at load), so
//! the same mistake gets the same words at load and at run time.

use crate::{Input, ScatterError};

/// ScatterElements (and Scatter, ScatterElementsUpdate, the gradient ops):
/// `axis` in `[-rank, rank - 1]` as a position in `[0, rank - 1]`.
pub fn elements_axis(axis: i64, rank: usize) -> Result<usize, ScatterError> {
    crate::index::normalize(axis, rank).ok_or_else(|| ScatterError::Axis {
        axis,
        rank,
        expected: if rank == 0 {
            "data of rank >= 1".to_string()
        } else {
            format!("a value in [-{rank}, {}]", rank - 1)
        },
    })
}

/// TensorScatter: `past_cache` of rank >= 2 (a batch axis and a sequence
/// axis), `axis` in `[-rank, rank - 1]` and not the batch axis 0; a
/// position in `[1, rank - 1]`.
pub fn tensor_scatter_axis(axis: i64, rank: usize) -> Result<usize, ScatterError> {
    if rank < 2 {
        return Err(ScatterError::Rank {
            input: Input::PastCache,
            rank,
            expected: "rank >= 2 (a batch axis and a sequence axis)".into(),
        });
    }
    match elements_axis(axis, rank)? {
        0 => Err(ScatterError::Axis {
            axis,
            rank,
            expected: format!(
                "a value in [-{rank}, {}] other than the batch axis 0 (i.e. not 0 or -{rank})",
                rank - 1
            ),
        }),
        position => Ok(position),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_axes_count_from_the_end() {
        assert_eq!(elements_axis(-1, 3), Ok(2));
        assert_eq!(elements_axis(-3, 3), Ok(0));
        assert_eq!(tensor_scatter_axis(-2, 4), Ok(2));
        assert_eq!(tensor_scatter_axis(1, 3), Ok(1));
    }

    #[test]
    fn an_axis_past_either_end_names_the_valid_range() {
        let err = elements_axis(3, 3).unwrap_err().to_string();
        assert_eq!(
            err,
            "axis 3 is invalid for data of rank 3: expected a value in [-3, 2]"
        );
        assert!(elements_axis(-4, 3).is_err());
        assert!(
            elements_axis(0, 0)
                .unwrap_err()
                .to_string()
                .contains("data of rank >= 1")
        );
    }

    #[test]
    fn tensor_scatter_refuses_the_batch_axis_and_rank_one_caches() {
        for (axis, rank) in [(0, 3), (-3, 3), (3, 3), (-4, 3)] {
            let err = tensor_scatter_axis(axis, rank).unwrap_err().to_string();
            assert!(err.starts_with("axis"), "{err}");
        }
        let err = tensor_scatter_axis(-1, 1).unwrap_err().to_string();
        assert!(err.starts_with("rank: past_cache has rank 1"), "{err}");
    }
}

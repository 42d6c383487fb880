//! OpenVINO `ScatterElementsUpdate-12`: ScatterElements plus the `mean`
//! reduction and `use_init_val` (PyTorch `scatter_reduce`'s `include_self`).

use std::collections::HashMap;

use crate::element::combine;
use crate::{
    CheckedElementsIndices, Element, ElementsPlan, Execution, IndexValue, Reduction, ScatterError,
    UpdateReduction,
};

/// Validates everything, then scatters with OpenVINO semantics.
/// On `Err`, `data` is untouched.
///
/// - `use_init_val = true`: the data value at a written position is the
///   first operand of the reduction (as in ONNX).
/// - `use_init_val = false`: it is not; the first update taken at a
///   position replaces it, later ones fold in. Positions nobody writes keep
///   their data.
/// - `Mean` folds as `Add`, then divides each written position by the
///   number of values taken (updates, plus one with `use_init_val`);
///   integers round towards negative infinity; bool cannot average.
/// - `None` ignores `use_init_val`: the last update wins.
#[allow(clippy::too_many_arguments)]
pub fn scatter_elements_update<T: Element, I: IndexValue>(
    data: &mut [T],
    data_shape: &[usize],
    indices: &[I],
    indices_shape: &[usize],
    updates: &[T],
    axis: i64,
    reduction: impl Into<UpdateReduction>,
    use_init_val: bool,
) -> Result<(), ScatterError> {
    let reduction = reduction.into();
    let plan = ElementsPlan::new(data_shape, indices_shape, indices_shape, axis)?;
    T::check_reduction(reduction)?;
    plan.check_indices(indices, Execution::SERIAL)?
        .apply_update(data, updates, reduction, use_init_val, Execution::SERIAL)
}

/// [`CheckedElementsIndices::apply_update`].
pub(crate) fn apply_update<T: Element, I: IndexValue>(
    token: &CheckedElementsIndices<'_, I>,
    data: &mut [T],
    updates: &[T],
    reduction: impl Into<UpdateReduction>,
    use_init_val: bool,
    exec: Execution<'_>,
) -> Result<(), ScatterError> {
    let reduction = reduction.into();
    if let Some(plain) = plain_apply(reduction, use_init_val) {
        return token.apply(data, updates, plain, exec).map(drop);
    }
    T::check_reduction(reduction)?;
    // `mean` folds as `add`; the division comes after.
    let fold = reduction.onnx().unwrap_or(Reduction::Add);
    token.check_buffers(data, updates)?;
    // Values taken per written position: proportional to the updates,
    // not to the data.
    let mut taken: HashMap<usize, usize> = HashMap::new();
    token.visit(|o, p| {
        let count = taken.entry(o).or_insert(0);
        if *count == 0 && !use_init_val {
            data[o].clone_from(&updates[p]);
        } else {
            combine(fold, &mut data[o], &updates[p]);
        }
        *count += 1;
    });
    if reduction == UpdateReduction::Mean {
        for (o, count) in taken {
            data[o] = T::mean(&data[o], count + usize::from(use_init_val));
        }
    }
    Ok(())
}

/// The ONNX reduction OpenVINO's semantics are here, if they are ONNX's:
/// no reduction (the last update wins whatever `use_init_val`), or a
/// reduction other than `mean` that starts from the data value.
fn plain_apply(reduction: UpdateReduction, use_init_val: bool) -> Option<Reduction> {
    match reduction {
        UpdateReduction::Onnx(Reduction::None) => Some(Reduction::None),
        UpdateReduction::Onnx(r) if use_init_val => Some(r),
        _ => None,
    }
}

impl<I: IndexValue> CheckedElementsIndices<'_, I> {
    /// [`crate::scatter_elements_update`] on indices already checked: the
    /// OpenVINO semantics, in place, without validating the indices a
    /// second time. Where they are plain ScatterElements' (no reduction,
    /// or one other than `mean` with `use_init_val`) this is
    /// [`Self::apply`] on `exec`, bit for bit the serial result; the
    /// OpenVINO-only cases (`mean`, `use_init_val = false`) run serially.
    /// `Err` (a reduction `T` cannot do, a buffer whose length is not its
    /// shape's) leaves `data` untouched.
    pub fn apply_update<T: Element>(
        &self,
        data: &mut [T],
        updates: &[T],
        reduction: impl Into<UpdateReduction>,
        use_init_val: bool,
        exec: Execution<'_>,
    ) -> Result<(), ScatterError> {
        apply_update(self, data, updates, reduction, use_init_val, exec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T: Element>(
        data: &[T],
        indices: &[i64],
        updates: &[T],
        reduction: impl Into<UpdateReduction>,
        use_init_val: bool,
    ) -> Vec<T> {
        let mut out = data.to_vec();
        scatter_elements_update(
            &mut out,
            &[data.len()],
            indices,
            &[indices.len()],
            updates,
            0,
            reduction,
            use_init_val,
        )
        .unwrap();
        out
    }

    #[test]
    fn openvino_spec_sum_with_init_value() {
        let out = run(
            &[2, 3, 4, 6],
            &[1, 0, 0, -2, -1, 2],
            &[10, 20, 30, 40, 70, 60],
            Reduction::Add,
            true,
        );
        assert_eq!(out, [52, 13, 104, 76]);
    }

    #[test]
    fn openvino_spec_sum_without_init_value() {
        let out = run(
            &[2, 3, 4, 6],
            &[1, 0, 0, 2, 3, 2],
            &[10, 20, 30, 40, 70, 60],
            Reduction::Add,
            false,
        );
        assert_eq!(out, [50, 10, 100, 70]);
    }

    #[test]
    fn two_d_sum_and_prod_along_axis_1() {
        let data = [1i32, 2, 3, 4, 5, 6, 7, 8, 9];
        let indices = [1i64, 0, 0, 2, 0, 1, 0, 0, 2];
        let updates = [10, 20, 30, 40, 50, 60, 70, 80, 90];
        let scatter = |reduction, use_init_val| {
            let mut out = data.to_vec();
            scatter_elements_update(
                &mut out,
                &[3, 3],
                &indices,
                &[3, 3],
                &updates,
                1,
                reduction,
                use_init_val,
            )
            .unwrap();
            out
        };
        assert_eq!(
            scatter(Reduction::Add, true),
            [51, 12, 3, 54, 65, 46, 157, 8, 99]
        );
        assert_eq!(
            scatter(Reduction::Mul, true),
            [600, 20, 3, 200, 300, 240, 39200, 8, 810]
        );
        assert_eq!(
            scatter(Reduction::Add, false),
            [50, 10, 3, 50, 60, 40, 150, 8, 90]
        );
    }

    #[test]
    fn mean_counts_the_init_value_only_when_asked() {
        let with = run(
            &[1.0f32, 10.0],
            &[0, 0],
            &[2.0, 3.0],
            UpdateReduction::Mean,
            true,
        );
        assert_eq!(with, [2.0, 10.0]);
        let without = run(
            &[1.0f32, 10.0],
            &[0, 0],
            &[2.0, 3.0],
            UpdateReduction::Mean,
            false,
        );
        assert_eq!(without, [2.5, 10.0]);
    }

    #[test]
    fn integer_mean_rounds_down_towards_negative_infinity() {
        assert_eq!(
            run(&[0i32], &[0, 0], &[-3, -4], UpdateReduction::Mean, false),
            [-4]
        );
        assert_eq!(
            run(&[0i32], &[0, 0], &[3, 4], UpdateReduction::Mean, false),
            [3]
        );
        assert_eq!(
            run(&[-1i64, 5], &[0], &[-2], UpdateReduction::Mean, true),
            [-2, 5]
        );
    }

    #[test]
    fn max_and_min_without_init_value_ignore_the_data() {
        assert_eq!(
            run(&[100i32, 0], &[0, 0], &[1, 2], Reduction::Max, false),
            [2, 0]
        );
        assert_eq!(
            run(&[-100i32, 0], &[0, 0], &[1, 2], Reduction::Min, false),
            [1, 0]
        );
    }

    #[test]
    fn bool_mean_is_refused_before_any_write() {
        let mut data = vec![false, false];
        let err = scatter_elements_update(
            &mut data,
            &[2],
            &[0i64],
            &[1],
            &[true],
            0,
            UpdateReduction::Mean,
            true,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("reduction 'mean' is not supported for bool data"),
            "{err}"
        );
        assert_eq!(data, [false, false]);
    }
}

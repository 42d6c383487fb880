//! One snapshot per distinct error each kernel can produce: the message is
//! the user interface, so any change to it shows up in review.
//!
//! Each test also checks the variant and that nothing was written.

use insta::assert_snapshot;
use scatter_kernels::{
    ElementsPlan, Execution, Input, NdPlan, Reduction, ScatterError, TensorScatterMode,
    TensorScatterPlan, UpdateReduction, scatter_elements, scatter_elements_update, scatter_nd,
};

/// Runs ONNX `ScatterElements` on f32 data filled with 9.0 and returns the
/// error, checking that the data is untouched.
fn elements_err(
    data_len: usize,
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    updates_len: usize,
    axis: i64,
    reduction: Reduction,
) -> ScatterError {
    let mut data = vec![9.0f32; data_len];
    let updates = vec![1.0f32; updates_len];
    let err = scatter_elements(
        &mut data,
        data_shape,
        indices,
        indices_shape,
        &updates,
        axis,
        reduction,
    )
    .unwrap_err();
    assert!(data.iter().all(|&x| x == 9.0), "data written before {err}");
    err
}

fn nd_err(
    data_len: usize,
    data_shape: &[usize],
    indices: &[i64],
    indices_shape: &[usize],
    updates_len: usize,
    updates_shape: &[usize],
    reduction: Reduction,
) -> ScatterError {
    let mut data = vec![9i32; data_len];
    let updates = vec![1i32; updates_len];
    let err = scatter_nd(
        &mut data,
        data_shape,
        indices,
        indices_shape,
        &updates,
        updates_shape,
        reduction,
    )
    .unwrap_err();
    assert!(data.iter().all(|&x| x == 9), "data written before {err}");
    err
}

fn tensor_scatter_err(
    cache_len: usize,
    cache_shape: &[usize],
    update_len: usize,
    update_shape: &[usize],
    write_indices: Option<(&[i64], &[usize])>,
    axis: i64,
    mode: TensorScatterMode,
) -> ScatterError {
    let mut cache = vec![9u8; cache_len];
    let update = vec![1u8; update_len];
    let err = TensorScatterPlan::new(cache_shape, update_shape, write_indices.map(|w| w.1), axis)
        .and_then(|plan| {
            plan.check_write_indices(write_indices.map(|w| w.0), mode)?
                .apply(&mut cache, &update, Execution::SERIAL)
        })
        .unwrap_err();
    assert!(cache.iter().all(|&x| x == 9), "cache written before {err}");
    err
}

// ---------------------------------------------------------------------------
// ScatterElements

#[test]
fn scatter_elements_rank_zero_data_is_refused() {
    let err = elements_err(1, &[], &[0], &[], 1, 0, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Rank {
            input: Input::Data,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_indices_rank_differing_from_data_names_the_data_shape() {
    let err = elements_err(6, &[2, 3], &[0, 1], &[2], 2, 0, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Rank {
            input: Input::Indices,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_updates_shape_differing_from_indices_names_both_shapes() {
    let err = ElementsPlan::new(&[2, 3], &[1, 2], &[1, 3], 1).unwrap_err();
    assert!(matches!(
        err,
        ScatterError::Shape {
            input: Input::Updates,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_indices_longer_than_data_off_the_axis_names_the_dimension() {
    let err = elements_err(6, &[2, 3], &[0; 6], &[3, 2], 6, 1, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Shape {
            input: Input::Indices,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_axis_equal_to_rank_is_out_of_range() {
    let err = elements_err(6, &[2, 3], &[0], &[1, 1], 1, 2, Reduction::None);
    assert!(matches!(err, ScatterError::Axis { axis: 2, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_axis_below_minus_rank_is_out_of_range() {
    let err = elements_err(6, &[2, 3], &[0], &[1, 1], 1, -3, Reduction::None);
    assert!(matches!(err, ScatterError::Axis { axis: -3, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_index_equal_to_the_axis_size_is_out_of_bounds() {
    let err = elements_err(6, &[2, 3], &[0, 1, 3], &[1, 3], 3, 1, Reduction::None);
    assert!(matches!(err, ScatterError::OutOfBounds { value: 3, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_index_below_minus_the_axis_size_is_out_of_bounds() {
    let err = elements_err(6, &[2, 3], &[-2, -3, 0, -4], &[2, 2], 4, 0, Reduction::Add);
    assert!(matches!(err, ScatterError::OutOfBounds { value: -3, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_index_i64_min_is_out_of_bounds_without_overflow() {
    let err = elements_err(3, &[3], &[i64::MIN], &[1], 1, 0, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::OutOfBounds {
            value: i64::MIN,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_i32_index_is_reported_with_its_value() {
    let mut data = vec![0u16; 3];
    let err =
        scatter_elements(&mut data, &[3], &[i32::MAX], &[1], &[1], 0, Reduction::Max).unwrap_err();
    assert_eq!(data, [0; 3]);
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_any_index_into_an_empty_axis_has_no_valid_range() {
    let err = elements_err(0, &[2, 0], &[0], &[1, 1], 1, 1, Reduction::None);
    assert!(matches!(err, ScatterError::OutOfBounds { dim: 0, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_string_mul_lists_the_supported_reductions() {
    let mut data = vec![String::from("a")];
    let err = scatter_elements(
        &mut data,
        &[1],
        &[0i64],
        &[1],
        &[String::from("b")],
        0,
        Reduction::Mul,
    )
    .unwrap_err();
    assert_eq!(data, ["a"]);
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_data_buffer_shorter_than_its_shape_is_a_length_error() {
    let err = elements_err(5, &[2, 3], &[0], &[1, 1], 1, 0, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::Data,
            len: 5,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_updates_buffer_longer_than_the_indices_shape_is_a_length_error() {
    let err = elements_err(6, &[2, 3], &[0, 1], &[1, 2], 3, 1, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::Updates,
            len: 3,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_indices_buffer_shorter_than_its_shape_is_a_length_error() {
    let err = elements_err(6, &[2, 3], &[0], &[1, 2], 2, 1, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::Indices,
            len: 1,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_data_shape_beyond_usize_is_too_large() {
    let err = elements_err(0, &[usize::MAX, 2], &[0], &[1, 1], 1, 0, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::TooLarge {
            input: Input::Data,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_indices_shape_beyond_usize_along_the_axis_is_too_large() {
    let err = elements_err(6, &[2, 3], &[], &[2, usize::MAX], 0, 1, Reduction::None);
    assert!(matches!(
        err,
        ScatterError::TooLarge {
            input: Input::Indices,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

// ---------------------------------------------------------------------------
// ScatterND

#[test]
fn scatter_nd_rank_zero_data_is_refused() {
    let err = nd_err(1, &[], &[], &[1, 0], 1, &[1], Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Rank {
            input: Input::Data,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_rank_zero_indices_have_no_tuple_dimension() {
    let err = nd_err(3, &[3], &[0], &[], 1, &[], Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Rank {
            input: Input::Indices,
            rank: 0,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_tuple_longer_than_data_rank_names_both_shapes() {
    let err = nd_err(6, &[2, 3], &[0, 0, 0], &[1, 3], 1, &[1], Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Rank {
            input: Input::Indices,
            rank: 2,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_updates_shape_mismatch_names_the_expected_shape() {
    let err = nd_err(
        20,
        &[4, 5],
        &[0, 1, 2],
        &[3, 1],
        12,
        &[3, 4],
        Reduction::None,
    );
    assert!(matches!(
        err,
        ScatterError::Shape {
            input: Input::Updates,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_component_past_its_own_dimension_is_out_of_bounds() {
    // (0, 3) would be flat offset 3 = (1, 0): still refused.
    let err = nd_err(6, &[2, 3], &[1, 2, 0, 3], &[2, 2], 2, &[2], Reduction::None);
    assert!(matches!(
        err,
        ScatterError::OutOfBounds {
            value: 3,
            axis: 1,
            dim: 3,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_component_below_minus_its_dimension_is_out_of_bounds() {
    let err = nd_err(6, &[2, 3], &[-3, 0], &[1, 1, 2], 1, &[1, 1], Reduction::Add);
    assert!(matches!(
        err,
        ScatterError::OutOfBounds {
            value: -3,
            axis: 0,
            dim: 2,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_component_i64_max_is_out_of_bounds_without_overflow() {
    let err = nd_err(6, &[2, 3], &[i64::MAX], &[1], 3, &[3], Reduction::None);
    assert!(matches!(
        err,
        ScatterError::OutOfBounds {
            value: i64::MAX,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_string_mul_lists_the_supported_reductions() {
    let mut data = vec![String::from("a")];
    let err = scatter_nd(
        &mut data,
        &[1],
        &[0i64],
        &[1, 1],
        &[String::from("b")],
        &[1],
        Reduction::Mul,
    )
    .unwrap_err();
    assert_eq!(data, ["a"]);
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_data_buffer_longer_than_its_shape_is_a_length_error() {
    let err = nd_err(7, &[2, 3], &[0], &[1, 1], 3, &[1, 3], Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::Data,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_updates_buffer_length_mismatch_names_the_updates_shape() {
    let err = nd_err(6, &[2, 3], &[0], &[1, 1], 2, &[1, 3], Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::Updates,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_indices_buffer_length_mismatch_is_a_length_error() {
    let err = nd_err(6, &[2, 3], &[0, 1], &[1, 1], 3, &[1, 3], Reduction::None);
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::Indices,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_data_shape_beyond_usize_is_too_large() {
    let err = nd_err(
        0,
        &[usize::MAX, 3],
        &[0],
        &[1, 1],
        3,
        &[1, 3],
        Reduction::None,
    );
    assert!(matches!(
        err,
        ScatterError::TooLarge {
            input: Input::Data,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_nd_updates_shape_beyond_usize_is_too_large() {
    // data and indices both fit (data is empty along axis 0), updates
    // [2, MAX, 2] does not.
    let err = NdPlan::new(&[0, usize::MAX, 2], &[2, 1], &[2, usize::MAX, 2]).unwrap_err();
    assert!(matches!(
        err,
        ScatterError::TooLarge {
            input: Input::Updates,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

// ---------------------------------------------------------------------------
// ScatterElementsUpdate (OpenVINO): the geometry errors are ScatterElements'
// (same plan); these are the ones specific to its reductions.

#[test]
fn scatter_elements_update_bool_mean_is_refused() {
    let mut data = vec![false, false];
    let err = scatter_elements_update(
        &mut data,
        &[2],
        &[0i64],
        &[1],
        &[true],
        0,
        UpdateReduction::Mean,
        false,
    )
    .unwrap_err();
    assert_eq!(data, [false, false]);
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_update_string_mean_is_refused() {
    let mut data = vec![String::from("a")];
    let err = scatter_elements_update(
        &mut data,
        &[1],
        &[0i32],
        &[1],
        &[String::from("b")],
        0,
        UpdateReduction::Mean,
        true,
    )
    .unwrap_err();
    assert_eq!(data, ["a"]);
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_update_out_of_bounds_index_is_refused_before_any_write() {
    let mut data = vec![1i64, 2, 3];
    let err = scatter_elements_update(
        &mut data,
        &[3],
        &[0i64, 1, -4],
        &[3],
        &[7, 8, 9],
        -1,
        UpdateReduction::Mean,
        false,
    )
    .unwrap_err();
    assert_eq!(data, [1, 2, 3]);
    assert_snapshot!(err.to_string());
}

#[test]
fn scatter_elements_update_updates_buffer_length_mismatch_is_a_length_error() {
    let mut data = vec![1i64, 2, 3];
    let err = scatter_elements_update(
        &mut data,
        &[3],
        &[0i64, 1],
        &[2],
        &[7],
        0,
        Reduction::Add,
        false,
    )
    .unwrap_err();
    assert_eq!(data, [1, 2, 3]);
    assert_snapshot!(err.to_string());
}

// ---------------------------------------------------------------------------
// TensorScatter

#[test]
fn tensor_scatter_rank_one_cache_has_no_sequence_axis() {
    let err = tensor_scatter_err(4, &[4], 1, &[1], None, -1, TensorScatterMode::Linear);
    assert!(matches!(
        err,
        ScatterError::Rank {
            input: Input::PastCache,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_axis_zero_is_the_batch_axis() {
    let err = tensor_scatter_err(8, &[2, 4], 2, &[2, 1], None, 0, TensorScatterMode::Linear);
    assert!(matches!(err, ScatterError::Axis { axis: 0, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_axis_minus_rank_is_the_batch_axis() {
    let err = tensor_scatter_err(
        24,
        &[2, 3, 4],
        6,
        &[2, 3, 1],
        None,
        -3,
        TensorScatterMode::Circular,
    );
    assert!(matches!(err, ScatterError::Axis { axis: -3, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_axis_equal_to_rank_is_out_of_range() {
    let err = tensor_scatter_err(8, &[2, 4], 2, &[2, 1], None, 2, TensorScatterMode::Linear);
    assert!(matches!(err, ScatterError::Axis { axis: 2, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_axis_below_minus_rank_is_out_of_range() {
    let err = tensor_scatter_err(8, &[2, 4], 2, &[2, 1], None, -3, TensorScatterMode::Linear);
    assert!(matches!(err, ScatterError::Axis { axis: -3, .. }));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_update_rank_differing_from_the_cache_names_the_cache_shape() {
    let err = tensor_scatter_err(
        8,
        &[2, 4],
        2,
        &[2, 1, 1],
        None,
        1,
        TensorScatterMode::Linear,
    );
    assert!(matches!(
        err,
        ScatterError::Rank {
            input: Input::Update,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_update_longer_than_the_cache_along_the_axis_is_refused() {
    let err = tensor_scatter_err(
        8,
        &[2, 4],
        10,
        &[2, 5],
        None,
        1,
        TensorScatterMode::Circular,
    );
    assert!(matches!(
        err,
        ScatterError::Shape {
            input: Input::Update,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_update_differing_off_the_axis_is_refused() {
    let err = tensor_scatter_err(
        24,
        &[2, 3, 4],
        4,
        &[1, 3, 4],
        None,
        -2,
        TensorScatterMode::Linear,
    );
    assert!(matches!(
        err,
        ScatterError::Shape {
            input: Input::Update,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_write_indices_shape_must_be_one_start_per_batch_entry() {
    let err = tensor_scatter_err(
        8,
        &[2, 4],
        2,
        &[2, 1],
        Some((&[0, 0, 0], &[3])),
        1,
        TensorScatterMode::Linear,
    );
    assert!(matches!(
        err,
        ScatterError::Shape {
            input: Input::WriteIndices,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_write_indices_buffer_length_mismatch_is_a_length_error() {
    let err = tensor_scatter_err(
        8,
        &[2, 4],
        2,
        &[2, 1],
        Some((&[0], &[2])),
        1,
        TensorScatterMode::Circular,
    );
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::WriteIndices,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_linear_write_past_the_end_is_out_of_bounds() {
    let err = tensor_scatter_err(
        8,
        &[2, 4],
        4,
        &[2, 2],
        Some((&[2, 3], &[2])),
        1,
        TensorScatterMode::Linear,
    );
    assert!(matches!(
        err,
        ScatterError::WriteOutOfBounds {
            batch: 1,
            start: 3,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_linear_negative_start_is_out_of_bounds() {
    let err = tensor_scatter_err(
        8,
        &[2, 4],
        2,
        &[2, 1],
        Some((&[-1, 0], &[2])),
        1,
        TensorScatterMode::Linear,
    );
    assert!(matches!(
        err,
        ScatterError::WriteOutOfBounds {
            batch: 0,
            start: -1,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_linear_start_i64_max_is_out_of_bounds_without_overflow() {
    let err = tensor_scatter_err(
        8,
        &[2, 4],
        2,
        &[2, 1],
        Some((&[0, i64::MAX], &[2])),
        1,
        TensorScatterMode::Linear,
    );
    assert!(matches!(
        err,
        ScatterError::WriteOutOfBounds {
            start: i64::MAX,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_cache_buffer_length_mismatch_is_a_length_error() {
    let err = tensor_scatter_err(7, &[2, 4], 2, &[2, 1], None, 1, TensorScatterMode::Linear);
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::PastCache,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_update_buffer_length_mismatch_is_a_length_error() {
    let err = tensor_scatter_err(8, &[2, 4], 3, &[2, 1], None, 1, TensorScatterMode::Linear);
    assert!(matches!(
        err,
        ScatterError::Length {
            input: Input::Update,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

#[test]
fn tensor_scatter_cache_shape_beyond_usize_is_too_large() {
    let err = tensor_scatter_err(
        0,
        &[usize::MAX, 2],
        0,
        &[usize::MAX, 2],
        None,
        1,
        TensorScatterMode::Linear,
    );
    assert!(matches!(
        err,
        ScatterError::TooLarge {
            input: Input::PastCache,
            ..
        }
    ));
    assert_snapshot!(err.to_string());
}

//! Hostile inputs straight into the kernels: shapes no buffer can have,
//! extreme index values, rank 0 and rank 8+, k > r, zero-size dimensions,
//! integer wrap-around in debug builds. Every case is an `Err` (data
//! untouched) or the contract's value; none panics, overflows or allocates
//! in proportion to a declared dimension (a plan on [usize::MAX, 2] would
//! abort the test process if it did).
//!
//! Crashes the `kernels` fuzz target finds become tests here.

use scatter_kernels::{
    ElementsPlan, Execution, NdPlan, Reduction, ScatterError, TensorScatterMode, TensorScatterPlan,
    UpdateReduction, scatter_elements, scatter_elements_update, scatter_nd,
};

const HUGE: [&[usize]; 5] = [
    &[usize::MAX, 2],
    &[1 << 32, 1 << 32, 1 << 32],
    &[usize::MAX],
    &[i64::MAX as usize + 1, 1],
    &[2, usize::MAX / 2 + 1],
];

#[test]
fn shapes_whose_product_overflows_are_refused_without_allocating() {
    for shape in HUGE {
        let ones = vec![1usize; shape.len()];
        // Data too large: counted with checked arithmetic.
        match ElementsPlan::new(shape, &ones, &ones, 0) {
            Err(ScatterError::TooLarge { .. }) => {}
            Ok(plan) => {
                // Countable (single huge dim): the buffers must then match.
                let checked = plan.check_indices(&[0i64], Execution::SERIAL).unwrap();
                let mut data = vec![0f32; 4];
                assert!(
                    checked
                        .apply(&mut data, &[1.0], Reduction::None, Execution::SERIAL)
                        .is_err()
                );
            }
            Err(e) => panic!("{shape:?}: {e}"),
        }
        let mut data = vec![0f32; 4];
        assert!(
            scatter_elements(&mut data, shape, &[0i64], &ones, &[1.0], 0, Reduction::Add).is_err()
        );
        assert_eq!(data, [0.0; 4]);
        // ScatterND: huge data, huge batch.
        let mut idx_shape = shape.to_vec();
        idx_shape.push(1);
        assert!(
            scatter_nd(
                &mut data,
                &[4],
                &[0i64],
                &idx_shape,
                &[1.0],
                shape,
                Reduction::None
            )
            .is_err()
        );
        assert!(
            scatter_nd(
                &mut data,
                shape,
                &[0i64],
                &[1, 1],
                &[1.0],
                &[1],
                Reduction::None
            )
            .is_err()
        );
        // TensorScatter on a huge cache.
        assert!(
            TensorScatterPlan::new(shape, shape, None, -1)
                .and_then(|p| {
                    p.check_write_indices(None, TensorScatterMode::Linear)?
                        .apply(&mut data, &[1.0], Execution::SERIAL)
                })
                .is_err()
        );
        assert_eq!(data, [0.0; 4]);
    }
}

#[test]
fn zero_dims_next_to_overflowing_ones_count_as_empty() {
    // [0, usize::MAX, 2] has 0 elements; the suffix product overflows.
    let mut data: Vec<f32> = vec![];
    scatter_nd(
        &mut data,
        &[0, usize::MAX, 2],
        &[] as &[i64],
        &[0, 1],
        &[],
        &[0, usize::MAX, 2],
        Reduction::Add,
    )
    .unwrap();
    // k = 0 with an enormous batch and an empty slice: nothing to loop over.
    scatter_nd(
        &mut data,
        &[0],
        &[] as &[i64],
        &[usize::MAX, 0],
        &[],
        &[usize::MAX, 0],
        Reduction::Add,
    )
    .unwrap();
    let plan =
        TensorScatterPlan::new(&[0, 0, 2, usize::MAX], &[0, 0, 2, usize::MAX], None, 1).unwrap();
    plan.check_write_indices(None, TensorScatterMode::Circular)
        .unwrap()
        .apply(&mut data, &[], Execution::SERIAL)
        .unwrap();
}

#[test]
fn extreme_index_values_on_every_kernel() {
    let bad = [i64::MIN, i64::MAX, 4, -5, i64::MIN + 1, i64::MAX - 3];
    for v in bad {
        let mut data = vec![0i32; 8];
        let e = scatter_elements(&mut data, &[2, 4], &[v], &[1, 1], &[1], 1, Reduction::Add)
            .unwrap_err();
        assert!(
            matches!(e, ScatterError::OutOfBounds { value, dim: 4, .. } if value == v),
            "{e}"
        );
        let e = scatter_elements_update(
            &mut data,
            &[2, 4],
            &[v],
            &[1, 1],
            &[1],
            -1,
            UpdateReduction::Mean,
            false,
        )
        .unwrap_err();
        assert!(matches!(e, ScatterError::OutOfBounds { .. }), "{e}");
        let e = scatter_nd(
            &mut data,
            &[2, 4],
            &[0, v],
            &[1, 2],
            &[1],
            &[1],
            Reduction::Mul,
        )
        .unwrap_err();
        assert!(
            matches!(e, ScatterError::OutOfBounds { axis: 1, .. }),
            "{e}"
        );
        assert_eq!(data, [0; 8]);
    }
    // i32 extremes.
    for v in [i32::MIN, i32::MAX] {
        let mut data = vec![0u8; 3];
        assert!(scatter_elements(&mut data, &[3], &[v], &[1], &[1], 0, Reduction::None).is_err());
        assert!(scatter_nd(&mut data, &[3], &[v], &[1, 1], &[1], &[1], Reduction::None).is_err());
    }
    // TensorScatter: linear refuses, circular wraps, both without overflow.
    let plan = TensorScatterPlan::new(&[1, 3], &[1, 2], Some(&[1]), -1).unwrap();
    for v in [i64::MIN, i64::MAX, i64::MAX - 1, -1, 2] {
        assert!(
            plan.check_write_indices(Some(&[v]), TensorScatterMode::Linear)
                .is_err()
        );
        let mut cache = vec![0i32; 3];
        plan.check_write_indices(Some(&[v]), TensorScatterMode::Circular)
            .unwrap()
            .apply(&mut cache, &[1, 2], Execution::SERIAL)
            .unwrap();
        let first = v.rem_euclid(3) as usize;
        assert_eq!(cache[first], 1);
        assert_eq!(cache[(first + 1) % 3], 2);
    }
}

#[test]
fn rank_0_and_k_greater_than_r_are_rank_errors() {
    assert!(matches!(
        ElementsPlan::new(&[], &[], &[], 0),
        Err(ScatterError::Rank { .. })
    ));
    assert!(matches!(
        NdPlan::new(&[], &[1], &[]),
        Err(ScatterError::Rank { .. })
    ));
    assert!(matches!(
        NdPlan::new(&[3], &[], &[]),
        Err(ScatterError::Rank { .. })
    ));
    assert!(matches!(
        NdPlan::new(&[3], &[1, 2], &[1]),
        Err(ScatterError::Rank { .. })
    ));
    assert!(matches!(
        NdPlan::new(&[3], &[1, usize::MAX], &[1]),
        Err(ScatterError::Rank { .. })
    ));
    assert!(matches!(
        TensorScatterPlan::new(&[3], &[3], None, 0),
        Err(ScatterError::Rank { .. })
    ));
}

#[test]
fn rank_10_kernels_give_the_contract_value() {
    let shape = [2usize, 1, 2, 1, 2, 1, 2, 1, 2, 1];
    let n: usize = shape.iter().product();
    let mut data: Vec<i64> = (0..n as i64).collect();
    scatter_elements(
        &mut data,
        &shape,
        &[-1i64],
        &[1; 10],
        &[100],
        0,
        Reduction::Add,
    )
    .unwrap();
    assert_eq!(data[16], 116);
    let mut data: Vec<i64> = (0..n as i64).collect();
    let tuple = [1i64, 0, 1, 0, 1, 0, 1, 0, 1, 0];
    scatter_nd(
        &mut data,
        &shape,
        &tuple,
        &[1, 10],
        &[-1],
        &[1],
        Reduction::Mul,
    )
    .unwrap();
    assert_eq!(data[n - 1], -(n as i64 - 1));
}

#[test]
fn integer_reductions_wrap_in_debug_builds() {
    let mut data = vec![i64::MAX, i64::MIN, u8::MAX as i64];
    scatter_elements(
        &mut data,
        &[3],
        &[0i64, 1, 0],
        &[3],
        &[1, -1, i64::MAX],
        0,
        Reduction::Add,
    )
    .unwrap();
    assert_eq!(data[0], i64::MAX.wrapping_add(1).wrapping_add(i64::MAX));
    assert_eq!(data[1], i64::MAX);
    let mut data = vec![u8::MAX, 0x80];
    scatter_nd(
        &mut data,
        &[2],
        &[0i64, 1],
        &[2, 1],
        &[u8::MAX, 2],
        &[2],
        Reduction::Mul,
    )
    .unwrap();
    assert_eq!(data, [1, 0]);
    // Mean of wrapping sums.
    let mut data = vec![i8::MAX];
    scatter_elements_update(
        &mut data,
        &[1],
        &[0i64, 0],
        &[2],
        &[i8::MAX, i8::MAX],
        0,
        UpdateReduction::Mean,
        true,
    )
    .unwrap();
    let sum = i8::MAX.wrapping_add(i8::MAX).wrapping_add(i8::MAX);
    assert_eq!(data[0], sum.div_euclid(3));
}

#[test]
fn nan_and_infinities_in_float_reductions() {
    let cases: [(Reduction, f32, f32, f32); 8] = [
        (Reduction::Add, f32::INFINITY, f32::NEG_INFINITY, f32::NAN),
        (Reduction::Mul, f32::INFINITY, 0.0, f32::NAN),
        (Reduction::Max, f32::NAN, 1.0, f32::NAN),
        (Reduction::Max, 1.0, f32::NAN, f32::NAN),
        (Reduction::Min, f32::NAN, f32::NEG_INFINITY, f32::NAN),
        (Reduction::Min, f32::NEG_INFINITY, f32::NAN, f32::NAN),
        (
            Reduction::Max,
            f32::NEG_INFINITY,
            f32::INFINITY,
            f32::INFINITY,
        ),
        (Reduction::Add, f32::MAX, f32::MAX, f32::INFINITY),
    ];
    for (r, d, u, expected) in cases {
        let mut data = vec![d];
        scatter_elements(&mut data, &[1], &[0i64], &[1], &[u], 0, r).unwrap();
        assert!(
            data[0].to_bits() == expected.to_bits() || (data[0].is_nan() && expected.is_nan()),
            "{d} {r} {u} = {}, expected {expected}",
            data[0]
        );
    }
}

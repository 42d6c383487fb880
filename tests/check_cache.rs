//! A ScatterND or ScatterElements keeps the check (and, for a large
//! random-index ScatterND, the sort) of indices that come back
//! (`tract_onnx_scatter::ops::run::check_cache`): the same indices tensor passed
//! again (or a constant of the model) is neither checked nor sorted again,
//! and gives the output a fresh check gives; any other tensor, whatever its
//! values, is checked (and sorted) again.
//!
//! `LARGE` is just past the kernels' blocking thresholds
//! (`scatter_kernels::Schedule::DEFAULT`: 8 MiB of output, 64 updates per
//! 256 KiB block), where the ScatterND sorts its updates; `SMALL` is far
//! below them, where it only checks them.

use crate::graph;

use graph::Graph;
use tract_onnx_scatter::ops::{ScatterElements, ScatterNd};
use tract_onnx_scatter::tract_core::tract_linalg::multithread::{
    Executor, multithread_tract_scope,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// The data shape and the number of index tuples of a test graph.
#[derive(Clone, Copy)]
struct Size {
    data: [usize; 2],
    tuples: usize,
}

const LARGE: Size = Size {
    data: [2048, 1024],
    tuples: 1 << 14,
};

const SMALL: Size = Size {
    data: [64, 32],
    tuples: 1 << 10,
};

/// Index tuples of `LARGE` in `[-d, d)` per component, from `seed`.
fn indices(seed: u64) -> Tensor {
    indices_of(LARGE, seed)
}

/// Index tuples of `size` in `[-d, d)` per component, from `seed`.
fn indices_of(Size { data, tuples }: Size, seed: u64) -> Tensor {
    let mut s = seed;
    let mut below = |n: usize| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 33) % (2 * n as u64)) as i64 - n as i64
    };
    let v: Vec<i64> = (0..tuples)
        .flat_map(|_| [below(data[0]), below(data[1])])
        .collect();
    Tensor::from_shape(&[tuples, 2], &v).unwrap()
}

fn floats(n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|i| (i % 97) as f32 * scale).collect()
}

fn data() -> Tensor {
    data_of(LARGE)
}

fn data_of(Size { data, .. }: Size) -> Tensor {
    Tensor::from_shape(&data, &floats(data[0] * data[1], 0.5)).unwrap()
}

fn updates() -> Tensor {
    updates_of(LARGE)
}

fn updates_of(Size { tuples, .. }: Size) -> Tensor {
    Tensor::from_shape(&[tuples], &floats(tuples, -1.25)).unwrap()
}

/// ScatterND(add) of `[tuples]` updates into `data`; `indices` an
/// initializer when given, else an input.
fn graph(Size { data, tuples }: Size, constant: Option<&Tensor>) -> Graph {
    let g = Graph::new(18).input_c("data", DatumType::F32, &data);
    let g = match constant {
        Some(t) => g.init("indices", t),
        None => g.input_c("indices", DatumType::I64, &[tuples, 2]),
    };
    g.input_c("updates", DatumType::F32, &[tuples])
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![graph::attr_string("reduction", "add")],
        )
        .output("out", DatumType::F32)
}

fn plan(constant: Option<&Tensor>) -> Arc<TypedSimplePlan> {
    plan_of(LARGE, constant)
}

fn plan_of(size: Size, constant: Option<&Tensor>) -> Arc<TypedSimplePlan> {
    graph(size, constant)
        .optimized()
        .unwrap()
        .into_runnable()
        .unwrap()
}

/// Whether the plan's ScatterND keeps a check (`Some`), whether that holds
/// a sort (`Some(true)`), and how many calls reused one.
fn kept(plan: &Arc<TypedSimplePlan>) -> (Option<bool>, usize) {
    let cache = &only_op::<ScatterNd>(plan).check_cache;
    (cache.kept().map(|k| k.is_sorted()), cache.reused())
}

/// The plan's one op of type `O`.
fn only_op<O: TypedOp>(plan: &Arc<TypedSimplePlan>) -> &O {
    let ops: Vec<&O> = plan
        .model()
        .nodes()
        .iter()
        .filter_map(|n| n.op_as::<O>())
        .collect();
    assert_eq!(
        ops.len(),
        1,
        "one {} in the plan",
        std::any::type_name::<O>()
    );
    ops[0]
}

/// A run of a plan of `size` on a copy of `indices` nobody else holds.
fn run_alone(size: Size, plan: &Arc<TypedSimplePlan>, indices: &Tensor) -> Tensor {
    let out = plan
        .run(tvec![
            data_of(size).into_tvalue(),
            indices.clone().into_tvalue(),
            updates_of(size).into_tvalue()
        ])
        .unwrap();
    out[0].clone().into_tensor()
}

/// The output of a plan of `size` that never saw any indices before, on
/// one thread, from a copy of `indices` nobody else holds.
fn fresh_output_of(size: Size, indices: &Tensor) -> Tensor {
    run_alone(size, &plan_of(size, None), indices)
}

/// A run of a plan of `size` with `indices` held by the caller too.
fn run_of(size: Size, plan: &Arc<TypedSimplePlan>, indices: &TValue) -> TractResult<Tensor> {
    let out = plan.run(tvec![
        data_of(size).into_tvalue(),
        indices.clone(),
        updates_of(size).into_tvalue()
    ])?;
    Ok(out[0].clone().into_tensor())
}

/// The output of a `LARGE` plan that never saw any indices before.
fn fresh_output(indices: &Tensor) -> Tensor {
    fresh_output_of(LARGE, indices)
}

/// A run of a `LARGE` plan with `indices` held by the caller too.
fn run_keeping(plan: &Arc<TypedSimplePlan>, indices: &TValue) -> TractResult<Tensor> {
    run_of(LARGE, plan, indices)
}

#[test]
fn indices_the_caller_passes_again_reuse_their_sort_with_the_same_output() {
    let plan = plan(None);
    let a = indices(1).into_tvalue();
    let want = fresh_output(&a);
    assert_eq!(kept(&plan), (None, 0));
    assert_eq!(run_keeping(&plan, &a).unwrap(), want);
    assert_eq!(
        kept(&plan),
        (Some(true), 0),
        "the sort of kept indices is kept"
    );
    for calls in 1..=2 {
        assert_eq!(run_keeping(&plan, &a).unwrap(), want);
        assert_eq!(kept(&plan), (Some(true), calls), "and reused");
    }
}

#[test]
fn another_indices_tensor_is_checked_and_sorted_again_whatever_its_values() {
    let plan = plan(None);
    let a = indices(1).into_tvalue();
    run_keeping(&plan, &a).unwrap();
    assert_eq!(kept(&plan), (Some(true), 0));
    // Other values: the output of their own sort, not of the kept one.
    let b = indices(2).into_tvalue();
    assert_eq!(run_keeping(&plan, &b).unwrap(), fresh_output(&b));
    // The same values in another tensor, and the first tensor again.
    let a_copy = (*a).clone().into_tvalue();
    let want = fresh_output(&a);
    assert_eq!(run_keeping(&plan, &a_copy).unwrap(), want);
    assert_eq!(run_keeping(&plan, &a).unwrap(), want);
    assert_eq!(
        kept(&plan),
        (Some(true), 0),
        "no call reused another's sort"
    );
    // Out-of-bounds values after a kept sort: refused, as ever.
    let mut bad = (*a).clone();
    bad.try_as_plain_ram_mut()
        .unwrap()
        .as_slice_mut::<i64>()
        .unwrap()[7] = 5000;
    let err = run_keeping(&plan, &bad.into_tvalue()).unwrap_err();
    let message = format!("{err:#}");
    assert!(message.contains("out of bounds"), "{message}");
    assert!(message.contains("5000"), "{message}");
}

#[test]
fn indices_nobody_else_holds_are_not_kept() {
    let plan = plan(None);
    let out = run_alone(LARGE, &plan, &indices(1));
    assert_eq!(out, fresh_output(&indices(1)));
    assert_eq!(
        kept(&plan),
        (None, 0),
        "a value made for one call is not kept"
    );
}

#[test]
fn constant_indices_are_sorted_once_and_give_the_fresh_output_every_call() {
    let constant = indices(3);
    let plan = plan(Some(&constant));
    let want = fresh_output(&constant);
    for calls in 0..3 {
        let out = plan
            .run(tvec![data().into_tvalue(), updates().into_tvalue()])
            .unwrap();
        assert_eq!(out[0].clone().into_tensor(), want);
        assert_eq!(
            kept(&plan),
            (Some(true), calls),
            "the sort of a constant is kept"
        );
    }
}

/// A run of a `SMALL` plan with `indices` held by the caller too.
fn run_small(plan: &Arc<TypedSimplePlan>, indices: &TValue) -> TractResult<Tensor> {
    run_of(SMALL, plan, indices)
}

#[test]
fn the_check_of_unsorted_indices_passed_again_is_kept_and_reused() {
    let plan = plan_of(SMALL, None);
    let a = indices_of(SMALL, 1).into_tvalue();
    let want = fresh_output_of(SMALL, &a);
    assert_eq!(run_small(&plan, &a).unwrap(), want);
    assert_eq!(kept(&plan), (Some(false), 0), "the check alone is kept");
    for calls in 1..=2 {
        assert_eq!(run_small(&plan, &a).unwrap(), want);
        assert_eq!(kept(&plan), (Some(false), calls), "and reused");
    }
    // Another tensor with a bad value: checked, and refused.
    let mut bad = (*a).clone();
    bad.try_as_plain_ram_mut()
        .unwrap()
        .as_slice_mut::<i64>()
        .unwrap()[9] = -65;
    let err = run_small(&plan, &bad.into_tvalue()).unwrap_err();
    let message = format!("{err:#}");
    assert!(message.contains("out of bounds"), "{message}");
    assert!(message.contains("-65"), "{message}");
    assert_eq!(
        kept(&plan),
        (Some(false), 2),
        "the refused call reused nothing"
    );
}

/// Single elements into 16 KiB, far below the blocking thresholds, but
/// past the kernels' split threshold (1 MiB of updates and indices).
const SPLIT: Size = Size {
    data: [64, 64],
    tuples: 1 << 17,
};

fn on_two_threads<R>(f: impl FnOnce() -> R) -> R {
    multithread_tract_scope(Executor::multithread(2), f)
}

#[test]
fn short_slices_passed_again_on_threads_are_sorted_once_for_a_split() {
    let a = indices_of(SPLIT, 5).into_tvalue();
    let want = fresh_output_of(SPLIT, &a);
    let plan = plan_of(SPLIT, None);
    on_two_threads(|| {
        assert_eq!(run_of(SPLIT, &plan, &a).unwrap(), want);
        assert_eq!(kept(&plan), (Some(false), 0), "first seen: not sorted");
        for calls in 1..=2 {
            assert_eq!(run_of(SPLIT, &plan, &a).unwrap(), want);
            assert_eq!(kept(&plan), (Some(true), calls), "came back: sorted");
        }
    });
    // New tensors each call (the same values): never kept, never sorted.
    let plan = plan_of(SPLIT, None);
    on_two_threads(|| {
        for _ in 0..2 {
            assert_eq!(run_alone(SPLIT, &plan, &a), want);
            assert_eq!(kept(&plan), (None, 0));
        }
    });
    // One thread: nothing to split, the check alone is kept.
    let plan = plan_of(SPLIT, None);
    for calls in 0..3 {
        assert_eq!(run_of(SPLIT, &plan, &a).unwrap(), want);
        assert_eq!(kept(&plan), (Some(false), calls));
    }
}

#[test]
fn the_check_of_small_constant_indices_is_made_once() {
    let constant = indices_of(SMALL, 4);
    let plan = plan_of(SMALL, Some(&constant));
    let want = plan_of(SMALL, None)
        .run(tvec![
            data_of(SMALL).into_tvalue(),
            constant.clone().into_tvalue(),
            updates_of(SMALL).into_tvalue()
        ])
        .unwrap()[0]
        .clone()
        .into_tensor();
    for calls in 0..3 {
        let out = plan
            .run(tvec![
                data_of(SMALL).into_tvalue(),
                updates_of(SMALL).into_tvalue()
            ])
            .unwrap();
        assert_eq!(out[0].clone().into_tensor(), want);
        assert_eq!(
            kept(&plan),
            (Some(false), calls),
            "the check of a constant is kept"
        );
    }
}

/// ScatterElements(add) along axis 0 of `[256, 32]` updates into
/// `SMALL.data`; `indices` an initializer when given, else an input.
fn elements_plan(constant: Option<&Tensor>) -> Arc<TypedSimplePlan> {
    let g = Graph::new(18).input_c("data", DatumType::F32, &SMALL.data);
    let g = match constant {
        Some(t) => g.init("indices", t),
        None => g.input_c("indices", DatumType::I64, &ELEMENTS),
    };
    g.input_c("updates", DatumType::F32, &ELEMENTS)
        .node(
            "ScatterElements",
            &["data", "indices", "updates"],
            &["out"],
            vec![
                graph::attr_int("axis", 0),
                graph::attr_string("reduction", "add"),
            ],
        )
        .output("out", DatumType::F32)
        .optimized()
        .unwrap()
        .into_runnable()
        .unwrap()
}

const ELEMENTS: [usize; 2] = [256, 32];

/// ScatterElements indices of `ELEMENTS`' shape in `[-64, 64)`.
fn element_indices(seed: u64) -> Tensor {
    let tuples = indices_of(
        Size {
            data: [SMALL.data[0], SMALL.data[0]],
            tuples: ELEMENTS[0] * ELEMENTS[1] / 2,
        },
        seed,
    );
    tuples.into_shape(&ELEMENTS).unwrap()
}

/// Whether the plan's ScatterElements keeps a check, and how many calls
/// reused one.
fn elements_kept(plan: &Arc<TypedSimplePlan>) -> (bool, usize) {
    let cache = &only_op::<ScatterElements>(plan).check_cache;
    (cache.kept().is_some(), cache.reused())
}

/// A run of an elements plan, `indices` given when an input.
fn run_elements(plan: &Arc<TypedSimplePlan>, indices: Option<&TValue>) -> TractResult<Tensor> {
    let updates = Tensor::from_shape(&ELEMENTS, &floats(ELEMENTS[0] * ELEMENTS[1], -1.25))?;
    let mut inputs = tvec![data_of(SMALL).into_tvalue()];
    inputs.extend(indices.cloned());
    inputs.push(updates.into_tvalue());
    Ok(plan.run(inputs)?[0].clone().into_tensor())
}

#[test]
fn element_indices_passed_again_reuse_their_check_and_another_tensor_is_checked() {
    let plan = elements_plan(None);
    let a = element_indices(5).into_tvalue();
    // From a plan that never saw them, a value nobody else holds.
    let want = run_elements(&elements_plan(None), Some(&(*a).clone().into_tvalue())).unwrap();
    assert_eq!(run_elements(&plan, Some(&a)).unwrap(), want);
    assert_eq!(elements_kept(&plan), (true, 0), "the check is kept");
    for calls in 1..=2 {
        assert_eq!(run_elements(&plan, Some(&a)).unwrap(), want);
        assert_eq!(elements_kept(&plan), (true, calls), "and reused");
    }
    // The same values in another tensor: checked again, the same output.
    let a_copy = (*a).clone().into_tvalue();
    assert_eq!(run_elements(&plan, Some(&a_copy)).unwrap(), want);
    assert_eq!(elements_kept(&plan), (true, 2));
    // Another tensor with a bad value: checked, and refused.
    let mut bad = (*a).clone();
    bad.try_as_plain_ram_mut()
        .unwrap()
        .as_slice_mut::<i64>()
        .unwrap()[33] = 64;
    let err = run_elements(&plan, Some(&bad.into_tvalue())).unwrap_err();
    let message = format!("{err:#}");
    assert!(message.contains("out of bounds"), "{message}");
    assert!(message.contains("64"), "{message}");
    assert_eq!(
        elements_kept(&plan),
        (true, 2),
        "the refused call reused nothing"
    );
}

#[test]
fn the_check_of_constant_element_indices_is_made_once() {
    let constant = element_indices(6);
    let plan = elements_plan(Some(&constant));
    let want = run_elements(&elements_plan(None), Some(&constant.clone().into_tvalue())).unwrap();
    for calls in 0..3 {
        assert_eq!(run_elements(&plan, None).unwrap(), want);
        assert_eq!(
            elements_kept(&plan),
            (true, calls),
            "the check of a constant is kept"
        );
    }
}

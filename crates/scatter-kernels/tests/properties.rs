//! Property tests: every kernel agrees with the naive oracle in
//! `tests/oracle.rs` on random valid and invalid inputs, for every element
//! type and both index types; errors never panic and never write.

use crate::oracle;

use std::fmt::Debug;

use half::{bf16, f16};
use oracle::{RefElem, Refusal, all_same, refusal_of};
use proptest::prelude::*;
use proptest::sample::select;
use scatter_kernels::{
    Element, ElementsPlan, Execution, IndexValue, Reduction, ScatterError, TensorScatterMode,
    TensorScatterPlan, UpdateReduction,
};

// ---------------------------------------------------------------------------
// Values per element type.

trait Sample: Element + RefElem + Debug {
    fn value() -> BoxedStrategy<Self>;
}

macro_rules! sample_integer {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn value() -> BoxedStrategy<Self> {
                prop_oneof![
                    3 => (0 as $t..4 as $t),
                    1 => select(vec![<$t>::MIN, <$t>::MAX, <$t>::MAX / 2 + 1, 1 as $t]),
                    1 => any::<$t>(),
                ]
                .boxed()
            }
        }
    )*};
}

sample_integer!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! sample_float {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn value() -> BoxedStrategy<Self> {
                prop_oneof![
                    3 => (-8i32..8).prop_map(|x| x as $t * 0.75),
                    2 => select(vec![
                        <$t>::NAN, -<$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY, 0.0, -0.0,
                        <$t>::MAX, <$t>::MIN, <$t>::MIN_POSITIVE, <$t>::EPSILON, 1.0 / 3.0,
                    ]),
                    1 => any::<$t>(),
                ]
                .boxed()
            }
        }
    )*};
}

sample_float!(f32, f64);

macro_rules! sample_half {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            fn value() -> BoxedStrategy<Self> {
                prop_oneof![
                    3 => (-8i32..8).prop_map(|x| <$t>::from_f32(x as f32 * 0.75)),
                    2 => select(vec![
                        <$t>::NAN, -<$t>::NAN, <$t>::INFINITY, <$t>::NEG_INFINITY, <$t>::ZERO,
                        <$t>::NEG_ZERO, <$t>::MAX, <$t>::MIN, <$t>::MIN_POSITIVE,
                        <$t>::EPSILON, <$t>::from_f32(1.0 / 3.0), <$t>::from_f32(2048.0),
                    ]),
                    1 => any::<u16>().prop_map(<$t>::from_bits),
                ]
                .boxed()
            }
        }
    )*};
}

sample_half!(f16, bf16);

impl Sample for bool {
    fn value() -> BoxedStrategy<Self> {
        any::<bool>().boxed()
    }
}

impl Sample for String {
    fn value() -> BoxedStrategy<Self> {
        prop::collection::vec(select(vec!['a', 'b', 'Z', 'é', '\u{0}']), 0..3)
            .prop_map(String::from_iter)
            .boxed()
    }
}

// ---------------------------------------------------------------------------
// Shapes and indices.

/// A dimension in 0..=4, mostly non-zero so that most cases write.
fn dim() -> BoxedStrategy<usize> {
    prop_oneof![1 => Just(0usize), 9 => 1..=4usize].boxed()
}

/// An indices dimension on a non-axis data dimension of size `d`: often
/// the full `d`, otherwise anything in `0..=d`.
fn dim_up_to(d: usize) -> BoxedStrategy<usize> {
    prop_oneof![1 => Just(d), 1 => 0..=d].boxed()
}

fn count(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// An axis in `[0, rank)` written in its positive or negative form.
fn axis_form(axis: usize, rank: usize, negative: bool) -> i64 {
    if negative {
        axis as i64 - rank as i64
    } else {
        axis as i64
    }
}

/// Index values that are invalid on an axis of size `dim` (`dim <= 5`).
fn bad_index(dim: usize) -> BoxedStrategy<i64> {
    let d = dim as i64;
    prop_oneof![
        select(vec![
            d,
            -d - 1,
            i64::MIN,
            i64::MAX,
            i64::MIN + 1,
            i32::MIN as i64,
            i32::MAX as i64,
            i32::MIN as i64 - 1,
            i32::MAX as i64 + 1,
        ]),
        (d..d + 100),
        (-d - 100..-d),
    ]
    .boxed()
}

fn onnx_reductions<T: RefElem>() -> Vec<Reduction> {
    Reduction::ALL
        .into_iter()
        .filter(|r| T::supports((*r).into()))
        .collect()
}

/// The reductions the ONNX ops refuse for `T` (`mean` is not one of
/// theirs: their reduction type has no such value).
fn onnx_refused<T: RefElem>() -> Vec<Reduction> {
    Reduction::ALL
        .into_iter()
        .filter(|r| !T::supports((*r).into()))
        .collect()
}

fn update_reductions<T: RefElem>() -> Vec<UpdateReduction> {
    UpdateReduction::ALL
        .into_iter()
        .filter(|r| T::supports(*r))
        .collect()
}

fn update_refused<T: RefElem>() -> Vec<UpdateReduction> {
    UpdateReduction::ALL
        .into_iter()
        .filter(|r| !T::supports(*r))
        .collect()
}

// ---------------------------------------------------------------------------
// Comparing a kernel run with the oracle.

/// `kernel` ran on a copy of `before`, leaving `after`. It must agree with
/// the oracle: same output, or the same refusal with nothing written.
fn agree<T: RefElem>(
    kernel: Result<(), ScatterError>,
    after: &[T],
    before: &[T],
    oracle: &Result<Vec<T>, Refusal>,
) -> Result<(), TestCaseError> {
    match (oracle, kernel) {
        (Ok(expected), Ok(())) => {
            prop_assert!(
                all_same(after, expected),
                "kernel {after:?}\noracle {expected:?}\ndata   {before:?}"
            );
        }
        (Ok(expected), Err(e)) => {
            prop_assert!(false, "kernel refused ({e}) but oracle gives {expected:?}");
        }
        (Err(r), Ok(())) => {
            prop_assert!(
                false,
                "kernel accepted ({after:?}) but oracle refuses: {r:?}"
            );
        }
        (Err(r), Err(e)) => {
            prop_assert_eq!(&refusal_of(&e), r, "kernel error: {}", e);
            prop_assert!(all_same(after, before), "data written before {}", e);
            // Every message leads with a category word or the input name.
            prop_assert!(!e.to_string().is_empty());
        }
    }
    Ok(())
}

/// Guards against vacuous properties: a "valid" generator must make
/// inputs the oracle accepts, an "invalid" one inputs it refuses.
fn expect<T: Debug>(oracle: &Result<Vec<T>, Refusal>, valid: bool) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        oracle.is_ok(),
        valid,
        "generator made an unexpected case: {:?}",
        oracle
    );
    Ok(())
}

fn narrow(indices: &[i64]) -> Option<Vec<i32>> {
    indices.iter().map(|&i| i32::try_from(i).ok()).collect()
}

/// Runs `f` with i64 indices, then (when they fit) with i32 indices, each
/// twice (determinism), and checks every run against the oracle.
fn each_index_type<T: RefElem>(
    before: &[T],
    indices: &[i64],
    oracle: &Result<Vec<T>, Refusal>,
    mut f64_: impl FnMut(&mut Vec<T>, &[i64]) -> Result<(), ScatterError>,
    mut f32_: impl FnMut(&mut Vec<T>, &[i32]) -> Result<(), ScatterError>,
) -> Result<(), TestCaseError> {
    let mut first: Option<Vec<T>> = None;
    let mut record = |out: Vec<T>| -> Result<(), TestCaseError> {
        if let Some(f) = &first {
            prop_assert!(all_same(f, &out), "runs differ: {f:?} vs {out:?}");
        } else {
            first = Some(out);
        }
        Ok(())
    };
    for _ in 0..2 {
        let mut data = before.to_vec();
        let r = f64_(&mut data, indices);
        agree(r, &data, before, oracle)?;
        record(data)?;
    }
    if let Some(narrow) = narrow(indices) {
        let mut data = before.to_vec();
        let r = f32_(&mut data, &narrow);
        agree(r, &data, before, oracle)?;
        record(data)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// ScatterElements / ScatterElementsUpdate cases.

#[derive(Debug, Clone)]
struct ElementsCase<T> {
    data_shape: Vec<usize>,
    data: Vec<T>,
    indices_shape: Vec<usize>,
    indices: Vec<i64>,
    updates_shape: Vec<usize>,
    updates: Vec<T>,
    axis: i64,
    /// An ONNX reduction for the ONNX op's cases.
    reduction: UpdateReduction,
    use_init_val: bool,
}

/// A valid case: rank 1-5, dims 0-4, indices along the axis 0-6 long,
/// values in `[-s, s-1]` (so duplicates are common).
fn elements_case<T: Sample, R: Into<UpdateReduction>>(
    reductions: Vec<R>,
) -> BoxedStrategy<ElementsCase<T>> {
    let reductions: Vec<UpdateReduction> = reductions.into_iter().map(Into::into).collect();
    (1..=5usize, any::<prop::sample::Index>(), any::<bool>())
        .prop_flat_map(|(rank, axis, negative)| {
            let axis = axis.index(rank);
            (
                prop::collection::vec(dim(), rank),
                Just(axis),
                Just(axis_form(axis, rank, negative)),
            )
        })
        .prop_flat_map(|(data_shape, axis, axis_value)| {
            let dims: Vec<BoxedStrategy<usize>> = data_shape
                .iter()
                .enumerate()
                .map(|(i, &d)| match (i == axis, d) {
                    (true, 0) => Just(0).boxed(),
                    (true, _) => (0..=6usize).boxed(),
                    (false, d) => dim_up_to(d),
                })
                .collect();
            (Just(data_shape), Just(axis), Just(axis_value), dims)
        })
        .prop_flat_map(move |(data_shape, axis, axis_value, indices_shape)| {
            let s = data_shape[axis] as i64;
            let n = count(&indices_shape);
            let index = if s == 0 {
                Just(0i64).boxed()
            } else {
                (-s..s).boxed()
            };
            (
                prop::collection::vec(T::value(), count(&data_shape)),
                prop::collection::vec(index, n),
                prop::collection::vec(T::value(), n),
                select(reductions.clone()),
                any::<bool>(),
            )
                .prop_map(move |(data, indices, updates, reduction, use_init_val)| {
                    ElementsCase {
                        data_shape: data_shape.clone(),
                        data,
                        indices_shape: indices_shape.clone(),
                        indices,
                        updates_shape: indices_shape.clone(),
                        updates,
                        axis: axis_value,
                        reduction,
                        use_init_val,
                    }
                })
        })
        .boxed()
}

/// A case with exactly one defect.
/// `updates_shape_may_differ`: whether the entry point under test can be
/// given an updates shape other than the indices shape.
fn elements_invalid_case<T: Sample, R: Into<UpdateReduction>>(
    reductions: Vec<R>,
    refused: Vec<R>,
    updates_shape_may_differ: bool,
) -> BoxedStrategy<ElementsCase<T>> {
    let refused: Vec<UpdateReduction> = refused.into_iter().map(Into::into).collect();
    (
        elements_case::<T, R>(reductions),
        0..10u8,
        any::<prop::sample::Index>(),
    )
        .prop_flat_map(move |(c, defect, pick)| {
            let refused = refused.clone();
            let rank = c.data_shape.len();
            let axis = if c.axis < 0 {
                (c.axis + rank as i64) as usize
            } else {
                c.axis as usize
            };
            let defect = match defect {
                // Needs an index to corrupt / a non-axis dimension.
                0 if c.indices.is_empty() => 1,
                3 if !updates_shape_may_differ => 2,
                4 if rank < 2 => 1,
                9 if refused.is_empty() => 1,
                d => d,
            };
            let extra = any::<u8>();
            match defect {
                0 => {
                    let p = pick.index(c.indices.len());
                    bad_index(c.data_shape[axis])
                        .prop_map(move |v| {
                            let mut c = c.clone();
                            c.indices[p] = v;
                            c
                        })
                        .boxed()
                }
                1 => prop_oneof![
                    Just(rank as i64),
                    Just(-(rank as i64) - 1),
                    Just(i64::MIN),
                    Just(i64::MAX),
                    (rank as i64..100),
                ]
                .prop_map(move |axis| ElementsCase { axis, ..c.clone() })
                .boxed(),
                2 => (extra, any::<bool>())
                    .prop_map(move |(x, longer)| {
                        let mut c = c.clone();
                        if longer || rank == 1 {
                            c.indices_shape.insert(x as usize % (rank + 1), 1);
                        } else {
                            c.indices_shape.remove(x as usize % rank);
                        }
                        c.updates_shape = c.indices_shape.clone();
                        c
                    })
                    .boxed(),
                3 => extra
                    .prop_map(move |x| {
                        let mut c = c.clone();
                        c.updates_shape[x as usize % rank] += 1 + x as usize % 2;
                        c
                    })
                    .boxed(),
                4 => extra
                    .prop_map(move |x| {
                        let mut c = c.clone();
                        let i = (axis + 1 + x as usize % (rank - 1)) % rank;
                        c.indices_shape[i] = c.data_shape[i] + 1 + x as usize % 3;
                        c.updates_shape = c.indices_shape.clone();
                        c
                    })
                    .boxed(),
                5 => Just(ElementsCase {
                    data_shape: vec![],
                    ..c
                })
                .boxed(),
                6..=8 => (T::value(), any::<bool>())
                    .prop_map(move |(v, grow)| {
                        let mut c = c.clone();
                        match defect {
                            6 if grow || c.data.is_empty() => c.data.push(v),
                            6 => drop(c.data.pop()),
                            7 if grow || c.updates.is_empty() => c.updates.push(v),
                            7 => drop(c.updates.pop()),
                            _ if grow || c.indices.is_empty() => c.indices.push(0),
                            _ => drop(c.indices.pop()),
                        }
                        c
                    })
                    .boxed(),
                _ => select(refused)
                    .prop_map(move |reduction| ElementsCase {
                        reduction,
                        ..c.clone()
                    })
                    .boxed(),
            }
        })
        .boxed()
}

fn check_scatter_elements<T: Sample>(
    c: &ElementsCase<T>,
    valid: bool,
) -> Result<(), TestCaseError> {
    let reduction = c.reduction.onnx().expect("a case of ONNX reductions");
    let oracle = oracle::scatter_elements(
        &c.data,
        &c.data_shape,
        &c.indices,
        &c.indices_shape,
        &c.updates,
        &c.updates_shape,
        c.axis,
        reduction,
    );
    expect(&oracle, valid)?;
    fn run<T: Element, I: IndexValue>(
        c: &ElementsCase<T>,
        reduction: Reduction,
        data: &mut [T],
        indices: &[I],
    ) -> Result<(), ScatterError> {
        if c.updates_shape == c.indices_shape {
            scatter_kernels::scatter_elements(
                data,
                &c.data_shape,
                indices,
                &c.indices_shape,
                &c.updates,
                c.axis,
                reduction,
            )
        } else {
            // The convenience function cannot express a differing updates
            // shape: go through the plan.
            let plan =
                ElementsPlan::new(&c.data_shape, &c.indices_shape, &c.updates_shape, c.axis)?;
            T::check_reduction(reduction)?;
            plan.check_indices(indices, Execution::SERIAL)?
                .apply(data, &c.updates, reduction, Execution::SERIAL)
                .map(drop)
        }
    }
    each_index_type(
        &c.data,
        &c.indices,
        &oracle,
        |d, i| run(c, reduction, d, i),
        |d, i| run(c, reduction, d, i),
    )
}

fn check_scatter_elements_update<T: Sample>(
    c: &ElementsCase<T>,
    valid: bool,
) -> Result<(), TestCaseError> {
    let oracle = oracle::scatter_elements_update(
        &c.data,
        &c.data_shape,
        &c.indices,
        &c.indices_shape,
        &c.updates,
        c.axis,
        c.reduction,
        c.use_init_val,
    );
    expect(&oracle, valid)?;
    fn run<T: Element, I: IndexValue>(
        c: &ElementsCase<T>,
        data: &mut [T],
        indices: &[I],
    ) -> Result<(), ScatterError> {
        scatter_kernels::scatter_elements_update(
            data,
            &c.data_shape,
            indices,
            &c.indices_shape,
            &c.updates,
            c.axis,
            c.reduction,
            c.use_init_val,
        )
    }
    each_index_type(
        &c.data,
        &c.indices,
        &oracle,
        |d, i| run(c, d, i),
        |d, i| run(c, d, i),
    )
}

// ---------------------------------------------------------------------------
// ScatterND cases.

#[derive(Debug, Clone)]
struct NdCase<T> {
    data_shape: Vec<usize>,
    data: Vec<T>,
    indices_shape: Vec<usize>,
    indices: Vec<i64>,
    updates_shape: Vec<usize>,
    updates: Vec<T>,
    reduction: Reduction,
}

/// A valid case: data rank 1-5 (dims 0-4), k in 0..=r, batch rank 0-2
/// (q = 1-3, batch dims 0-3), components in `[-d, d-1]`.
fn nd_case<T: Sample>(reductions: Vec<Reduction>) -> BoxedStrategy<NdCase<T>> {
    (1..=5usize, 1..=3usize)
        .prop_flat_map(|(rank, q)| {
            (
                prop::collection::vec(dim(), rank),
                0..=rank,
                prop::collection::vec(prop_oneof![1 => Just(0usize), 6 => 1..=3usize], q - 1),
            )
        })
        .prop_flat_map(move |(mut data_shape, k, batch)| {
            // A tuple into a zero-size dimension is never valid: keep the
            // case valid by making such dimensions 1 when tuples exist.
            if count(&batch) > 0 {
                for d in &mut data_shape[..k] {
                    *d = (*d).max(1);
                }
            }
            let mut indices_shape = batch.clone();
            indices_shape.push(k);
            let mut updates_shape = batch.clone();
            updates_shape.extend_from_slice(&data_shape[k..]);
            let components: Vec<BoxedStrategy<i64>> = (0..count(&batch))
                .flat_map(|_| data_shape[..k].iter())
                .map(|&d| (-(d as i64)..d as i64).boxed())
                .collect();
            (
                Just(data_shape.clone()),
                prop::collection::vec(T::value(), count(&data_shape)),
                Just(indices_shape),
                components,
                Just(updates_shape.clone()),
                prop::collection::vec(T::value(), count(&updates_shape)),
                select(reductions.clone()),
            )
        })
        .prop_map(
            |(data_shape, data, indices_shape, indices, updates_shape, updates, reduction)| {
                NdCase {
                    data_shape,
                    data,
                    indices_shape,
                    indices,
                    updates_shape,
                    updates,
                    reduction,
                }
            },
        )
        .boxed()
}

fn nd_invalid_case<T: Sample>(
    reductions: Vec<Reduction>,
    refused: Vec<Reduction>,
) -> BoxedStrategy<NdCase<T>> {
    (
        nd_case::<T>(reductions),
        0..9u8,
        any::<prop::sample::Index>(),
    )
        .prop_flat_map(move |(c, defect, pick)| {
            let refused = refused.clone();
            let rank = c.data_shape.len();
            let k = *c.indices_shape.last().unwrap();
            let defect = match defect {
                0 if c.indices.is_empty() => 3,
                // No reduction to refuse: the data rank instead.
                8 if refused.is_empty() => 4,
                d => d,
            };
            let extra = any::<u8>();
            match defect {
                0 => {
                    let p = pick.index(c.indices.len());
                    bad_index(c.data_shape[p % k])
                        .prop_map(move |v| {
                            let mut c = c.clone();
                            c.indices[p] = v;
                            c
                        })
                        .boxed()
                }
                1 => Just(NdCase {
                    indices_shape: vec![],
                    ..c
                })
                .boxed(),
                2 => extra
                    .prop_map(move |x| {
                        let mut c = c.clone();
                        *c.indices_shape.last_mut().unwrap() = rank + 1 + x as usize % 3;
                        c
                    })
                    .boxed(),
                3 => (extra, 0..3u8)
                    .prop_map(move |(x, how)| {
                        let mut c = c.clone();
                        let n = c.updates_shape.len();
                        match how {
                            0 if n > 0 => c.updates_shape[x as usize % n] += 1,
                            1 if n > 0 => drop(c.updates_shape.remove(x as usize % n)),
                            _ => c.updates_shape.insert(x as usize % (n + 1), 1),
                        }
                        c
                    })
                    .boxed(),
                4 => Just(NdCase {
                    data_shape: vec![],
                    ..c
                })
                .boxed(),
                5..=7 => (T::value(), any::<bool>())
                    .prop_map(move |(v, grow)| {
                        let mut c = c.clone();
                        match defect {
                            5 if grow || c.data.is_empty() => c.data.push(v),
                            5 => drop(c.data.pop()),
                            6 if grow || c.updates.is_empty() => c.updates.push(v),
                            6 => drop(c.updates.pop()),
                            _ if grow || c.indices.is_empty() => c.indices.push(0),
                            _ => drop(c.indices.pop()),
                        }
                        c
                    })
                    .boxed(),
                _ => select(refused)
                    .prop_map(move |reduction| NdCase {
                        reduction,
                        ..c.clone()
                    })
                    .boxed(),
            }
        })
        .boxed()
}

fn check_scatter_nd<T: Sample>(c: &NdCase<T>, valid: bool) -> Result<(), TestCaseError> {
    let oracle = oracle::scatter_nd(
        &c.data,
        &c.data_shape,
        &c.indices,
        &c.indices_shape,
        &c.updates,
        &c.updates_shape,
        c.reduction,
    );
    expect(&oracle, valid)?;
    fn run<T: Element, I: IndexValue>(
        c: &NdCase<T>,
        data: &mut [T],
        indices: &[I],
    ) -> Result<(), ScatterError> {
        scatter_kernels::scatter_nd(
            data,
            &c.data_shape,
            indices,
            &c.indices_shape,
            &c.updates,
            &c.updates_shape,
            c.reduction,
        )
    }
    each_index_type(
        &c.data,
        &c.indices,
        &oracle,
        |d, i| run(c, d, i),
        |d, i| run(c, d, i),
    )
}

// ---------------------------------------------------------------------------
// TensorScatter cases.

#[derive(Debug, Clone)]
struct TsCase<T> {
    cache_shape: Vec<usize>,
    cache: Vec<T>,
    update_shape: Vec<usize>,
    update: Vec<T>,
    /// (values, declared shape)
    write_indices: Option<(Vec<i64>, Vec<usize>)>,
    axis: i64,
    mode: TensorScatterMode,
}

fn mode() -> impl Strategy<Value = TensorScatterMode> {
    select(vec![TensorScatterMode::Linear, TensorScatterMode::Circular])
}

/// A valid case: cache rank 2-5 (dims 0-4), axis 1..r in either form,
/// update no longer than the cache along it; starts valid for the mode.
fn ts_case<T: Sample>() -> BoxedStrategy<TsCase<T>> {
    (
        2..=5usize,
        any::<prop::sample::Index>(),
        any::<bool>(),
        mode(),
        any::<bool>(),
    )
        .prop_flat_map(|(rank, axis, negative, mode, with_starts)| {
            let axis = 1 + axis.index(rank - 1);
            (
                prop::collection::vec(dim(), rank),
                Just(axis),
                Just(axis_form(axis, rank, negative)),
                Just(mode),
                Just(with_starts),
            )
        })
        .prop_flat_map(|(cache_shape, axis, axis_value, mode, with_starts)| {
            let seq = cache_shape[axis];
            (
                Just(cache_shape),
                Just(axis),
                Just(axis_value),
                Just(mode),
                Just(with_starts),
                0..=seq,
            )
        })
        .prop_flat_map(
            |(cache_shape, axis, axis_value, mode, with_starts, update_seq)| {
                let mut update_shape = cache_shape.clone();
                update_shape[axis] = update_seq;
                let batch = cache_shape[0];
                let last_start = (cache_shape[axis] - update_seq) as i64;
                let start = match mode {
                    TensorScatterMode::Linear => (0..=last_start).boxed(),
                    TensorScatterMode::Circular => prop_oneof![
                        -10i64..10,
                        select(vec![i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1]),
                        any::<i64>(),
                    ]
                    .boxed(),
                };
                let starts = if with_starts {
                    prop::collection::vec(start, batch)
                        .prop_map(move |s| Some((s, vec![batch])))
                        .boxed()
                } else {
                    Just(None).boxed()
                };
                (
                    prop::collection::vec(T::value(), count(&cache_shape)),
                    prop::collection::vec(T::value(), count(&update_shape)),
                    starts,
                )
                    .prop_map(move |(cache, update, write_indices)| TsCase {
                        cache_shape: cache_shape.clone(),
                        cache,
                        update_shape: update_shape.clone(),
                        update,
                        write_indices,
                        axis: axis_value,
                        mode,
                    })
            },
        )
        .boxed()
}

fn ts_invalid_case<T: Sample>() -> BoxedStrategy<TsCase<T>> {
    (ts_case::<T>(), 0..10u8, any::<prop::sample::Index>())
        .prop_flat_map(|(c, defect, pick)| {
            let rank = c.cache_shape.len();
            let axis = if c.axis < 0 {
                (c.axis + rank as i64) as usize
            } else {
                c.axis as usize
            };
            let batch = c.cache_shape[0];
            // An empty update writes nothing: no start is out of bounds then.
            let defect = if defect == 0 && (batch == 0 || c.update_shape[axis] == 0) {
                1
            } else {
                defect
            };
            let extra = any::<u8>();
            match defect {
                0 => {
                    let b = pick.index(batch);
                    let last = (c.cache_shape[axis] - c.update_shape[axis]) as i64;
                    prop_oneof![
                        select(vec![-1, last + 1, i64::MIN, i64::MAX, i64::MIN + 1]),
                        (last + 1..last + 50),
                        (-50i64..0),
                    ]
                    .prop_map(move |w| {
                        let mut c = c.clone();
                        let mut starts = c
                            .write_indices
                            .take()
                            .map_or_else(|| vec![0; batch], |(s, _)| s);
                        if c.mode == TensorScatterMode::Circular {
                            // Circular starts may be anything; the case
                            // becomes linear with valid starts elsewhere.
                            starts = vec![0; batch];
                        }
                        starts[b] = w;
                        c.write_indices = Some((starts, vec![batch]));
                        c.mode = TensorScatterMode::Linear;
                        c
                    })
                    .boxed()
                }
                1 => select(vec![0, -(rank as i64)])
                    .prop_map(move |axis| TsCase { axis, ..c.clone() })
                    .boxed(),
                2 => prop_oneof![
                    Just(rank as i64),
                    Just(-(rank as i64) - 1),
                    Just(i64::MIN),
                    Just(i64::MAX),
                ]
                .prop_map(move |axis| TsCase { axis, ..c.clone() })
                .boxed(),
                3 => extra
                    .prop_map(move |x| {
                        let mut c = c.clone();
                        let i = x as usize % rank;
                        if i == axis {
                            c.update_shape[i] = c.cache_shape[i] + 1 + x as usize % 2;
                        } else {
                            c.update_shape[i] += 1;
                        }
                        c
                    })
                    .boxed(),
                4 => extra
                    .prop_map(move |x| {
                        let mut c = c.clone();
                        if x % 2 == 0 {
                            c.update_shape.push(1);
                        } else {
                            c.update_shape.pop();
                        }
                        c
                    })
                    .boxed(),
                5 => select(vec![
                    vec![batch + 1],
                    vec![batch, 1],
                    vec![],
                    vec![1, batch],
                ])
                .prop_filter("must differ from [batch]", move |s| *s != [batch])
                .prop_map(move |shape| {
                    let mut c = c.clone();
                    let starts = c.write_indices.take().map_or(vec![0; batch], |(s, _)| s);
                    c.write_indices = Some((starts, shape));
                    c
                })
                .boxed(),
                6 => (0..2usize)
                    .prop_map(move |r| TsCase {
                        cache_shape: c.cache_shape[..r].to_vec(),
                        ..c.clone()
                    })
                    .boxed(),
                _ => (T::value(), any::<bool>())
                    .prop_map(move |(v, grow)| {
                        let mut c = c.clone();
                        match defect {
                            7 if grow || c.cache.is_empty() => c.cache.push(v),
                            7 => drop(c.cache.pop()),
                            8 if grow || c.update.is_empty() => c.update.push(v),
                            8 => drop(c.update.pop()),
                            _ => {
                                let (mut s, shape) = c
                                    .write_indices
                                    .take()
                                    .unwrap_or_else(|| (vec![0; batch], vec![batch]));
                                if grow || s.is_empty() {
                                    s.push(0);
                                } else {
                                    s.pop();
                                }
                                c.write_indices = Some((s, shape));
                            }
                        }
                        c
                    })
                    .boxed(),
            }
        })
        .boxed()
}

fn check_tensor_scatter<T: Sample>(c: &TsCase<T>, valid: bool) -> Result<(), TestCaseError> {
    let wi = c
        .write_indices
        .as_ref()
        .map(|(s, shape)| (&s[..], &shape[..]));
    let oracle = oracle::tensor_scatter(
        &c.cache,
        &c.cache_shape,
        &c.update,
        &c.update_shape,
        wi,
        c.axis,
        c.mode,
    );
    expect(&oracle, valid)?;
    let run = |cache: &mut [T]| -> Result<(), ScatterError> {
        let plan =
            TensorScatterPlan::new(&c.cache_shape, &c.update_shape, wi.map(|w| w.1), c.axis)?;
        plan.check_write_indices(wi.map(|w| w.0), c.mode)?.apply(
            cache,
            &c.update,
            Execution::SERIAL,
        )
    };
    let mut first = c.cache.clone();
    agree(run(&mut first), &first, &c.cache, &oracle)?;
    let mut second = c.cache.clone();
    agree(run(&mut second), &second, &c.cache, &oracle)?;
    prop_assert!(all_same(&first, &second), "runs differ");
    Ok(())
}

// ---------------------------------------------------------------------------
// The properties, per element type.

macro_rules! properties_for {
    ($($module:ident: $t:ty),* $(,)?) => {$(
        mod $module {
            use super::*;

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(256))]

                #[test]
                fn scatter_elements_matches_the_oracle(
                    c in elements_case::<$t, _>(onnx_reductions::<$t>())
                ) {
                    check_scatter_elements(&c, true)?;
                }

                #[test]
                fn scatter_elements_refuses_invalid_input_without_writing(
                    c in elements_invalid_case::<$t, _>(
                        onnx_reductions::<$t>(),
                        onnx_refused::<$t>(),
                        true,
                    )
                ) {
                    check_scatter_elements(&c, false)?;
                }

                #[test]
                fn scatter_elements_update_matches_the_oracle(
                    c in elements_case::<$t, _>(update_reductions::<$t>())
                ) {
                    check_scatter_elements_update(&c, true)?;
                }

                #[test]
                fn scatter_elements_update_refuses_invalid_input_without_writing(
                    c in elements_invalid_case::<$t, _>(
                        update_reductions::<$t>(),
                        update_refused::<$t>(),
                        false,
                    )
                ) {
                    check_scatter_elements_update(&c, false)?;
                }

                #[test]
                fn scatter_nd_matches_the_oracle(c in nd_case::<$t>(onnx_reductions::<$t>())) {
                    check_scatter_nd(&c, true)?;
                }

                #[test]
                fn scatter_nd_refuses_invalid_input_without_writing(
                    c in nd_invalid_case::<$t>(onnx_reductions::<$t>(), onnx_refused::<$t>())
                ) {
                    check_scatter_nd(&c, false)?;
                }

                #[test]
                fn tensor_scatter_matches_the_oracle(c in ts_case::<$t>()) {
                    check_tensor_scatter(&c, true)?;
                }

                #[test]
                fn tensor_scatter_refuses_invalid_input_without_writing(
                    c in ts_invalid_case::<$t>()
                ) {
                    check_tensor_scatter(&c, false)?;
                }
            }
        }
    )*};
}

properties_for!(
    bool_: bool,
    i8_: i8,
    i16_: i16,
    i32_: i32,
    i64_: i64,
    u8_: u8,
    u16_: u16,
    u32_: u32,
    u64_: u64,
    f16_: f16,
    bf16_: bf16,
    f32_: f32,
    f64_: f64,
    string: String,
);

// ---------------------------------------------------------------------------
// Shapes whose element counts overflow, or nearly: never a panic.

fn huge_dim() -> impl Strategy<Value = usize> {
    select(vec![
        0,
        1,
        2,
        3,
        usize::MAX,
        usize::MAX / 2 + 1,
        1 << 32,
        (1usize << 32) + 1,
    ])
}

fn huge_shape(max_rank: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(huge_dim(), 0..=max_rank)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn scatter_elements_with_huge_shapes_never_panics(
        data_shape in huge_shape(4),
        indices_shape in huge_shape(4),
        axis in -5i64..5,
        reduction in select(UpdateReduction::ALL.to_vec()),
        use_init_val in any::<bool>(),
    ) {
        let before = vec![1.5f32; 4];
        if let Some(onnx) = reduction.onnx() {
            let mut data = before.clone();
            let r = scatter_kernels::scatter_elements(
                &mut data, &data_shape, &[0i64, -1], &indices_shape, &[2.0, 3.0], axis, onnx,
            );
            if r.is_err() {
                prop_assert_eq!(&data, &before);
            }
        }
        let mut data = before.clone();
        let r = scatter_kernels::scatter_elements_update(
            &mut data, &data_shape, &[0i32], &indices_shape, &[2.0], axis, reduction,
            use_init_val,
        );
        if r.is_err() {
            prop_assert_eq!(&data, &before);
        }
    }

    #[test]
    fn scatter_nd_with_huge_shapes_never_panics(
        data_shape in huge_shape(4),
        indices_shape in huge_shape(3),
        updates_shape in huge_shape(5),
        derive_updates in any::<bool>(),
        reduction in select(Reduction::ALL.to_vec()),
    ) {
        // Half the time make the updates shape the one ScatterND expects,
        // so that the checks after the shape rule run too.
        let updates_shape = match (derive_updates, indices_shape.split_last()) {
            (true, Some((&k, batch))) if k <= data_shape.len() => {
                batch.iter().chain(&data_shape[k..]).copied().collect()
            }
            _ => updates_shape,
        };
        let before = vec![1u8; 4];
        let mut data = before.clone();
        let r = scatter_kernels::scatter_nd(
            &mut data, &data_shape, &[0i64, 1, -1], &indices_shape, &[7u8, 8],
            &updates_shape, reduction,
        );
        if r.is_err() {
            prop_assert_eq!(&data, &before);
        }
    }

    #[test]
    fn tensor_scatter_with_huge_shapes_never_panics(
        cache_shape in huge_shape(5),
        update_from_cache in any::<bool>(),
        update_shape in huge_shape(5),
        axis in -5i64..5,
        starts in prop::option::of(prop::collection::vec(any::<i64>(), 0..3)),
        mode in mode(),
    ) {
        let update_shape = if update_from_cache { cache_shape.clone() } else { update_shape };
        let ws = starts.as_ref().map(|s| vec![s.len()]);
        let before = vec![String::from("x"); 3];
        let mut cache = before.clone();
        let r = TensorScatterPlan::new(&cache_shape, &update_shape, ws.as_deref(), axis)
            .and_then(|plan| {
                plan.check_write_indices(starts.as_deref(), mode)?
                    .apply(&mut cache, &[String::from("y")], Execution::SERIAL)
            });
        if r.is_err() {
            prop_assert_eq!(&cache, &before);
        }
    }
}

// ---------------------------------------------------------------------------
// The generators reach what the properties claim to cover.

fn sample<V: Debug>(strategy: BoxedStrategy<V>, n: usize) -> Vec<V> {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    (0..n)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}

fn has_duplicate(values: &[usize]) -> bool {
    (0..values.len()).any(|i| values[i + 1..].contains(&values[i]))
}

#[test]
fn generators_cover_ranks_axes_duplicates_and_every_refusal() {
    use std::collections::BTreeSet;
    let kind = |r: &Refusal| {
        format!("{r:?}")
            .split(['(', ' '])
            .next()
            .unwrap()
            .to_string()
    };

    let valid = sample(elements_case::<i32, _>(update_reductions::<i32>()), 400);
    let ranks: BTreeSet<usize> = valid.iter().map(|c| c.data_shape.len()).collect();
    assert_eq!(ranks, (1..=5).collect());
    assert!(valid.iter().any(|c| c.axis < 0) && valid.iter().any(|c| c.axis > 0));
    assert!(valid.iter().any(|c| c.indices.iter().any(|&i| i < 0)));
    let with_duplicates = valid
        .iter()
        .filter(|c| {
            let targets: Vec<usize> = oracle::all_coords(&c.indices_shape)
                .iter()
                .map(|ic| {
                    let rank = c.data_shape.len() as i64;
                    let axis = ((c.axis + rank) % rank) as usize;
                    let mut t = ic.clone();
                    let v = c.indices[oracle::position(&c.indices_shape, ic)];
                    t[axis] = oracle::normalize(v, c.data_shape[axis]).unwrap();
                    oracle::position(&c.data_shape, &t)
                })
                .collect();
            has_duplicate(&targets)
        })
        .count();
    assert!(
        with_duplicates > 60,
        "{with_duplicates} cases with duplicates"
    );
    let bigger = valid.iter().filter(|c| c.indices.len() >= 4).count();
    assert!(bigger > 100, "{bigger} cases with 4 or more indices");

    let nd = sample(nd_case::<i32>(onnx_reductions::<i32>()), 400);
    let ks: BTreeSet<(usize, usize)> = nd
        .iter()
        .map(|c| (c.indices_shape.len(), *c.indices_shape.last().unwrap()))
        .collect();
    for q in 1..=3 {
        for k in 0..=5 {
            assert!(ks.contains(&(q, k)), "q = {q}, k = {k} never generated");
        }
    }
    let writing = nd.iter().filter(|c| !c.updates.is_empty()).count();
    assert!(writing > 150, "{writing} ScatterND cases write something");

    let ts = sample(ts_case::<i32>(), 300);
    let writing = ts.iter().filter(|c| !c.update.is_empty()).count();
    assert!(
        writing > 100,
        "{writing} TensorScatter cases write something"
    );
    assert!(
        ts.iter()
            .any(|c| c.write_indices.is_some() && c.mode == TensorScatterMode::Circular)
    );
    assert!(ts.iter().any(|c| c.write_indices.is_none()));

    let mut refusals = BTreeSet::new();
    for c in sample(
        elements_invalid_case::<String, _>(
            onnx_reductions::<String>(),
            onnx_refused::<String>(),
            true,
        ),
        400,
    ) {
        let r = oracle::scatter_elements(
            &c.data,
            &c.data_shape,
            &c.indices,
            &c.indices_shape,
            &c.updates,
            &c.updates_shape,
            c.axis,
            c.reduction.onnx().expect("a case of ONNX reductions"),
        );
        refusals.insert(kind(&r.unwrap_err()));
    }
    for c in sample(
        nd_invalid_case::<String>(onnx_reductions::<String>(), onnx_refused::<String>()),
        400,
    ) {
        let r = oracle::scatter_nd(
            &c.data,
            &c.data_shape,
            &c.indices,
            &c.indices_shape,
            &c.updates,
            &c.updates_shape,
            c.reduction,
        );
        refusals.insert(format!("nd {}", kind(&r.unwrap_err())));
    }
    for c in sample(ts_invalid_case::<u8>(), 400) {
        let wi = c
            .write_indices
            .as_ref()
            .map(|(s, shape)| (&s[..], &shape[..]));
        let r = oracle::tensor_scatter(
            &c.cache,
            &c.cache_shape,
            &c.update,
            &c.update_shape,
            wi,
            c.axis,
            c.mode,
        );
        refusals.insert(format!("ts {}", kind(&r.unwrap_err())));
    }
    let expected: BTreeSet<String> = [
        "Axis",
        "Length",
        "OutOfBounds",
        "Rank",
        "Reduction",
        "Shape",
        "nd Length",
        "nd OutOfBounds",
        "nd Rank",
        "nd Reduction",
        "nd Shape",
        "ts Axis",
        "ts Length",
        "ts Rank",
        "ts Shape",
        "ts WriteOutOfBounds",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(refusals, expected);
}

// ---------------------------------------------------------------------------
// Regressions found by the huge-shape properties above.

#[test]
fn scatter_nd_slice_after_a_zero_dimension_may_overflow_without_panicking() {
    // Data [0, MAX, 2] holds no element, but data.shape[1..] overflows
    // usize: the slice length used to be computed with a plain product.
    let mut data: Vec<u8> = vec![];
    let r = scatter_kernels::scatter_nd(
        &mut data,
        &[0, usize::MAX, 2],
        &[] as &[i64],
        &[0, 1],
        &[],
        &[0, usize::MAX, 2],
        Reduction::Add,
    );
    assert_eq!(r, Ok(()));
    assert!(matches!(
        scatter_kernels::NdPlan::new(&[0, usize::MAX, 2], &[2, 1], &[2, usize::MAX, 2]),
        Err(ScatterError::TooLarge { .. })
    ));
}

#[test]
fn tensor_scatter_rows_after_a_zero_dimension_may_overflow_without_panicking() {
    // past_cache [0, 0, 2, MAX] holds no element, but the row length
    // 2 * MAX after axis 1 overflows usize.
    let shape = [0, 0, 2, usize::MAX];
    let plan = TensorScatterPlan::new(&shape, &shape, None, 1).unwrap();
    let mut cache: Vec<f32> = vec![];
    let r = plan
        .check_write_indices(None, TensorScatterMode::Linear)
        .unwrap()
        .apply(&mut cache, &[], Execution::SERIAL);
    assert_eq!(r, Ok(()));
}

/// Whole rows into data past the kernels' prefetch threshold (1 MiB, rows
/// of at least a cache line: the destination row of each update is asked
/// for rows ahead) land as the oracle says, for every reduction and
/// index type, with duplicate and negative rows; the first and last
/// rows (prefetching runs out of rows ahead) and a row of the last node
/// included.
#[test]
fn row_scatters_into_data_past_the_prefetch_threshold_match_the_oracle() {
    let (nodes, features, edges) = (4096usize, 64usize, 3001usize);
    let data: Vec<f32> = (0..nodes * features)
        .map(|i| (i % 1009) as f32 * 0.37 - 150.0)
        .collect();
    let updates: Vec<f32> = (0..edges * features)
        .map(|i| (i % 113) as f32 * 0.011 + 0.5)
        .collect();
    let n = nodes as i64;
    let indices: Vec<i64> = (0..edges as i64)
        .map(|e| match e {
            0 => n - 1,
            1 => -n,
            _ => (e * 2654435761) % (2 * n) - n,
        })
        .collect();
    let (data_shape, indices_shape, updates_shape) =
        ([nodes, features], [edges, 1], [edges, features]);
    for reduction in [
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ] {
        let want = oracle::scatter_nd(
            &data,
            &data_shape,
            &indices,
            &indices_shape,
            &updates,
            &updates_shape,
            reduction,
        )
        .unwrap();
        let mut got = data.clone();
        scatter_kernels::scatter_nd(
            &mut got,
            &data_shape,
            &indices,
            &indices_shape,
            &updates,
            &updates_shape,
            reduction,
        )
        .unwrap();
        assert!(all_same(&got, &want), "i64 {reduction:?}");
        let narrow: Vec<i32> = indices.iter().map(|&i| i as i32).collect();
        let mut got = data.clone();
        scatter_kernels::scatter_nd(
            &mut got,
            &data_shape,
            &narrow,
            &indices_shape,
            &updates,
            &updates_shape,
            reduction,
        )
        .unwrap();
        assert!(all_same(&got, &want), "i32 {reduction:?}");
    }
}

//! The parallel and blocked kernels give the serial kernels' results bit
//! for bit (f32 compared by `to_bits`, NaN payloads included) at 1, 2, 3,
//! 4 and 7 tasks, on real threads and with tasks run in reverse order, for
//! every reduction, with duplicate indices; and they fail as the serial
//! kernels fail, before any write.

use std::fmt::Debug;
use std::mem::MaybeUninit;

use proptest::prelude::*;
use proptest::sample::select;
use scatter_kernels::{
    BlockSort, CopyOf, Element, ElementsPlan, Execution, NdPlan, Parallel, Reduction, ScatterError,
    Schedule, Serial, TensorScatterMode, TensorScatterPlan, UpdateReduction,
};

/// Runs each task on a thread of its own (std::thread::scope).
struct Threads(usize);

impl Parallel for Threads {
    fn threads(&self) -> usize {
        self.0
    }

    fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        std::thread::scope(|s| {
            for i in 0..tasks {
                s.spawn(move || task(i));
            }
        });
    }
}

/// Claims `n` threads and runs the tasks serially, last first: a kernel
/// whose result depended on the order of its tasks would differ.
struct Reversed(usize);

impl Parallel for Reversed {
    fn threads(&self) -> usize {
        self.0
    }

    fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        (0..tasks).rev().for_each(task)
    }
}

const TASKS: [usize; 5] = [1, 2, 3, 4, 7];

/// Every host the tests run a kernel on.
fn hosts() -> Vec<(String, Box<dyn Parallel>)> {
    let mut hosts: Vec<(String, Box<dyn Parallel>)> = vec![("serial".into(), Box::new(Serial))];
    for n in TASKS {
        hosts.push((format!("{n} threads"), Box::new(Threads(n))));
        hosts.push((format!("{n} reversed"), Box::new(Reversed(n))));
    }
    hosts
}

/// The destinations a copying kernel writes: never initialized (a fresh
/// allocation nothing wrote, as a fresh output buffer is: under Miri or
/// valgrind, a read of an element before its write, or of one never
/// written, is reported), and filled with [`Val::POISON`] (so an element
/// the kernel forgot to write shows in the result).
fn destinations<T: Val>(len: usize) -> [(&'static str, Vec<MaybeUninit<T>>); 2] {
    [
        (
            "uninitialized memory",
            Box::<[T]>::new_uninit_slice(len).into_vec(),
        ),
        ("poison", vec![MaybeUninit::new(T::POISON); len]),
    ]
}

/// A schedule under which no scatter splits but every copy does: the
/// parallel copy then the serial scatter of the copying kernels.
const COPY_SPLIT: Schedule = Schedule {
    parallel_from_bytes: 0,
    blocked_from_bytes: usize::MAX,
    min_split_row_bytes: usize::MAX,
    nd_split_from_slice_bytes: usize::MAX,
    row_scan_from_row_bytes: usize::MAX,
    ..Schedule::DEFAULT
};

/// Schedules that force the split and the blocking on small inputs, the
/// split ScatterND of rows by row scan rather than by sorting, the split
/// copy alone, and the default one.
fn schedules() -> [Schedule; 5] {
    let bands = Schedule {
        block_bytes: 24,
        ..Schedule::EAGER
    };
    let row_scan = Schedule {
        row_scan_from_row_bytes: 0,
        row_scan_from_rows_per_task: 0,
        ..Schedule::EAGER
    };
    [
        Schedule::EAGER,
        bands,
        row_scan,
        COPY_SPLIT,
        Schedule::DEFAULT,
    ]
}

/// A value compared bit for bit.
trait Val: Element + Copy + Debug {
    /// What a copying kernel's destination holds before it writes (when
    /// it is initialized at all): a value no case's data holds but by a
    /// fluke.
    const POISON: Self;
    fn value() -> BoxedStrategy<Self>;
    fn bits(values: &[Self]) -> Vec<u64>;
}

impl Val for f32 {
    const POISON: f32 = f32::from_bits(0x7fa5_a5a5);

    fn value() -> BoxedStrategy<f32> {
        prop_oneof![
            4 => (-6i32..6).prop_map(|x| x as f32 * 0.7),
            1 => select(vec![
                f32::NAN,
                -f32::NAN,
                f32::from_bits(0x7fc0_1234),
                f32::from_bits(0xffc0_0042),
                f32::from_bits(0x7f80_0001),
                f32::INFINITY,
                f32::NEG_INFINITY,
                -0.0,
                0.0,
                f32::MAX,
                1.0 / 3.0,
            ]),
            1 => any::<f32>(),
        ]
        .boxed()
    }

    fn bits(values: &[f32]) -> Vec<u64> {
        values.iter().map(|v| v.to_bits() as u64).collect()
    }
}

impl Val for i64 {
    const POISON: i64 = 0x5a5a_5a5a_5a5a_5a5a;

    fn value() -> BoxedStrategy<i64> {
        prop_oneof![3 => -4i64..4, 1 => any::<i64>()].boxed()
    }

    fn bits(values: &[i64]) -> Vec<u64> {
        values.iter().map(|&v| v as u64).collect()
    }
}

fn reductions() -> impl Strategy<Value = Reduction> {
    select(vec![
        Reduction::None,
        Reduction::Add,
        Reduction::Mul,
        Reduction::Max,
        Reduction::Min,
    ])
}

// ---------------------------------------------------------------------------
// ScatterElements

#[derive(Debug, Clone)]
struct ElementsCase<T> {
    data_shape: Vec<usize>,
    data: Vec<T>,
    indices_shape: Vec<usize>,
    indices: Vec<i64>,
    updates: Vec<T>,
    axis: usize,
    reduction: Reduction,
}

/// Rank 1-4, dims 1-6, indices along the axis 1-9 long (duplicates
/// common), other indices dims the data's (often) or shorter.
fn elements_case<T: Val>() -> BoxedStrategy<ElementsCase<T>> {
    (
        prop::collection::vec(1..=6usize, 1..=4),
        any::<prop::sample::Index>(),
    )
        .prop_flat_map(|(data_shape, axis)| {
            let axis = axis.index(data_shape.len());
            let dims: Vec<BoxedStrategy<usize>> = data_shape
                .iter()
                .enumerate()
                .map(|(i, &d)| {
                    if i == axis {
                        (1..=9usize).boxed()
                    } else {
                        prop_oneof![3 => Just(d), 1 => 1..=d].boxed()
                    }
                })
                .collect();
            (Just(data_shape), Just(axis), dims)
        })
        .prop_flat_map(|(data_shape, axis, indices_shape)| {
            let s = data_shape[axis] as i64;
            let n: usize = indices_shape.iter().product();
            (
                prop::collection::vec(T::value(), data_shape.iter().product::<usize>()),
                prop::collection::vec(-s..s, n),
                prop::collection::vec(T::value(), n),
                reductions(),
            )
                .prop_map(move |(data, indices, updates, reduction)| ElementsCase {
                    data_shape: data_shape.clone(),
                    data,
                    indices_shape: indices_shape.clone(),
                    indices,
                    updates,
                    axis,
                    reduction,
                })
        })
        .boxed()
}

fn check_elements<T: Val>(c: &ElementsCase<T>) -> Result<(), TestCaseError> {
    let plan = ElementsPlan::new(
        &c.data_shape,
        &c.indices_shape,
        &c.indices_shape,
        c.axis as i64,
    )
    .unwrap();
    let token = plan.check_indices(&c.indices, Execution::SERIAL).unwrap();
    let mut serial = c.data.clone();
    token
        .apply(&mut serial, &c.updates, c.reduction, Execution::SERIAL)
        .unwrap();
    let want = T::bits(&serial);
    for schedule in schedules() {
        for (name, par) in hosts() {
            let mut got = c.data.clone();
            token
                .apply(
                    &mut got,
                    &c.updates,
                    c.reduction,
                    Execution::on(&*par).with_schedule(&schedule),
                )
                .unwrap();
            prop_assert_eq!(&T::bits(&got), &want, "apply, {} {:?}", name, schedule);
            for (kind, mut out) in destinations::<T>(c.data.len()) {
                let fused = token
                    .apply(
                        CopyOf {
                            data: &c.data,
                            out: &mut out,
                        },
                        &c.updates,
                        c.reduction,
                        Execution::on(&*par).with_schedule(&schedule),
                    )
                    .unwrap();
                prop_assert_eq!(
                    &T::bits(fused),
                    &want,
                    "copying into {}, {} {:?}",
                    kind,
                    name,
                    schedule
                );
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// ScatterND

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

/// Rank 1-4, dims 1-6, tuples of length 0..=rank, 0-12 tuples (often
/// repeating a destination).
fn nd_case<T: Val>() -> BoxedStrategy<NdCase<T>> {
    prop::collection::vec(1..=6usize, 1..=4)
        .prop_flat_map(|data_shape| {
            let rank = data_shape.len();
            (Just(data_shape), 0..=rank, 0..=12usize)
        })
        .prop_flat_map(|(data_shape, k, tuples)| {
            let tuple: Vec<BoxedStrategy<i64>> = data_shape[..k]
                .iter()
                .map(|&d| (-(d as i64)..d as i64).boxed())
                .collect();
            let slice: usize = data_shape[k..].iter().product();
            (
                prop::collection::vec(T::value(), data_shape.iter().product::<usize>()),
                prop::collection::vec(tuple, tuples),
                prop::collection::vec(T::value(), tuples * slice),
                reductions(),
                Just((data_shape, k, tuples)),
            )
        })
        .prop_map(
            |(data, tuples, updates, reduction, (data_shape, k, n))| NdCase {
                updates_shape: std::iter::once(n)
                    .chain(data_shape[k..].iter().copied())
                    .collect(),
                data_shape,
                data,
                indices_shape: vec![n, k],
                indices: tuples.into_iter().flatten().collect(),
                updates,
                reduction,
            },
        )
        .boxed()
}

/// A copying application under test: `dst`, `src`, the written `dst`.
type Copying<'a, T> =
    dyn for<'d> Fn(&'d mut [MaybeUninit<T>], &[T]) -> Result<&'d mut [T], ScatterError> + 'a;

fn check_nd<T: Val>(c: &NdCase<T>) -> Result<(), TestCaseError> {
    let plan = NdPlan::new(&c.data_shape, &c.indices_shape, &c.updates_shape).unwrap();
    let token = plan
        .check_indices(&c.indices, Execution::SERIAL, BlockSort::Off)
        .unwrap();
    let mut serial = c.data.clone();
    token
        .apply(&mut serial, &c.updates, c.reduction, Execution::SERIAL)
        .unwrap();
    let want = T::bits(&serial);
    let size = std::mem::size_of::<T>();
    // Small: the default schedule leaves it unsorted, as a kept check of
    // indices that came back may be.
    let unsorted = plan
        .check_indices(
            &c.indices,
            Execution::on(&Serial),
            BlockSort::ForElementBytes(size),
        )
        .unwrap();
    for schedule in schedules() {
        let sorted = plan
            .check_indices(
                &c.indices,
                Execution::on(&Serial).with_schedule(&schedule),
                BlockSort::ForElementBytes(size),
            )
            .unwrap();
        for (name, par) in hosts() {
            // The sort split over the host is the serial one, entry for
            // entry.
            let sorted_here = plan
                .check_indices(
                    &c.indices,
                    Execution::on(&*par).with_schedule(&schedule),
                    BlockSort::ForElementBytes(size),
                )
                .unwrap();
            prop_assert_eq!(
                format!("{sorted_here:?}"),
                format!("{sorted:?}"),
                "sorted on {} {:?}",
                name,
                schedule
            );
            let mut got = c.data.clone();
            token
                .apply(
                    &mut got,
                    &c.updates,
                    c.reduction,
                    Execution::on(&*par).with_schedule(&schedule),
                )
                .unwrap();
            prop_assert_eq!(&T::bits(&got), &want, "apply, {} {:?}", name, schedule);
            let mut got = c.data.clone();
            sorted
                .apply(
                    &mut got,
                    &c.updates,
                    c.reduction,
                    Execution::on(&*par).with_schedule(&schedule),
                )
                .unwrap();
            prop_assert_eq!(&T::bits(&got), &want, "sorted, {} {:?}", name, schedule);
            // Sorted for a split over this host, when it would split.
            let split =
                unsorted.sorted_for_split(size, Execution::on(&*par).with_schedule(&schedule));
            if let Some(split) = &split {
                prop_assert!(split.is_sorted());
                let mut got = c.data.clone();
                split
                    .apply(
                        &mut got,
                        &c.updates,
                        c.reduction,
                        Execution::on(&*par).with_schedule(&schedule),
                    )
                    .unwrap();
                prop_assert_eq!(&T::bits(&got), &want, "split, {} {:?}", name, schedule);
            }
            let by_token: &Copying<T> = &|d, s| {
                token.apply(
                    CopyOf { data: s, out: d },
                    &c.updates,
                    c.reduction,
                    Execution::on(&*par).with_schedule(&schedule),
                )
            };
            let by_sorted: &Copying<T> = &|d, s| {
                sorted.apply(
                    CopyOf { data: s, out: d },
                    &c.updates,
                    c.reduction,
                    Execution::on(&*par).with_schedule(&schedule),
                )
            };
            let by_split: &Copying<T> = &|d, s| {
                let split = split.as_ref().expect("pushed only when made");
                split.apply(
                    CopyOf { data: s, out: d },
                    &c.updates,
                    c.reduction,
                    Execution::on(&*par).with_schedule(&schedule),
                )
            };
            let mut copyings = vec![by_token, by_sorted];
            if split.is_some() {
                copyings.push(by_split);
            }
            for copying in copyings {
                for (kind, mut out) in destinations::<T>(c.data.len()) {
                    let fused = copying(&mut out, &c.data).unwrap();
                    prop_assert_eq!(
                        &T::bits(fused),
                        &want,
                        "copying into {}, {} {:?}",
                        kind,
                        name,
                        schedule
                    );
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// TensorScatter

fn check_tensor_scatter(
    cache_shape: &[usize],
    axis: usize,
    update_seq: usize,
    starts: &[i64],
    mode: TensorScatterMode,
) -> Result<(), TestCaseError> {
    let mut update_shape = cache_shape.to_vec();
    update_shape[axis] = update_seq;
    let plan = TensorScatterPlan::new(
        cache_shape,
        &update_shape,
        Some(&[starts.len()]),
        axis as i64,
    )
    .unwrap();
    let token = plan.check_write_indices(Some(starts), mode).unwrap();
    let cache: Vec<i64> = (0..cache_shape.iter().product::<usize>() as i64).collect();
    let update: Vec<i64> = (0..update_shape.iter().product::<usize>() as i64)
        .map(|v| -1 - v)
        .collect();
    let mut serial = cache.clone();
    token
        .apply(&mut serial, &update, Execution::SERIAL)
        .unwrap();
    for (name, par) in hosts() {
        let mut got = cache.clone();
        token
            .apply(
                &mut got,
                &update,
                Execution::on(&*par).with_schedule(&Schedule::EAGER),
            )
            .unwrap();
        prop_assert_eq!(&got, &serial, "{}", name);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn parallel_and_banded_scatter_elements_equal_serial_f32_bit_for_bit(c in elements_case::<f32>()) {
        check_elements(&c)?;
    }

    #[test]
    fn parallel_and_banded_scatter_elements_equal_serial_on_wrapping_integers(c in elements_case::<i64>()) {
        check_elements(&c)?;
    }

    #[test]
    fn parallel_and_sorted_scatter_nd_equal_serial_f32_bit_for_bit(c in nd_case::<f32>()) {
        check_nd(&c)?;
    }

    #[test]
    fn parallel_and_sorted_scatter_nd_equal_serial_on_wrapping_integers(c in nd_case::<i64>()) {
        check_nd(&c)?;
    }

    #[test]
    fn parallel_tensor_scatter_writes_the_serial_cache(
        (cache_shape, axis, update_seq, starts, mode) in
            (prop::collection::vec(1..=4usize, 2..=4), any::<prop::sample::Index>())
                .prop_flat_map(|(shape, axis)| {
                    let axis = 1 + axis.index(shape.len() - 1);
                    let seq = shape[axis];
                    (
                        Just(shape.clone()),
                        Just(axis),
                        0..=seq,
                        prop::collection::vec(0..=0i64, shape[0]),
                        select(vec![TensorScatterMode::Linear, TensorScatterMode::Circular]),
                    )
                })
                .prop_flat_map(|(shape, axis, update_seq, starts, mode)| {
                    let last = (shape[axis] - update_seq) as i64;
                    let starts = match mode {
                        TensorScatterMode::Linear => prop::collection::vec(0..=last, starts.len()).boxed(),
                        TensorScatterMode::Circular => prop::collection::vec(-9i64..9, starts.len()).boxed(),
                    };
                    (Just(shape), Just(axis), Just(update_seq), starts, Just(mode))
                })
    ) {
        check_tensor_scatter(&cache_shape, axis, update_seq, &starts, mode)?;
    }
}

/// A dense axis-0 max scatter, as `se_max_dense_axis0` but small: the
/// default schedule's bands (16 columns) engage once the blocking
/// threshold is lowered.
#[test]
fn an_axis_0_max_scatter_in_bands_of_whole_lines_equals_serial_at_every_thread_count() {
    let (rows, cols) = (300usize, 100usize);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let data: Vec<f32> = (0..rows * cols)
        .map(|_| (next() % 1000) as f32 * 0.01)
        .collect();
    let indices: Vec<i64> = (0..rows * cols)
        .map(|_| (next() % rows as u64) as i64)
        .collect();
    let updates: Vec<f32> = (0..rows * cols)
        .map(|i| {
            if i % 97 == 0 {
                f32::from_bits(0x7fc0_0000 | i as u32)
            } else {
                (next() % 1000) as f32 * 0.01
            }
        })
        .collect();
    let plan = ElementsPlan::new(&[rows, cols], &[rows, cols], &[rows, cols], 0).unwrap();
    let token = plan.check_indices(&indices, Execution::SERIAL).unwrap();
    let schedule = Schedule {
        blocked_from_bytes: 0,
        block_bytes: 16 * rows * 4,
        min_split_row_bytes: 64,
        ..Schedule::DEFAULT
    };
    for reduction in [
        Reduction::None,
        Reduction::Add,
        Reduction::Max,
        Reduction::Min,
        Reduction::Mul,
    ] {
        let mut serial = data.clone();
        token
            .apply(&mut serial, &updates, reduction, Execution::SERIAL)
            .unwrap();
        for (name, par) in hosts() {
            let mut got = data.clone();
            token
                .apply(
                    &mut got,
                    &updates,
                    reduction,
                    Execution::on(&*par).with_schedule(&schedule),
                )
                .unwrap();
            assert_eq!(f32::bits(&got), f32::bits(&serial), "{reduction} {name}");
        }
    }
}

/// Strings are neither `Copy` nor cheap: the parallel apply clones each
/// update into place in the serial order.
#[test]
fn string_concatenation_in_parallel_keeps_the_serial_order() {
    let plan = ElementsPlan::new(&[3, 4], &[5, 4], &[5, 4], 0).unwrap();
    let indices: Vec<i64> = (0..20).map(|i| (i * 7 % 6) - 3).collect();
    let token = plan.check_indices(&indices, Execution::SERIAL).unwrap();
    let data: Vec<String> = (0..12).map(|i| format!("d{i}")).collect();
    let updates: Vec<String> = (0..20).map(|i| format!("u{i}")).collect();
    for reduction in [Reduction::None, Reduction::Add, Reduction::Max] {
        let mut serial = data.clone();
        token
            .apply(&mut serial, &updates, reduction, Execution::SERIAL)
            .unwrap();
        for (name, par) in hosts() {
            let mut got = data.clone();
            token
                .apply(
                    &mut got,
                    &updates,
                    reduction,
                    Execution::on(&*par).with_schedule(&Schedule::EAGER),
                )
                .unwrap();
            assert_eq!(got, serial, "{reduction} {name}");
        }
    }
}

// ---------------------------------------------------------------------------
// Copying into uninitialized memory

/// Claims `n` threads and never runs the odd tasks: a host breaking
/// `Parallel`'s contract. Its results are unspecified, but a copying
/// kernel still writes every element of its destination (it copies and
/// scatters the parts the host skipped itself).
struct SkipsOddTasks(usize);

impl Parallel for SkipsOddTasks {
    fn threads(&self) -> usize {
        self.0
    }

    fn for_each(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        (0..tasks).step_by(2).for_each(task)
    }
}

/// A copying application on a host: `dst`, `par`, the written `dst`.
type CopyingOn<'a, T> = dyn for<'d> Fn(&'d mut [MaybeUninit<T>], &dyn Parallel) -> Result<&'d mut [T], ScatterError>
    + 'a;

/// `copying`, on every host, into uninitialized and poisoned memory,
/// gives `want` bit for bit; on a host skipping tasks, it still writes
/// every element (none is left holding the poison).
fn assert_copying_gives<T: Val>(path: &str, want: &[T], copying: &CopyingOn<T>) {
    for (name, par) in hosts() {
        for (kind, mut out) in destinations::<T>(want.len()) {
            let got = copying(&mut out, &*par).unwrap();
            assert_eq!(T::bits(got), T::bits(want), "{path}: into {kind}, {name}");
        }
    }
    let poison = T::bits(&[T::POISON])[0];
    assert!(
        !T::bits(want).contains(&poison),
        "{path}: the data hold the poison"
    );
    for (kind, mut out) in destinations::<T>(want.len()) {
        let got = copying(&mut out, &SkipsOddTasks(3)).unwrap();
        assert!(
            !T::bits(got).contains(&poison),
            "{path}: into {kind}, a host skipping tasks: an element left unwritten"
        );
    }
}

#[test]
fn every_copying_path_writes_an_uninitialized_destination_whole_with_the_copy_then_apply_result() {
    let data: Vec<f32> = (0..6 * 64).map(|i| (i % 37) as f32 * 0.5 - 4.0).collect();
    let eager = Schedule::EAGER;
    let bands = Schedule {
        blocked_from_bytes: 0,
        block_bytes: 16 * 6 * 4,
        min_tile_columns: 1,
        ..Schedule::DEFAULT
    };
    // ScatterElements: data [6, 64].
    for (axis, indices_shape) in [
        (1usize, [6usize, 20]),
        (0, [6, 64]),
        (1, [6, 0]),
        (1, [3, 20]),
    ] {
        let n: usize = indices_shape.iter().product();
        let dim = [6i64, 64][axis];
        let indices: Vec<i64> = (0..n as i64)
            .map(|i| (i * 7 + i / 5) % (2 * dim) - dim)
            .collect();
        let updates: Vec<f32> = (0..n).map(|i| 100.0 + i as f32 * 0.25).collect();
        let plan =
            ElementsPlan::new(&[6, 64], &indices_shape, &indices_shape, axis as i64).unwrap();
        let token = plan.check_indices(&indices, Execution::SERIAL).unwrap();
        for reduction in [Reduction::None, Reduction::Add, Reduction::Max] {
            let mut want = data.clone();
            token
                .apply(&mut want, &updates, reduction, Execution::SERIAL)
                .unwrap();
            // Serial: slab by slab (axis 1), or one slab (axis 0), or a
            // plain copy (no indices).
            let path = format!("elements axis {axis} {indices_shape:?} {reduction}");
            assert_copying_gives(&format!("{path}, serial"), &want, &|d, _| {
                token.apply(
                    CopyOf {
                        data: &data,
                        out: d,
                    },
                    &updates,
                    reduction,
                    Execution::SERIAL,
                )
            });
            // Slab parts (axis 1), column parts (axis 0, one slab).
            assert_copying_gives(&format!("{path}, split"), &want, &|d, par| {
                token.apply(
                    CopyOf {
                        data: &data,
                        out: d,
                    },
                    &updates,
                    reduction,
                    Execution::on(par).with_schedule(&eager),
                )
            });
            // Bands of columns, one task or several.
            assert_copying_gives(&format!("{path}, banded"), &want, &|d, par| {
                token.apply(
                    CopyOf {
                        data: &data,
                        out: d,
                    },
                    &updates,
                    reduction,
                    Execution::on(par).with_schedule(&bands),
                )
            });
            // The copy split, the scatter serial.
            assert_copying_gives(&format!("{path}, copy split"), &want, &|d, par| {
                token.apply(
                    CopyOf {
                        data: &data,
                        out: d,
                    },
                    &updates,
                    reduction,
                    Execution::on(par).with_schedule(&COPY_SPLIT),
                )
            });
        }
    }
    // ScatterND: data [6, 8, 8]; slices of 64, 8 and 1 elements, and a
    // permuted layout.
    let data = &data[..6 * 64];
    for (indices, indices_shape, updates_shape, perm) in [
        (vec![4i64, -6, 4, 2], [4usize, 1], vec![4usize, 8, 8], None),
        (vec![1, 2, -1, 0, 1, 2, 5, 3], [4, 2], vec![4, 8], None),
        (vec![1, 2, 3, 1, 2, 3, 0, 0, 0], [3, 3], vec![3], None),
        (vec![5, 0, 7, 2], [2, 2], vec![2, 6], Some([1usize, 2, 0])),
    ] {
        let plan = match perm {
            None => NdPlan::new(&[6, 8, 8], &indices_shape, &updates_shape),
            Some(perm) => NdPlan::permuted(&[6, 8, 8], &perm, &indices_shape, &updates_shape),
        }
        .unwrap();
        let token = plan
            .check_indices(&indices, Execution::SERIAL, BlockSort::Off)
            .unwrap();
        assert_eq!(token.copies_around_slices(), perm.is_none());
        let n: usize = updates_shape.iter().product();
        let updates: Vec<f32> = (0..n).map(|i| 100.0 + i as f32 * 0.25).collect();
        for reduction in [Reduction::None, Reduction::Add, Reduction::Min] {
            let mut want = data.to_vec();
            token
                .apply(&mut want, &updates, reduction, Execution::SERIAL)
                .unwrap();
            // Serial: around the slices (no reduction, row-major), or a
            // copy then `apply`.
            let path = format!("nd {indices_shape:?} {perm:?} {reduction}");
            assert_copying_gives(&format!("{path}, serial"), &want, &|d, _| {
                token.apply(
                    CopyOf { data, out: d },
                    &updates,
                    reduction,
                    Execution::SERIAL,
                )
            });
            // Blocks split over tasks, each copied before its updates.
            assert_copying_gives(&format!("{path}, split"), &want, &|d, par| {
                token.apply(
                    CopyOf { data, out: d },
                    &updates,
                    reduction,
                    Execution::on(par).with_schedule(&eager),
                )
            });
            // The copy split, the scatter serial (slices covering at most
            // half the output; else around the slices).
            assert_copying_gives(&format!("{path}, copy split"), &want, &|d, par| {
                token.apply(
                    CopyOf { data, out: d },
                    &updates,
                    reduction,
                    Execution::on(par).with_schedule(&COPY_SPLIT),
                )
            });
            // Sorted by block, serial or split.
            let sorted = plan
                .check_indices(
                    &indices,
                    Execution::on(&Serial).with_schedule(&eager),
                    BlockSort::ForElementBytes(4),
                )
                .unwrap();
            assert_eq!(sorted.is_sorted(), perm.is_none());
            assert_copying_gives(&format!("{path}, sorted"), &want, &|d, par| {
                sorted.apply(
                    CopyOf { data, out: d },
                    &updates,
                    reduction,
                    Execution::on(par).with_schedule(&eager),
                )
            });
        }
    }
}

/// A ScatterND of 200 element tuples into `[64, 8]` data, negative rows
/// among them and destinations repeated, for the sort-by-block tests.
fn two_hundred_tuples_into_64x8() -> (NdPlan, Vec<i64>) {
    let plan = NdPlan::new(&[64, 8], &[200, 2], &[200]).unwrap();
    let indices = (0..200i64)
        .flat_map(|i| [(i * 37) % 128 - 64, (i * 5) % 8])
        .collect();
    (plan, indices)
}

#[test]
fn a_sort_on_a_host_that_skips_tasks_is_still_the_serial_one() {
    let (plan, indices) = two_hundred_tuples_into_64x8();
    let serial = plan
        .check_indices(
            &indices,
            Execution::on(&Serial).with_schedule(&Schedule::EAGER),
            BlockSort::ForElementBytes(4),
        )
        .unwrap();
    assert!(serial.is_sorted());
    let skipping = plan
        .check_indices(
            &indices,
            Execution::on(&SkipsOddTasks(3)).with_schedule(&Schedule::EAGER),
            BlockSort::ForElementBytes(4),
        )
        .unwrap();
    assert_eq!(format!("{skipping:?}"), format!("{serial:?}"));
}

/// `got` writes into a copy of `data` what `want` writes into another, bit
/// for bit, with each reduction.
fn assert_writes_as<const N: usize>(
    data: &[f32],
    reductions: [Reduction; N],
    want: impl Fn(&mut [f32], Reduction) -> Result<(), ScatterError>,
    got: impl Fn(&mut [f32], Reduction) -> Result<(), ScatterError>,
) {
    for reduction in reductions {
        let (mut w, mut g) = (data.to_vec(), data.to_vec());
        want(&mut w, reduction).unwrap();
        got(&mut g, reduction).unwrap();
        assert_eq!(f32::bits(&g), f32::bits(&w), "{reduction}");
    }
}

#[test]
fn a_kept_sort_applies_as_the_token_it_came_from_and_fits_no_other_plan() {
    let (plan, indices) = two_hundred_tuples_into_64x8();
    let updates: Vec<f32> = (0..200).map(|i| i as f32 * 0.75).collect();
    let data: Vec<f32> = (0..512).map(|i| i as f32).collect();
    let sorted = plan
        .check_indices(
            &indices,
            Execution::on(&Serial).with_schedule(&Schedule::EAGER),
            BlockSort::ForElementBytes(4),
        )
        .unwrap();
    let sort = sorted.kept_check();
    assert!(sort.is_sorted());
    // SAFETY: the very indices `sort` was made from, by this plan.
    let again = unsafe { plan.reuse_check(&indices, &sort) }.unwrap();
    assert_writes_as(
        &data,
        [Reduction::None, Reduction::Add, Reduction::Max],
        |d, r| {
            sorted
                .apply(d, &updates, r, Execution::on(&Serial))
                .map(drop)
        },
        |d, r| {
            again
                .apply(d, &updates, r, Execution::on(&Threads(3)))
                .map(drop)
        },
    );
    // A plan of another tuple count or data size: refused.
    let fewer = NdPlan::new(&[64, 8], &[100, 2], &[100]).unwrap();
    // SAFETY: refused before any use of the indices.
    assert!(unsafe { fewer.reuse_check(&indices[..200], &sort) }.is_err());
    let larger = NdPlan::new(&[4096, 8], &[200, 2], &[200]).unwrap();
    // SAFETY: as above.
    assert!(unsafe { larger.reuse_check(&indices, &sort) }.is_err());
}

#[test]
fn indices_that_come_back_are_sorted_for_a_split_only_on_threads_and_for_short_slices() {
    let (plan, indices) = two_hundred_tuples_into_64x8();
    let unsorted = plan
        .check_indices(
            &indices,
            Execution::on(&Serial),
            BlockSort::ForElementBytes(4),
        )
        .unwrap();
    assert!(!unsorted.is_sorted());
    assert!(
        unsorted
            .sorted_for_split(4, Execution::on(&Serial).with_schedule(&Schedule::EAGER))
            .is_none()
    );
    let split = unsorted
        .sorted_for_split(
            4,
            Execution::on(&Threads(3)).with_schedule(&Schedule::EAGER),
        )
        .expect("element slices on 3 threads");
    assert!(split.is_sorted());
    // One block per task: 512 one-element slices in blocks of 171.
    assert!(format!("{:?}", split.kept_check()).contains("block_len: 171"));
    // Already sorted: nothing to do.
    assert!(
        split
            .sorted_for_split(
                4,
                Execution::on(&Threads(3)).with_schedule(&Schedule::EAGER)
            )
            .is_none()
    );
    let splits_on_three = |schedule: Schedule| {
        unsorted
            .sorted_for_split(4, Execution::on(&Threads(3)).with_schedule(&schedule))
            .is_some()
    };
    // Slices longer than the blocked application sorts: left to the
    // split of whole slices.
    assert!(!splits_on_three(Schedule {
        blocked_max_slice_bytes: 3,
        ..Schedule::EAGER
    }));
    // Fewer tuples than the schedule wants per block (200 for 3 blocks).
    assert!(!splits_on_three(Schedule {
        sorted_from_updates_per_block: 67,
        ..Schedule::EAGER
    }));
    assert!(splits_on_three(Schedule {
        sorted_from_updates_per_block: 66,
        ..Schedule::EAGER
    }));
}

#[test]
fn a_kept_check_of_unsorted_indices_applies_as_its_token_and_fits_no_other_length() {
    let (plan, indices) = two_hundred_tuples_into_64x8();
    let updates: Vec<f32> = (0..200).map(|i| i as f32 * 0.75).collect();
    let data: Vec<f32> = (0..512).map(|i| i as f32).collect();
    // The default thresholds do not sort 2 KiB of output.
    let checked = plan
        .check_indices(
            &indices,
            Execution::on(&Serial),
            BlockSort::ForElementBytes(4),
        )
        .unwrap();
    assert!(!checked.is_sorted());
    let kept = checked.kept_check();
    assert!(!kept.is_sorted());
    // SAFETY: the very indices `kept` was made from, by this plan.
    let again = unsafe { plan.reuse_check(&indices, &kept) }.unwrap();
    assert!(!again.is_sorted());
    let serial = plan
        .check_indices(&indices, Execution::SERIAL, BlockSort::Off)
        .unwrap();
    assert_writes_as(
        &data,
        [Reduction::None, Reduction::Add, Reduction::Mul],
        |d, r| serial.apply(d, &updates, r, Execution::SERIAL).map(drop),
        |d, r| {
            again
                .apply(d, &updates, r, Execution::on(&Threads(3)))
                .map(drop)
        },
    );
    // Indices of another length, or checked against larger dimensions:
    // refused before any is read.
    let fewer = NdPlan::new(&[64, 8], &[100, 2], &[100]).unwrap();
    // SAFETY: refused before any use of the indices.
    assert!(unsafe { fewer.reuse_check(&indices[..198], &kept) }.is_err());
    let smaller = NdPlan::new(&[32, 8], &[200, 2], &[200]).unwrap();
    // SAFETY: as above.
    assert!(unsafe { smaller.reuse_check(&indices, &kept) }.is_err());
}

#[test]
fn a_kept_element_check_applies_as_its_token_and_fits_no_other_axis_or_dimension() {
    let plan = ElementsPlan::new(&[16, 12], &[6, 12], &[6, 12], 0).unwrap();
    let indices: Vec<i64> = (0..72i64).map(|i| (i * 7) % 32 - 16).collect();
    let updates: Vec<f32> = (0..72).map(|i| i as f32 * 0.5).collect();
    let data: Vec<f32> = (0..192).map(|i| i as f32).collect();
    let checked = plan.check_indices(&indices, Execution::SERIAL).unwrap();
    let kept = checked.kept_check();
    // SAFETY: the very indices `kept` was made from, by this plan.
    let again = unsafe { plan.reuse_check(&indices, &kept) }.unwrap();
    assert_writes_as(
        &data,
        [Reduction::None, Reduction::Add, Reduction::Min],
        |d, r| checked.apply(d, &updates, r, Execution::SERIAL).map(drop),
        |d, r| {
            again
                .apply(d, &updates, r, Execution::on(&Threads(3)))
                .map(drop)
        },
    );
    // Another axis, a shorter dimension along it, other indices' length:
    // refused before any index is read.
    let other_axis = ElementsPlan::new(&[16, 16], &[6, 12], &[6, 12], 1).unwrap();
    let shorter = ElementsPlan::new(&[12, 12], &[6, 12], &[6, 12], 0).unwrap();
    let fewer = ElementsPlan::new(&[16, 12], &[5, 12], &[5, 12], 0).unwrap();
    // SAFETY: each refused before any use of the indices.
    unsafe {
        assert!(other_axis.reuse_check(&indices, &kept).is_err());
        assert!(shorter.reuse_check(&indices, &kept).is_err());
        assert!(fewer.reuse_check(&indices[..60], &kept).is_err());
    }
}

// ---------------------------------------------------------------------------
// Errors

#[test]
fn a_bad_index_gives_the_sorted_check_the_plain_checks_first_error() {
    let plan = NdPlan::new(&[4, 5], &[6, 2], &[6]).unwrap();
    for indices in [
        vec![0i64, 0, 3, 4, 4, 0, 1, 1, 9, 9, 2, 2],
        vec![0, 5, 0, 0, 0, 0, 0, 0, 0, 0, -5, 0],
        vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, i64::MIN, i64::MAX],
    ] {
        let plain = plan
            .check_indices(&indices, Execution::SERIAL, BlockSort::Off)
            .unwrap_err();
        for schedule in schedules() {
            let sorted = plan
                .check_indices(
                    &indices,
                    Execution::on(&Serial).with_schedule(&schedule),
                    BlockSort::ForElementBytes(4),
                )
                .unwrap_err();
            assert_eq!(sorted, plain);
            assert_eq!(sorted.to_string(), plain.to_string());
            for (name, par) in hosts() {
                let split = plan
                    .check_indices(
                        &indices,
                        Execution::on(&*par).with_schedule(&schedule),
                        BlockSort::ForElementBytes(4),
                    )
                    .unwrap_err();
                assert_eq!(split, plain, "{name}");
            }
        }
    }
}

#[test]
fn a_bad_index_gives_the_split_element_check_the_serial_checks_first_error() {
    let plan = ElementsPlan::new(&[5, 3], &[7, 3], &[7, 3], 0).unwrap();
    let mut hosts = hosts();
    hosts.push((
        "3 claimed, odd tasks skipped".into(),
        Box::new(SkipsOddTasks(3)),
    ));
    // Bad values first, last, in several tasks' ranges, at both edges of
    // the range, and none at all.
    let mut cases: Vec<Vec<i64>> = vec![(0..21).map(|i| i % 5 - 2).collect()];
    for bad in [
        vec![0],
        vec![20],
        vec![13, 4],
        vec![19, 2, 11],
        vec![10, 11],
    ] {
        for value in [5, -6, i64::MAX, i64::MIN] {
            let mut indices = cases[0].clone();
            for &at in &bad {
                indices[at] = value;
            }
            cases.push(indices);
        }
    }
    for indices in cases {
        let serial = plan.check_indices(&indices, Execution::SERIAL).map(drop);
        for schedule in schedules() {
            for (name, par) in &hosts {
                let split = plan
                    .check_indices(&indices, Execution::on(&**par).with_schedule(&schedule))
                    .map(drop);
                assert_eq!(split, serial, "{name}, {indices:?}");
            }
        }
    }
    // A length the plan does not have: the serial check's error.
    let short = [0i64; 20];
    assert_eq!(
        plan.check_indices(&short, Execution::on(&Threads(2)))
            .map(drop),
        plan.check_indices(&short, Execution::SERIAL).map(drop)
    );
}

#[test]
fn parallel_entry_points_refuse_what_serial_refuses_before_any_write() {
    let plan = ElementsPlan::new(&[4, 3], &[4, 3], &[4, 3], 0).unwrap();
    let token = plan.check_indices(&[1i64; 12], Execution::SERIAL).unwrap();
    for (name, par) in hosts() {
        // A short update buffer.
        let mut data = [7f32; 12];
        let err = token
            .apply(
                &mut data,
                &[1.0; 11],
                Reduction::Add,
                Execution::on(&*par).with_schedule(&Schedule::EAGER),
            )
            .unwrap_err();
        assert_eq!(
            err,
            token
                .apply(
                    &mut [7f32; 12],
                    &[1.0; 11],
                    Reduction::Add,
                    Execution::SERIAL
                )
                .unwrap_err()
        );
        assert_eq!(data, [7.0; 12], "{name}");
        // Strings cannot multiply.
        let mut words: [String; 12] = std::array::from_fn(|i| i.to_string());
        let err = token
            .apply(
                &mut words,
                &std::array::from_fn::<String, 12, _>(|_| "x".into()),
                Reduction::Mul,
                Execution::on(&*par).with_schedule(&Schedule::EAGER),
            )
            .unwrap_err();
        assert!(matches!(err, ScatterError::Reduction { .. }), "{err}");
        assert_eq!(words, std::array::from_fn(|i| i.to_string()), "{name}");
        // A short source for the copy.
        let err = token
            .apply(
                CopyOf {
                    data: &[1.0; 5],
                    out: &mut [MaybeUninit::uninit(); 12],
                },
                &[1.0; 12],
                Reduction::None,
                Execution::on(&*par).with_schedule(&Schedule::EAGER),
            )
            .unwrap_err();
        assert!(err.to_string().contains("data"), "{err}");
        // Bool cannot average (OpenVINO's mean).
        let mut flags = [true; 12];
        let err = token
            .apply_update(
                &mut flags,
                &[false; 12],
                UpdateReduction::Mean,
                true,
                Execution::on(&*par).with_schedule(&Schedule::EAGER),
            )
            .unwrap_err();
        assert!(matches!(err, ScatterError::Reduction { .. }), "{err}");
        assert_eq!(flags, [true; 12], "{name}");
    }
    let nd = NdPlan::new(&[4, 3], &[2, 1], &[2, 3]).unwrap();
    let sorted = nd
        .check_indices(
            &[1i64, -1],
            Execution::on(&Serial).with_schedule(&Schedule::EAGER),
            BlockSort::ForElementBytes(4),
        )
        .unwrap();
    assert!(sorted.is_sorted());
    for (name, par) in hosts() {
        let mut data = [7f32; 12];
        let err = sorted
            .apply(
                &mut data,
                &[1.0; 5],
                Reduction::Add,
                Execution::on(&*par).with_schedule(&Schedule::EAGER),
            )
            .unwrap_err();
        assert!(matches!(err, ScatterError::Length { .. }), "{err}");
        assert_eq!(data, [7.0; 12], "{name}");
        let mut words: [String; 12] = std::array::from_fn(|i| i.to_string());
        let err = sorted
            .apply(
                &mut words,
                &std::array::from_fn::<String, 6, _>(|_| "x".into()),
                Reduction::Mul,
                Execution::on(&*par).with_schedule(&Schedule::EAGER),
            )
            .unwrap_err();
        assert!(matches!(err, ScatterError::Reduction { .. }), "{err}");
        assert_eq!(words, std::array::from_fn(|i| i.to_string()), "{name}");
    }
}

#[test]
fn the_default_schedule_leaves_small_work_serial_and_large_random_scatters_sorted() {
    let nd = NdPlan::new(&[4, 3], &[2, 1], &[2, 3]).unwrap();
    let small = nd
        .check_indices(
            &[1i64, -1],
            Execution::on(&Serial),
            BlockSort::ForElementBytes(4),
        )
        .unwrap();
    assert!(!small.is_sorted());
    // 4M f32 (16 MiB) receiving 1M random single elements.
    let (rows, cols) = (4096usize, 1024usize);
    let big = NdPlan::new(&[rows, cols], &[1 << 20, 2], &[1 << 20]).unwrap();
    let indices: Vec<i64> = (0..1i64 << 20)
        .flat_map(|i| [(i * 7919) % rows as i64, (i * 104_729) % cols as i64])
        .collect();
    assert!(
        big.check_indices(
            &indices,
            Execution::on(&Serial),
            BlockSort::ForElementBytes(4)
        )
        .unwrap()
        .is_sorted()
    );
}

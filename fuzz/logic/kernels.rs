//! Kernel target: arbitrary shapes (rank 0..=10, zero, small and huge
//! dimensions), axes, reductions, element types, index types and index
//! values, buffers of the right length or not, through every kernel of
//! `scatter-kernels`.
//!
//! - When the naive oracle (`crates/scatter-kernels/tests/oracle.rs`)
//!   accepts the input, the kernel must give the same tensor.
//! - When it refuses, the kernel must return `Err` with the same refusal
//!   and leave the data untouched.
//! - Inputs too large for the oracle's nested loops (huge declared shapes)
//!   run through the kernel alone: it must answer (Ok or Err), never panic,
//!   never allocate in proportion to a declared dimension (libFuzzer's
//!   `-malloc_limit_mb` catches that) and never loop over one.
//!
//! The body of the `kernels` fuzz target ([`run`]), shared with the replay
//! test (`tests/fuzz_replay.rs`), which includes this file with `#[path]`.

#[path = "../../crates/scatter-kernels/tests/oracle.rs"]
mod oracle;

use arbitrary::{Result, Unstructured};
use half::{bf16, f16};
use oracle::{RefElem, Refusal, all_same, refusal_of};
use scatter_kernels::{
    Element, ElementsPlan, Execution, IndexValue, Reduction, ScatterError, TensorScatterMode,
    TensorScatterPlan, UpdateReduction,
};

/// Largest buffer the target allocates for one tensor.
const MAX_LEN: usize = 4096;
/// Largest product of the non-zero dims of a shape the oracle may walk.
const ORACLE_COST: usize = 1 << 13;

// ---------------------------------------------------------------------------
// Values.

trait Gen: Element + RefElem {
    fn generate(u: &mut Unstructured) -> Result<Self>;
}

macro_rules! gen_int {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn generate(u: &mut Unstructured) -> Result<Self> {
                Ok(match u.int_in_range(0u8..=7)? {
                    0 => <$t>::MIN,
                    1 => <$t>::MAX,
                    2 => <$t>::MAX / 2 + 1,
                    3 => u.arbitrary()?,
                    n => (n - 4) as $t,
                })
            }
        }
    )*};
}
gen_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! gen_float {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn generate(u: &mut Unstructured) -> Result<Self> {
                Ok(match u.int_in_range(0u8..=12)? {
                    0 => <$t>::NAN,
                    1 => -<$t>::NAN,
                    2 => <$t>::INFINITY,
                    3 => <$t>::NEG_INFINITY,
                    4 => 0.0,
                    5 => -0.0,
                    6 => <$t>::MAX,
                    7 => <$t>::MIN,
                    8 => <$t>::MIN_POSITIVE,
                    9 => u.arbitrary()?,
                    _ => u.int_in_range(-8i8..=8)? as $t * 0.75,
                })
            }
        }
    )*};
}
gen_float!(f32, f64);

macro_rules! gen_half {
    ($($t:ty),*) => {$(
        impl Gen for $t {
            fn generate(u: &mut Unstructured) -> Result<Self> {
                Ok(match u.int_in_range(0u8..=9)? {
                    0 => <$t>::NAN,
                    1 => <$t>::INFINITY,
                    2 => <$t>::NEG_INFINITY,
                    3 => <$t>::NEG_ZERO,
                    4 => <$t>::MAX,
                    5 => <$t>::from_f32(2048.0),
                    6 => <$t>::from_bits(u.arbitrary()?),
                    _ => <$t>::from_f32(u.int_in_range(-8i8..=8)? as f32 * 0.75),
                })
            }
        }
    )*};
}
gen_half!(f16, bf16);

impl Gen for bool {
    fn generate(u: &mut Unstructured) -> Result<Self> {
        u.arbitrary()
    }
}

impl Gen for String {
    fn generate(u: &mut Unstructured) -> Result<Self> {
        let n = u.int_in_range(0u8..=2)?;
        (0..n)
            .map(|_| Ok(*u.choose(&['a', 'b', 'Z', 'é', '\u{0}'])?))
            .collect()
    }
}

// ---------------------------------------------------------------------------
// Shapes, axes, indices.

/// Mostly 0..=4, sometimes a dimension no buffer can have.
fn dim(u: &mut Unstructured) -> Result<usize> {
    Ok(match u.int_in_range(0u8..=40)? {
        0 => usize::MAX,
        1 => usize::MAX / 2 + 1,
        2 => i64::MAX as usize,
        3 => 1 << 32,
        4 => 1 << 20,
        5..=8 => 0,
        n => (n % 5) as usize,
    })
}

fn shape(u: &mut Unstructured) -> Result<Vec<usize>> {
    let rank = match u.int_in_range(0u8..=20)? {
        0 => 0,
        1 => u.int_in_range(8..=10)?,
        n => (n % 4 + 1) as usize,
    };
    (0..rank).map(|_| dim(u)).collect()
}

/// A shape `d` may be shrunk to (indices dims on non-axis data dims).
fn up_to(u: &mut Unstructured, d: usize) -> Result<usize> {
    Ok(match u.int_in_range(0u8..=5)? {
        0 => 0,
        1 => d.saturating_add(1),
        2 => dim(u)?,
        3 if d > 0 => u.int_in_range(0..=d.min(4))?,
        _ => d,
    })
}

fn axis(u: &mut Unstructured, rank: usize) -> Result<i64> {
    let r = rank as i64;
    Ok(match u.int_in_range(0u8..=12)? {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => r,
        3 => -r - 1,
        4 => u.arbitrary()?,
        _ if r == 0 => 0,
        n if n % 2 == 0 => u.int_in_range(0..=r - 1)?,
        _ => u.int_in_range(-r..=-1)?,
    })
}

/// An index on an axis of size `d`: mostly valid, sometimes just outside,
/// sometimes extreme.
fn index(u: &mut Unstructured, d: usize) -> Result<i64> {
    let d = i64::try_from(d).unwrap_or(i64::MAX);
    Ok(match u.int_in_range(0u8..=24)? {
        0 => i64::MIN,
        1 => i64::MAX,
        2 => d,
        3 => d.saturating_neg().saturating_sub(1),
        4 => i32::MIN as i64,
        5 => i32::MAX as i64,
        6 => u.arbitrary()?,
        _ if d == 0 => 0,
        n if n % 2 == 0 => u.int_in_range(0..=d - 1)?,
        _ => u.int_in_range(-d..=-1)?,
    })
}

fn count(shape: &[usize]) -> Option<usize> {
    scatter_kernels::element_count(shape)
}

/// Upper bound of what `oracle::all_coords(shape)` builds.
fn oracle_cost(shape: &[usize]) -> usize {
    shape
        .iter()
        .fold(1usize, |acc, &d| acc.saturating_mul(d.max(1)))
}

/// A buffer for `shape`: of its exact length when that is small, else (or
/// sometimes) of a wrong length.
fn buffer<T: Gen>(u: &mut Unstructured, shape: &[usize]) -> Result<Vec<T>> {
    let exact = count(shape).filter(|&n| n <= MAX_LEN);
    let len = match (exact, u.int_in_range(0u8..=30)?) {
        (Some(n), 0) => n + 1,
        (Some(n), 1) => n.saturating_sub(1),
        (Some(n), _) => n,
        (None, _) => u.int_in_range(0..=8)?,
    };
    (0..len).map(|_| T::generate(u)).collect()
}

/// A reduction of the update op (ONNX's and `mean`); the ONNX ops take
/// the ONNX ones among them.
fn reduction(u: &mut Unstructured) -> Result<UpdateReduction> {
    Ok(*u.choose(&UpdateReduction::ALL)?)
}

fn narrow(indices: &[i64]) -> Option<Vec<i32>> {
    indices.iter().map(|&i| i32::try_from(i).ok()).collect()
}

// ---------------------------------------------------------------------------
// Checking one run against the oracle.

fn agree<T: RefElem>(
    what: &str,
    kernel: std::result::Result<(), ScatterError>,
    after: &[T],
    before: &[T],
    oracle: Option<&std::result::Result<Vec<T>, Refusal>>,
) {
    match (oracle, kernel) {
        (None, Ok(())) => {}
        (None, Err(e)) => {
            assert!(all_same(after, before), "{what}: data written before {e}");
            assert!(!e.to_string().is_empty());
        }
        (Some(Ok(expected)), Ok(())) => assert!(
            all_same(after, expected),
            "{what}: kernel {after:?}\noracle {expected:?}\ndata {before:?}"
        ),
        (Some(Ok(expected)), Err(e)) => {
            panic!("{what}: kernel refused ({e}) but oracle gives {expected:?}")
        }
        (Some(Err(r)), Ok(())) => {
            panic!("{what}: kernel accepted ({after:?}) but oracle refuses: {r:?}")
        }
        (Some(Err(r)), Err(e)) => {
            assert_eq!(&refusal_of(&e), r, "{what}: kernel error: {e}");
            assert!(all_same(after, before), "{what}: data written before {e}");
        }
    }
}

/// Runs `f` with i64 indices, and with i32 indices when they fit.
fn each_index_type<T: RefElem>(
    what: &str,
    data: &[T],
    indices: &[i64],
    oracle: Option<&std::result::Result<Vec<T>, Refusal>>,
    mut with_i64: impl FnMut(&mut [T], &[i64]) -> std::result::Result<(), ScatterError>,
    mut with_i32: impl FnMut(&mut [T], &[i32]) -> std::result::Result<(), ScatterError>,
) {
    let mut out = data.to_vec();
    let r = with_i64(&mut out, indices);
    agree(what, r, &out, data, oracle);
    if let Some(narrow) = narrow(indices) {
        let mut out = data.to_vec();
        let r = with_i32(&mut out, &narrow);
        agree(what, r, &out, data, oracle);
    }
}

// ---------------------------------------------------------------------------
// The ops.

fn elements<T: Gen>(u: &mut Unstructured, update_op: bool) -> Result<()> {
    let data_shape = shape(u)?;
    let rank = data_shape.len();
    let ax = axis(u, rank)?;
    let norm_axis = oracle::normalize(ax, rank);
    let indices_shape: Vec<usize> = if u.ratio(1u8, 8)? {
        shape(u)?
    } else {
        data_shape
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if Some(i) == norm_axis {
                    u.int_in_range(0..=3)
                } else {
                    up_to(u, d)
                }
            })
            .collect::<Result<_>>()?
    };
    let updates_shape = if u.ratio(1u8, 16)? {
        shape(u)?
    } else {
        indices_shape.clone()
    };
    let axis_dim = norm_axis.map_or(1, |a| data_shape[a]);
    let n_indices = count(&indices_shape).filter(|&n| n <= MAX_LEN).unwrap_or(2);
    let n_indices = match u.int_in_range(0u8..=30)? {
        0 => n_indices + 1,
        1 => n_indices.saturating_sub(1),
        _ => n_indices,
    };
    let indices: Vec<i64> = (0..n_indices)
        .map(|_| index(u, axis_dim))
        .collect::<Result<_>>()?;
    let data: Vec<T> = buffer(u, &data_shape)?;
    let updates: Vec<T> = buffer(u, &updates_shape)?;
    let red = reduction(u)?;
    let use_init_val: bool = u.arbitrary()?;
    let cheap = [&data_shape, &indices_shape, &updates_shape]
        .iter()
        .all(|s| oracle_cost(s) <= ORACLE_COST);

    if update_op {
        if updates_shape != indices_shape {
            return Ok(());
        }
        let oracle = cheap.then(|| {
            oracle::scatter_elements_update(
                &data,
                &data_shape,
                &indices,
                &indices_shape,
                &updates,
                ax,
                red,
                use_init_val,
            )
        });
        // One argument per kernel input and attribute, as the kernel takes them.
        #[allow(clippy::too_many_arguments)]
        fn run<T: Element, I: IndexValue>(
            d: &mut [T],
            i: &[I],
            ds: &[usize],
            is: &[usize],
            up: &[T],
            ax: i64,
            red: UpdateReduction,
            init: bool,
        ) -> std::result::Result<(), ScatterError> {
            scatter_kernels::scatter_elements_update(d, ds, i, is, up, ax, red, init)
        }
        each_index_type(
            "scatter_elements_update",
            &data,
            &indices,
            oracle.as_ref(),
            |d, i| {
                run(
                    d,
                    i,
                    &data_shape,
                    &indices_shape,
                    &updates,
                    ax,
                    red,
                    use_init_val,
                )
            },
            |d, i| {
                run(
                    d,
                    i,
                    &data_shape,
                    &indices_shape,
                    &updates,
                    ax,
                    red,
                    use_init_val,
                )
            },
        );
    } else {
        // `mean` is not an ONNX reduction: the ONNX op cannot be asked for it.
        let Some(red) = red.onnx() else {
            return Ok(());
        };
        let oracle = cheap.then(|| {
            oracle::scatter_elements(
                &data,
                &data_shape,
                &indices,
                &indices_shape,
                &updates,
                &updates_shape,
                ax,
                red,
            )
        });
        // One argument per kernel input and attribute, as the kernel takes them.
        #[allow(clippy::too_many_arguments)]
        fn run<T: Element, I: IndexValue>(
            d: &mut [T],
            i: &[I],
            ds: &[usize],
            is: &[usize],
            us: &[usize],
            up: &[T],
            ax: i64,
            red: Reduction,
        ) -> std::result::Result<(), ScatterError> {
            if us == is {
                scatter_kernels::scatter_elements(d, ds, i, is, up, ax, red)
            } else {
                let plan = ElementsPlan::new(ds, is, us, ax)?;
                T::check_reduction(red)?;
                let exec = Execution::SERIAL;
                plan.check_indices(i, exec)?
                    .apply(d, up, red, exec)
                    .map(drop)
            }
        }
        each_index_type(
            "scatter_elements",
            &data,
            &indices,
            oracle.as_ref(),
            |d, i| {
                run(
                    d,
                    i,
                    &data_shape,
                    &indices_shape,
                    &updates_shape,
                    &updates,
                    ax,
                    red,
                )
            },
            |d, i| {
                run(
                    d,
                    i,
                    &data_shape,
                    &indices_shape,
                    &updates_shape,
                    &updates,
                    ax,
                    red,
                )
            },
        );
    }
    Ok(())
}

fn nd<T: Gen>(u: &mut Unstructured) -> Result<()> {
    let data_shape = shape(u)?;
    let r = data_shape.len();
    let indices_shape = if u.ratio(1u8, 8)? {
        shape(u)?
    } else {
        let mut s = shape(u)?;
        s.truncate(3);
        let k = match u.int_in_range(0u8..=10)? {
            0 => r + 1,
            1 => dim(u)?,
            _ => u.int_in_range(0..=r)?,
        };
        s.push(k);
        s
    };
    let k = indices_shape.last().copied().unwrap_or(0);
    let updates_shape = if u.ratio(1u8, 10)? || k > r {
        shape(u)?
    } else {
        let mut s = indices_shape[..indices_shape.len().saturating_sub(1)].to_vec();
        s.extend_from_slice(&data_shape[k..]);
        s
    };
    let n_indices = count(&indices_shape).filter(|&n| n <= MAX_LEN).unwrap_or(2);
    let n_indices = match u.int_in_range(0u8..=30)? {
        0 => n_indices + 1,
        1 => n_indices.saturating_sub(1),
        _ => n_indices,
    };
    let indices: Vec<i64> = (0..n_indices)
        .map(|p| {
            let d = if k > 0 && k <= r {
                data_shape[p % k]
            } else {
                1
            };
            index(u, d)
        })
        .collect::<Result<_>>()?;
    let data: Vec<T> = buffer(u, &data_shape)?;
    let updates: Vec<T> = buffer(u, &updates_shape)?;
    // `mean` is not an ONNX reduction: ScatterND cannot be asked for it.
    let Some(red) = reduction(u)?.onnx() else {
        return Ok(());
    };
    let batch = &indices_shape[..indices_shape.len().saturating_sub(1)];
    let cheap = [&data_shape[..], &indices_shape, &updates_shape, batch]
        .iter()
        .all(|s| oracle_cost(s) <= ORACLE_COST);
    let oracle = cheap.then(|| {
        oracle::scatter_nd(
            &data,
            &data_shape,
            &indices,
            &indices_shape,
            &updates,
            &updates_shape,
            red,
        )
    });
    each_index_type(
        "scatter_nd",
        &data,
        &indices,
        oracle.as_ref(),
        |d, i| {
            scatter_kernels::scatter_nd(
                d,
                &data_shape,
                i,
                &indices_shape,
                &updates,
                &updates_shape,
                red,
            )
        },
        |d, i| {
            scatter_kernels::scatter_nd(
                d,
                &data_shape,
                i,
                &indices_shape,
                &updates,
                &updates_shape,
                red,
            )
        },
    );
    Ok(())
}

fn tensor_scatter<T: Gen>(u: &mut Unstructured) -> Result<()> {
    let cache_shape = shape(u)?;
    let r = cache_shape.len();
    let ax = axis(u, r)?;
    let norm_axis = oracle::normalize(ax, r);
    let update_shape: Vec<usize> = if u.ratio(1u8, 8)? {
        shape(u)?
    } else {
        cache_shape
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if Some(i) == norm_axis {
                    up_to(u, d)
                } else if u.ratio(1u8, 20)? {
                    dim(u)
                } else {
                    Ok(d)
                }
            })
            .collect::<Result<_>>()?
    };
    let mode = if u.arbitrary()? {
        TensorScatterMode::Circular
    } else {
        TensorScatterMode::Linear
    };
    let write_indices = if u.arbitrary()? {
        let wshape = if u.ratio(1u8, 10)? {
            shape(u)?
        } else {
            vec![cache_shape.first().copied().unwrap_or(1)]
        };
        let n = count(&wshape).filter(|&n| n <= MAX_LEN).unwrap_or(1);
        let seq = norm_axis.map_or(1, |a| cache_shape[a]);
        let starts: Vec<i64> = (0..n).map(|_| index(u, seq)).collect::<Result<_>>()?;
        Some((starts, wshape))
    } else {
        None
    };
    let cache: Vec<T> = buffer(u, &cache_shape)?;
    let update: Vec<T> = buffer(u, &update_shape)?;
    let wi = write_indices
        .as_ref()
        .map(|(s, shape)| (&s[..], &shape[..]));
    let cheap = [&cache_shape, &update_shape]
        .iter()
        .all(|s| oracle_cost(s) <= ORACLE_COST)
        && wi.is_none_or(|(_, s)| oracle_cost(s) <= ORACLE_COST);
    let oracle = cheap.then(|| {
        oracle::tensor_scatter(&cache, &cache_shape, &update, &update_shape, wi, ax, mode)
    });
    let mut out = cache.clone();
    let run = |out: &mut [T]| -> std::result::Result<(), ScatterError> {
        let plan = TensorScatterPlan::new(&cache_shape, &update_shape, wi.map(|w| w.1), ax)?;
        plan.check_write_indices(wi.map(|w| w.0), mode)?
            .apply(out, &update, Execution::SERIAL)
    };
    let result = run(&mut out);
    agree("tensor_scatter", result, &out, &cache, oracle.as_ref());
    Ok(())
}

fn by_type(u: &mut Unstructured, op: u8) -> Result<()> {
    macro_rules! each {
        ($($n:literal => $t:ty),*) => {
            match u.int_in_range(0u8..=12)? {
                $($n => match op {
                    0 => elements::<$t>(u, false),
                    1 => elements::<$t>(u, true),
                    2 => nd::<$t>(u),
                    _ => tensor_scatter::<$t>(u),
                },)*
                _ => unreachable!(),
            }
        };
    }
    each!(0 => bool, 1 => i8, 2 => i16, 3 => i32, 4 => i64, 5 => u8, 6 => u16, 7 => u32,
          8 => u64, 9 => f16, 10 => bf16, 11 => f32, 12 => f64)
}

/// One input of the `kernels` target: panics on a kernel/oracle mismatch.
pub fn run(bytes: &[u8]) {
    let mut u = Unstructured::new(bytes);
    let Ok(op) = u.int_in_range(0u8..=3) else {
        return;
    };
    // Strings are slow to clone: one in eight cases.
    let _ = if u.ratio(1u8, 8).unwrap_or(false) {
        match op {
            0 => elements::<String>(&mut u, false),
            1 => elements::<String>(&mut u, true),
            2 => nd::<String>(&mut u),
            _ => tensor_scatter::<String>(&mut u),
        }
    } else {
        by_type(&mut u, op)
    };
}

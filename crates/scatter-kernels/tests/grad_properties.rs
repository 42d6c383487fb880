//! Property tests of the gradient kernels: in f64, every gradient equals
//! the vector-Jacobian product `Σ_p grad_output[p] · ∂out[p]/∂x` of the
//! crate's own forward kernel, measured by central finite differences, for
//! every reduction × include_self, on ScatterElements and ScatterND.
//!
//! Values are distinct and spaced far beyond the step, so no difference
//! crosses a max/min kink; mul, add, mean and none are multilinear, so
//! zeros (injected for mul) are harmless. The one convention that is not a
//! derivative, `none` giving an overwritten duplicate `grad_output[p]`
//! (PyTorch's), is checked exactly instead.

use proptest::prelude::*;
use proptest::sample::select;
use scatter_kernels::{
    BlockSort, ElementsPlan, Execution, GradSpec, NdPlan, Reduction, UpdateReduction,
    scatter_elements_grad, scatter_elements_update, scatter_nd, scatter_nd_grad,
};

const H: f64 = 1e-6;

#[derive(Debug, Clone)]
struct Values {
    /// A permutation of `0..n + m`: distinct values for data ++ updates.
    order: Vec<usize>,
    /// Where mul gets a zero instead.
    zeros: Vec<bool>,
    grad_output: Vec<f64>,
    lda_coeff: f64,
}

impl Values {
    /// (data, updates) for `reduction`, spaced 4 / (n + m) apart in (-2, 2).
    fn inputs(&self, n: usize, reduction: UpdateReduction) -> (Vec<f64>, Vec<f64>) {
        let total = self.order.len() as f64;
        let all: Vec<f64> = self
            .order
            .iter()
            .zip(&self.zeros)
            .map(|(&k, &zero)| {
                if zero && reduction == Reduction::Mul {
                    0.0
                } else {
                    -2.0 + 4.0 * (k as f64 + 0.5) / total
                }
            })
            .collect();
        (all[..n].to_vec(), all[n..].to_vec())
    }
}

fn values(n: usize, m: usize) -> impl Strategy<Value = Values> {
    (
        Just((0..n + m).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(prop::bool::weighted(0.2), n + m),
        prop::collection::vec(-2.0..2.0f64, n),
        select(vec![1.0, 0.5, -3.0]),
    )
        .prop_map(|(order, zeros, grad_output, lda_coeff)| Values {
            order,
            zeros,
            grad_output,
            lda_coeff,
        })
}

/// The update positions written to each data position, in fold order,
/// from the crate's own visitor (`apply_with` on lists).
fn members(
    n: usize,
    m: usize,
    apply: impl FnOnce(&mut [Vec<usize>], &[Vec<usize>]),
) -> Vec<Vec<usize>> {
    let mut lists = vec![Vec::new(); n];
    let ids: Vec<Vec<usize>> = (0..m).map(|u| vec![u]).collect();
    apply(&mut lists, &ids);
    lists
}

/// Checks `(grad_data, grad_updates)` against central differences of
/// `forward(data, updates)`.
#[allow(clippy::too_many_arguments)]
fn check_vjp(
    data: &[f64],
    updates: &[f64],
    v: &Values,
    reduction: UpdateReduction,
    lists: &[Vec<usize>],
    forward: impl Fn(&[f64], &[f64]) -> Vec<f64>,
    grad_data: &[f64],
    grad_updates: &[f64],
) -> Result<(), TestCaseError> {
    let g = &v.grad_output;
    let f = |d: &[f64], u: &[f64]| -> f64 { forward(d, u).iter().zip(g).map(|(o, g)| o * g).sum() };
    let scale: f64 = forward(data, updates)
        .iter()
        .zip(g)
        .map(|(o, g)| (o * g).abs())
        .sum();
    let fd = |i: usize| -> f64 {
        let (mut dp, mut dm) = (data.to_vec(), data.to_vec());
        let (mut up, mut um) = (updates.to_vec(), updates.to_vec());
        if i < data.len() {
            dp[i] += H;
            dm[i] -= H;
        } else {
            up[i - data.len()] += H;
            um[i - data.len()] -= H;
        }
        v.lda_coeff * (f(&dp, &up) - f(&dm, &um)) / (2.0 * H)
    };
    let close =
        |got: f64, want: f64| (got - want).abs() <= 1e-6 * (1.0 + want.abs()) + 1e-8 * scale;
    for (i, &got) in grad_data.iter().enumerate() {
        let want = fd(i);
        prop_assert!(
            close(got, want),
            "{reduction}: grad_data[{i}] = {got}, finite difference {want}"
        );
    }
    let overwritten: Vec<(usize, usize)> = lists
        .iter()
        .enumerate()
        .flat_map(|(o, l)| l.iter().rev().skip(1).map(move |&u| (u, o)))
        .collect();
    for (u, &got) in grad_updates.iter().enumerate() {
        let want = match overwritten.iter().find(|(w, _)| *w == u) {
            Some(&(_, o)) if reduction == Reduction::None => v.lda_coeff * g[o],
            _ => fd(data.len() + u),
        };
        prop_assert!(
            close(got, want),
            "{reduction}: grad_updates[{u}] = {got}, expected {want}"
        );
    }
    Ok(())
}

const ALL: [UpdateReduction; 6] = UpdateReduction::ALL;

#[derive(Debug, Clone)]
struct ElementsCase {
    data_shape: Vec<usize>,
    indices_shape: Vec<usize>,
    axis: i64,
    indices: Vec<i64>,
    values: Values,
}

fn elements_case() -> impl Strategy<Value = ElementsCase> {
    (1..=3usize)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(1..=3usize, rank),
                0..rank,
                any::<bool>(),
            )
        })
        .prop_flat_map(|(data_shape, axis, negative)| {
            let dims: Vec<BoxedStrategy<usize>> = data_shape
                .iter()
                .enumerate()
                .map(|(i, &d)| {
                    if i == axis {
                        (0..=4usize).boxed()
                    } else {
                        (0..=d).boxed()
                    }
                })
                .collect();
            let rank = data_shape.len() as i64;
            let axis_form = if negative {
                axis as i64 - rank
            } else {
                axis as i64
            };
            (Just(data_shape), dims, Just(axis), Just(axis_form))
        })
        .prop_flat_map(|(data_shape, indices_shape, axis, axis_form)| {
            let d = data_shape[axis] as i64;
            let m: usize = indices_shape.iter().product();
            let n: usize = data_shape.iter().product();
            (
                Just(data_shape),
                Just(indices_shape),
                Just(axis_form),
                prop::collection::vec(-d..d, m),
                values(n, m),
            )
        })
        .prop_map(
            |(data_shape, indices_shape, axis, indices, values)| ElementsCase {
                data_shape,
                indices_shape,
                axis,
                indices,
                values,
            },
        )
}

#[derive(Debug, Clone)]
struct NdCase {
    data_shape: Vec<usize>,
    indices_shape: Vec<usize>,
    updates_shape: Vec<usize>,
    indices: Vec<i64>,
    values: Values,
}

fn nd_case() -> impl Strategy<Value = NdCase> {
    (1..=3usize)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(1..=3usize, rank),
                0..=rank,
                prop::collection::vec(0..=3usize, 1..=2),
            )
        })
        .prop_flat_map(|(data_shape, k, batch)| {
            let tuples: usize = batch.iter().product();
            let components: Vec<std::ops::Range<i64>> = (0..tuples)
                .flat_map(|_| data_shape[..k].iter().map(|&d| -(d as i64)..d as i64))
                .collect();
            let mut indices_shape = batch.clone();
            indices_shape.push(k);
            let updates_shape: Vec<usize> = batch.iter().chain(&data_shape[k..]).copied().collect();
            let n: usize = data_shape.iter().product();
            let m: usize = updates_shape.iter().product();
            (
                Just(data_shape),
                Just(indices_shape),
                Just(updates_shape),
                components,
                values(n, m),
            )
        })
        .prop_map(
            |(data_shape, indices_shape, updates_shape, indices, values)| NdCase {
                data_shape,
                indices_shape,
                updates_shape,
                indices,
                values,
            },
        )
}

fn check_elements(c: &ElementsCase) -> Result<(), TestCaseError> {
    let n: usize = c.data_shape.iter().product();
    let m: usize = c.indices_shape.iter().product();
    let plan =
        ElementsPlan::new(&c.data_shape, &c.indices_shape, &c.indices_shape, c.axis).unwrap();
    let checked = plan.check_indices(&c.indices, Execution::SERIAL).unwrap();
    let lists = members(n, m, |d, u| {
        checked.apply_with(d, u, |d, u| d.extend(u)).unwrap()
    });
    for reduction in ALL {
        for include_self in [true, false] {
            let (data, updates) = c.values.inputs(n, reduction);
            let (mut gd, mut gu) = (vec![f64::NAN; n], vec![f64::NAN; m]);
            let spec = GradSpec {
                reduction,
                include_self,
            };
            scatter_elements_grad(
                &data,
                &c.data_shape,
                &c.indices,
                &c.indices_shape,
                &updates,
                c.axis,
                &c.values.grad_output,
                spec,
                c.values.lda_coeff,
                &mut gd,
                &mut gu,
            )
            .unwrap();
            let forward = |d: &[f64], u: &[f64]| {
                let mut out = d.to_vec();
                scatter_elements_update(
                    &mut out,
                    &c.data_shape,
                    &c.indices,
                    &c.indices_shape,
                    u,
                    c.axis,
                    reduction,
                    include_self,
                )
                .unwrap();
                out
            };
            check_vjp(
                &data, &updates, &c.values, reduction, &lists, forward, &gd, &gu,
            )
            .map_err(|e| TestCaseError::fail(format!("include_self {include_self}: {e}")))?;
        }
    }
    Ok(())
}

fn check_nd(c: &NdCase) -> Result<(), TestCaseError> {
    let n: usize = c.data_shape.iter().product();
    let m: usize = c.updates_shape.iter().product();
    let plan = NdPlan::new(&c.data_shape, &c.indices_shape, &c.updates_shape).unwrap();
    let checked = plan
        .check_indices(&c.indices[..], Execution::SERIAL, BlockSort::Off)
        .unwrap();
    let lists = members(n, m, |d, u| {
        checked.apply_with(d, u, |d, u| d.extend(u)).unwrap()
    });
    for reduction in Reduction::ALL {
        for include_self in [true, false] {
            let (data, updates) = c.values.inputs(n, reduction.into());
            let (mut gd, mut gu) = (vec![f64::NAN; n], vec![f64::NAN; m]);
            let spec = GradSpec {
                reduction: reduction.into(),
                include_self,
            };
            scatter_nd_grad(
                &data,
                &c.data_shape,
                &c.indices,
                &c.indices_shape,
                &updates,
                &c.updates_shape,
                &c.values.grad_output,
                spec,
                c.values.lda_coeff,
                &mut gd,
                &mut gu,
            )
            .unwrap();
            // ScatterND has no include_self: without it, written positions
            // start from the reduction's identity instead of the data.
            let identity = match reduction {
                Reduction::Mul => 1.0,
                Reduction::Max => f64::NEG_INFINITY,
                Reduction::Min => f64::INFINITY,
                _ => 0.0,
            };
            let forward = |d: &[f64], u: &[f64]| {
                let mut out = d.to_vec();
                if !include_self {
                    for (o, l) in out.iter_mut().zip(&lists) {
                        if !l.is_empty() {
                            *o = identity;
                        }
                    }
                }
                scatter_nd(
                    &mut out,
                    &c.data_shape,
                    &c.indices,
                    &c.indices_shape,
                    u,
                    &c.updates_shape,
                    reduction,
                )
                .unwrap();
                out
            };
            check_vjp(
                &data,
                &updates,
                &c.values,
                reduction.into(),
                &lists,
                forward,
                &gd,
                &gu,
            )
            .map_err(|e| TestCaseError::fail(format!("include_self {include_self}: {e}")))?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn scatter_elements_grad_is_the_finite_difference_vjp_of_the_forward(c in elements_case()) {
        check_elements(&c)?;
    }

    #[test]
    fn scatter_nd_grad_is_the_finite_difference_vjp_of_the_forward(c in nd_case()) {
        check_nd(&c)?;
    }

    #[test]
    fn f32_grad_agrees_with_f64_within_f32_rounding(c in elements_case()) {
        let n: usize = c.data_shape.iter().product();
        let m: usize = c.indices_shape.iter().product();
        for reduction in ALL {
            for include_self in [true, false] {
                let spec = GradSpec { reduction, include_self };
                let (data, updates) = c.values.inputs(n, reduction);
                let run64 = {
                    let (mut gd, mut gu) = (vec![0.0; n], vec![0.0; m]);
                    scatter_elements_grad(
                        &data, &c.data_shape, &c.indices, &c.indices_shape, &updates, c.axis,
                        &c.values.grad_output, spec, c.values.lda_coeff, &mut gd, &mut gu,
                    ).unwrap();
                    gd.into_iter().chain(gu).collect::<Vec<f64>>()
                };
                let f = |x: &[f64]| x.iter().map(|&x| x as f32).collect::<Vec<f32>>();
                let (mut gd, mut gu) = (vec![0.0f32; n], vec![0.0f32; m]);
                scatter_elements_grad(
                    &f(&data), &c.data_shape, &c.indices, &c.indices_shape, &f(&updates), c.axis,
                    &f(&c.values.grad_output), spec, c.values.lda_coeff as f32, &mut gd, &mut gu,
                ).unwrap();
                for (i, (a, b)) in gd.iter().chain(&gu).zip(&run64).enumerate() {
                    prop_assert!(
                        (*a as f64 - b).abs() <= 1e-4 * (1.0 + b.abs()),
                        "{reduction} include_self {include_self}: [{i}] f32 {a} vs f64 {b}"
                    );
                }
            }
        }
    }
}

/// A buffer length near `len`: often right, sometimes one off either way.
fn len_near(len: usize) -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(len), 1 => Just(len + 1), 1 => Just(len.saturating_sub(1))]
}

proptest! {
    #[test]
    fn grad_never_panics_and_never_writes_before_an_error(
        (data_shape, indices_shape, updates_shape, indices, lens) in
            (prop::collection::vec(0..=3usize, 0..=3), prop::collection::vec(0..=3usize, 0..=3))
                .prop_flat_map(|(data_shape, indices_shape)| {
                    let n: usize = data_shape.iter().product();
                    let i: usize = indices_shape.iter().product();
                    (
                        Just(data_shape),
                        Just(indices_shape.clone()),
                        prop_oneof![Just(indices_shape), prop::collection::vec(0..=3usize, 0..=3)],
                        len_near(i).prop_flat_map(|l| prop::collection::vec(-5i64..5, l)),
                        (len_near(n), len_near(n), len_near(n)),
                    )
                })
                .prop_flat_map(|(d, i, u, idx, (nd, ngo, ngd))| {
                    let m: usize = u.iter().product();
                    (Just(d), Just(i), Just(u), Just(idx), (Just(nd), Just(ngo), Just(ngd), len_near(m), len_near(m)))
                }),
        reduction in select(UpdateReduction::ALL.to_vec()),
        include_self in any::<bool>(),
        axis in -4i64..4,
    ) {
        let (nd, ngo, ngd, nu, ngu) = lens;
        let spec = GradSpec { reduction, include_self };
        let (data, updates, go) = (vec![1.5f64; nd], vec![0.5f64; nu], vec![1.0f64; ngo]);
        let (mut gd, mut gu) = (vec![7.0f64; ngd], vec![7.0f64; ngu]);
        let elements = scatter_elements_grad(
            &data, &data_shape, &indices, &indices_shape, &updates, axis, &go, spec, 1.0, &mut gd, &mut gu,
        );
        if elements.is_err() {
            prop_assert!(gd.iter().chain(&gu).all(|&x| x == 7.0), "written before {elements:?}");
        }
        let (mut gd, mut gu) = (vec![7.0f64; ngd], vec![7.0f64; ngu]);
        let nd_result = scatter_nd_grad(
            &data, &data_shape, &indices, &indices_shape, &updates, &updates_shape, &go, spec, 1.0,
            &mut gd, &mut gu,
        );
        if nd_result.is_err() {
            prop_assert!(gd.iter().chain(&gu).all(|&x| x == 7.0), "written before {nd_result:?}");
        }
    }
}

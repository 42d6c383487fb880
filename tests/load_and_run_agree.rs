//! One mistake, one message: a shape mistake the facts already show at load
//! (`output_facts`, with a symbolic dim) reads as the run's message for the
//! same mistake on concrete shapes, the symbol shown where the run shows its
//! value. Both come from the kernels' rules (`ElementsPlan::check_shapes`
//! and the like), one family at a time.

use tract_onnx_scatter::ops::scatter_grad::LdaCoeff;
use tract_onnx_scatter::ops::{
    GradKind, ScatterElements, ScatterElementsUpdate, ScatterGrad, ScatterNd, TensorScatter,
};
use tract_onnx_scatter::opset::ScatterOp;
use tract_onnx_scatter::scatter_kernels::{GradSpec, Reduction, TensorScatterMode};
use tract_onnx_scatter::site::NodeSite;
use tract_onnx_scatter::tract_core::internal::*;
use tract_onnx_scatter::tract_core::num_traits;

/// A dim of a fact: a number, or the symbol `N` (or `B`).
enum D {
    V(usize),
    S(&'static str),
}
use D::{S, V};

fn fact(scope: &SymbolScope, dt: DatumType, dims: &[D]) -> TypedFact {
    let dims: TVec<TDim> = dims
        .iter()
        .map(|d| match d {
            V(v) => TDim::Val(*v as i64),
            S(s) => TDim::Sym(scope.sym(s)),
        })
        .collect();
    dt.fact(dims)
}

/// The message typing gives on `facts` (no context: the op's own error).
fn load_message(op: &dyn TypedOp, facts: &[TypedFact]) -> String {
    let facts: TVec<&TypedFact> = facts.iter().collect();
    match op.output_facts(&facts) {
        Ok(out) => panic!("typed to {out:?}, expected an error at load"),
        Err(e) => format!("{e:#}"),
    }
}

/// The message running gives on `inputs`.
fn run_message(op: &dyn EvalOp, inputs: TVec<TValue>) -> String {
    match op.eval(&EvalContext::out_of_plan(), inputs) {
        Ok(out) => panic!("ran to {out:?}, expected an error at run"),
        Err(e) => format!("{e:#}"),
    }
}

fn zeros<T: Datum + num_traits::Zero>(shape: &[usize]) -> TValue {
    Tensor::zero::<T>(shape).unwrap().into_tvalue()
}

/// `load`, each symbolic shape replaced by the run's, is `run`; and `load`
/// shows the symbolic shapes.
fn assert_same_but_symbols(load: &str, run: &str, shapes: &[(&str, &str)]) {
    let mut concrete = load.to_string();
    for (symbolic, value) in shapes {
        assert!(
            load.contains(symbolic),
            "load message does not show {symbolic}: {load}"
        );
        concrete = concrete.replace(symbolic, value);
    }
    assert_eq!(concrete, run, "load: {load}");
}

fn site(op: ScatterOp, opset: Option<i64>) -> NodeSite {
    NodeSite::new(op, "scatter_node", opset)
}

#[test]
fn scatter_elements_indices_of_another_rank_than_symbolic_data_read_alike_at_load_and_at_run() {
    let scope = SymbolScope::default();
    let op = ScatterElements::onnx(
        site(ScatterOp::ScatterElements, Some(13)),
        0,
        Reduction::None,
    );
    let load = load_message(
        &op,
        &[
            fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
            fact(&scope, i64::datum_type(), &[V(3)]),
            fact(&scope, f32::datum_type(), &[V(3)]),
        ],
    );
    let run = run_message(
        &op,
        tvec![
            zeros::<f32>(&[4, 3]),
            zeros::<i64>(&[3]),
            zeros::<f32>(&[3])
        ],
    );
    assert!(
        load.contains("rank: indices has rank 1, expected 2"),
        "{load}"
    );
    assert_same_but_symbols(&load, &run, &[("[N, 3]", "[4, 3]")]);
}

#[test]
fn scatter_elements_indices_longer_than_symbolic_data_off_the_axis_read_alike_at_load_and_at_run() {
    let scope = SymbolScope::default();
    let op = ScatterElements::onnx(
        site(ScatterOp::ScatterElements, Some(13)),
        1,
        Reduction::None,
    );
    let load = load_message(
        &op,
        &[
            fact(&scope, f32::datum_type(), &[V(3), S("N")]),
            fact(&scope, i64::datum_type(), &[V(4), V(2)]),
            fact(&scope, f32::datum_type(), &[V(4), V(2)]),
        ],
    );
    let run = run_message(
        &op,
        tvec![
            zeros::<f32>(&[3, 5]),
            zeros::<i64>(&[4, 2]),
            zeros::<f32>(&[4, 2])
        ],
    );
    assert!(
        load.contains("shape: indices has shape [4, 2], expected dim 0 <= 3"),
        "{load}"
    );
    assert_same_but_symbols(&load, &run, &[("[3, N]", "[3, 5]")]);
}

#[test]
fn scatter_nd_updates_unlike_indices_prefix_and_symbolic_data_suffix_read_alike_at_load_and_at_run()
{
    let scope = SymbolScope::default();
    let op = ScatterNd::onnx(site(ScatterOp::ScatterNd, Some(18)), Reduction::None);
    let load = load_message(
        &op,
        &[
            fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
            fact(&scope, i64::datum_type(), &[V(2), V(1)]),
            fact(&scope, f32::datum_type(), &[V(2), V(2)]),
        ],
    );
    let run = run_message(
        &op,
        tvec![
            zeros::<f32>(&[4, 3]),
            zeros::<i64>(&[2, 1]),
            zeros::<f32>(&[2, 2])
        ],
    );
    assert!(
        load.contains("shape: updates has shape [2, 2], expected [2, 3]"),
        "{load}"
    );
    assert_same_but_symbols(&load, &run, &[("[N, 3]", "[4, 3]")]);
}

#[test]
fn scatter_nd_index_tuples_longer_than_symbolic_data_rank_read_alike_at_load_and_at_run() {
    let scope = SymbolScope::default();
    let op = ScatterNd::onnx(site(ScatterOp::ScatterNd, Some(18)), Reduction::None);
    let load = load_message(
        &op,
        &[
            fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
            fact(&scope, i64::datum_type(), &[V(2), V(3)]),
            fact(&scope, f32::datum_type(), &[V(2)]),
        ],
    );
    let run = run_message(
        &op,
        tvec![
            zeros::<f32>(&[4, 3]),
            zeros::<i64>(&[2, 3]),
            zeros::<f32>(&[2])
        ],
    );
    assert!(load.contains("has tuples of length 3"), "{load}");
    assert_same_but_symbols(&load, &run, &[("[N, 3]", "[4, 3]")]);
}

#[test]
fn tensor_scatter_update_longer_than_a_symbolic_batch_cache_reads_alike_at_load_and_at_run() {
    let scope = SymbolScope::default();
    let op = TensorScatter {
        site: site(ScatterOp::TensorScatter, Some(24)),
        axis: 2,
        mode: TensorScatterMode::Linear,
        output_pool: None,
    };
    let load = load_message(
        &op,
        &[
            fact(&scope, f32::datum_type(), &[S("B"), V(2), V(8), V(4)]),
            fact(&scope, f32::datum_type(), &[S("B"), V(2), V(9), V(4)]),
        ],
    );
    let run = run_message(
        &op,
        tvec![zeros::<f32>(&[1, 2, 8, 4]), zeros::<f32>(&[1, 2, 9, 4])],
    );
    assert!(load.contains("shape: update has shape"), "{load}");
    assert_same_but_symbols(
        &load,
        &run,
        &[
            ("[B, 2, 8, 4]", "[1, 2, 8, 4]"),
            ("[B, 2, 9, 4]", "[1, 2, 9, 4]"),
        ],
    );
}

#[test]
fn scatter_elements_update_indices_of_another_rank_than_symbolic_data_read_alike_at_load_and_at_run()
 {
    let scope = SymbolScope::default();
    let op = ScatterElementsUpdate {
        site: site(ScatterOp::ScatterElementsUpdate, None),
        reduction: Reduction::None.into(),
        use_init_val: true,
    };
    // The axis is an input the facts do not know: the rules needing it wait.
    let load = load_message(
        &op,
        &[
            fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
            fact(&scope, i64::datum_type(), &[V(3)]),
            fact(&scope, f32::datum_type(), &[V(3)]),
            fact(&scope, i64::datum_type(), &[]),
        ],
    );
    let run = run_message(
        &op,
        tvec![
            zeros::<f32>(&[4, 3]),
            zeros::<i64>(&[3]),
            zeros::<f32>(&[3]),
            tensor0(0i64).into_tvalue()
        ],
    );
    assert!(
        load.contains("rank: indices has rank 1, expected 2"),
        "{load}"
    );
    assert_same_but_symbols(&load, &run, &[("[N, 3]", "[4, 3]")]);
}

#[test]
fn scatter_grad_output_unlike_symbolic_data_reads_alike_at_load_and_at_run() {
    let scope = SymbolScope::default();
    for (op, kind, indices) in [
        (
            ScatterOp::ScatterElementsGrad,
            GradKind::Elements { axis: 0 },
            [2, 3],
        ),
        (ScatterOp::ScatterNdGrad, GradKind::Nd, [2, 1]),
    ] {
        let op = ScatterGrad {
            site: site(op, None),
            kind,
            spec: GradSpec::onnx(Reduction::Add),
            lda_coeff: LdaCoeff(1.0),
        };
        let load = load_message(
            &op,
            &[
                fact(&scope, f32::datum_type(), &[S("N"), V(3)]),
                fact(&scope, i64::datum_type(), &[V(indices[0]), V(indices[1])]),
                fact(&scope, f32::datum_type(), &[V(2), V(3)]),
                fact(&scope, f32::datum_type(), &[S("N"), V(2)]),
            ],
        );
        let run = run_message(
            &op,
            tvec![
                zeros::<f32>(&[4, 3]),
                zeros::<i64>(&indices),
                zeros::<f32>(&[2, 3]),
                zeros::<f32>(&[4, 2])
            ],
        );
        assert!(load.contains("shape: grad_output has shape"), "{load}");
        assert_same_but_symbols(&load, &run, &[("[N, 2]", "[4, 2]"), ("[N, 3]", "[4, 3]")]);
    }
}

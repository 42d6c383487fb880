//! Symbolic shapes: models with `dim_param` inputs type with their symbols
//! kept, and validation that needs concrete values waits for them.

use crate::graph;

use graph::{D, Graph, attr_int, tensor};
use tract_onnx_scatter::ops::{ScatterElements, ScatterNd};
use tract_onnx_scatter::tract_onnx::prelude::*;

fn sym(model: &TypedModel, name: &str) -> TDim {
    model.symbols.sym(name).to_dim()
}

fn output_shape(model: &TypedModel) -> TVec<TDim> {
    model.output_fact(0).unwrap().shape.to_tvec()
}

/// data [N, 4], indices/updates [N, 2], ScatterElements along axis 1.
fn elements_graph() -> Graph {
    Graph::new(18)
        .input("data", DatumType::F32, &[D::S("N"), D::N(4)])
        .input("indices", DatumType::I64, &[D::S("N"), D::N(2)])
        .input("updates", DatumType::F32, &[D::S("N"), D::N(2)])
        .node(
            "ScatterElements",
            &["data", "indices", "updates"],
            &["out"],
            vec![attr_int("axis", 1)],
        )
        .output("out", DatumType::F32)
}

#[test]
fn scatter_elements_keeps_n_and_runs_for_two_sizes() {
    for model in [
        elements_graph().typed().unwrap(),
        elements_graph().optimized().unwrap(),
    ] {
        assert_eq!(output_shape(&model), tvec![sym(&model, "N"), 4.to_dim()]);
        assert!(model.nodes().iter().any(|n| n.op_is::<ScatterElements>()));
        for n in [2usize, 5] {
            let data: Vec<i64> = (0..n as i64 * 4).collect();
            let indices: Vec<i64> = (0..n as i64).flat_map(|i| [i % 4, -1 - (i % 2)]).collect();
            let updates: Vec<i64> = (0..n as i64 * 2).map(|i| 100 + i).collect();
            let mut expected = data.clone();
            for row in 0..n {
                for j in 0..2 {
                    let ix = indices[row * 2 + j].rem_euclid(4) as usize;
                    expected[row * 4 + ix] = updates[row * 2 + j];
                }
            }
            let out = graph::run(
                &model,
                &[
                    tensor(DatumType::F32, &[n, 4], &data),
                    tensor(DatumType::I64, &[n, 2], &indices),
                    tensor(DatumType::F32, &[n, 2], &updates),
                ],
            )
            .unwrap();
            assert_eq!(
                *out[0],
                tensor(DatumType::F32, &[n, 4], &expected),
                "N = {n}"
            );
        }
    }
}

/// A KV cache [B, S, 8] updated at one position per batch: ScatterND with
/// indices [B, 1, 2] and updates [B, 1, 8].
fn kv_graph() -> Graph {
    Graph::new(18)
        .input("cache", DatumType::F32, &[D::S("B"), D::S("S"), D::N(8)])
        .input("indices", DatumType::I64, &[D::S("B"), D::N(1), D::N(2)])
        .input("updates", DatumType::F32, &[D::S("B"), D::N(1), D::N(8)])
        .node(
            "ScatterND",
            &["cache", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32)
}

#[test]
fn kv_cache_scatter_nd_keeps_b_and_s_and_runs_for_two_sizes() {
    for model in [kv_graph().typed().unwrap(), kv_graph().optimized().unwrap()] {
        assert_eq!(
            output_shape(&model),
            tvec![sym(&model, "B"), sym(&model, "S"), 8.to_dim()]
        );
        assert!(model.nodes().iter().any(|n| n.op_is::<ScatterNd>()));
        for (b, s) in [(1usize, 4usize), (3, 6)] {
            let cache: Vec<i64> = (0..(b * s * 8) as i64).collect();
            let indices: Vec<i64> = (0..b as i64)
                .flat_map(|i| [i, (i + 1) % s as i64])
                .collect();
            let updates: Vec<i64> = (0..(b * 8) as i64).map(|i| -1 - i).collect();
            let mut expected = cache.clone();
            for batch in 0..b {
                let pos = indices[batch * 2 + 1] as usize;
                for c in 0..8 {
                    expected[(batch * s + pos) * 8 + c] = updates[batch * 8 + c];
                }
            }
            let out = graph::run(
                &model,
                &[
                    tensor(DatumType::F32, &[b, s, 8], &cache),
                    tensor(DatumType::I64, &[b, 1, 2], &indices),
                    tensor(DatumType::F32, &[b, 1, 8], &updates),
                ],
            )
            .unwrap();
            assert_eq!(
                *out[0],
                tensor(DatumType::F32, &[b, s, 8], &expected),
                "B = {b}, S = {s}"
            );
        }
    }
}

/// `x [N, 12]` reshaped to `Shape(t)` with dim 2 set to `new_last`: the
/// new shape is shape arithmetic (`Shape -> ScatterND -> Reshape`).
fn reshape_graph(gathered: bool) -> Graph {
    let graph = Graph::new(18)
        .input("x", DatumType::F32, &[D::S("N"), D::N(12)])
        .input("t", DatumType::F32, &[D::S("N"), D::N(3), D::N(5)])
        .node("Shape", &["t"], &["t_shape"], vec![])
        .init("index", &tensor(DatumType::I64, &[1, 1], &[2]));
    let graph = if gathered {
        // The new last dim is the second dim of another input's shape.
        graph
            .input("u", DatumType::F32, &[D::N(7), D::N(4)])
            .node("Shape", &["u"], &["u_shape"], vec![])
            .init("one", &tensor(DatumType::I64, &[1], &[1]))
            .node(
                "Gather",
                &["u_shape", "one"],
                &["new_last"],
                vec![attr_int("axis", 0)],
            )
    } else {
        graph.init("new_last", &tensor(DatumType::I64, &[1], &[-1]))
    };
    graph
        .node(
            "ScatterND",
            &["t_shape", "index", "new_last"],
            &["new_shape"],
            vec![],
        )
        .node("Reshape", &["x", "new_shape"], &["y"], vec![])
        .output("y", DatumType::F32)
}

#[test]
fn shape_arithmetic_through_scatter_nd_keeps_symbols() {
    for gathered in [false, true] {
        for model in [
            reshape_graph(gathered).typed().unwrap(),
            reshape_graph(gathered).optimized().unwrap(),
        ] {
            let n = sym(&model, "N");
            assert_eq!(
                output_shape(&model),
                tvec![n, 3.to_dim(), 4.to_dim()],
                "gathered: {gathered}\n{model}"
            );
            for size in [2usize, 3] {
                let x: Vec<i64> = (0..(size * 12) as i64).collect();
                let mut inputs = vec![
                    tensor(DatumType::F32, &[size, 12], &x),
                    Tensor::zero::<f32>(&[size, 3, 5]).unwrap(),
                ];
                if gathered {
                    inputs.push(Tensor::zero::<f32>(&[7, 4]).unwrap());
                }
                let out = graph::run(&model, &inputs).unwrap();
                assert_eq!(
                    *out[0],
                    tensor(DatumType::F32, &[size, 3, 4], &x),
                    "gathered: {gathered}, N = {size}"
                );
            }
        }
    }
}

/// Checks that need concrete shapes wait for them: a ScatterND whose
/// updates dims are symbols unrelated to data's types, and fails at run
/// time only if the sizes turn out wrong.
#[test]
fn validation_waits_for_concrete_values() {
    let graph = Graph::new(18)
        .input("data", DatumType::F32, &[D::S("N"), D::N(3)])
        .input("indices", DatumType::I64, &[D::S("M"), D::N(1)])
        .input("updates", DatumType::F32, &[D::S("K"), D::N(3)])
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32);
    let model = graph.optimized().unwrap();
    let ok = graph::run(
        &model,
        &[
            tensor(DatumType::F32, &[2, 3], &[0, 0, 0, 0, 0, 0]),
            tensor(DatumType::I64, &[1, 1], &[1]),
            tensor(DatumType::F32, &[1, 3], &[1, 2, 3]),
        ],
    )
    .unwrap();
    assert_eq!(*ok[0], tensor(DatumType::F32, &[2, 3], &[0, 0, 0, 1, 2, 3]));
    let err = graph::run(
        &model,
        &[
            tensor(DatumType::F32, &[2, 3], &[0, 0, 0, 0, 0, 0]),
            tensor(DatumType::I64, &[1, 1], &[1]),
            tensor(DatumType::F32, &[2, 3], &[1, 2, 3, 4, 5, 6]),
        ],
    )
    .expect_err("mismatched updates at run time");
    assert!(
        format!("{err:?}").contains("ScatterND node 'out'"),
        "{err:?}"
    );
}

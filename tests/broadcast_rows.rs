//! GNN message passing as exporters write it, `Unsqueeze`/`Reshape` of a
//! row index then `Expand` along the features into a ScatterElements on
//! axis 0, runs as a row scatter (a ScatterND on `[E, 1]` indices): the
//! optimized plan broadcasts no index, and its outputs and errors are
//! those of the ScatterElements on the broadcast index, bit for bit.

use crate::graph;

use graph::{D, Graph, attr_int, attr_string};
use tract_onnx_scatter::ops::{ScatterElements, ScatterNd};
use tract_onnx_scatter::tract_core::ops::array::MultiBroadcastTo;
use tract_onnx_scatter::tract_onnx::prelude::*;

const REDUCTIONS: [&str; 5] = ["none", "add", "mul", "max", "min"];

fn random(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let values: Vec<f32> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Around 1 so that `mul` neither vanishes nor overflows.
            1.0 + ((x >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.7
        })
        .collect();
    tensor1(&values).into_shape(shape).unwrap()
}

/// Row indices in `[-nodes, nodes - 1]`, negative ones included, every
/// node hit several times when `edges > nodes`.
fn destinations(edges: usize, nodes: usize) -> Tensor {
    let n = nodes as i64;
    let values: Vec<i64> = (0..edges as i64)
        .map(|e| (e * 7 + 3) % (2 * n) - n)
        .collect();
    tensor1(&values)
}

/// How the row index becomes `[E, 1, …, 1]`.
#[derive(Clone, Copy, Debug)]
enum Rows {
    /// `Unsqueeze(idx, [1, …])`: `scatter_add_(0, idx.unsqueeze(1).expand_as(msg), msg)`.
    Unsqueeze,
    /// `Reshape(idx, [-1, 1, …])`: PyTorch Geometric's `idx.view(-1, 1)`.
    Reshape,
}

/// How `Expand` gets its shape.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// A constant, as dynamo writes it for static shapes.
    Constant,
    /// `Shape(msg)`, as TorchScript writes `expand_as`.
    ShapeOfUpdates,
}

/// `ScatterElements(data, Expand(rows(idx)), msg)` on axis 0; `features`
/// are the dims after the row axis; `edges` a number or a symbol.
fn gnn(
    rows: Rows,
    target: Target,
    edges: D,
    nodes: usize,
    features: &[usize],
    reduction: &str,
) -> Graph {
    let dt = DatumType::F32;
    let rank = 1 + features.len();
    let dims = |first: D| {
        let mut d = vec![first];
        d.extend(features.iter().map(|&f| D::N(f as i64)));
        d
    };
    let mut g = Graph::new(18)
        .input("data", dt, &dims(D::N(nodes as i64)))
        .input("idx", DatumType::I64, std::slice::from_ref(&edges))
        .input("msg", dt, &dims(edges.clone()));
    g = match rows {
        Rows::Unsqueeze => {
            let axes: Vec<i64> = (1..rank as i64).collect();
            g.init("axes", &tensor1(&axes))
                .node("Unsqueeze", &["idx", "axes"], &["rows"], vec![])
        }
        Rows::Reshape => {
            let mut shape = vec![-1i64];
            shape.extend(std::iter::repeat_n(1, features.len()));
            g.init("rows_shape", &tensor1(&shape)).node(
                "Reshape",
                &["idx", "rows_shape"],
                &["rows"],
                vec![],
            )
        }
    };
    g = match (target, &edges) {
        (Target::Constant, D::N(e)) => {
            let mut shape = vec![*e];
            shape.extend(features.iter().map(|&f| f as i64));
            g.init("target", &tensor1(&shape))
        }
        (Target::Constant, D::S(_)) => panic!("a constant target needs a number of edges"),
        (Target::ShapeOfUpdates, _) => g.node("Shape", &["msg"], &["target"], vec![]),
    };
    let mut attrs = vec![attr_int("axis", 0)];
    if reduction != "none" {
        attrs.push(attr_string("reduction", reduction));
    }
    g.node("Expand", &["rows", "target"], &["index"], vec![])
        .node(
            "ScatterElements",
            &["data", "index", "msg"],
            &["out"],
            attrs,
        )
        .output("out", dt)
}

fn run(model: &TypedModel, inputs: &[Tensor]) -> TractResult<Tensor> {
    let plan = model.clone().into_runnable()?;
    let out = plan.run(inputs.iter().cloned().map(|t| t.into_tvalue()).collect())?;
    Ok(out[0].clone().into_tensor())
}

fn bits(t: &Tensor) -> Vec<u32> {
    let view = t.try_as_plain_ram().unwrap();
    view.as_slice::<f32>()
        .unwrap()
        .iter()
        .map(|x| x.to_bits())
        .collect()
}

fn has<O: tract_onnx_scatter::tract_core::ops::Op>(model: &TypedModel) -> bool {
    model.nodes().iter().any(|n| n.op_is::<O>())
}

/// The optimized plan runs a ScatterND and broadcasts nothing; the typed,
/// undecluttered model still runs the ScatterElements on the broadcast
/// index: the reference.
fn rewritten_and_reference(g: &Graph) -> (TypedModel, TypedModel) {
    let reference = g.typed().unwrap();
    assert!(has::<ScatterElements>(&reference) && has::<MultiBroadcastTo>(&reference));
    let optimized = g.optimized().unwrap();
    assert!(has::<ScatterNd>(&optimized), "{optimized}");
    assert!(!has::<ScatterElements>(&optimized), "{optimized}");
    assert!(!has::<MultiBroadcastTo>(&optimized), "{optimized}");
    (optimized, reference)
}

#[test]
fn every_reduction_with_duplicate_and_negative_rows_matches_the_broadcast_index_bit_for_bit() {
    let (edges, nodes, features) = (300, 23, [16]);
    let inputs = [
        random(&[nodes, 16], 1),
        destinations(edges, nodes),
        random(&[edges, 16], 2),
    ];
    for reduction in REDUCTIONS {
        for (rows, target) in [
            (Rows::Unsqueeze, Target::Constant),
            (Rows::Unsqueeze, Target::ShapeOfUpdates),
            (Rows::Reshape, Target::ShapeOfUpdates),
        ] {
            let g = gnn(
                rows,
                target,
                D::N(edges as i64),
                nodes,
                &features,
                reduction,
            );
            let (optimized, reference) = rewritten_and_reference(&g);
            let want = run(&reference, &inputs).unwrap();
            let got = run(&optimized, &inputs).unwrap();
            assert_eq!(bits(&got), bits(&want), "{reduction} {rows:?} {target:?}");
        }
    }
}

#[test]
fn rank_three_messages_scatter_whole_rows_too() {
    // PaiNN's vector features: [E, 3, F] messages into [N, 3, F].
    let (edges, nodes) = (90, 11);
    let inputs = [
        random(&[nodes, 3, 8], 3),
        destinations(edges, nodes),
        random(&[edges, 3, 8], 4),
    ];
    for reduction in REDUCTIONS {
        for rows in [Rows::Unsqueeze, Rows::Reshape] {
            let g = gnn(
                rows,
                Target::ShapeOfUpdates,
                D::N(edges as i64),
                nodes,
                &[3, 8],
                reduction,
            );
            let (optimized, reference) = rewritten_and_reference(&g);
            let want = run(&reference, &inputs).unwrap();
            let got = run(&optimized, &inputs).unwrap();
            assert_eq!(bits(&got), bits(&want), "{reduction} {rows:?}");
        }
    }
}

#[test]
fn a_symbolic_edge_count_is_rewritten_once_and_runs_at_any_count() {
    let g = gnn(
        Rows::Unsqueeze,
        Target::ShapeOfUpdates,
        D::S("E"),
        nodes(),
        &[32],
        "add",
    );
    let (optimized, reference) = rewritten_and_reference(&g);
    for edges in [0, 1, 57, 1000] {
        let inputs = [
            random(&[nodes(), 32], 5),
            destinations(edges, nodes()),
            random(&[edges, 32], 6),
        ];
        let want = run(&reference, &inputs).unwrap();
        let got = run(&optimized, &inputs).unwrap();
        assert_eq!(bits(&got), bits(&want), "E = {edges}");
    }
}

fn nodes() -> usize {
    17
}

/// The error of `model` on `inputs`, its whole chain.
fn error(model: &TypedModel, inputs: &[Tensor]) -> String {
    format!("{:#}", run(model, inputs).unwrap_err())
}

#[test]
fn an_index_out_of_bounds_reads_as_the_scatter_elements_reports_it() {
    for (features, position) in [(&[4usize][..], "[5, 0]"), (&[2, 3][..], "[5, 0, 0]")] {
        let g = gnn(
            Rows::Unsqueeze,
            Target::ShapeOfUpdates,
            D::N(9),
            6,
            features,
            "add",
        );
        let (optimized, reference) = rewritten_and_reference(&g);
        let mut data_shape = vec![6];
        data_shape.extend(features);
        let mut msg_shape = vec![9];
        msg_shape.extend(features);
        for bad in [6i64, -7, i64::MAX, i64::MIN] {
            let mut idx = vec![0i64, 1, -1, 5, -6, bad, 2, bad, 3];
            idx[7] = 0;
            let inputs = [random(&data_shape, 7), tensor1(&idx), random(&msg_shape, 8)];
            let got = error(&optimized, &inputs);
            let want = error(&reference, &inputs);
            let reason = want.rsplit(": ").next().unwrap().to_string();
            assert!(
                got.contains(&format!("ScatterElements node 'out' (opset 18): indices{position} = {bad} is out of bounds for data axis 0 of size 6 (valid range [-6, 5])")),
                "{got}"
            );
            assert!(
                got.ends_with(&reason),
                "optimized: {got}\nreference: {want}"
            );
        }
    }
}

#[test]
fn scatters_that_are_not_whole_row_broadcasts_stay_scatter_elements() {
    let dt = DatumType::F32;
    let scatter = |g: Graph, index: &str| {
        g.node(
            "ScatterElements",
            &["data", index, "msg"],
            &["out"],
            vec![attr_int("axis", 0), attr_string("reduction", "add")],
        )
        .output("out", dt)
    };
    let base = || {
        Graph::new(18)
            .input_c("data", dt, &[5, 4])
            .input_c("msg", dt, &[6, 4])
    };
    // The index as a graph input: nothing says it is constant along rows.
    let full = scatter(base().input_c("index", DatumType::I64, &[6, 4]), "index");
    // A [1, 4] source broadcast along the edges: one index per feature.
    let per_feature = scatter(
        base()
            .input_c("cols", DatumType::I64, &[1, 4])
            .init("target", &tensor1(&[6i64, 4]))
            .node("Expand", &["cols", "target"], &["index"], vec![]),
        "index",
    );
    // Updates narrower than data: rows are not covered whole.
    let narrow = Graph::new(18)
        .input_c("data", dt, &[5, 4])
        .input_c("msg", dt, &[6, 3])
        .input_c("idx", DatumType::I64, &[6, 1])
        .init("target", &tensor1(&[6i64, 3]))
        .node("Expand", &["idx", "target"], &["index"], vec![]);
    let narrow = scatter(narrow, "index");
    for g in [full, per_feature, narrow] {
        let optimized = g.optimized().unwrap();
        assert!(has::<ScatterElements>(&optimized), "{optimized}");
        assert!(!has::<ScatterNd>(&optimized), "{optimized}");
    }
    // Axis 1 with a row-broadcast index.
    let axis1 = Graph::new(18)
        .input_c("data", dt, &[5, 4])
        .input_c("msg", dt, &[5, 4])
        .input_c("idx", DatumType::I64, &[5, 1])
        .init("target", &tensor1(&[5i64, 4]))
        .node("Expand", &["idx", "target"], &["index"], vec![])
        .node(
            "ScatterElements",
            &["data", "index", "msg"],
            &["out"],
            vec![attr_int("axis", 1)],
        )
        .output("out", dt);
    let optimized = axis1.optimized().unwrap();
    assert!(has::<ScatterElements>(&optimized), "{optimized}");
}

#[test]
fn the_rewritten_model_round_trips_through_nnef_with_the_same_results() {
    let g = gnn(Rows::Unsqueeze, Target::Constant, D::N(40), 7, &[5], "max");
    let (optimized, reference) = rewritten_and_reference(&g);
    let decluttered = g.decluttered().unwrap();
    let nnef = tract_onnx_scatter::nnef();
    let buffer = nnef.write_to_tar(&decluttered, vec![]).unwrap();
    let reloaded = nnef.model_for_read(&mut &buffer[..]).unwrap();
    let inputs = [
        random(&[7, 5], 9),
        destinations(40, 7),
        random(&[40, 5], 10),
    ];
    let want = bits(&run(&reference, &inputs).unwrap());
    assert_eq!(bits(&run(&optimized, &inputs).unwrap()), want);
    assert_eq!(bits(&run(&reloaded, &inputs).unwrap()), want);
}

#[test]
fn a_constant_row_index_out_of_bounds_is_refused_at_load_naming_the_scatter_elements() {
    // The destinations an initializer: the broadcast folds into constant
    // indices, which the ScatterElements checks when it is typed.
    let dt = DatumType::F32;
    let g = Graph::new(18)
        .input_c("data", dt, &[4, 3])
        .input_c("msg", dt, &[5, 3])
        .init("idx", &tensor1(&[0i64, 3, -4, 9, 1]))
        .init("axes", &tensor1(&[1i64]))
        .node("Unsqueeze", &["idx", "axes"], &["rows"], vec![])
        .node("Shape", &["msg"], &["target"], vec![])
        .node("Expand", &["rows", "target"], &["index"], vec![])
        .node(
            "ScatterElements",
            &["data", "index", "msg"],
            &["out"],
            vec![attr_int("axis", 0), attr_string("reduction", "add")],
        )
        .output("out", dt);
    let err = format!("{:#}", g.optimized().unwrap_err());
    assert!(
        err.contains(
            "ScatterElements node 'out' (opset 18): indices[3, 0] = 9 is out of bounds for data axis 0 of size 4 (valid range [-4, 3])"
        ),
        "{err}"
    );
}

//! Scatters whose data *and* updates come through the same transpose, as
//! PyTorch's dynamo exporter writes chained slice assignments
//! (`y[..., 0:2] = a; y[..., 2:4] = b`) and `index_copy_`: chains of such
//! blocks (in the transposed view, or back in the data's layout with a
//! `Slice` of one block's result feeding the next) fold into the data's
//! layout with no transpose left, bit for bit the unfolded graph's result.

use crate::graph;
use crate::transposed;

use graph::{Graph, attr_int, attr_string, tensor};
use tract_onnx_scatter::ops::{ScatterElements, ScatterNd};
use tract_onnx_scatter::tract_onnx::prelude::*;
use transposed::{inverse, layout_of, moves, ops, optimized_exactly, perm, random, rows};

const F32: DatumType = DatumType::F32;
const I64: DatumType = DatumType::I64;

/// `y[..., 2i:2i+2] = v_i` for each `i < count`, chained in the view
/// `Transpose(x, p)` (p moves the last axis first) and transposed back once
/// at the end, as the dynamo exporter writes consecutive assignments.
fn chained_in_the_view(shape: &[usize], p: &[usize], count: usize) -> Graph {
    let mut value_shape = shape.to_vec();
    *value_shape.last_mut().unwrap() = 2;
    let mut g =
        Graph::new(18)
            .input_c("x", F32, shape)
            .node("Transpose", &["x"], &["s"], vec![perm(p)]);
    for i in 0..count {
        let (v, u, c) = (format!("v{i}"), format!("u{i}"), format!("c{i}"));
        let (before, after) = (
            format!("s{}", "_".repeat(i)),
            format!("s{}", "_".repeat(i + 1)),
        );
        let first = 2 * i as i64;
        g = g
            .input_c(&v, F32, &value_shape)
            .init(&c, &rows(&[first, first + 1]))
            .node("Transpose", &[&v], &[&u], vec![perm(p)])
            .node("ScatterND", &[&before, &c, &u], &[&after], vec![]);
    }
    let last = format!("s{}", "_".repeat(count));
    g.node("Transpose", &[&last], &["y"], vec![perm(&inverse(p))])
        .output("y", F32)
}

fn inputs(shape: &[usize], count: usize) -> Vec<Tensor> {
    let mut value_shape = shape.to_vec();
    *value_shape.last_mut().unwrap() = 2;
    let mut inputs = vec![random(shape, 1)];
    inputs.extend((0..count).map(|i| random(&value_shape, 10 + i as u64)));
    inputs
}

#[test]
fn two_slice_blocks_chained_in_the_view_of_4d_data_become_slice_concat_without_a_move() {
    let shape = [2, 3, 4, 8];
    let g = chained_in_the_view(&shape, &[3, 1, 2, 0], 2);
    let optimized = optimized_exactly(&g, &inputs(&shape, 2));
    assert_eq!(moves(&optimized), 0, "{optimized}");
    assert!(ops::<ScatterNd>(&optimized).is_empty(), "{optimized}");
}

#[test]
fn three_slice_blocks_chained_in_the_view_of_5d_data_become_slice_concat_without_a_move() {
    let shape = [1, 3, 4, 4, 9];
    let g = chained_in_the_view(&shape, &[4, 1, 2, 3, 0], 3);
    let optimized = optimized_exactly(&g, &inputs(&shape, 3));
    assert_eq!(moves(&optimized), 0, "{optimized}");
    assert!(ops::<ScatterNd>(&optimized).is_empty(), "{optimized}");
}

/// Block `i` transposes the previous result, writes `y[..., 0:2] * v_i`
/// (a `Slice` of the previous result, so after the first block the first
/// block's values) at rows `2i, 2i + 1` and transposes back, as the dynamo
/// exporter writes an assignment that reads an earlier one.
fn blocks_with_a_slice_between(shape: &[usize], p: &[usize], count: usize) -> Graph {
    let last_axis = shape.len() as i64 - 1;
    let mut value_shape = shape.to_vec();
    *value_shape.last_mut().unwrap() = 2;
    let mut g = Graph::new(18)
        .input_c("x", F32, shape)
        .init("starts", &tensor1(&[0i64]))
        .init("ends", &tensor1(&[2i64]))
        .init("axes", &tensor1(&[last_axis]));
    let mut current = "x".to_string();
    for i in 0..count {
        let n = |s: &str| format!("{s}{i}");
        let first = 2 * i as i64;
        g = g
            .input_c(&n("v"), F32, &value_shape)
            .init(&n("c"), &rows(&[first, first + 1]))
            .node(
                "Slice",
                &[&current, "starts", "ends", "axes"],
                &[&n("read")],
                vec![],
            )
            .node("Mul", &[&n("read"), &n("v")], &[&n("value")], vec![])
            .node("Transpose", &[&n("value")], &[&n("u")], vec![perm(p)])
            .node("Transpose", &[&current], &[&n("view")], vec![perm(p)])
            .node(
                "ScatterND",
                &[&n("view"), &n("c"), &n("u")],
                &[&n("written")],
                vec![],
            )
            .node(
                "Transpose",
                &[&n("written")],
                &[&n("y")],
                vec![perm(&inverse(p))],
            );
        current = n("y");
    }
    g.output(&current, F32)
}

#[test]
fn three_blocks_on_5d_data_with_a_slice_of_each_result_between_them_fold_without_a_move() {
    let shape = [1, 3, 4, 4, 9];
    let g = blocks_with_a_slice_between(&shape, &[4, 1, 2, 3, 0], 3);
    let optimized = optimized_exactly(&g, &inputs(&shape, 3));
    assert_eq!(moves(&optimized), 0, "{optimized}");
}

#[test]
fn two_blocks_on_4d_data_with_a_slice_between_them_fold_without_a_move() {
    let shape = [2, 3, 4, 8];
    let g = blocks_with_a_slice_between(&shape, &[3, 1, 2, 0], 2);
    let optimized = optimized_exactly(&g, &inputs(&shape, 2));
    assert_eq!(moves(&optimized), 0, "{optimized}");
}

/// `cache.index_copy_(2, rows, k)` as the dynamo exporter writes it:
/// cache and k through `[2, 0, 1, 3]`, run-time rows.
fn index_copy(reduction: &str, cache: &[usize], k: &[usize], rows: usize) -> Graph {
    let p = [2, 0, 1, 3];
    let mut attrs = vec![];
    if reduction != "none" {
        attrs.push(attr_string("reduction", reduction));
    }
    Graph::new(18)
        .input_c("cache", F32, cache)
        .input_c("rows", I64, &[rows, 1])
        .input_c("k", F32, k)
        .node("Transpose", &["cache"], &["view"], vec![perm(&p)])
        .node("Transpose", &["k"], &["u"], vec![perm(&p)])
        .node("ScatterND", &["view", "rows", "u"], &["written"], attrs)
        .node(
            "Transpose",
            &["written"],
            &["out"],
            vec![perm(&inverse(&p))],
        )
        .output("out", F32)
}

#[test]
fn run_time_rows_through_the_same_permutation_become_scatter_elements_along_the_moved_axis() {
    let g = index_copy("none", &[1, 4, 16, 8], &[1, 4, 3, 8], 3);
    // A duplicate (the last write wins) and a negative row.
    let inputs = [
        random(&[1, 4, 16, 8], 1),
        rows(&[5, -1, 5]),
        random(&[1, 4, 3, 8], 2),
    ];
    let optimized = optimized_exactly(&g, &inputs);
    assert_eq!(moves(&optimized), 0, "{optimized}");
    let scatters = ops::<ScatterElements>(&optimized);
    assert_eq!(scatters.len(), 1, "{optimized}");
    assert_eq!(scatters[0].axis(), 2);
}

#[test]
fn every_reduction_with_duplicate_rows_matches_the_unfolded_graph_bit_for_bit() {
    for reduction in ["none", "add", "mul", "max", "min"] {
        let g = index_copy(reduction, &[2, 3, 6, 5], &[2, 3, 4, 5], 4);
        let inputs = [
            random(&[2, 3, 6, 5], 3),
            rows(&[1, 3, 1, -5]),
            random(&[2, 3, 4, 5], 4),
        ];
        let optimized = optimized_exactly(&g, &inputs);
        assert_eq!(moves(&optimized), 0, "{reduction}: {optimized}");
    }
}

#[test]
fn constant_strided_rows_become_scatter_elements_with_constant_indices() {
    // kpt[..., 0::3] = v on [2, 5, 12], through [2, 1, 0] both ways.
    let p = [2, 1, 0];
    let g = Graph::new(18)
        .input_c("kpt", F32, &[2, 5, 12])
        .input_c("v", F32, &[2, 5, 4])
        .init("c", &rows(&[0, 3, 6, 9]))
        .node("Transpose", &["kpt"], &["view"], vec![perm(&p)])
        .node("Transpose", &["v"], &["u"], vec![perm(&p)])
        .node("ScatterND", &["view", "c", "u"], &["written"], vec![])
        .node("Transpose", &["written"], &["out"], vec![perm(&p)])
        .output("out", F32);
    let inputs = [random(&[2, 5, 12], 5), random(&[2, 5, 4], 6)];
    let optimized = optimized_exactly(&g, &inputs);
    assert_eq!(moves(&optimized), 0, "{optimized}");
    assert_eq!(ops::<ScatterElements>(&optimized)[0].axis(), 2);
}

#[test]
fn scatter_elements_with_indices_and_updates_through_the_permutation_fold_with_no_move() {
    // data [3, 4, 5] seen as [5, 3, 4]; the scatter along the view's axis
    // 0 is along the data's axis 2.
    let p = [2, 0, 1];
    let g = Graph::new(18)
        .input_c("data", F32, &[3, 4, 5])
        .input_c("indices", I64, &[3, 2, 5])
        .input_c("updates", F32, &[3, 2, 5])
        .node("Transpose", &["data"], &["view"], vec![perm(&p)])
        .node("Transpose", &["indices"], &["i"], vec![perm(&p)])
        .node("Transpose", &["updates"], &["u"], vec![perm(&p)])
        .node(
            "ScatterElements",
            &["view", "i", "u"],
            &["written"],
            vec![attr_int("axis", 0), attr_string("reduction", "add")],
        )
        .node(
            "Transpose",
            &["written"],
            &["out"],
            vec![perm(&inverse(&p))],
        )
        .output("out", F32);
    let indices: Vec<i64> = (0..30).map(|i| (i * 7 % 5) - 2).collect();
    let inputs = [
        random(&[3, 4, 5], 7),
        tensor(I64, &[3, 2, 5], &indices),
        random(&[3, 2, 5], 8),
    ];
    let optimized = optimized_exactly(&g, &inputs);
    assert_eq!(moves(&optimized), 0, "{optimized}");
    assert_eq!(ops::<ScatterElements>(&optimized)[0].axis(), 2);
}

#[test]
fn a_run_of_scatter_elements_then_scatter_nd_in_one_view_folds_as_one() {
    // view = data [4, 6] transposed; a ScatterElements then a slice
    // assignment of the view's rows 1..3, transposed back once.
    let g = Graph::new(18)
        .input_c("data", F32, &[4, 6])
        .input_c("indices", I64, &[2, 4])
        .input_c("updates", F32, &[2, 4])
        .input_c("v", F32, &[4, 2])
        .init("c", &rows(&[1, 2]))
        .node("Transpose", &["data"], &["view"], vec![perm(&[1, 0])])
        .node(
            "ScatterElements",
            &["view", "indices", "updates"],
            &["first"],
            vec![attr_int("axis", 0)],
        )
        .node("Transpose", &["v"], &["u"], vec![perm(&[1, 0])])
        .node("ScatterND", &["first", "c", "u"], &["second"], vec![])
        .node("Transpose", &["second"], &["out"], vec![perm(&[1, 0])])
        .output("out", F32);
    let inputs = [
        random(&[4, 6], 9),
        tensor(I64, &[2, 4], &[5, 0, 3, 3, -1, 2, 4, 0]),
        random(&[2, 4], 10),
        random(&[4, 2], 11),
    ];
    let optimized = optimized_exactly(&g, &inputs);
    // The ScatterElements' own indices and updates (model inputs) are
    // transposed back: update-sized, the data never moves.
    assert!(ops::<ScatterNd>(&optimized).is_empty(), "{optimized}");
    assert_eq!(ops::<ScatterElements>(&optimized)[0].axis(), 1);
    for node in optimized.nodes() {
        assert!(
            !(node.op().name() == "MoveAxis" && node.outputs[0].fact.shape.volume() == 24.to_dim()),
            "the data moves: {optimized}"
        );
    }
}

#[test]
fn updates_with_their_batch_axis_leading_give_their_slice_order_to_the_layout() {
    // cache [1, 4, 16, 8] seen as [16, 1, 4, 8]; k [3, 4, 1, 8] comes as
    // [3, 1, 4, 8]: its rows lead, only its slice axes are permuted.
    let p = [2, 0, 1, 3];
    let g = Graph::new(18)
        .input_c("cache", F32, &[1, 4, 16, 8])
        .input_c("rows", I64, &[3, 1])
        .input_c("k", F32, &[3, 4, 1, 8])
        .node("Transpose", &["cache"], &["view"], vec![perm(&p)])
        .node("Transpose", &["k"], &["u"], vec![perm(&[0, 2, 1, 3])])
        .node("ScatterND", &["view", "rows", "u"], &["written"], vec![])
        .node(
            "Transpose",
            &["written"],
            &["out"],
            vec![perm(&inverse(&p))],
        )
        .output("out", F32);
    let inputs = [
        random(&[1, 4, 16, 8], 12),
        rows(&[0, 15, 0]),
        random(&[3, 4, 1, 8], 13),
    ];
    let optimized = optimized_exactly(&g, &inputs);
    assert_eq!(moves(&optimized), 0, "{optimized}");
    let scatter = ops::<ScatterNd>(&optimized);
    assert_eq!(
        layout_of(scatter[0]).as_deref(),
        Some(&[2usize, 1, 0, 3][..])
    );
}

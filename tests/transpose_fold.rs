//! `Transpose → scatter → inverse Transpose` (what PyTorch's dynamo
//! exporter writes for `index_copy_` and slice assignment) folds into one
//! scatter on the untransposed data: the optimized plan moves no axis of
//! the data, and the results are those of the unfolded graph. Transposes
//! that do not undo each other, and batch axes whose order decides the
//! result, stay; tract's own `ChangeAxes` pass moves a transpose through a
//! scatter and an activation. Chains of blocks: `transpose_fold_chains.rs`.

use crate::graph;
use crate::transposed;

use graph::{Graph, attr_int, attr_ints, tensor};
use tract_onnx_scatter::ops::{ScatterElements, ScatterNd};
use tract_onnx_scatter::tract_onnx::prelude::*;
use transposed::{layout_of, moves, ops, optimized_exactly, perm, random, rows};

fn inverse(perm: &[usize]) -> Vec<i64> {
    transposed::inverse(perm)
        .into_iter()
        .map(|p| p as i64)
        .collect()
}

fn run(model: TypedModel, inputs: &[Tensor]) -> Tensor {
    transposed::run(&model, inputs).unwrap()
}

/// `Transpose(data, perm) → op → Transpose(inverse)`, runtime indices.
fn sandwich(
    op: &str,
    data: &[usize],
    perm: &[usize],
    indices: &[usize],
    updates: &[usize],
    attrs: Vec<tract_onnx_scatter::tract_onnx::pb::AttributeProto>,
) -> Graph {
    let dt = DatumType::F32;
    Graph::new(18)
        .input_c("data", dt, data)
        .input_c("indices", DatumType::I64, indices)
        .input_c("updates", dt, updates)
        .node(
            "Transpose",
            &["data"],
            &["view"],
            vec![attr_ints(
                "perm",
                &perm.iter().map(|&p| p as i64).collect::<Vec<_>>(),
            )],
        )
        .node(op, &["view", "indices", "updates"], &["scattered"], attrs)
        .node(
            "Transpose",
            &["scattered"],
            &["out"],
            vec![attr_ints("perm", &inverse(perm))],
        )
        .output("out", dt)
}

#[test]
fn dynamo_index_copy_becomes_one_scatter_nd_on_the_cache_and_no_move() {
    // cache [1, 4, 16, 8], sequence axis 2 moved first, two positions.
    let (shape, perm) = ([1, 4, 16, 8], [2, 0, 1, 3]);
    let g = sandwich("ScatterND", &shape, &perm, &[2, 1], &[2, 1, 4, 8], vec![]);
    let optimized = g.optimized().unwrap();
    assert_eq!(moves(&optimized), 0, "{optimized}");
    let scatter = optimized
        .nodes()
        .iter()
        .find_map(|n| n.op_as::<ScatterNd>())
        .unwrap();
    assert_eq!(layout_of(scatter).as_deref(), Some(&perm[..]));
    let inputs = [
        random(&shape, 1),
        tensor2(&[[5i64], [-2]]),
        random(&[2, 1, 4, 8], 2),
    ];
    assert_eq!(run(optimized, &inputs), run(g.typed().unwrap(), &inputs));
}

#[test]
fn yolo_slice_assignment_on_the_last_axis_folds_and_matches() {
    // y[..., 0:2] = v on [1, 3, 4, 4, 7]: last axis moved first and back.
    let (shape, perm) = ([1, 3, 4, 4, 7], [4, 1, 2, 3, 0]);
    let g = sandwich(
        "ScatterND",
        &shape,
        &perm,
        &[2, 1],
        &[2, 3, 4, 4, 1],
        vec![],
    );
    let optimized = g.optimized().unwrap();
    assert_eq!(moves(&optimized), 0, "{optimized}");
    let inputs = [
        random(&shape, 3),
        tensor2(&[[0i64], [1]]),
        random(&[2, 3, 4, 4, 1], 4),
    ];
    assert_eq!(run(optimized, &inputs), run(g.typed().unwrap(), &inputs));
}

#[test]
fn reductions_and_multi_component_tuples_fold_too() {
    let (shape, perm) = ([2, 3, 5], [2, 0, 1]);
    for reduction in ["add", "mul", "max", "min", "none"] {
        let attrs = vec![graph::attr_string("reduction", reduction)];
        let g = sandwich("ScatterND", &shape, &perm, &[3, 2], &[3, 3], attrs);
        let optimized = g.optimized().unwrap();
        assert_eq!(moves(&optimized), 0, "{reduction}: {optimized}");
        let indices = tensor2(&[[4i64, 1], [0, -1], [4, 1]]);
        let inputs = [random(&shape, 5), indices, random(&[3, 3], 6)];
        assert_eq!(
            run(optimized, &inputs),
            run(g.typed().unwrap(), &inputs),
            "{reduction}"
        );
    }
}

#[test]
fn scatter_elements_between_transposes_folds_with_the_axis_moved() {
    let (shape, perm) = ([2, 3, 5], [2, 0, 1]);
    let g = sandwich(
        "ScatterElements",
        &shape,
        &perm,
        &[2, 2, 3],
        &[2, 2, 3],
        vec![attr_int("axis", 0)],
    );
    let optimized = g.optimized().unwrap();
    let scatter = optimized
        .nodes()
        .iter()
        .find_map(|n| n.op_as::<ScatterElements>())
        .unwrap();
    assert_eq!(scatter.axis(), 2);
    let indices = tensor(
        DatumType::I64,
        &[2, 2, 3],
        &[4, 0, 1, 3, 3, 2, 0, 4, -1, 2, 1, 1],
    );
    let inputs = [random(&shape, 7), indices, random(&[2, 2, 3], 8)];
    assert_eq!(run(optimized, &inputs), run(g.typed().unwrap(), &inputs));
}

#[test]
fn an_out_of_bounds_index_still_fails_at_run_time_naming_the_node() {
    let g = sandwich(
        "ScatterND",
        &[1, 4, 16, 8],
        &[2, 0, 1, 3],
        &[1, 1],
        &[1, 1, 4, 8],
        vec![],
    );
    let plan = g.optimized().unwrap().into_runnable().unwrap();
    let err = plan
        .run(tvec![
            random(&[1, 4, 16, 8], 1).into(),
            tensor2(&[[16i64]]).into(),
            random(&[1, 1, 4, 8], 2).into()
        ])
        .unwrap_err();
    let msg = format!("{err:?}");
    assert!(
        msg.contains("ScatterND node 'scattered'")
            && msg.contains("= 16")
            && msg.contains("[-16, 15]"),
        "{msg}"
    );
}

#[test]
fn a_scatter_whose_transposed_output_is_also_read_is_not_folded() {
    let dt = DatumType::F32;
    let g = Graph::new(18)
        .input_c("data", dt, &[2, 3])
        .input_c("indices", DatumType::I64, &[1, 1])
        .input_c("updates", dt, &[1, 2])
        .node(
            "Transpose",
            &["data"],
            &["view"],
            vec![attr_ints("perm", &[1, 0])],
        )
        .node(
            "ScatterND",
            &["view", "indices", "updates"],
            &["scattered"],
            vec![],
        )
        .node(
            "Transpose",
            &["scattered"],
            &["out"],
            vec![attr_ints("perm", &[1, 0])],
        )
        .output("out", dt)
        .output("scattered", dt);
    let optimized = g.optimized().unwrap();
    let scatter = optimized
        .nodes()
        .iter()
        .find_map(|n| n.op_as::<ScatterNd>())
        .unwrap();
    assert!(layout_of(scatter).is_none());
}

#[test]
fn updates_through_another_permutation_keep_scatter_nd_on_a_layout_and_their_move() {
    // cache [1, 4, 16, 8] seen as [16, 1, 4, 8]; k [1, 3, 4, 8] comes as
    // [3, 1, 4, 8]: its rows sit on axis 1, the cache's on axis 2, so no
    // ScatterElements along one axis of both exists.
    let p = [2, 0, 1, 3];
    let g = Graph::new(18)
        .input_c("cache", DatumType::F32, &[1, 4, 16, 8])
        .input_c("rows", DatumType::I64, &[3, 1])
        .input_c("k", DatumType::F32, &[1, 3, 4, 8])
        .node("Transpose", &["cache"], &["view"], vec![perm(&p)])
        .node("Transpose", &["k"], &["u"], vec![perm(&[1, 0, 2, 3])])
        .node("ScatterND", &["view", "rows", "u"], &["written"], vec![])
        .node(
            "Transpose",
            &["written"],
            &["out"],
            vec![attr_ints("perm", &inverse(&p))],
        )
        .output("out", DatumType::F32);
    let inputs = [
        random(&[1, 4, 16, 8], 1),
        rows(&[3, -2, 3]),
        random(&[1, 3, 4, 8], 2),
    ];
    let optimized = optimized_exactly(&g, &inputs);
    let scatter = ops::<ScatterNd>(&optimized);
    assert_eq!(scatter.len(), 1, "{optimized}");
    assert_eq!(layout_of(scatter[0]).as_deref(), Some(&p[..]));
    assert_eq!(moves(&optimized), 1, "{optimized}");
}

#[test]
fn an_output_transpose_that_is_not_the_inverse_leaves_a_move() {
    let g = Graph::new(18)
        .input_c("data", DatumType::F32, &[1, 4, 16, 8])
        .input_c("rows", DatumType::I64, &[2, 1])
        .input_c("k", DatumType::F32, &[2, 1, 4, 8])
        .node("Transpose", &["data"], &["view"], vec![perm(&[2, 0, 1, 3])])
        .node("ScatterND", &["view", "rows", "k"], &["written"], vec![])
        .node(
            "Transpose",
            &["written"],
            &["out"],
            vec![perm(&[1, 0, 2, 3])],
        )
        .output("out", DatumType::F32);
    let inputs = [
        random(&[1, 4, 16, 8], 3),
        rows(&[7, 0]),
        random(&[2, 1, 4, 8], 4),
    ];
    let optimized = optimized_exactly(&g, &inputs);
    // The output is the data transposed by [2, 1, 0, 3] once scattered: a
    // scatter keeps its data's layout, so some move must remain.
    assert!(moves(&optimized) >= 1, "{optimized}");
}

#[test]
fn permuted_batch_axes_with_duplicate_tuples_keep_their_order() {
    // indices [2, 3, 1] and updates [2, 3, 5] both transposed on their
    // batch axes: tuple order changes which duplicate wins.
    let g = Graph::new(18)
        .input_c("data", DatumType::F32, &[4, 5])
        .input_c("indices", DatumType::I64, &[2, 3, 1])
        .input_c("updates", DatumType::F32, &[2, 3, 5])
        .node("Transpose", &["indices"], &["i"], vec![perm(&[1, 0, 2])])
        .node("Transpose", &["updates"], &["u"], vec![perm(&[1, 0, 2])])
        .node("ScatterND", &["data", "i", "u"], &["out"], vec![])
        .output("out", DatumType::F32);
    let inputs = [
        random(&[4, 5], 5),
        tensor(DatumType::I64, &[2, 3, 1], &[1, 2, 1, 1, 3, 0]),
        random(&[2, 3, 5], 6),
    ];
    let optimized = optimized_exactly(&g, &inputs);
    assert_eq!(moves(&optimized), 2, "{optimized}");
}

#[test]
fn a_scatter_nd_folded_into_scatter_elements_names_its_node_when_a_row_is_out_of_bounds() {
    let p = [2, 0, 1, 3];
    let g = Graph::new(18)
        .input_c("cache", DatumType::F32, &[1, 4, 16, 8])
        .input_c("rows", DatumType::I64, &[1, 1])
        .input_c("k", DatumType::F32, &[1, 4, 1, 8])
        .node("Transpose", &["cache"], &["view"], vec![perm(&p)])
        .node("Transpose", &["k"], &["u"], vec![perm(&p)])
        .node("ScatterND", &["view", "rows", "u"], &["scattered"], vec![])
        .node(
            "Transpose",
            &["scattered"],
            &["out"],
            vec![attr_ints("perm", &inverse(&p))],
        )
        .output("out", DatumType::F32);
    let optimized = g.optimized().unwrap();
    assert_eq!(ops::<ScatterElements>(&optimized).len(), 1, "{optimized}");
    let err = transposed::run(
        &optimized,
        &[
            random(&[1, 4, 16, 8], 7),
            rows(&[16]),
            random(&[1, 4, 1, 8], 8),
        ],
    )
    .unwrap_err();
    let msg = format!("{err:?}");
    assert!(
        msg.contains("ScatterND node 'scattered'")
            && msg.contains("= 16")
            && msg.contains("[-16, 15]"),
        "{msg}"
    );
}

/// The inverse transpose sits after an activation, hidden from the fold;
/// tract's `ChangeAxes` pass moves it through the activation and the
/// scatter (the ops' `change_axes`) until it cancels the first transpose.
#[test]
fn tracts_change_axes_moves_a_transpose_through_an_activation_into_scatter_nd_s_layout() {
    // The view [5, 3, 4] of data [3, 5, 4]: its rows 4 and 1, added to.
    let swap = [1, 0, 2];
    let g = Graph::new(18)
        .input_c("data", DatumType::F32, &[3, 5, 4])
        .input_c("updates", DatumType::F32, &[2, 3, 4])
        .init("indices", &rows(&[4, 1]))
        .node("Transpose", &["data"], &["view"], vec![perm(&swap)])
        .node(
            "ScatterND",
            &["view", "indices", "updates"],
            &["written"],
            vec![graph::attr_string("reduction", "add")],
        )
        .node("Relu", &["written"], &["active"], vec![])
        .node("Transpose", &["active"], &["out"], vec![perm(&swap)])
        .output("out", DatumType::F32);
    let inputs = [random(&[3, 5, 4], 9), random(&[2, 3, 4], 10)];
    let optimized = optimized_exactly(&g, &inputs);
    assert_eq!(moves(&optimized), 0, "{optimized}");
    assert_eq!(
        layout_of(ops::<ScatterNd>(&optimized)[0]).as_deref(),
        Some(&[1usize, 0, 2][..])
    );
}

#[test]
fn tracts_change_axes_moves_a_transpose_through_an_activation_and_scatter_elements() {
    // Constant indices take the move; the updates (a model input) would be
    // blocked, so they come through the same transpose.
    let swap = [1, 0, 2];
    let indices = tensor(
        DatumType::I64,
        &[2, 3, 4],
        &[
            4, 0, 1, 2, 3, 3, 0, 1, 2, 4, 4, 0, 1, 1, 2, 3, 0, 0, 4, 2, 3, 1, 1, 0,
        ],
    );
    let g = Graph::new(18)
        .input_c("data", DatumType::F32, &[3, 5, 4])
        .input_c("updates", DatumType::F32, &[3, 2, 4])
        .init("indices", &indices)
        .node("Transpose", &["data"], &["view"], vec![perm(&swap)])
        .node("Transpose", &["updates"], &["u"], vec![perm(&swap)])
        .node(
            "ScatterElements",
            &["view", "indices", "u"],
            &["written"],
            vec![attr_int("axis", 0), graph::attr_string("reduction", "add")],
        )
        .node("Relu", &["written"], &["active"], vec![])
        .node("Transpose", &["active"], &["out"], vec![perm(&swap)])
        .output("out", DatumType::F32);
    let inputs = [random(&[3, 5, 4], 11), random(&[3, 2, 4], 12)];
    let optimized = optimized_exactly(&g, &inputs);
    assert_eq!(moves(&optimized), 0, "{optimized}");
    assert_eq!(ops::<ScatterElements>(&optimized)[0].axis(), 1);
}

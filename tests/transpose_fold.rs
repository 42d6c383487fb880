//! `Transpose → scatter → inverse Transpose` (what PyTorch's dynamo
//! exporter writes for `index_copy_` and slice assignment) folds into one
//! scatter on the untransposed data: the optimized plan moves no axis of
//! the data, and the results are those of the unfolded graph.

#[path = "support/graph.rs"]
mod graph;

use graph::{Graph, attr_int, attr_ints, tensor};
use tract_onnx_scatter::ops::{ScatterElements, ScatterNd};
use tract_onnx_scatter::tract_core::ops::change_axes::AxisOp;
use tract_onnx_scatter::tract_onnx::prelude::*;

fn inverse(perm: &[usize]) -> Vec<i64> {
    let mut inv = vec![0i64; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i as i64;
    }
    inv
}

fn moves(model: &TypedModel) -> usize {
    model
        .nodes()
        .iter()
        .filter(|n| {
            n.op_as::<AxisOp>()
                .is_some_and(|op| matches!(op, AxisOp::Move(..)))
        })
        .count()
}

fn random(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let values: Vec<f32> = (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect();
    tensor1(&values).into_shape(shape).unwrap()
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

fn run(model: TypedModel, inputs: &[Tensor]) -> Tensor {
    let plan = model.into_runnable().unwrap();
    let out = plan
        .run(inputs.iter().cloned().map(|t| t.into_tvalue()).collect())
        .unwrap();
    out[0].clone().into_tensor()
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
    assert_eq!(scatter.layout.as_deref(), Some(&perm[..]));
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
    assert_eq!(scatter.axis, 2);
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
    assert!(scatter.layout.is_none());
}

//! Optimizations: constant block assignments become Slice/Concat, empty
//! scatters disappear, all-constant scatters fold, and `cost` is sensible.

use crate::graph;

use graph::{D, Graph, attr_int, tensor};
use tract_onnx_scatter::ops::{ScatterElements, ScatterNd};
use tract_onnx_scatter::tract_core::internal::Cost;
use tract_onnx_scatter::tract_core::ops::konst::Const;
use tract_onnx_scatter::tract_onnx::prelude::*;

fn has_scatter_nd(model: &TypedModel) -> bool {
    model.nodes().iter().any(|n| n.op_is::<ScatterNd>())
}

/// All index tuples of `data[.., lo..hi (on axis), ..]` for `dims`, row-major.
fn block_tuples(dims: &[usize], axis: usize, lo: usize, hi: usize) -> (Vec<usize>, Vec<i64>) {
    let mut block: Vec<usize> = dims.to_vec();
    block[axis] = hi - lo;
    let count: usize = block.iter().product();
    let mut tuples = Vec::with_capacity(count * dims.len());
    for flat in 0..count {
        let mut rest = flat;
        let mut tuple = vec![0i64; dims.len()];
        for i in (0..dims.len()).rev() {
            tuple[i] = (rest % block[i]) as i64 + if i == axis { lo as i64 } else { 0 };
            rest /= block[i];
        }
        tuples.extend(tuple);
    }
    (block, tuples)
}

/// The same ScatterND twice: indices as an initializer (rewritable) and as
/// an input (kept); checks the plans and that both give the same output.
fn check_rewrite(
    data_shape: &[usize],
    indices_shape: &[usize],
    indices: &[i64],
    updates_shape: &[usize],
    rewritten: bool,
) {
    let dt = DatumType::F32;
    let konst = Graph::new(18)
        .input_c("data", dt, data_shape)
        .init("indices", &tensor(DatumType::I64, indices_shape, indices))
        .input_c("updates", dt, updates_shape)
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", dt);
    let dynamic = Graph::new(18)
        .input_c("data", dt, data_shape)
        .input_c("indices", DatumType::I64, indices_shape)
        .input_c("updates", dt, updates_shape)
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", dt);
    let optimized = konst.optimized().unwrap();
    let reference = dynamic.optimized().unwrap();
    assert_eq!(!has_scatter_nd(&optimized), rewritten, "{optimized}");
    assert!(has_scatter_nd(&reference), "{reference}");
    let data: Vec<i64> = (0..data_shape.iter().product::<usize>() as i64).collect();
    let updates: Vec<i64> = (0..updates_shape.iter().product::<usize>() as i64)
        .map(|i| -1 - i)
        .collect();
    let data = tensor(dt, data_shape, &data);
    let updates = tensor(dt, updates_shape, &updates);
    let got = graph::run(&optimized, &[data.clone(), updates.clone()]).unwrap();
    let expected = graph::run(
        &reference,
        &[
            data.clone(),
            tensor(DatumType::I64, indices_shape, indices),
            updates,
        ],
    )
    .unwrap();
    assert_eq!(got[0], expected[0]);
    assert_ne!(*got[0], data, "the scatter wrote something");
}

#[test]
fn a_middle_block_becomes_slice_concat() {
    // data[:, 1:3, :] of [2, 5, 3]: k == rank, indices [2, 2, 3, 3].
    let (block, tuples) = block_tuples(&[2, 5, 3], 1, 1, 3);
    let mut indices_shape = block.clone();
    indices_shape.push(3);
    check_rewrite(&[2, 5, 3], &indices_shape, &tuples, &block, true);
}

#[test]
fn a_block_with_flat_updates_becomes_slice_concat() {
    // Same block, indices [12, 3] and updates [12]: reshaped to the block.
    let (_, tuples) = block_tuples(&[2, 5, 3], 1, 1, 3);
    check_rewrite(&[2, 5, 3], &[12, 3], &tuples, &[12], true);
}

#[test]
fn leading_rows_become_slice_concat() {
    // GTCRN-like: data [2, 16], the first row assigned element by element.
    let tuples: Vec<i64> = (0..16).flat_map(|j| [0, j]).collect();
    check_rewrite(&[2, 16], &[1, 16, 2], &tuples, &[1, 16], true);
    // Leading rows as slices (k < rank): data [4, 16], rows 0 and 1.
    check_rewrite(&[4, 16], &[2, 1], &[0, 1], &[2, 16], true);
    // Trailing rows with negative indices.
    check_rewrite(&[4, 16], &[2, 1], &[-2, -1], &[2, 16], true);
    // One row, a single tuple (indices rank 1).
    check_rewrite(&[4, 16], &[1], &[3], &[16], true);
}

#[test]
fn a_whole_tensor_assignment_becomes_the_updates() {
    check_rewrite(&[3, 2], &[3, 1], &[0, 1, 2], &[3, 2], true);
}

#[test]
fn scattered_or_reordered_indices_stay_scatter_nd() {
    // Not contiguous.
    check_rewrite(&[4, 16], &[2, 1], &[0, 2], &[2, 16], false);
    // Reordered.
    check_rewrite(&[4, 16], &[2, 1], &[1, 0], &[2, 16], false);
    // Partial along two axes.
    check_rewrite(&[4, 4], &[2, 2], &[1, 1, 1, 2], &[2], false);
}

#[test]
fn reductions_stay_scatter_nd() {
    let graph = Graph::new(18)
        .input_c("data", DatumType::F32, &[4, 2])
        .init("indices", &tensor(DatumType::I64, &[2, 1], &[0, 1]))
        .input_c("updates", DatumType::F32, &[2, 2])
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![graph::attr_string("reduction", "add")],
        )
        .output("out", DatumType::F32);
    assert!(has_scatter_nd(&graph.optimized().unwrap()));
}

#[test]
fn an_out_of_bounds_constant_block_still_fails() {
    // The rewrite must not turn a load error into a silent slice.
    let graph = Graph::new(18)
        .input_c("data", DatumType::F32, &[4, 2])
        .init("indices", &tensor(DatumType::I64, &[2, 1], &[3, 4]))
        .input_c("updates", DatumType::F32, &[2, 2])
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32);
    assert!(graph.optimized().is_err());
}

#[test]
fn a_block_with_symbolic_trailing_dims_becomes_slice_concat() {
    // data [6, D], rows 2..4 assigned: the trailing dim is copied whole.
    let graph = Graph::new(18)
        .input("data", DatumType::F32, &[D::N(6), D::S("D")])
        .init("indices", &tensor(DatumType::I64, &[2, 1], &[2, 3]))
        .input("updates", DatumType::F32, &[D::N(2), D::S("D")])
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32);
    let model = graph.optimized().unwrap();
    assert!(!has_scatter_nd(&model), "{model}");
    let d = model.symbols.sym("D").to_dim();
    assert_eq!(
        model.output_fact(0).unwrap().shape.to_tvec(),
        tvec![6.to_dim(), d]
    );
    let data: Vec<i64> = (0..18).collect();
    let out = graph::run(
        &model,
        &[
            tensor(DatumType::F32, &[6, 3], &data),
            tensor(DatumType::F32, &[2, 3], &[-1; 6]),
        ],
    )
    .unwrap();
    let mut expected = data.clone();
    expected[6..12].fill(-1);
    assert_eq!(*out[0], tensor(DatumType::F32, &[6, 3], &expected));
}

fn check_empty_is_identity(graph: Graph, indices_shape: &[usize]) {
    let model = graph.optimized().unwrap();
    assert!(
        !model
            .nodes()
            .iter()
            .any(|n| n.op_is::<ScatterNd>() || n.op_is::<ScatterElements>()),
        "{model}"
    );
    let data = tensor(DatumType::F32, &[3, 2], &[1, 2, 3, 4, 5, 6]);
    let indices = Tensor::zero::<i64>(indices_shape).unwrap();
    let updates = Tensor::zero::<f32>(&[0, 2]).unwrap();
    let out = graph::run(&model, &[data.clone(), indices, updates]).unwrap();
    assert_eq!(*out[0], data);
}

#[test]
fn empty_scatter_nd_is_the_identity() {
    let graph = Graph::new(18)
        .input_c("data", DatumType::F32, &[3, 2])
        .input_c("indices", DatumType::I64, &[0, 1])
        .input_c("updates", DatumType::F32, &[0, 2])
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32);
    check_empty_is_identity(graph, &[0, 1]);
}

#[test]
fn empty_scatter_elements_is_the_identity() {
    let graph = Graph::new(18)
        .input_c("data", DatumType::F32, &[3, 2])
        .input_c("indices", DatumType::I64, &[0, 2])
        .input_c("updates", DatumType::F32, &[0, 2])
        .node(
            "ScatterElements",
            &["data", "indices", "updates"],
            &["out"],
            vec![attr_int("axis", 0)],
        )
        .output("out", DatumType::F32);
    check_empty_is_identity(graph, &[0, 2]);
}

#[test]
fn empty_scatter_nd_that_is_the_model_output_of_its_input_stays_valid() {
    // data is both a model input and (through the scatter) the output.
    let graph = Graph::new(18)
        .input_c("data", DatumType::F32, &[3, 2])
        .init("indices", &Tensor::zero::<i64>(&[0, 1]).unwrap())
        .init("updates", &Tensor::zero::<f32>(&[0, 2]).unwrap())
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32);
    let model = graph.optimized().unwrap();
    let data = tensor(DatumType::F32, &[3, 2], &[1, 2, 3, 4, 5, 6]);
    assert_eq!(
        *graph::run(&model, std::slice::from_ref(&data)).unwrap()[0],
        data
    );
}

#[test]
fn all_constant_scatters_fold_to_a_const() {
    let nd = Graph::new(18)
        .init(
            "data",
            &tensor(DatumType::F32, &[3, 2], &[1, 2, 3, 4, 5, 6]),
        )
        .init("indices", &tensor(DatumType::I64, &[2, 1], &[2, 0]))
        .init("updates", &tensor(DatumType::F32, &[2, 2], &[7, 8, 9, 10]))
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![graph::attr_string("reduction", "add")],
        )
        .output("out", DatumType::F32);
    let elements = Graph::new(18)
        .init(
            "data",
            &tensor(DatumType::F32, &[3, 2], &[1, 2, 3, 4, 5, 6]),
        )
        .init("indices", &tensor(DatumType::I64, &[1, 2], &[2, 0]))
        .init("updates", &tensor(DatumType::F32, &[1, 2], &[7, 8]))
        .node(
            "ScatterElements",
            &["data", "indices", "updates"],
            &["out"],
            vec![attr_int("axis", 0)],
        )
        .output("out", DatumType::F32);
    let expected = [
        tensor(DatumType::F32, &[3, 2], &[10, 12, 3, 4, 12, 14]),
        tensor(DatumType::F32, &[3, 2], &[1, 8, 3, 4, 7, 6]),
    ];
    for (graph, expected) in [nd, elements].into_iter().zip(expected) {
        let model = graph.optimized().unwrap();
        let output = model.output_outlets().unwrap()[0];
        assert!(model.node(output.node).op_is::<Const>(), "{model}");
        assert_eq!(model.nodes().len(), 1, "{model}");
        assert_eq!(*graph::run(&model, &[]).unwrap()[0], expected);
    }
}

#[test]
fn cost_counts_one_buffer_access_per_update_element() {
    let graph = Graph::new(18)
        .input("data", DatumType::F32, &[D::S("N"), D::N(8)])
        .input_c("indices", DatumType::I64, &[3, 1])
        .input_c("updates", DatumType::F32, &[3, 8])
        .node(
            "ScatterND",
            &["data", "indices", "updates"],
            &["out"],
            vec![],
        )
        .output("out", DatumType::F32);
    let model = graph.optimized().unwrap();
    let node = model
        .nodes()
        .iter()
        .find(|n| n.op_is::<ScatterNd>())
        .unwrap();
    let facts = model.node_input_facts(node.id).unwrap();
    let cost = node.op.cost(&facts).unwrap();
    assert_eq!(
        cost.to_vec(),
        vec![(Cost::Buffer(DatumType::F32), 24.to_dim())]
    );
}

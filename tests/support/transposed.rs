//! What the transpose-fold tests share: permutations as ONNX attributes,
//! seeded inputs, the unfolded graph's result, and what a plan keeps.
//! Used next to `crates/tract-onnx-scatter/src/test_graph.rs` (`mod graph;` in the test).

#![allow(dead_code)]

use crate::graph::{Graph, attr_ints};
use tract_onnx_scatter::ops::ScatterNd;
use tract_onnx_scatter::tract_core::ops::change_axes::AxisOp;
use tract_onnx_scatter::tract_onnx::pb::AttributeProto;
use tract_onnx_scatter::tract_onnx::prelude::*;

/// `perm` as a Transpose's attribute.
pub fn perm(perm: &[usize]) -> AttributeProto {
    attr_ints("perm", &perm.iter().map(|&p| p as i64).collect::<Vec<_>>())
}

/// `inv[perm[i]] == i`.
pub fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}

/// `shape` with its axes in `perm`'s order (ONNX Transpose's output shape).
pub fn permuted(shape: &[usize], perm: &[usize]) -> Vec<usize> {
    perm.iter().map(|&p| shape[p]).collect()
}

/// The `MoveAxis` nodes (tract's transposes) of `model`.
pub fn moves(model: &TypedModel) -> usize {
    model
        .nodes()
        .iter()
        .filter(|n| {
            n.op_as::<AxisOp>()
                .is_some_and(|op| matches!(op, AxisOp::Move(..)))
        })
        .count()
}

/// The nodes of `model` whose op is an `O`.
pub fn ops<O: TypedOp>(model: &TypedModel) -> Vec<&O> {
    model
        .nodes()
        .iter()
        .filter_map(|n| n.op_as::<O>())
        .collect()
}

/// The permutation a ScatterND reads its data through (`Some(perm)`: the
/// scatter is on `transpose(data, perm)` and keeps data's stored layout),
/// as the op's public `info()` states it: the op's fields are the plugin's.
pub fn layout_of(op: &ScatterNd) -> Option<Vec<usize>> {
    let info = op.info().unwrap();
    let line = info
        .iter()
        .find_map(|l| l.strip_prefix("on data transposed by ["))?;
    let list = line.split(']').next().unwrap();
    Some(list.split(", ").map(|d| d.parse().unwrap()).collect())
}

/// f32 values in [-0.5, 0.5) from `seed`, none of them equal by chance
/// often enough to hide a wrong order.
pub fn random(shape: &[usize], seed: u64) -> Tensor {
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

/// `[n, 1]` int64 row indices.
pub fn rows(values: &[i64]) -> Tensor {
    tensor1(values).into_shape(&[values.len(), 1]).unwrap()
}

/// The first output of `model` on `inputs`.
pub fn run(model: &TypedModel, inputs: &[Tensor]) -> TractResult<Tensor> {
    let plan = model.clone().into_runnable()?;
    let out = plan.run(inputs.iter().cloned().map(|t| t.into_tvalue()).collect())?;
    Ok(out[0].clone().into_tensor())
}

/// `g` optimized, after checking that it computes what `g` typed and not
/// decluttered (every transpose and scatter as written) computes, bit for
/// bit.
pub fn optimized_exactly(g: &Graph, inputs: &[Tensor]) -> TypedModel {
    let optimized = g.optimized().unwrap();
    let unfolded = run(&g.typed().unwrap(), inputs).unwrap();
    let got = run(&optimized, inputs).unwrap();
    assert_eq!(got, unfolded, "optimized plan:\n{optimized}");
    optimized
}

//! Realistic multi-node graphs around a scatter, as exporters write them,
//! run end to end through `tract_onnx_scatter::onnx()` (optimized) and
//! checked against plain Rust loops; stock tract's result is compared where
//! it has one.
//!
//! * a KV-cache decode loop: the new key/value row written with ScatterND at
//!   a position given as an input, attention over the cache, caches fed back
//!   for four steps;
//! * torch's `x[idx] = v` (index_put) export: indices from Unsqueeze of an
//!   input, updates Expand-ed to a shape built with Shape/Slice/Concat;
//! * a segment mean: ScatterElements `add` into ConstantOfShape zeros, once
//!   for the sums and once for the counts, with a symbolic row count.

use crate::graph;

use graph::{D, Graph, attr_int, tensor};
use prost::Message;
use tract_onnx_scatter::ops::{ScatterElements, ScatterNd};
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::pb::AttributeProto;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::prelude::*;

fn f32s(shape: &[usize], values: Vec<f32>) -> Tensor {
    Tensor::from_shape(shape, &values).unwrap()
}

fn i64s(shape: &[usize], values: &[i64]) -> Tensor {
    tensor(DatumType::I64, shape, values)
}

fn values(t: &TValue) -> Vec<f32> {
    t.cast_to::<f32>()
        .unwrap()
        .try_as_plain_ram()
        .unwrap()
        .as_slice::<f32>()
        .unwrap()
        .to_vec()
}

fn assert_close(what: &str, got: &[f32], expected: &[f32]) {
    assert_eq!(got.len(), expected.len(), "{what}: length");
    for (ix, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (g - e).abs() <= 1e-5 + 1e-4 * e.abs(),
            "{what}: element {ix}: got {g}, expected {e}"
        );
    }
}

/// The graph loaded by stock tract (no plugin), optimized.
fn stock_optimized(graph: &Graph) -> TractResult<TypedModel> {
    let bytes = graph.proto().encode_to_vec();
    tract_onnx::onnx()
        .model_for_read(&mut &bytes[..])?
        .into_optimized()
}

fn plan(model: TypedModel) -> std::sync::Arc<TypedSimplePlan> {
    model.into_runnable().unwrap()
}

fn feed(inputs: &[Tensor]) -> TVec<TValue> {
    inputs.iter().cloned().map(|t| t.into_tvalue()).collect()
}

// ---------------------------------------------------------------------------
// KV-cache decode loop
// ---------------------------------------------------------------------------

const T: usize = 6; // cache length
const H: usize = 2; // heads
const DH: usize = 4; // head size

/// k_cache, v_cache [T, H, DH] (sequence first), k_new, v_new [1, H, DH],
/// q [H, DH], pos int64 [1]:
///
/// ```text
/// idx   = Unsqueeze(pos, [1])                       [1, 1]
/// k_out = ScatterND(k_cache, idx, k_new)            row `pos` replaced
/// v_out = ScatterND(v_cache, idx, v_new)
/// p     = Softmax(ReduceSum(k_out * q, [2]), axis 0)        [T, H]
/// ctx   = ReduceSum(Unsqueeze(p, [2]) * v_out, [0])           [H, DH]
/// ```
fn kv_decode_graph() -> Graph {
    let c = |n: usize| D::N(n as i64);
    Graph::new(13)
        .input("k_cache", DatumType::F32, &[c(T), c(H), c(DH)])
        .input("v_cache", DatumType::F32, &[c(T), c(H), c(DH)])
        .input("k_new", DatumType::F32, &[c(1), c(H), c(DH)])
        .input("v_new", DatumType::F32, &[c(1), c(H), c(DH)])
        .input("q", DatumType::F32, &[c(H), c(DH)])
        .input("pos", DatumType::I64, &[c(1)])
        .init("axes1", &i64s(&[1], &[1]))
        .init("axes2", &i64s(&[1], &[2]))
        .init("axes0", &i64s(&[1], &[0]))
        .node("Unsqueeze", &["pos", "axes1"], &["idx"], vec![])
        .node(
            "ScatterND",
            &["k_cache", "idx", "k_new"],
            &["k_out"],
            vec![],
        )
        .node(
            "ScatterND",
            &["v_cache", "idx", "v_new"],
            &["v_out"],
            vec![],
        )
        .node("Mul", &["k_out", "q"], &["kq"], vec![])
        .node(
            "ReduceSum",
            &["kq", "axes2"],
            &["scores"],
            vec![attr_int("keepdims", 0)],
        )
        .node("Softmax", &["scores"], &["p"], vec![attr_int("axis", 0)])
        .node("Unsqueeze", &["p", "axes2"], &["p3"], vec![])
        .node("Mul", &["p3", "v_out"], &["pv"], vec![])
        .node(
            "ReduceSum",
            &["pv", "axes0"],
            &["ctx"],
            vec![attr_int("keepdims", 0)],
        )
        .output("ctx", DatumType::F32)
        .output("k_out", DatumType::F32)
        .output("v_out", DatumType::F32)
}

/// The same step with plain loops: (ctx, k_out, v_out).
fn kv_decode_reference(
    k: &[f32],
    v: &[f32],
    k_new: &[f32],
    v_new: &[f32],
    q: &[f32],
    pos: usize,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let row = H * DH;
    let mut k = k.to_vec();
    let mut v = v.to_vec();
    k[pos * row..(pos + 1) * row].copy_from_slice(k_new);
    v[pos * row..(pos + 1) * row].copy_from_slice(v_new);
    let mut ctx = vec![0f32; H * DH];
    for h in 0..H {
        let scores: Vec<f32> = (0..T)
            .map(|t| {
                (0..DH)
                    .map(|d| k[t * row + h * DH + d] * q[h * DH + d])
                    .sum()
            })
            .collect();
        let max = scores.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let exps: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
        let total: f32 = exps.iter().sum();
        for d in 0..DH {
            ctx[h * DH + d] = (0..T)
                .map(|t| exps[t] / total * v[t * row + h * DH + d])
                .sum();
        }
    }
    (ctx, k, v)
}

/// Deterministic pseudo-random floats in [-1, 1).
fn noise(seed: u64, n: usize) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

#[test]
fn kv_cache_decode_loop_four_steps() {
    let graph = kv_decode_graph();
    let model = graph.optimized().unwrap();
    // The position is an input: the writes stay scatters (ours).
    assert_eq!(
        model
            .nodes()
            .iter()
            .filter(|n| n.op_is::<ScatterNd>())
            .count(),
        2
    );
    let plugin = plan(model);
    let stock = plan(stock_optimized(&graph).unwrap());

    let q = noise(1, H * DH);
    let (mut k, mut v) = (vec![0f32; T * H * DH], vec![0f32; T * H * DH]);
    let (mut stock_k, mut stock_v) = (k.clone(), v.clone());
    for step in 0..4usize {
        let k_new = noise(10 + step as u64, H * DH);
        let v_new = noise(20 + step as u64, H * DH);
        let inputs = |k: &[f32], v: &[f32]| {
            feed(&[
                f32s(&[T, H, DH], k.to_vec()),
                f32s(&[T, H, DH], v.to_vec()),
                f32s(&[1, H, DH], k_new.clone()),
                f32s(&[1, H, DH], v_new.clone()),
                f32s(&[H, DH], q.clone()),
                i64s(&[1], &[step as i64]),
            ])
        };
        let (ctx, k_ref, v_ref) = kv_decode_reference(&k, &v, &k_new, &v_new, &q, step);
        let out = plugin.run(inputs(&k, &v)).unwrap();
        assert_close(&format!("step {step} ctx"), &values(&out[0]), &ctx);
        assert_eq!(values(&out[1]), k_ref, "step {step} k cache");
        assert_eq!(values(&out[2]), v_ref, "step {step} v cache");

        let stock_out = stock.run(inputs(&stock_k, &stock_v)).unwrap();
        assert_eq!(
            values(&stock_out[0]),
            values(&out[0]),
            "step {step}: stock ctx"
        );
        // Feed each engine's caches back.
        (k, v) = (values(&out[1]), values(&out[2]));
        (stock_k, stock_v) = (values(&stock_out[1]), values(&stock_out[2]));
    }
    assert_eq!((k, v), (stock_k, stock_v));
}

// ---------------------------------------------------------------------------
// index_put: x[idx] = v
// ---------------------------------------------------------------------------

/// torch's export of `x[idx] = v` (x [5, 3] f32, idx int64 [N], v a scalar):
///
/// ```text
/// shape = Concat(Shape(idx), Slice(Shape(x), [1], [i64::MAX]))   [N, 3]
/// y     = ScatterND(x, Unsqueeze(idx, [-1]), Expand(v, shape))
/// ```
fn index_put_graph() -> Graph {
    Graph::new(13)
        .input("x", DatumType::F32, &[D::N(5), D::N(3)])
        .input("idx", DatumType::I64, &[D::S("N")])
        .input("v", DatumType::F32, &[])
        .init("starts", &i64s(&[1], &[1]))
        .init("ends", &i64s(&[1], &[i64::MAX]))
        .init("axes_last", &i64s(&[1], &[-1]))
        .node("Shape", &["idx"], &["idx_shape"], vec![])
        .node("Shape", &["x"], &["x_shape"], vec![])
        .node("Slice", &["x_shape", "starts", "ends"], &["x_tail"], vec![])
        .node(
            "Concat",
            &["idx_shape", "x_tail"],
            &["upd_shape"],
            vec![attr_int("axis", 0)],
        )
        .node("Expand", &["v", "upd_shape"], &["upd"], vec![])
        .node("Unsqueeze", &["idx", "axes_last"], &["ind"], vec![])
        .node("ScatterND", &["x", "ind", "upd"], &["y"], vec![])
        .output("y", DatumType::F32)
}

fn index_put_reference(x: &[f32], idx: &[i64], v: f32) -> Vec<f32> {
    let mut y = x.to_vec();
    for &i in idx {
        let row = i.rem_euclid(5) as usize;
        y[row * 3..row * 3 + 3].fill(v);
    }
    y
}

#[test]
fn index_put_export_with_symbolic_count_and_negative_indices() {
    let graph = index_put_graph();
    let model = graph.optimized().unwrap();
    let plugin = plan(model);
    let stock = plan(stock_optimized(&graph).unwrap());
    let x: Vec<f32> = (0..15).map(|i| i as f32).collect();
    for idx in [vec![1i64], vec![4, 0], vec![-1, 2, -5], vec![]] {
        let inputs = feed(&[
            f32s(&[5, 3], x.clone()),
            i64s(&[idx.len()], &idx),
            tensor(DatumType::F32, &[], &[-7]),
        ]);
        let out = plugin.run(inputs.clone()).unwrap();
        assert_eq!(out[0].shape(), &[5, 3]);
        assert_eq!(
            values(&out[0]),
            index_put_reference(&x, &idx, -7.0),
            "idx {idx:?}"
        );
        // Stock tract rejects negative ScatterND indices (legal in ONNX).
        let stock_result = stock.run(inputs);
        if idx.iter().all(|&i| i >= 0) {
            assert_eq!(values(&stock_result.unwrap()[0]), values(&out[0]));
        } else {
            eprintln!(
                "index_put {idx:?}: stock: {:?}",
                stock_result.map(|_| ()).map_err(|e| format!("{e:#}"))
            );
        }
    }
}

// ---------------------------------------------------------------------------
// segment mean with ScatterElements add
// ---------------------------------------------------------------------------

const SEGMENTS: usize = 4;
const F: usize = 3;

/// x [N, F] f32, seg int64 [N] (segment of each row, in 0..4):
///
/// ```text
/// idx    = Expand(Unsqueeze(seg, [1]), Shape(x))                      [N, F]
/// sums   = ScatterElements(ConstantOfShape([4, F]), idx, x, axis 0, add)
/// counts = ScatterElements(ConstantOfShape([4]), seg, Expand(1, Shape(seg)), axis 0, add)
/// mean   = sums / Max(Unsqueeze(counts, [1]), 1)
/// ```
fn segment_mean_graph() -> Graph {
    Graph::new(18)
        .input("x", DatumType::F32, &[D::S("N"), D::N(F as i64)])
        .input("seg", DatumType::I64, &[D::S("N")])
        .init("sums_shape", &i64s(&[2], &[SEGMENTS as i64, F as i64]))
        .init("counts_shape", &i64s(&[1], &[SEGMENTS as i64]))
        .init("axes1", &i64s(&[1], &[1]))
        .init("one", &tensor(DatumType::F32, &[], &[1]))
        .node("Shape", &["x"], &["x_shape"], vec![])
        .node("Shape", &["seg"], &["seg_shape"], vec![])
        .node("Unsqueeze", &["seg", "axes1"], &["seg1"], vec![])
        .node("Expand", &["seg1", "x_shape"], &["idx"], vec![])
        .node(
            "ConstantOfShape",
            &["sums_shape"],
            &["zeros2"],
            vec![zero_f32()],
        )
        .node(
            "ConstantOfShape",
            &["counts_shape"],
            &["zeros1"],
            vec![zero_f32()],
        )
        .node("Expand", &["one", "seg_shape"], &["ones"], vec![])
        .node(
            "ScatterElements",
            &["zeros2", "idx", "x"],
            &["sums"],
            vec![attr_int("axis", 0), graph::attr_string("reduction", "add")],
        )
        .node(
            "ScatterElements",
            &["zeros1", "seg", "ones"],
            &["counts"],
            vec![attr_int("axis", 0), graph::attr_string("reduction", "add")],
        )
        .node("Unsqueeze", &["counts", "axes1"], &["counts1"], vec![])
        .node("Max", &["counts1", "one"], &["denom"], vec![])
        .node("Div", &["sums", "denom"], &["mean"], vec![])
        .output("mean", DatumType::F32)
        .output("counts", DatumType::F32)
}

/// `value = float32 [0.]`, as torch writes it. (Without it, tract 0.23.9's
/// ConstantOfShape makes f64 zeros where ONNX says float32: a host bug.)
fn zero_f32() -> AttributeProto {
    AttributeProto {
        name: "value".into(),
        r#type: AttributeType::Tensor as i32,
        t: Some(graph::tensor_proto("", &tensor(DatumType::F32, &[1], &[0]))),
        ..Default::default()
    }
}

#[test]
fn segment_mean_with_scatter_elements_add() {
    let graph = segment_mean_graph();
    let model = graph.optimized().unwrap();
    // The sums' broadcast row index makes them a row scatter
    // (`ops/rewrite/broadcast_rows.rs`); the counts stay one element per row.
    let count = |is: fn(&TypedNode) -> bool| model.nodes().iter().filter(|n| is(n)).count();
    assert_eq!(count(|n| n.op_is::<ScatterElements>()), 1, "{model}");
    assert_eq!(count(|n| n.op_is::<ScatterNd>()), 1, "{model}");
    let plugin = plan(model);
    let stock = stock_optimized(&graph).map(plan);
    for n in [1usize, 7, 0] {
        let x: Vec<f32> = (0..n * F).map(|i| i as f32 * 0.5 - 3.0).collect();
        // Segments 0..3 used, segment 3 left empty (mean 0, count 0).
        let seg: Vec<i64> = (0..n as i64).map(|i| (i * 2) % 3).collect();
        let mut sums = [0f32; SEGMENTS * F];
        let mut counts = [0f32; SEGMENTS];
        for row in 0..n {
            let s = seg[row] as usize;
            counts[s] += 1.0;
            for f in 0..F {
                sums[s * F + f] += x[row * F + f];
            }
        }
        let mean: Vec<f32> = (0..SEGMENTS * F)
            .map(|i| sums[i] / counts[i / F].max(1.0))
            .collect();
        let inputs = feed(&[f32s(&[n, F], x), i64s(&[n], &seg)]);
        let out = plugin.run(inputs.clone()).unwrap();
        assert_close(&format!("n {n} mean"), &values(&out[0]), &mean);
        assert_eq!(values(&out[1]), counts.to_vec(), "n {n} counts");
        match &stock {
            Ok(stock) => match stock.run(inputs) {
                Ok(s) => assert_eq!(values(&s[0]), values(&out[0]), "n {n}: stock"),
                Err(e) => eprintln!("segment mean n {n}: stock: {e:#}"),
            },
            Err(e) => eprintln!("segment mean: stock cannot load: {e:#}"),
        }
    }
}

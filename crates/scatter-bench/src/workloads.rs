//! The benchmark workloads, generated in code from fixed seeds, and the
//! one-node ONNX models that run them.

use prost::Message;
use tract_onnx_scatter::tract_onnx::pb::attribute_proto::AttributeType;
use tract_onnx_scatter::tract_onnx::pb::tensor_proto::DataType;
use tract_onnx_scatter::tract_onnx::pb::tensor_shape_proto::{Dimension, dimension};
use tract_onnx_scatter::tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto, type_proto,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// The ONNX op a workload runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScatterOp {
    ScatterElements,
    ScatterNd,
    /// ONNX `TensorScatter` (opset 24), mode linear: graph inputs keep the
    /// names `data` (past_cache), `indices` (write_indices) and `updates`
    /// (update); the node takes them in its own order.
    TensorScatter,
}

impl ScatterOp {
    pub fn onnx_name(self) -> &'static str {
        match self {
            ScatterOp::ScatterElements => "ScatterElements",
            ScatterOp::ScatterNd => "ScatterND",
            ScatterOp::TensorScatter => "TensorScatter",
        }
    }
}

/// One benchmark case: a single scatter node on f32 data, int64 indices.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: &'static str,
    pub op: ScatterOp,
    pub data_shape: Vec<usize>,
    pub data: Vec<f32>,
    pub indices_shape: Vec<usize>,
    pub indices: Vec<i64>,
    pub updates_shape: Vec<usize>,
    pub updates: Vec<f32>,
    /// `ScatterElements` and `TensorScatter` only.
    pub axis: i64,
    /// ONNX spelling; `"none"` writes no attribute.
    pub reduction: &'static str,
    /// Time dominated by the copy of data when data is shared.
    pub copy_bound: bool,
    /// What the row is measured for beyond the engines' calling modes.
    pub extras: Extras,
    /// `indices` hold one row index per update row (`[E]`); the model
    /// broadcasts them as PyTorch's dynamo exporter writes
    /// `scatter_add_(0, idx.unsqueeze(1).expand_as(msg), msg)` with static
    /// shapes: `Unsqueeze(indices, [1])`, `Expand` to the updates' shape
    /// (a constant), then the op on axis 0.
    pub broadcast_rows: bool,
}

/// What a row is measured for beyond every engine's calling modes (all
/// off for most rows).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extras {
    /// Also at [`crate::THREADS`] threads: the plugin's one-shot with
    /// tract's executor installed, onnxruntime with `intra_op_num_threads`.
    pub threaded: bool,
    /// A random-index row: its floor (read indices and updates once, write
    /// the output once; [`crate::floor`]) is timed beside it.
    pub floor: bool,
    /// A GNN message-passing row: also timed against PyTorch's
    /// `index_add_` and `scatter_add_` at 1 and [`crate::THREADS`] threads.
    pub gnn: bool,
    /// Only the owned mode, a fresh copy of data moved into every call
    /// (the other modes are another row's).
    pub fresh_each_call: bool,
    /// Only the owned mode and onnxruntime: a new copy of the indices moved
    /// into every call, data and updates the caller's (the other modes,
    /// whose indices come back, are another row's). A caller whose
    /// indices change every call pays their check (and sort) every call.
    pub new_indices_each_call: bool,
    /// Data and updates are bfloat16 in the model (their values bfloat16
    /// values): the cost of bfloat16 inputs (and of a reduction rounding
    /// after every update), timed in shared rounds beside the float32 row
    /// it repeats ([`FLOAT32_TWINS`]). Neither stock tract nor
    /// onnxruntime's CPU scatter runs it.
    pub bfloat16: bool,
}

/// The names of [`workloads`], in order.
pub const NAMES: [&str; 18] = [
    "se_ov_example6",
    "se_add_axis1",
    "se_bf16_add_axis1",
    "se_max_dense_axis0",
    "snd_rows",
    "snd_elems",
    "snd_kv_cache",
    "snd_add_hist",
    "se_tiny",
    "ts_kv_decode",
    "snd_kv_fresh",
    "gnn_painn",
    "gnn_large",
    "se_max_dense_new_indices",
    "snd_elems_new_indices",
    "snd_add_hist_new_indices",
    "snd_bf16_kv_cache",
    "ts_bf16_kv_decode",
];

/// Each bfloat16 row and the float32 row it repeats: timed in shared
/// rounds, its ratios over the float32 row's paired round by round.
pub const FLOAT32_TWINS: [(&str, &str); 3] = [
    ("se_bf16_add_axis1", "se_add_axis1"),
    ("snd_bf16_kv_cache", "snd_kv_cache"),
    ("ts_bf16_kv_decode", "ts_kv_decode"),
];

/// The float32 row that bfloat16 row `name` repeats.
pub fn float32_twin(name: &str) -> Option<&'static str> {
    FLOAT32_TWINS
        .iter()
        .find(|(bf16, _)| *bf16 == name)
        .map(|(_, f32)| *f32)
}

/// The bfloat16 row that repeats float32 row `name`.
pub fn bfloat16_twin(name: &str) -> Option<&'static str> {
    FLOAT32_TWINS
        .iter()
        .find(|(_, f32)| *f32 == name)
        .map(|(bf16, _)| *bf16)
}

/// The large copy-bound, random-index and GNN rows: measured at 1 and
/// [`crate::THREADS`] threads.
pub const THREADED: [&str; 10] = [
    "se_ov_example6",
    "se_add_axis1",
    "se_max_dense_axis0",
    "snd_rows",
    "snd_elems",
    "snd_kv_cache",
    "snd_add_hist",
    "ts_kv_decode",
    "gnn_painn",
    "gnn_large",
];

/// The GNN message-passing rows, timed against PyTorch too.
pub const GNN: [&str; 2] = ["gnn_painn", "gnn_large"];

/// The random-index rows, timed beside their floor.
const FLOORED: [&str; 5] = [
    "se_max_dense_axis0",
    "snd_elems",
    "snd_add_hist",
    "gnn_painn",
    "gnn_large",
];

/// The workloads stock tract can run (it has no `TensorScatter`).
pub const STOCK_NAMES: [&str; 8] = [
    "se_ov_example6",
    "se_add_axis1",
    "se_max_dense_axis0",
    "snd_rows",
    "snd_elems",
    "snd_kv_cache",
    "snd_add_hist",
    "se_tiny",
];

/// SplitMix64: tiny, deterministic, good enough to spread indices.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, n)` (multiply-shift; bias irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)`.
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }

    pub fn indices(&mut self, n: usize, below: usize) -> Vec<i64> {
        (0..n).map(|_| self.below(below as u64) as i64).collect()
    }
}

fn count(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// `ScatterElements` with random indices along `axis`.
fn elements(
    name: &'static str,
    data_shape: &[usize],
    indices_shape: &[usize],
    axis: usize,
    reduction: &'static str,
    copy_bound: bool,
    seed: u64,
) -> Workload {
    let mut rng = Rng::new(seed);
    let data = rng.f32s(count(data_shape));
    let indices = rng.indices(count(indices_shape), data_shape[axis]);
    let updates = rng.f32s(count(indices_shape));
    Workload {
        name,
        op: ScatterOp::ScatterElements,
        data_shape: data_shape.to_vec(),
        data,
        indices_shape: indices_shape.to_vec(),
        indices,
        updates_shape: indices_shape.to_vec(),
        updates,
        axis: axis as i64,
        reduction,
        copy_bound,
        extras: Extras::default(),
        broadcast_rows: false,
    }
}

/// `ScatterND` with the given index tuples.
fn nd(
    name: &'static str,
    data_shape: &[usize],
    indices_shape: &[usize],
    indices: Vec<i64>,
    reduction: &'static str,
    copy_bound: bool,
    seed: u64,
) -> Workload {
    let (&k, batch) = indices_shape.split_last().expect("indices rank >= 1");
    let updates_shape: Vec<usize> = batch.iter().chain(&data_shape[k..]).copied().collect();
    let mut rng = Rng::new(seed);
    let data = rng.f32s(count(data_shape));
    let updates = rng.f32s(count(&updates_shape));
    Workload {
        name,
        op: ScatterOp::ScatterNd,
        data_shape: data_shape.to_vec(),
        data,
        indices_shape: indices_shape.to_vec(),
        indices,
        updates_shape,
        updates,
        axis: 0,
        reduction,
        copy_bound,
        extras: Extras::default(),
        broadcast_rows: false,
    }
}

/// `n` distinct values of `[0, total)` in a scattered order: an affine
/// bijection `i -> (a * i + b) mod total` with `a` coprime to `total`.
fn distinct(n: usize, total: usize, rng: &mut Rng) -> Vec<usize> {
    assert!(n <= total);
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let total64 = total as u64;
    let mut a = rng.below(total64).max(1) | 1;
    while gcd(a, total64) != 1 {
        a += 2;
    }
    let b = rng.below(total64);
    (0..n as u64)
        .map(|i| ((a as u128 * i as u128 + b as u128) % total64 as u128) as usize)
        .collect()
}

/// Builds the workload called `name` (one of [`NAMES`]).
pub fn workload(name: &str) -> Option<Workload> {
    let mut w = match name {
        "se_ov_example6" => elements(
            "se_ov_example6",
            &[1000, 256, 7, 7],
            &[125, 20, 7, 6],
            0,
            "none",
            true,
            1,
        ),
        "se_add_axis1" => elements(
            "se_add_axis1",
            &[4096, 4096],
            &[4096, 64],
            1,
            "add",
            true,
            2,
        ),
        "se_max_dense_axis0" => elements(
            "se_max_dense_axis0",
            &[2048, 2048],
            &[2048, 2048],
            0,
            "max",
            false,
            3,
        ),
        "snd_rows" => {
            let mut rng = Rng::new(4);
            let rows = distinct(8, 32, &mut rng);
            let indices = rows.into_iter().map(|r| r as i64).collect();
            nd(
                "snd_rows",
                &[32, 1024, 1024],
                &[8, 1],
                indices,
                "none",
                true,
                4,
            )
        }
        "snd_elems" => {
            let mut rng = Rng::new(5);
            let flat = distinct(1_000_000, 10_000 * 1000, &mut rng);
            let indices = flat
                .into_iter()
                .flat_map(|f| [(f / 1000) as i64, (f % 1000) as i64])
                .collect();
            nd(
                "snd_elems",
                &[10_000, 1000],
                &[1_000_000, 2],
                indices,
                "none",
                false,
                5,
            )
        }
        "snd_kv_cache" => {
            let mut rng = Rng::new(6);
            let indices = (0..32)
                .flat_map(|h| [0, h, rng.below(2048) as i64])
                .collect();
            nd(
                "snd_kv_cache",
                &[1, 32, 2048, 128],
                &[1, 32, 3],
                indices,
                "none",
                true,
                6,
            )
        }
        "snd_add_hist" => {
            let mut rng = Rng::new(7);
            let indices = rng.indices(1 << 20, 65536);
            nd(
                "snd_add_hist",
                &[65536],
                &[1 << 20, 1],
                indices,
                "add",
                false,
                7,
            )
        }
        "se_tiny" => Workload {
            name: "se_tiny",
            op: ScatterOp::ScatterElements,
            data_shape: vec![3, 3],
            data: vec![0.0; 9],
            indices_shape: vec![2, 3],
            indices: vec![1, 0, 2, 0, 2, 1],
            updates_shape: vec![2, 3],
            updates: vec![1.0, 1.1, 1.2, 2.0, 2.1, 2.2],
            axis: 0,
            reduction: "none",
            copy_bound: false,
            extras: Extras::default(),
            broadcast_rows: false,
        },
        // One decode step of a KV cache: a single token written at a
        // position of a [batch 1, 32 heads, 2048 positions, 128] f32 cache.
        "ts_kv_decode" => {
            let data_shape = [1, 32, 2048, 128];
            let updates_shape = [1, 32, 1, 128];
            let mut rng = Rng::new(9);
            let data = rng.f32s(count(&data_shape));
            let updates = rng.f32s(count(&updates_shape));
            Workload {
                name: "ts_kv_decode",
                op: ScatterOp::TensorScatter,
                data_shape: data_shape.to_vec(),
                data,
                indices_shape: vec![1],
                indices: vec![1000],
                updates_shape: updates_shape.to_vec(),
                updates,
                axis: -2,
                reduction: "none",
                copy_bound: true,
                extras: Extras::default(),
                broadcast_rows: false,
            }
        }
        // A fresh cache moved into every call (the caller keeps none
        // across calls): what the output pool must not make slower than
        // stock tract.
        "snd_kv_fresh" => repeat(
            "snd_kv_cache",
            "snd_kv_fresh",
            Extras {
                fresh_each_call: true,
                ..Extras::default()
            },
        )?,
        // PaiNN's message passing: 17k edge messages of 128 features into
        // 659 atoms (the shipped model's sizes).
        "gnn_painn" => gnn("gnn_painn", 17_000, 128, 659, 10),
        "gnn_large" => gnn("gnn_large", 1_000_000, 64, 100_000, 11),
        // The random-index rows with indices that change every call.
        "se_max_dense_new_indices" => {
            new_indices("se_max_dense_axis0", "se_max_dense_new_indices")?
        }
        "snd_elems_new_indices" => new_indices("snd_elems", "snd_elems_new_indices")?,
        "snd_add_hist_new_indices" => new_indices("snd_add_hist", "snd_add_hist_new_indices")?,
        "se_bf16_add_axis1" => in_bfloat16("se_add_axis1", "se_bf16_add_axis1")?,
        // A bfloat16 KV cache, as LLM decoders keep theirs.
        "snd_bf16_kv_cache" => in_bfloat16("snd_kv_cache", "snd_bf16_kv_cache")?,
        "ts_bf16_kv_decode" => in_bfloat16("ts_kv_decode", "ts_bf16_kv_decode")?,
        _ => return None,
    };
    w.extras.threaded |= THREADED.contains(&name);
    w.extras.floor |= FLOORED.contains(&name);
    Some(w)
}

/// Row `base`'s model and inputs as row `name`, measured as `extras` say
/// (a row that repeats another in other calling modes).
fn repeat(base: &str, name: &'static str, extras: Extras) -> Option<Workload> {
    let mut w = workload(base)?;
    w.name = name;
    w.extras = extras;
    Some(w)
}

/// Row `base`, its indices moved in new every call
/// ([`Extras::new_indices_each_call`]).
fn new_indices(base: &str, name: &'static str) -> Option<Workload> {
    let extras = Extras {
        new_indices_each_call: true,
        ..Extras::default()
    };
    repeat(base, name, extras)
}

/// Row `base` with bfloat16 data and updates ([`Extras::bfloat16`]), its
/// values rounded to bfloat16 values.
fn in_bfloat16(base: &str, name: &'static str) -> Option<Workload> {
    let extras = Extras {
        bfloat16: true,
        ..Extras::default()
    };
    let mut w = repeat(base, name, extras)?;
    for v in w.data.iter_mut().chain(&mut w.updates) {
        *v = half::bf16::from_f32(*v).to_f32();
    }
    Some(w)
}

/// GNN message passing as PyTorch's dynamo exporter writes
/// `out.scatter_add_(0, idx.unsqueeze(1).expand_as(msg), msg)` (and
/// TorchScript, with `Shape(msg)` for the constant): `edges` messages of
/// `features` into `nodes` rows, `ScatterElements(reduction=add)` on axis
/// 0 of the `[edges]` destinations broadcast along the features
/// ([`Workload::broadcast_rows`]). Destinations uniform at random
/// (seeded): a graph's edge list sorted by source scatters to
/// destinations in no particular order.
fn gnn(name: &'static str, edges: usize, features: usize, nodes: usize, seed: u64) -> Workload {
    let mut rng = Rng::new(seed);
    let data = rng.f32s(nodes * features);
    let indices = rng.indices(edges, nodes);
    let updates = rng.f32s(edges * features);
    Workload {
        name,
        op: ScatterOp::ScatterElements,
        data_shape: vec![nodes, features],
        data,
        indices_shape: vec![edges],
        indices,
        updates_shape: vec![edges, features],
        updates,
        axis: 0,
        reduction: "add",
        copy_bound: false,
        extras: Extras {
            gnn: true,
            ..Extras::default()
        },
        broadcast_rows: true,
    }
}

/// Every workload whose name contains `filter`.
pub fn workloads(filter: Option<&str>) -> Vec<Workload> {
    NAMES
        .iter()
        .filter(|n| filter.is_none_or(|f| n.contains(f)))
        .filter_map(|n| workload(n))
        .collect()
}

pub(crate) fn value_info(name: &str, shape: &[usize], elem: DataType) -> ValueInfoProto {
    let dim = shape
        .iter()
        .map(|&d| Dimension {
            value: Some(dimension::Value::DimValue(d as i64)),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: elem as i32,
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl Workload {
    /// Bytes of the data tensor.
    pub fn data_bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<f32>()
    }

    /// A one-node model (opset 18; 24 for `TensorScatter`, mode linear;
    /// the exporter's broadcast before it for [`Workload::broadcast_rows`]):
    /// graph inputs `data`, `indices`, `updates` (none constant, so no
    /// load-time rewrite of constant indices applies), output `output`.
    pub fn model_proto(&self) -> ModelProto {
        let mut attribute = vec![];
        if self.op != ScatterOp::ScatterNd {
            attribute.push(AttributeProto {
                name: "axis".into(),
                r#type: AttributeType::Int as i32,
                i: self.axis,
                ..Default::default()
            });
        }
        if self.op == ScatterOp::TensorScatter {
            attribute.push(AttributeProto {
                name: "mode".into(),
                r#type: AttributeType::String as i32,
                s: b"linear".to_vec(),
                ..Default::default()
            });
        }
        if self.reduction != "none" {
            attribute.push(AttributeProto {
                name: "reduction".into(),
                r#type: AttributeType::String as i32,
                s: self.reduction.as_bytes().to_vec(),
                ..Default::default()
            });
        }
        let (node_inputs, opset, ir_version) = match self.op {
            ScatterOp::TensorScatter => (["data", "updates", "indices"], 24, 11),
            _ => (["data", "indices", "updates"], 18, 8),
        };
        let mut node_inputs = node_inputs.map(String::from).to_vec();
        let (mut node, initializer) = if self.broadcast_rows {
            node_inputs[1] = "expand".into();
            self.broadcast_rows_nodes()
        } else {
            (vec![], vec![])
        };
        node.push(NodeProto {
            input: node_inputs,
            output: vec!["output".into()],
            name: "scatter".into(),
            op_type: self.op.onnx_name().into(),
            attribute,
            ..Default::default()
        });
        let elem = if self.extras.bfloat16 {
            DataType::Bfloat16
        } else {
            DataType::Float
        };
        let graph = GraphProto {
            name: self.name.into(),
            input: vec![
                value_info("data", &self.data_shape, elem),
                value_info("indices", &self.indices_shape, DataType::Int64),
                value_info("updates", &self.updates_shape, elem),
            ],
            output: vec![value_info("output", &self.data_shape, elem)],
            node,
            initializer,
            ..Default::default()
        };
        ModelProto {
            ir_version,
            opset_import: vec![OperatorSetIdProto {
                domain: String::new(),
                version: opset,
            }],
            producer_name: "scatter-bench".into(),
            graph: Some(graph),
            ..Default::default()
        }
    }

    /// dynamo's `Unsqueeze(indices, [1]) -> unsqueeze`, `Expand(unsqueeze,
    /// updates' shape) -> expand` ([`Workload::broadcast_rows`]), with
    /// their constant inputs as initializers.
    fn broadcast_rows_nodes(&self) -> (Vec<NodeProto>, Vec<TensorProto>) {
        let ints = |name: &str, values: Vec<i64>| TensorProto {
            name: name.into(),
            dims: vec![values.len() as i64],
            data_type: DataType::Int64 as i32,
            int64_data: values,
            ..Default::default()
        };
        let node = |op: &str, inputs: [&str; 2], output: &str| NodeProto {
            input: inputs.map(String::from).to_vec(),
            output: vec![output.into()],
            name: format!("node_{op}"),
            op_type: op.into(),
            ..Default::default()
        };
        let shape = self.updates_shape.iter().map(|&d| d as i64).collect();
        (
            vec![
                node("Unsqueeze", ["indices", "val_0"], "unsqueeze"),
                node("Expand", ["unsqueeze", "val_4"], "expand"),
            ],
            vec![ints("val_0", vec![1]), ints("val_4", shape)],
        )
    }

    pub fn model_bytes(&self) -> Vec<u8> {
        self.model_proto().encode_to_vec()
    }

    pub fn data_tensor(&self) -> TractResult<Tensor> {
        tensor1(&self.data).into_shape(&self.data_shape)
    }

    pub fn indices_tensor(&self) -> TractResult<Tensor> {
        tensor1(&self.indices).into_shape(&self.indices_shape)
    }

    pub fn updates_tensor(&self) -> TractResult<Tensor> {
        tensor1(&self.updates).into_shape(&self.updates_shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gnn_rows_are_the_exporters_broadcast_and_run_as_a_row_scatter() {
        let w = gnn("gnn_small", 300, 8, 13, 1);
        let model = tract_onnx_scatter::onnx()
            .model_for_read(&mut &w.model_bytes()[..])
            .unwrap()
            .into_optimized()
            .unwrap();
        let ops: Vec<String> = model.nodes().iter().map(|n| n.op.name().into()).collect();
        assert!(ops.iter().any(|o| o == "ScatterND"), "{ops:?}");
        assert!(!ops.iter().any(|o| o.contains("Broadcast")), "{ops:?}");
        let plan = model.into_runnable().unwrap();
        let inputs = [w.data_tensor(), w.indices_tensor(), w.updates_tensor()];
        let inputs = inputs.map(|t| t.unwrap().into_tvalue());
        let out = plan.run(inputs.into_iter().collect()).unwrap();
        // Each edge's features added to its destination row, edge by edge.
        let mut want = w.data.clone();
        for (e, &row) in w.indices.iter().enumerate() {
            for f in 0..8 {
                want[row as usize * 8 + f] += w.updates[e * 8 + f];
            }
        }
        let view = out[0].try_as_plain_ram().unwrap();
        assert_eq!(view.as_slice::<f32>().unwrap(), &want[..]);
    }
}

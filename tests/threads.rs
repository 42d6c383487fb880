//! Scatters on tract's executor (`tract_linalg::multithread`): the plugin
//! splits large scatters over the threads the caller installed, by
//! destination, so every output is bit-identical at 1, 2 and 4 threads,
//! for every reduction, with duplicate indices, whether the data is
//! updated in place (owned) or copied first (shared with the caller).
//!
//! The shapes are just past the kernels' split thresholds
//! (`scatter_kernels::Schedule::DEFAULT`: 1 MiB of work; 8 MiB of output
//! for the destination-blocked ScatterND).

use crate::graph;

use graph::{Graph, attr_int, attr_string};
use tract_onnx_scatter::tract_core::tract_linalg::multithread::{
    Executor, multithread_tract_scope,
};
use tract_onnx_scatter::tract_onnx::prelude::*;

/// A fixed-seed generator (SplitMix64): the tests need no `rand`.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> i64 {
        (self.next() % n as u64) as i64
    }

    fn floats(&mut self, shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        // Values in [-2, 2) with every mantissa bit in play, so a changed
        // summation order would show in the bits.
        let v: Vec<f32> = (0..n)
            .map(|_| (self.next() >> 40) as f32 / (1u64 << 22) as f32 - 2.0)
            .collect();
        Tensor::from_shape(shape, &v).unwrap()
    }

    /// Indices in `[-bound, bound)`: negative ones and duplicates too.
    fn indices(&mut self, shape: &[usize], bound: usize) -> Tensor {
        let n: usize = shape.iter().product();
        let v: Vec<i64> = (0..n)
            .map(|_| self.below(2 * bound) - bound as i64)
            .collect();
        Tensor::from_shape(shape, &v).unwrap()
    }
}

/// The plan's output at `threads` threads of tract's executor. With
/// `shared_data`, the caller keeps a reference to the data, so the scatter
/// must copy it first (the fused copy); else it writes in place.
fn run_at(
    threads: usize,
    plan: &std::sync::Arc<TypedSimplePlan>,
    inputs: &[Tensor],
    shared_data: bool,
) -> Tensor {
    let executor = if threads == 1 {
        Executor::SingleThread
    } else {
        Executor::multithread(threads)
    };
    let values: TVec<TValue> = inputs.iter().cloned().map(|t| t.into_tvalue()).collect();
    let kept = shared_data.then(|| values[0].clone());
    let out = multithread_tract_scope(executor, || plan.run(values)).unwrap();
    drop(kept);
    out[0].clone().into_tensor()
}

/// Runs `graph` at 1, 2 and 4 threads, in place and copying, and checks
/// every output bit for bit against the single-threaded one.
fn assert_bit_identical_across_threads(what: &str, graph: &Graph, inputs: &[Tensor]) {
    let plan = graph.optimized().unwrap().into_runnable().unwrap();
    for shared_data in [false, true] {
        let serial = run_at(1, &plan, inputs, shared_data);
        for threads in [2, 4] {
            let parallel = run_at(threads, &plan, inputs, shared_data);
            let bits = |t: &Tensor| -> Vec<u32> {
                t.try_as_plain_ram()
                    .unwrap()
                    .as_slice::<f32>()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect()
            };
            assert_eq!(serial.shape(), parallel.shape(), "{what}");
            let (s, p) = (bits(&serial), bits(&parallel));
            if let Some(i) = (0..s.len()).find(|&i| s[i] != p[i]) {
                panic!(
                    "{what} (shared data: {shared_data}): at {threads} threads element {i} is {} \
                     where 1 thread gives {}",
                    f32::from_bits(p[i]),
                    f32::from_bits(s[i])
                );
            }
        }
    }
}

fn scatter_elements(axis: i64, reduction: &str, data: &[usize], indices: &[usize]) -> Graph {
    let mut attributes = vec![attr_int("axis", axis)];
    if reduction != "none" {
        attributes.push(attr_string("reduction", reduction));
    }
    Graph::new(18)
        .input_c("data", DatumType::F32, data)
        .input_c("indices", DatumType::I64, indices)
        .input_c("updates", DatumType::F32, indices)
        .node(
            "ScatterElements",
            &["data", "indices", "updates"],
            &["out"],
            attributes,
        )
        .output("out", DatumType::F32)
}

#[test]
fn scatter_elements_along_an_inner_axis_is_bit_identical_at_every_thread_count_for_every_reduction()
{
    let (data, indices) = ([64, 8192], [64, 4096]);
    let mut rng = Seeded(1);
    let inputs = [
        rng.floats(&data),
        rng.indices(&indices, data[1]),
        rng.floats(&indices),
    ];
    for reduction in ["none", "add", "mul", "max", "min"] {
        let graph = scatter_elements(1, reduction, &data, &indices);
        assert_bit_identical_across_threads(
            &format!("ScatterElements axis 1 {reduction}"),
            &graph,
            &inputs,
        );
    }
}

#[test]
fn scatter_elements_along_axis_0_of_a_large_tensor_is_bit_identical_at_every_thread_count() {
    // 8 MiB of output in rows of 16 KiB: banded, and split by columns.
    let (data, indices) = ([512, 4096], [256, 4096]);
    let mut rng = Seeded(2);
    let inputs = [
        rng.floats(&data),
        rng.indices(&indices, data[0]),
        rng.floats(&indices),
    ];
    for reduction in ["none", "add", "max"] {
        let graph = scatter_elements(0, reduction, &data, &indices);
        assert_bit_identical_across_threads(
            &format!("ScatterElements axis 0 {reduction}"),
            &graph,
            &inputs,
        );
    }
}

#[test]
fn gnn_message_passing_as_exporters_write_it_is_bit_identical_at_every_thread_count() {
    // `scatter_add_(0, idx.unsqueeze(1).expand_as(msg), msg)`: a row
    // scatter after declutter. 8 MiB of output, 8192 edges of 256 floats
    // into 8192 nodes: split by destination blocks.
    let (nodes, edges, features) = (8192usize, 8192usize, 256usize);
    let mut rng = Seeded(5);
    let inputs = [
        rng.floats(&[nodes, features]),
        rng.indices(&[edges], nodes),
        rng.floats(&[edges, features]),
    ];
    for reduction in ["none", "add", "mul", "max", "min"] {
        let mut attributes = vec![attr_int("axis", 0)];
        if reduction != "none" {
            attributes.push(attr_string("reduction", reduction));
        }
        let graph = Graph::new(18)
            .input_c("data", DatumType::F32, &[nodes, features])
            .input_c("idx", DatumType::I64, &[edges])
            .input_c("msg", DatumType::F32, &[edges, features])
            .init("axes", &tensor1(&[1i64]))
            .node("Unsqueeze", &["idx", "axes"], &["rows"], vec![])
            .node("Shape", &["msg"], &["target"], vec![])
            .node("Expand", &["rows", "target"], &["index"], vec![])
            .node(
                "ScatterElements",
                &["data", "index", "msg"],
                &["out"],
                attributes,
            )
            .output("out", DatumType::F32);
        assert_bit_identical_across_threads(&format!("GNN scatter {reduction}"), &graph, &inputs);
        // And the ScatterElements on the broadcast index (typed, not
        // decluttered) gives the same bits.
        let reference = graph.typed().unwrap().into_runnable().unwrap();
        let optimized = graph.optimized().unwrap().into_runnable().unwrap();
        let want = run_at(1, &reference, &inputs, false);
        let got = run_at(2, &optimized, &inputs, true);
        let bits = |t: &Tensor| -> Vec<u32> {
            let view = t.try_as_plain_ram().unwrap();
            view.as_slice::<f32>()
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect()
        };
        assert!(
            bits(&want) == bits(&got),
            "GNN scatter {reduction}: the row scatter differs from the ScatterElements"
        );
    }
}

#[test]
fn scatter_nd_of_random_elements_into_a_large_tensor_is_bit_identical_at_every_thread_count() {
    // 8 MiB of output, 256k one-element updates: sorted by destination block.
    let (data, tuples) = ([2048, 1024], 1 << 18);
    let mut rng = Seeded(3);
    let mut components = Vec::with_capacity(tuples * 2);
    for _ in 0..tuples {
        components.push(rng.below(2 * data[0]) - data[0] as i64);
        components.push(rng.below(2 * data[1]) - data[1] as i64);
    }
    let indices = Tensor::from_shape(&[tuples, 2], &components).unwrap();
    let inputs = [rng.floats(&data), indices, rng.floats(&[tuples])];
    for reduction in ["none", "add", "mul", "max", "min"] {
        let mut attributes = vec![];
        if reduction != "none" {
            attributes.push(attr_string("reduction", reduction));
        }
        let graph = Graph::new(18)
            .input_c("data", DatumType::F32, &data)
            .input_c("indices", DatumType::I64, &[tuples, 2])
            .input_c("updates", DatumType::F32, &[tuples])
            .node(
                "ScatterND",
                &["data", "indices", "updates"],
                &["out"],
                attributes,
            )
            .output("out", DatumType::F32);
        assert_bit_identical_across_threads(
            &format!("ScatterND elements {reduction}"),
            &graph,
            &inputs,
        );
    }
}

#[test]
fn tensor_scatter_of_a_large_update_is_bit_identical_at_every_thread_count() {
    let (cache, update) = ([4, 8, 256, 64], [4, 8, 128, 64]);
    let mut rng = Seeded(4);
    let inputs = [
        rng.floats(&cache),
        rng.floats(&update),
        Tensor::from_shape(&[4], &[0i64, 17, 64, 128]).unwrap(),
    ];
    let graph = Graph::new(24)
        .input_c("past_cache", DatumType::F32, &cache)
        .input_c("update", DatumType::F32, &update)
        .input_c("write_indices", DatumType::I64, &[4])
        .node(
            "TensorScatter",
            &["past_cache", "update", "write_indices"],
            &["out"],
            vec![attr_int("axis", 2)],
        )
        .output("out", DatumType::F32);
    assert_bit_identical_across_threads("TensorScatter", &graph, &inputs);
}

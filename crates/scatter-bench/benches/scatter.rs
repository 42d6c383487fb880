//! `cargo bench -p scatter-bench`: divan benches of the plugin on every
//! workload, data exclusive (moved in, scattered in place) and shared (one
//! copy), next to stock tract (which has no `TensorScatter`: not on
//! `ts_kv_decode`) and a warm memcpy of data; then the real GTCRN model per
//! streaming frame, caches fed back. The comparison table with onnxruntime
//! is `cargo xtask bench`.

use divan::Bencher;
use scatter_bench::gtcrn::{Gtcrn, GtcrnRunner};
use scatter_bench::{NAMES, Runner, STOCK_NAMES, memcpy, workload};
use tract_onnx_scatter::tract_onnx;

fn main() {
    divan::main();
}

#[divan::bench(args = NAMES, sample_count = 20, sample_size = 1)]
fn plugin_exclusive(bencher: Bencher, name: &str) {
    let w = workload(name).expect("known workload");
    let mut runner = Runner::new(&w, &tract_onnx_scatter::onnx()).expect("plan");
    bencher.bench_local(|| runner.run_exclusive().expect("run"));
}

#[divan::bench(args = NAMES, sample_count = 20, sample_size = 1)]
fn plugin_shared(bencher: Bencher, name: &str) {
    let w = workload(name).expect("known workload");
    let mut runner = Runner::new(&w, &tract_onnx_scatter::onnx()).expect("plan");
    bencher.bench_local(|| runner.run_shared().expect("run"));
}

#[divan::bench(args = STOCK_NAMES, sample_count = 5, sample_size = 1)]
fn stock_shared(bencher: Bencher, name: &str) {
    let w = workload(name).expect("known workload");
    let mut runner = Runner::new(&w, &tract_onnx::onnx()).expect("plan");
    bencher.bench_local(|| runner.run_shared().expect("run"));
}

#[divan::bench(args = NAMES, sample_count = 20, sample_size = 1)]
fn memcpy_data(bencher: Bencher, name: &str) {
    let w = workload(name).expect("known workload");
    let mut dst = vec![0f32; w.data.len()];
    bencher.bench_local(|| memcpy(&mut dst, &w.data));
}

#[divan::bench(sample_count = 50, sample_size = 1)]
fn gtcrn_frame_plugin(bencher: Bencher) {
    let g = Gtcrn::load().expect("GTCRN model and data");
    let mut runner = GtcrnRunner::new(&g, &tract_onnx_scatter::onnx()).expect("plan");
    bencher.bench_local(|| runner.run_exclusive().expect("run"));
}

#[divan::bench(sample_count = 50, sample_size = 1)]
fn gtcrn_frame_stock(bencher: Bencher) {
    let g = Gtcrn::load().expect("GTCRN model and data");
    let mut runner = GtcrnRunner::new(&g, &tract_onnx::onnx()).expect("plan");
    bencher.bench_local(|| runner.run_shared().expect("run"));
}

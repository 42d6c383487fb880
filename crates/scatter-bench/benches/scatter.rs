//! `cargo bench -p scatter-bench`: divan benches of every case with the
//! plugin in each calling mode (one-shot `run`, persistent state, owned
//! data), stock tract one-shot next to them (it has no `TensorScatter`:
//! not on `ts_kv_decode`), and a warm memcpy of data. The comparison table
//! with onnxruntime and peak RSS is `cargo xtask bench`.

use divan::Bencher;
use scatter_bench::case::Loader;
use scatter_bench::runner::{Mode, Runner};
use scatter_bench::{STOCK_NAMES, case, case_names, memcpy};
use tract_onnx_scatter::tract_onnx;

fn main() {
    divan::main();
}

/// Every case of `cargo xtask bench` (Piper left out: fetched on demand).
fn cases() -> Vec<&'static str> {
    case_names(None)
}

/// Skipped (a message, no sample) where the case has no such mode or the
/// engine cannot plan it (the gradient rows' owned mode; their ops where
/// the plugin lacks them).
fn bench<L: Loader>(bencher: Bencher, name: &str, onnx: &L, mode: Mode) {
    let c = case(name).expect("known case");
    let mut runner = match Runner::new(&c, onnx) {
        Ok(runner) => runner,
        Err(e) => return eprintln!("{name}: skipped ({e:#})"),
    };
    if !runner.supports(mode) {
        return eprintln!("{name}: skipped (no {} mode)", mode.name());
    }
    bencher.bench_local(|| {
        runner.prepare(mode).expect("prepare");
        runner.run(mode).expect("run")
    });
}

#[divan::bench(args = cases(), sample_count = 20, sample_size = 1)]
fn plugin_one_shot(bencher: Bencher, name: &str) {
    bench(bencher, name, &tract_onnx_scatter::onnx(), Mode::OneShot);
}

#[divan::bench(args = cases(), sample_count = 20, sample_size = 1)]
fn plugin_persistent(bencher: Bencher, name: &str) {
    bench(bencher, name, &tract_onnx_scatter::onnx(), Mode::Persistent);
}

#[divan::bench(args = cases(), sample_count = 20, sample_size = 1)]
fn plugin_owned(bencher: Bencher, name: &str) {
    bench(bencher, name, &tract_onnx_scatter::onnx(), Mode::Owned);
}

#[divan::bench(args = STOCK_NAMES, sample_count = 5, sample_size = 1)]
fn stock_one_shot(bencher: Bencher, name: &str) {
    bench(bencher, name, &tract_onnx::onnx(), Mode::OneShot);
}

#[divan::bench(args = cases(), sample_count = 20, sample_size = 1)]
fn memcpy_data(bencher: Bencher, name: &str) {
    let c = case(name).expect("known case");
    let Some(data) = c.copy_floor_data().expect("f32 data") else {
        return;
    };
    let mut dst = vec![0f32; data.len()];
    bencher.bench_local(|| memcpy(&mut dst, data));
}

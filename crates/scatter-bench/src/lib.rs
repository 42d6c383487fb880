//! Benchmarks of the scatter plugin. Each row is a [`case::Case`]: the
//! one-node workloads ([`workloads`](mod@workloads): the issues' scatters, a fresh KV
//! cache moved into every call, GNN message passing), the gradients of three of them
//! ([`grads`]), the real GTCRN model per frame ([`gtcrn`]), models of
//! PyTorch's exporters ([`exported`]), recurrent layers as Keras' `Loop`s and
//! as ONNX GRU/LSTM ops ([`recurrent`]) and Piper ([`piper`]). A [`runner::Runner`] runs a case in each calling
//! [`runner::Mode`]; [`child`] measures one (engine, mode) in a process of
//! its own (for its peak RSS); [`timing`] is the loop, [`ort`] the
//! Python side (onnxruntime, PyTorch autograd) and [`report`] the tables.
//!
//! `cargo xtask bench` runs the `scatter-bench` binary in release mode;
//! `cargo bench -p scatter-bench` runs the divan benches of the plugin.

pub mod case;
pub mod child;
pub mod exported;
pub mod grads;
pub mod gtcrn;
pub mod loops;
pub mod ort;
pub mod piper;
pub mod recurrent;
pub mod report;
pub mod runner;
pub mod server;
pub mod timing;
pub mod workloads;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

pub use workloads::{NAMES, STOCK_NAMES, ScatterOp, Workload, workload, workloads};

/// The workspace root (this crate lives in `crates/scatter-bench`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/scatter-bench has two ancestors")
        .to_path_buf()
}

/// Whether `entry` of a filter selects row `name`: it is part of the name,
/// or with a trailing `$` its end (`se_add_axis1$` leaves out
/// `se_add_axis1_grad`).
fn matches(name: &str, entry: &str) -> bool {
    match entry.strip_suffix('$') {
        Some(end) => name.ends_with(end),
        None => name.contains(entry),
    }
}

/// The rows `filter` selects (comma-separated entries, a row selected by
/// any, see [`matches`]), in table order: the one-node workloads,
/// their gradients, GTCRN, the exported models, the Loop rows, the recurrent rows; Piper (a 63 MB model fetched on demand)
/// only when the filter names it.
pub fn case_names(filter: Option<&str>) -> Vec<&'static str> {
    // An empty entry (`kv_step,`) selects nothing rather than everything.
    fn entries(f: &str) -> impl Iterator<Item = &str> {
        f.split(',').filter(|e| !e.is_empty())
    }
    let selected = |n: &str| filter.is_none_or(|f| entries(f).any(|e| matches(n, e)));
    let mut names: Vec<&str> = NAMES.into_iter().filter(|n| selected(n)).collect();
    names.extend(grads::NAMES.into_iter().filter(|n| selected(n)));
    names.extend([gtcrn::NAME].into_iter().filter(|n| selected(n)));
    names.extend(exported::NAMES.into_iter().filter(|n| selected(n)));
    names.extend(loops::NAMES.into_iter().filter(|n| selected(n)));
    names.extend(recurrent::NAMES.into_iter().filter(|n| selected(n)));
    if filter.is_some_and(|f| entries(f).any(|e| piper::NAME.contains(e))) {
        names.push(piper::NAME);
    }
    names
}

/// The case of row `name`.
pub fn case(name: &str) -> Result<case::Case> {
    if let Some(w) = workload(name) {
        return case::Case::from_workload(&w);
    }
    match name {
        gtcrn::NAME => gtcrn::case(),
        piper::NAME => piper::case(),
        _ if grads::NAMES.contains(&name) => grads::case(name),
        _ if exported::NAMES.contains(&name) => exported::case(name),
        _ if loops::NAMES.contains(&name) => loops::case(name),
        _ if recurrent::NAMES.contains(&name) => recurrent::case(name),
        _ => bail!("no bench case named {name:?}"),
    }
}

/// The thread count a threaded row ([`workloads::Extras::threaded`]) is
/// measured at besides 1: the bench machine's cores.
pub const THREADS: usize = 2;

/// The floor of a random-index scatter with shared data, no scatter in it:
/// the output written once (`data` into the warm `dst`) and `indices` and
/// `updates` each read once, in order. Integer sums, so the reads
/// vectorize and run at memory speed (a float sum would wait on each add).
#[inline(never)]
pub fn floor(dst: &mut [f32], data: &[f32], indices: &[i64], updates: &[f32]) -> u64 {
    dst.copy_from_slice(data);
    let indices = indices.iter().fold(0u64, |a, &x| a.wrapping_add(x as u64));
    let updates = updates
        .iter()
        .fold(0u32, |a, x| a.wrapping_add(x.to_bits()));
    indices.wrapping_add(updates as u64)
}

/// Copies `src` into the warm `dst`: the floor of any op that must copy
/// its data input.
#[inline(never)]
pub fn memcpy(dst: &mut [f32], src: &[f32]) {
    dst.copy_from_slice(src);
}

/// [`memcpy`] cut into one contiguous chunk per thread of tract's current
/// executor, the chunks copied on it: what a second core adds to a copy
/// on this machine, the bound of a copy-bound row's thread scaling.
/// Below the kernels' split threshold (`Schedule::parallel_from_bytes`),
/// serial, as the kernels' copies are.
#[inline(never)]
pub fn memcpy_on_tract_threads(dst: &mut [f32], src: &[f32]) {
    let tasks = tract_thread_tasks(std::mem::size_of_val(src));
    if tasks == 1 {
        return memcpy(dst, src);
    }
    on_tract_threads(dst, tasks, |_, d, lo| {
        d.copy_from_slice(&src[lo..lo + d.len()]);
        0
    });
}

/// [`floor`] cut into one contiguous chunk of each array per thread of
/// tract's current executor, the chunks read and copied on it: what a
/// second core adds to the memory a random-index row must move at least,
/// the bound of its thread scaling. Serial below the kernels' split
/// threshold, as [`memcpy_on_tract_threads`].
#[inline(never)]
pub fn floor_on_tract_threads(
    dst: &mut [f32],
    data: &[f32],
    indices: &[i64],
    updates: &[f32],
) -> u64 {
    let bytes = std::mem::size_of_val(data)
        + std::mem::size_of_val(indices)
        + std::mem::size_of_val(updates);
    let tasks = tract_thread_tasks(bytes);
    if tasks == 1 {
        return floor(dst, data, indices, updates);
    }
    // Task `t` reads the `t`-th chunk of each, as it writes `dst`'s.
    on_tract_threads(dst, tasks, |t, d, lo| {
        let (i, u) = (
            chunk(indices.len(), t, tasks),
            chunk(updates.len(), t, tasks),
        );
        floor(d, &data[lo..lo + d.len()], &indices[i], &updates[u])
    })
}

/// The `t`-th of `tasks` near-equal contiguous chunks of `0..len`.
fn chunk(len: usize, t: usize, tasks: usize) -> std::ops::Range<usize> {
    len * t / tasks..len * (t + 1) / tasks
}

/// Tasks for `bytes` of bench work on tract's current executor: one per
/// thread, one below the kernels' split threshold.
fn tract_thread_tasks(bytes: usize) -> usize {
    use tract_onnx_scatter::TractThreads;
    use tract_onnx_scatter::scatter_kernels::{Parallel, Schedule};
    let n = TractThreads::current().threads().max(1);
    if bytes < Schedule::DEFAULT.parallel_from_bytes {
        1
    } else {
        n
    }
}

/// Runs `task(t, chunk, start)` on tract's current executor for each of
/// the `tasks` near-equal contiguous chunks of `dst` (`start` its offset
/// in `dst`); the tasks' results summed.
fn on_tract_threads(
    dst: &mut [f32],
    tasks: usize,
    task: impl Fn(usize, &mut [f32], usize) -> u64 + Sync,
) -> u64 {
    use tract_onnx_scatter::TractThreads;
    use tract_onnx_scatter::scatter_kernels::Parallel;
    let len = dst.len();
    let mut parts = vec![];
    let mut rest = dst;
    for t in 0..tasks {
        let part = chunk(len, t, tasks);
        let (d, tail) = std::mem::take(&mut rest).split_at_mut(part.len());
        parts.push(std::sync::Mutex::new((d, part.start)));
        rest = tail;
    }
    let sum = std::sync::atomic::AtomicU64::new(0);
    TractThreads::current().for_each(tasks, &|t| {
        let mut part = parts[t].lock().unwrap_or_else(|p| p.into_inner());
        let (d, lo) = &mut *part;
        let x = task(t, d, *lo);
        sum.fetch_add(x, std::sync::atomic::Ordering::Relaxed);
    });
    sum.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_and_the_copy_split_over_threads_write_what_the_serial_ones_write() {
        use tract_linalg::multithread::{Executor, multithread_tract_scope};
        // 3 MiB of data: over the split threshold, in uneven chunks.
        let n = (3 << 18) + 3;
        let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let indices: Vec<i64> = (0..n as i64 / 3).collect();
        let updates: Vec<f32> = (0..n / 2).map(|i| i as f32 * 0.5).collect();
        // Per chunk the update bits wrap at 32 bits: compare the index sums,
        // which never do here, through a run without updates.
        let index_sum = floor(&mut vec![0.0; n], &data, &indices, &[]);
        for threads in [1, 2, 3] {
            multithread_tract_scope(Executor::multithread(threads), || {
                let mut dst = vec![0.0; n];
                let sum = floor_on_tract_threads(&mut dst, &data, &indices, &[]);
                assert_eq!((dst == data, sum), (true, index_sum), "{threads} threads");
                let mut dst = vec![0.0; n];
                floor_on_tract_threads(&mut dst, &data, &indices, &updates);
                assert!(dst == data, "{threads} threads");
                let mut dst = vec![0.0; n];
                memcpy_on_tract_threads(&mut dst, &data);
                assert!(dst == data, "{threads} threads");
            });
        }
    }

    #[test]
    fn a_filter_selects_the_rows_any_of_its_comma_separated_entries_matches() {
        assert_eq!(
            case_names(Some("se_add_axis1$,gnn_")),
            ["se_add_axis1", "gnn_painn", "gnn_large"]
        );
        assert_eq!(
            case_names(Some("se_add_axis1")),
            ["se_add_axis1", "se_add_axis1_grad"]
        );
        assert!(case_names(Some("nothing$")).is_empty());
        assert!(case_names(None).len() > NAMES.len());
    }

    #[test]
    fn a_comma_separated_filter_selects_the_rows_of_any_of_its_parts() {
        let names = case_names(Some("kv_step,yolo_head3"));
        assert_eq!(
            names,
            [
                "kv_step_torchscript",
                "kv_step_dynamo",
                "yolo_head3_torchscript",
                "yolo_head3_dynamo"
            ]
        );
        assert_eq!(case_names(Some("yolo_head3")).len(), 2);
        assert!(!case_names(Some("kv_step,")).contains(&piper::NAME));
        assert!(case_names(Some("kv_step,piper")).contains(&piper::NAME));
    }
}

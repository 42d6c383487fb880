//! Benchmarks of the scatter plugin. Each row is a [`case::Case`]: the
//! one-node workloads ([`workloads`]: the issues' scatters, a fresh KV
//! cache moved into every call, GNN message passing), the gradients of three of them
//! ([`grads`]), the real GTCRN model per frame ([`gtcrn`]), models of
//! PyTorch's exporters ([`exported`]) and Piper ([`piper`]). A [`runner::Runner`] runs a case in each calling
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
/// their gradients, GTCRN, the exported models, the Loop rows; Piper (a 63 MB model fetched on demand)
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
    use tract_onnx_scatter::ops::tract_threads::TractThreads;
    use tract_onnx_scatter::scatter_kernels::{Parallel, Schedule};
    let threads = TractThreads::current();
    let n = threads.threads().max(1);
    if n == 1 || std::mem::size_of_val(src) < Schedule::DEFAULT.parallel_from_bytes {
        return memcpy(dst, src);
    }
    let chunk = dst.len().div_ceil(n).max(1);
    let parts: Vec<std::sync::Mutex<(&mut [f32], &[f32])>> = dst
        .chunks_mut(chunk)
        .zip(src.chunks(chunk))
        .map(std::sync::Mutex::new)
        .collect();
    threads.for_each(parts.len(), &|i| {
        let mut part = parts[i].lock().unwrap_or_else(|p| p.into_inner());
        let (d, s) = &mut *part;
        d.copy_from_slice(s);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! Benchmarks of the scatter plugin. Each row is a [`case::Case`]: the
//! one-node workloads ([`workloads`]), the gradients of three of them
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

/// The rows `filter` selects (a name containing any of its comma-separated
/// substrings, so that `kv_step,yolo_head` times every exported pair in one
/// report), in table order: the one-node workloads, their gradients, GTCRN,
/// the exported models, the Loop rows; Piper (a 63 MB model fetched on
/// demand) only when the filter names it.
pub fn case_names(filter: Option<&str>) -> Vec<&'static str> {
    let parts: Option<Vec<&str>> = filter.map(|f| f.split(',').filter(|p| !p.is_empty()).collect());
    let selected = |n: &str| {
        parts
            .as_ref()
            .is_none_or(|ps| ps.iter().any(|p| n.contains(p)))
    };
    let mut names: Vec<&str> = NAMES.into_iter().filter(|n| selected(n)).collect();
    names.extend(grads::NAMES.into_iter().filter(|n| selected(n)));
    names.extend([gtcrn::NAME].into_iter().filter(|n| selected(n)));
    names.extend(exported::NAMES.into_iter().filter(|n| selected(n)));
    names.extend(loops::NAMES.into_iter().filter(|n| selected(n)));
    if parts
        .as_ref()
        .is_some_and(|ps| ps.iter().any(|p| piper::NAME.contains(p)))
    {
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

/// Copies `src` into the warm `dst`: the floor of any op that must copy
/// its data input.
#[inline(never)]
pub fn memcpy(dst: &mut [f32], src: &[f32]) {
    dst.copy_from_slice(src);
}

#[cfg(test)]
mod tests {
    use super::*;

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

//! Every official node test of one onnx release, run and counted per operator.
//!
//! The scatter suites pin each file they use; this run takes the whole
//! `onnx/backend/test/data/node/` directory of a release's wheel, pinned by the wheel's own
//! SHA-256 (manifest): `data.rs` obtains it through [`crate::fetch::pip_download`] or from a
//! local directory after the same hash check, and records and re-checks every extracted file's
//! hash (`<cache>/<version>-all/SHA256SUMS`, next to `node/`).
//!
//! Results are informational: [`AllOpsReport`] counts, per operator and per framework, tests
//! passed, failed, panicked, unsupported and with unreadable data, and never gates.
//! `operators.rs` names each test's operator, `report.rs` counts and renders; this file runs
//! the tests and ties them together.

mod data;
mod operators;
mod report;

pub use data::{all_ops_dir, ensure_all_node_tests, newest_release};
pub use operators::{OperatorRule, TestOperator, assign_operators, model_operator};
pub use report::{AllOpsCase, AllOpsReport, Category, Counts, OperatorRow, Skipped};

use crate::outcome::Outcome;
use crate::suite::CaseResult;
use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// Error texts name files relative to the node directory (`<node>/...`),
/// so reports do not depend on where the cache lives.
fn relative_paths(mut result: CaseResult, node_dir: &Path) -> CaseResult {
    let prefix = node_dir.display().to_string();
    if prefix.is_empty() {
        return result;
    }
    let strip = |outcome: &mut Outcome| match outcome {
        Outcome::Pass => {}
        Outcome::Fail { reason: text, .. } | Outcome::Panic { message: text, .. } => {
            *text = text.replace(&prefix, "<node>");
        }
    };
    for o in &mut result.outcomes {
        strip(&mut o.decluttered);
        strip(&mut o.optimized);
    }
    result
}

/// Tests left out of the all-ops run, with the reason (none so far:
/// `docs/conformance.md`, "Every official node test, not only scatter",
/// says why no test needs a skip).
pub const SKIPPED: &[(&str, &str)] = &[];

/// Runs every node test below `node_dir` whose name contains `filter` (all
/// without) with every framework, except [`SKIPPED`], and aggregates them.
/// `progress(done, total, case, seconds)` is called after each test.
pub fn run_all_ops(
    release: &str,
    node_dir: &Path,
    frameworks: &[crate::suite::NamedFramework<'_>],
    filter: Option<&str>,
    progress: &mut dyn FnMut(usize, usize, &AllOpsCase, f64),
) -> Result<AllOpsReport> {
    let suite = crate::suite::Suite {
        name: release.to_string(),
        root: node_dir.to_path_buf(),
    };
    let listed = crate::suite::list_tests(&suite, filter)?;
    if listed.is_empty() && filter.is_none() {
        bail!("no node test below {node_dir:?}");
    }
    let mut skipped = vec![];
    let mut selected = vec![];
    for (name, dir) in listed {
        match SKIPPED.iter().find(|(test, _)| *test == name) {
            Some((_, reason)) => skipped.push(Skipped {
                test: name,
                reason: reason.to_string(),
            }),
            None => selected.push((name, dir)),
        }
    }
    let models: Vec<(String, PathBuf)> = selected
        .iter()
        .map(|(name, dir)| (name.clone(), dir.join("model.onnx")))
        .collect();
    let mut operators = assign_operators(&models);
    let total = selected.len();
    let names = frameworks.iter().map(|f| f.name.clone()).collect();
    let mut cases = Vec::with_capacity(total);
    for (done, (name, dir)) in selected.into_iter().enumerate() {
        let started = std::time::Instant::now();
        let result = crate::suite::run_case(release.to_string(), name.clone(), &dir, frameworks);
        let operator = operators
            .remove(&name)
            .unwrap_or_else(|| Err(anyhow::anyhow!("no operator assigned")));
        let case = AllOpsCase::new(operator, relative_paths(result, node_dir));
        progress(done + 1, total, &case, started.elapsed().as_secs_f64());
        cases.push(case);
    }
    Ok(AllOpsReport::new(
        release.to_string(),
        names,
        cases,
        skipped,
    ))
}

/// Helpers shared by the submodules' tests.
#[cfg(test)]
mod test_support {
    use std::fs;
    use std::path::PathBuf;
    use tract_onnx::pb::{GraphProto, ModelProto, NodeProto};

    pub(super) fn node(op_type: &str, domain: &str) -> NodeProto {
        NodeProto {
            op_type: op_type.into(),
            domain: domain.into(),
            ..NodeProto::default()
        }
    }

    pub(super) fn model(nodes: Vec<NodeProto>) -> ModelProto {
        ModelProto {
            graph: Some(GraphProto {
                node: nodes,
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        }
    }

    pub(super) fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "onnx-golden-all-ops-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }
}

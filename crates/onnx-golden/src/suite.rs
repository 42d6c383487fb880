//! Running many node tests with several named frameworks side by side.

use crate::framework::Framework;
use crate::node_test::{NodeTest, discover};
use crate::outcome::{FrameworkOutcome, Outcome, Phase};
use crate::run::run_test;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A framework with the name shown in reports (`plugin`, `stock`...).
pub struct NamedFramework<'a> {
    pub name: String,
    pub framework: &'a dyn Framework,
}

/// A set of node tests: an onnx release's `node/` directory, or the extended corpus.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Release version or `extended`.
    pub name: String,
    /// Searched recursively for directories holding `model.onnx`.
    pub root: PathBuf,
}

/// Results of one test, one outcome per framework (same order as given).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    pub suite: String,
    /// Path of the test directory relative to the suite root, `/`-separated.
    pub test: String,
    /// The test directory (not reported: reports name tests, not paths).
    #[serde(skip)]
    pub dir: PathBuf,
    /// Default-domain opset the model imports.
    pub opset: Option<i64>,
    pub outcomes: Vec<FrameworkOutcome>,
}

/// Test directories of `suite` whose name contains `filter` (all without filter),
/// with their report names.
pub fn list_tests(suite: &Suite, filter: Option<&str>) -> Result<Vec<(String, PathBuf)>> {
    Ok(discover(&suite.root)?
        .into_iter()
        .map(|dir| (test_name(&suite.root, &dir), dir))
        .filter(|(name, _)| filter.is_none_or(|f| name.contains(f)))
        .collect())
}

/// Runs every selected test of every suite with every framework.
/// `progress(done, total, case)` is called after each test.
pub fn run_suites(
    suites: &[Suite],
    frameworks: &[NamedFramework<'_>],
    filter: Option<&str>,
    progress: &mut dyn FnMut(usize, usize, &CaseResult),
) -> Result<Vec<CaseResult>> {
    let mut selected = Vec::new();
    for suite in suites {
        for (name, dir) in list_tests(suite, filter)? {
            selected.push((suite.name.clone(), name, dir));
        }
    }
    let total = selected.len();
    let mut results = Vec::with_capacity(total);
    for (done, (suite, test, dir)) in selected.into_iter().enumerate() {
        let case = run_case(suite, test, &dir, frameworks);
        progress(done + 1, total, &case);
        results.push(case);
    }
    Ok(results)
}

/// Runs one test directory with every framework. Unreadable test data is a
/// load failure for every framework, not an error of the whole run.
pub fn run_case(
    suite: String,
    test: String,
    dir: &Path,
    frameworks: &[NamedFramework<'_>],
) -> CaseResult {
    let (opset, outcomes) = match NodeTest::load(dir) {
        Ok(node_test) => (
            node_test.opset().ok().flatten(),
            frameworks
                .iter()
                .map(|f| run_test(&node_test, f.framework))
                .collect(),
        ),
        Err(e) => {
            let fail = Outcome::Fail {
                phase: Phase::Load,
                reason: format!("reading test data: {e:#}"),
            };
            let outcome = FrameworkOutcome {
                decluttered: fail.clone(),
                optimized: fail,
            };
            (None, vec![outcome; frameworks.len()])
        }
    };
    CaseResult {
        suite,
        test,
        dir: dir.to_path_buf(),
        opset,
        outcomes,
    }
}

fn test_name(root: &Path, dir: &Path) -> String {
    let relative = dir.strip_prefix(root).unwrap_or(dir);
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        parts.join("/")
    }
}

//! Running many node tests with several named frameworks side by side.

use crate::compare::Tolerance;
use crate::framework::Framework;
use crate::node_test::{NodeTest, discover, tolerance_of};
use crate::outcome::{FrameworkOutcome, Outcome, Phase};
use crate::run::run_test;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A framework with the name shown in reports (`plugin`, `stock`...).
pub struct NamedFramework<'a> {
    /// Name shown in reports.
    pub name: String,
    /// The framework that runs the tests.
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
    /// Name of the test's suite ([`Suite::name`]).
    pub suite: String,
    /// Path of the test directory relative to the suite root, `/`-separated.
    pub test: String,
    /// The test directory (not reported: reports name tests, not paths).
    #[serde(skip)]
    pub dir: PathBuf,
    /// Default-domain opset the model imports.
    pub opset: Option<i64>,
    /// One per framework, in the order the frameworks were given.
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

/// One part of a suite split in `count` parts: part `index` (1-based), as
/// `--shard K/N` names it.
///
/// The split is by test path: a test is in part `1 + h % count`, where `h`
/// is the 64-bit FNV-1a hash of `<suite>/<test>` (its suite's name and its
/// report name, the path below the suite root, `/`-separated). It is the
/// same on every machine, and a test stays in its part whatever other tests
/// are added or removed; parts are about equal in size on large suites,
/// not exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    /// The part, from 1 to `count`.
    pub index: usize,
    /// Number of parts, at least 1.
    pub count: usize,
}

impl Shard {
    /// Whether the test `test` of suite `suite` belongs to this part.
    pub fn holds(&self, suite: &str, test: &str) -> bool {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in suite.bytes().chain([b'/']).chain(test.bytes()) {
            h ^= u64::from(byte);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        (h % self.count as u64) as usize + 1 == self.index
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `K/N` with 1 <= K <= N.
    fn from_str(s: &str) -> Result<Shard, String> {
        let parse = |n: &str| n.trim().parse::<usize>().ok();
        match s.split_once('/').map(|(k, n)| (parse(k), parse(n))) {
            Some((Some(index), Some(count))) if (1..=count).contains(&index) => {
                Ok(Shard { index, count })
            }
            _ => Err(format!(
                "expected K/N with 1 <= K <= N (shard K of N), got {s:?}"
            )),
        }
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Runs every selected test of every suite with every framework.
/// `progress(done, total, case)` is called after each test.
pub fn run_suites(
    suites: &[Suite],
    frameworks: &[NamedFramework<'_>],
    filter: Option<&str>,
    progress: &mut dyn FnMut(usize, usize, &CaseResult),
) -> Result<Vec<CaseResult>> {
    run_shard(suites, frameworks, filter, None, progress)
}

/// As [`run_suites`], running only the tests of `shard` (all without).
pub fn run_shard(
    suites: &[Suite],
    frameworks: &[NamedFramework<'_>],
    filter: Option<&str>,
    shard: Option<Shard>,
    progress: &mut dyn FnMut(usize, usize, &CaseResult),
) -> Result<Vec<CaseResult>> {
    run_shard_with_tolerance(
        suites,
        frameworks,
        filter,
        shard,
        Tolerance::default(),
        progress,
    )
}

/// As [`run_shard`], comparing floats with `default` in the tests that
/// set no tolerance of their own ([`tolerance_of`]: a `tolerance.toml` in
/// the test's directory or above it, up to its suite's).
pub fn run_shard_with_tolerance(
    suites: &[Suite],
    frameworks: &[NamedFramework<'_>],
    filter: Option<&str>,
    shard: Option<Shard>,
    default: Tolerance,
    progress: &mut dyn FnMut(usize, usize, &CaseResult),
) -> Result<Vec<CaseResult>> {
    let mut selected = Vec::new();
    for suite in suites {
        for (name, dir) in list_tests(suite, filter)? {
            if shard.is_none_or(|s| s.holds(&suite.name, &name)) {
                selected.push((suite, name, dir));
            }
        }
    }
    let total = selected.len();
    let mut results = Vec::with_capacity(total);
    for (done, (suite, test, dir)) in selected.into_iter().enumerate() {
        let case = run_case_in(
            suite.name.clone(),
            test,
            &dir,
            &suite.root,
            default,
            frameworks,
        );
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
    run_case_in(suite, test, dir, dir, Tolerance::default(), frameworks)
}

/// [`run_case`] of a test of the suite at `root`, with its tolerances
/// chosen by [`tolerance_of`].
fn run_case_in(
    suite: String,
    test: String,
    dir: &Path,
    root: &Path,
    default: Tolerance,
    frameworks: &[NamedFramework<'_>],
) -> CaseResult {
    let loaded = NodeTest::load(dir).and_then(|mut node_test| {
        node_test.tolerance = tolerance_of(dir, root, default)?;
        Ok(node_test)
    });
    let (opset, outcomes) = match loaded {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_every_test_once_and_by_path_only() {
        let tests: Vec<String> = (0..200).map(|i| format!("dir/test_{i}")).collect();
        let shards: Vec<Shard> = (1..=3).map(|index| Shard { index, count: 3 }).collect();
        let mut sizes = [0; 3];
        for test in &tests {
            let holders: Vec<usize> = shards
                .iter()
                .filter(|s| s.holds("torch", test))
                .map(|s| s.index)
                .collect();
            assert_eq!(holders.len(), 1, "{test}: {holders:?}");
            sizes[holders[0] - 1] += 1;
        }
        assert!(sizes.iter().all(|&n| n > 40), "{sizes:?}");
        // Fixed values: the split must not change between machines or releases.
        let two = |index| Shard { index, count: 2 };
        assert!(two(1).holds("torch", "scatter_add__ts16"));
        assert!(two(1).holds("torch", "scatter_add__ts14"));
        assert!(two(2).holds("torch", "index_add__ts11"));
        assert!(two(2).holds("torch", "scatter_add__ts17"));
    }

    #[test]
    fn shard_syntax() {
        assert_eq!("2/3".parse(), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 1, count: 4 }.to_string(), "1/4");
    }
}

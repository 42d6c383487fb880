//! Known failures (`onnx-testdata/expected-failures.toml`) and the pass/fail
//! gate they feed.

use crate::suite::CaseResult;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One known failure of the gating framework.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailure {
    /// Test name as reported (`test_tensorscatter`, or a path below
    /// `extended/`).
    pub test: String,
    /// onnx release (`1.22.0`) or `extended`.
    pub release: String,
    /// Why it fails and what will fix it (an issue reference).
    pub reason: String,
}

/// The known failures of the gating framework, as listed in
/// `onnx-testdata/expected-failures.toml` (`[[failure]]` tables).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailures {
    #[serde(default, rename = "failure")]
    /// Every listed failure, in file order.
    pub entries: Vec<ExpectedFailure>,
}

impl ExpectedFailures {
    /// Reads and parses the list at `path`. A missing or malformed file is an
    /// error; a file without entries is an empty list.
    pub fn load(path: &Path) -> Result<ExpectedFailures> {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!("reading {path:?} (the committed list of expected failures; create it empty if there are none)")
        })?;
        toml::from_str(&text).with_context(|| format!("parsing {path:?}"))
    }

    /// The entry for test `test` of suite `suite` (an onnx release or `extended`), if listed.
    pub fn find(&self, suite: &str, test: &str) -> Option<&ExpectedFailure> {
        self.entries
            .iter()
            .find(|e| e.release == suite && e.test == test)
    }
}

/// What the gating framework's results mean for the exit status.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Gate {
    /// Failures not listed as expected: `(suite, test, description)`.
    pub unexpected: Vec<(String, String, String)>,
    /// Expected failures whose test ran and now passes.
    pub stale: Vec<ExpectedFailure>,
    /// Failures that are listed as expected.
    pub expected: usize,
}

impl Gate {
    /// Judges the outcomes of framework number `framework` in `cases`.
    pub fn judge(cases: &[CaseResult], framework: usize, expected: &ExpectedFailures) -> Gate {
        let mut gate = Gate::default();
        for case in cases {
            let Some(outcome) = case.outcomes.get(framework) else {
                continue;
            };
            let listed = expected.find(&case.suite, &case.test);
            match (outcome.is_pass(), listed) {
                (true, Some(entry)) => gate.stale.push(entry.clone()),
                (true, None) => {}
                (false, Some(_)) => gate.expected += 1,
                (false, None) => gate.unexpected.push((
                    case.suite.clone(),
                    case.test.clone(),
                    outcome.describe(),
                )),
            }
        }
        gate
    }

    /// The gate passes: no unexpected failure and no stale expected failure.
    pub fn is_ok(&self) -> bool {
        self.unexpected.is_empty() && self.stale.is_empty()
    }

    /// Multi-line explanation of a failed gate, empty when it passed.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        if !self.unexpected.is_empty() {
            out.push_str(&format!(
                "{} unexpected failure(s):\n",
                self.unexpected.len()
            ));
            for (suite, test, description) in &self.unexpected {
                out.push_str(&format!("  {suite} {test}: {description}\n"));
            }
        }
        if !self.stale.is_empty() {
            out.push_str(&format!(
                "{} stale expected failure(s) (they pass now: remove them from expected-failures.toml):\n",
                self.stale.len()
            ));
            for e in &self.stale {
                out.push_str(&format!(
                    "  {} {} (listed because: {})\n",
                    e.release, e.test, e.reason
                ));
            }
        }
        out
    }
}

//! Results of running one node test with one framework.

use serde::Serialize;
use std::fmt;

/// The step of the pipeline an outcome refers to.
/// Variants are in pipeline order: a later phase is further along.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Reading the test data and parsing `model.onnx` into an inference model.
    Load,
    /// Type and shape inference on the inference model (`analyse`).
    Analyse,
    /// Translation into a typed model (`into_typed`).
    Typing,
    /// Decluttering the typed model (`into_decluttered`).
    Declutter,
    /// Optimizing the typed model (`into_optimized`).
    Optimize,
    /// Making the model runnable and running it.
    Run,
    /// Comparing outputs or the error with the expectation.
    Compare,
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Phase::Load => "load",
            Phase::Analyse => "analyse",
            Phase::Typing => "typing",
            Phase::Declutter => "declutter",
            Phase::Optimize => "optimize",
            Phase::Run => "run",
            Phase::Compare => "compare",
        };
        f.write_str(s)
    }
}

/// Result of one test in one mode (decluttered or optimized).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Outcome {
    /// Every data set's outputs match, or every one raised the expected error.
    Pass,
    /// An error where none was expected, a wrong output, or no error / the
    /// wrong error where one was expected.
    Fail {
        /// The phase the failure happened in.
        phase: Phase,
        /// What went wrong: the error chain (on one line, bounded), the expected
        /// error that did not occur, or how the outputs differ; prefixed with
        /// the data set's name when the test has several.
        reason: String,
    },
    /// The framework panicked: always a failure, whatever was expected.
    Panic {
        /// The phase the panic happened in.
        phase: Phase,
        /// The panic's message (on one line, bounded), prefixed with the data
        /// set's name when the test has several.
        message: String,
    },
}

impl Outcome {
    /// Whether this is [`Outcome::Pass`].
    pub fn is_pass(&self) -> bool {
        matches!(self, Outcome::Pass)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Pass => f.write_str("pass"),
            Outcome::Fail { phase, reason } => write!(f, "FAIL at {phase}: {reason}"),
            Outcome::Panic { phase, message } => write!(f, "PANIC at {phase}: {message}"),
        }
    }
}

/// Both modes of one test with one framework.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrameworkOutcome {
    /// `into_typed()?.into_decluttered()?`, then runnable.
    pub decluttered: Outcome,
    /// `into_optimized()`, then runnable.
    pub optimized: Outcome,
}

impl FrameworkOutcome {
    /// Whether both modes pass.
    pub fn is_pass(&self) -> bool {
        self.decluttered.is_pass() && self.optimized.is_pass()
    }

    /// Short cell text for tables: `pass`, `FAIL(run)`, `PANIC(optimize)`...
    /// For a failure, the decluttered outcome is shown first since the
    /// optimized pipeline usually fails the same way or not at all.
    pub fn short(&self) -> String {
        let worst = self.worst();
        let mode = if std::ptr::eq(worst, &self.optimized) {
            "opt "
        } else {
            ""
        };
        match worst {
            Outcome::Pass => "pass".to_string(),
            Outcome::Fail { phase, .. } => format!("FAIL({mode}{phase})"),
            Outcome::Panic { phase, .. } => format!("PANIC({mode}{phase})"),
        }
    }

    /// The outcome to describe: a panic beats a failure, decluttered beats optimized.
    pub fn worst(&self) -> &Outcome {
        match (&self.decluttered, &self.optimized) {
            (Outcome::Panic { .. }, _) | (_, Outcome::Pass) => &self.decluttered,
            (_, Outcome::Panic { .. }) | (Outcome::Pass, _) => &self.optimized,
            _ => &self.decluttered,
        }
    }

    /// One-line description of what went wrong, naming the mode(s).
    pub fn describe(&self) -> String {
        match (&self.decluttered, &self.optimized) {
            (Outcome::Pass, Outcome::Pass) => "pass".to_string(),
            (d, o) if d == o => format!("{d} (decluttered and optimized)"),
            (Outcome::Pass, o) => format!("optimized: {o}"),
            (d, Outcome::Pass) => format!("decluttered: {d}"),
            (d, o) => format!("decluttered: {d}; optimized: {o}"),
        }
    }
}

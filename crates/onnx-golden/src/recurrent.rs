//! The recurrent suites (`onnx-testdata/recurrent/<exporter>/`): which of
//! their cases gate, and one outcome for both input modes.
//!
//! A case gates when its model holds a `Loop` or a `Scan` node (nested
//! graphs included): the plugin's `Loop` and the shapes around it. A model
//! made of ONNX `LSTM`/`GRU`/`RNN` ops alone runs on tract's own kernels:
//! it is reported, not gated. A gated case passes when it passes with the
//! input facts the model declares and with facts pinned to the data.

use crate::outcome::{FrameworkOutcome, Outcome};
use prost::Message;
use std::path::Path;
use tract_onnx::pb::{GraphProto, ModelProto};

/// Whether the model of the test in `dir` holds a `Loop` or a `Scan` node.
/// An unreadable model counts as holding one: its failure then gates.
pub fn holds_loop(dir: &Path) -> bool {
    let Ok(bytes) = std::fs::read(dir.join("model.onnx")) else {
        return true;
    };
    let Ok(model) = ModelProto::decode(bytes.as_slice()) else {
        return true;
    };
    model.graph.as_ref().is_some_and(graph_holds_loop)
}

fn graph_holds_loop(graph: &GraphProto) -> bool {
    graph.node.iter().any(|node| {
        node.op_type == "Loop"
            || node.op_type == "Scan"
            || node
                .attribute
                .iter()
                .any(|a| a.g.iter().chain(&a.graphs).any(graph_holds_loop))
    })
}

/// One outcome for a test run with declared and with pinned input facts:
/// a pass when both pass, else the first failing one, its reason naming
/// the mode.
pub fn both_modes(declared: &FrameworkOutcome, pinned: &FrameworkOutcome) -> FrameworkOutcome {
    let mode = |label: &str, o: &Outcome| match o {
        Outcome::Pass => Outcome::Pass,
        Outcome::Fail { phase, reason } => Outcome::Fail {
            phase: *phase,
            reason: format!("{label} input facts: {reason}"),
        },
        Outcome::Panic { phase, message } => Outcome::Panic {
            phase: *phase,
            message: format!("{label} input facts: {message}"),
        },
    };
    let pick = |d: &Outcome, p: &Outcome| {
        if !d.is_pass() {
            mode("declared", d)
        } else {
            mode("pinned", p)
        }
    };
    FrameworkOutcome {
        decluttered: pick(&declared.decluttered, &pinned.decluttered),
        optimized: pick(&declared.optimized, &pinned.optimized),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Phase;

    fn outcome(o: Outcome) -> FrameworkOutcome {
        FrameworkOutcome {
            decluttered: o.clone(),
            optimized: o,
        }
    }

    fn fail(reason: &str) -> Outcome {
        Outcome::Fail {
            phase: Phase::Typing,
            reason: reason.into(),
        }
    }

    #[test]
    fn a_case_passes_only_when_both_modes_pass() {
        let pass = outcome(Outcome::Pass);
        assert!(both_modes(&pass, &pass).is_pass());
        let failed = both_modes(&pass, &outcome(fail("x")));
        assert!(!failed.is_pass());
        assert_eq!(failed.decluttered, fail("pinned input facts: x"));
        let failed = both_modes(&outcome(fail("d")), &outcome(fail("p")));
        assert_eq!(failed.optimized, fail("declared input facts: d"));
    }
}

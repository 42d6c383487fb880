//! The "never worse than stock" gate: a plugin that changes tract must not
//! lose a model stock tract runs, nor stop earlier on one both fail.
//!
//! Each model is run by a plugin-extended tract and by stock tract with the
//! same input facts (declared by the model, or pinned to the data; see
//! [`InputFacts`]), decluttered and optimized. In either preparation mode,
//! the plugin is worse when
//! - stock passes and the plugin does not;
//! - the plugin panics and stock does not (a plugin error where stock
//!   panics is never worse);
//! - both fail and the plugin stops earlier: in an earlier phase (load <
//!   analyse < typing < declutter/optimize < run < compare), or in the same
//!   phase at an earlier node of the ONNX graph ([`crate::stop`]).

use crate::framework::{InputFacts, LoadOnnx, Tract};
use crate::outcome::Outcome;
use crate::stop::{NodePositions, stop_of};
use crate::suite::{CaseResult, NamedFramework};
use crate::tables::{aligned_table, markdown_table, xml};
use serde::Serialize;
use std::cmp::Ordering;
use std::fmt::Write as _;

/// Which outcomes of a [`CaseResult`] to compare: the plugin's at index
/// `plugin` against stock's at index `stock`, both typed with `input_facts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pairing {
    /// The input facts both runs are typed with.
    pub input_facts: InputFacts,
    /// Index of the plugin's outcome in [`CaseResult::outcomes`].
    pub plugin: usize,
    /// Index of stock tract's outcome in [`CaseResult::outcomes`].
    pub stock: usize,
}

impl Pairing {
    /// The layout of [`GateFrameworks::named`]: plugin pinned, stock
    /// pinned, plugin declared, stock declared.
    pub const STANDARD: [Pairing; 2] = [
        Pairing {
            input_facts: InputFacts::Pinned,
            plugin: 0,
            stock: 1,
        },
        Pairing {
            input_facts: InputFacts::Declared,
            plugin: 2,
            stock: 3,
        },
    ];
}

/// The four runs the gate compares, in [`Pairing::STANDARD`] order.
pub struct GateFrameworks<'a> {
    runs: [Tract<'a>; 4],
}

impl<'a> GateFrameworks<'a> {
    /// The four runs of `plugin` and `stock`: plugin pinned, stock pinned,
    /// plugin declared, stock declared.
    pub fn new(plugin: &'a dyn LoadOnnx, stock: &'a dyn LoadOnnx) -> GateFrameworks<'a> {
        GateFrameworks {
            runs: [
                Tract::pinned(plugin),
                Tract::pinned(stock),
                Tract::declared(plugin),
                Tract::declared(stock),
            ],
        }
    }

    /// `plugin`, `stock`, `plugin (declared)`, `stock (declared)`.
    pub fn named(&self) -> Vec<NamedFramework<'_>> {
        ["plugin", "stock", "plugin (declared)", "stock (declared)"]
            .into_iter()
            .zip(&self.runs)
            .map(|(name, framework)| NamedFramework {
                name: name.to_string(),
                framework,
            })
            .collect()
    }
}

/// Counts of one suite in one input mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// Suite name (`total` in [`NeverWorse::totals`]).
    pub suite: String,
    /// The input facts of both runs.
    pub input_facts: InputFacts,
    /// Models judged.
    pub models: usize,
    /// Models the plugin passes in both modes.
    pub plugin_pass: usize,
    /// Models stock tract passes in both modes.
    pub stock_pass: usize,
    /// Models on which the plugin does worse than stock.
    pub plugin_worse: usize,
}

/// A model on which the plugin does worse than stock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Worse {
    /// Suite of the model.
    pub suite: String,
    /// Test name, as reported.
    pub test: String,
    /// The input facts of both runs.
    pub input_facts: InputFacts,
    /// Why, naming the preparation mode and both outcomes.
    pub why: String,
}

/// The gate's result over many suites: one [`Row`] per suite and input
/// mode, and every plugin-worse model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NeverWorse {
    /// One row per suite and input mode, in the order the cases met them.
    pub rows: Vec<Row>,
    /// Every plugin-worse model, once per input mode it is worse in, in case
    /// order; empty when the gate passes.
    pub worse: Vec<Worse>,
}

impl NeverWorse {
    /// Judges `cases` (in suite order) for every pairing; rows come in the
    /// cases' suite order, each suite's modes in `pairings` order.
    pub fn judge(cases: &[CaseResult], pairings: &[Pairing]) -> NeverWorse {
        let mut gate = NeverWorse::default();
        for case in cases {
            for pairing in pairings {
                let (Some(plugin), Some(stock)) = (
                    case.outcomes.get(pairing.plugin),
                    case.outcomes.get(pairing.stock),
                ) else {
                    continue;
                };
                let row = gate.row(&case.suite, pairing.input_facts);
                row.models += 1;
                row.plugin_pass += usize::from(plugin.is_pass());
                row.stock_pass += usize::from(stock.is_pass());
                let mut positions = None;
                let mut positions = || {
                    positions
                        .get_or_insert_with(|| {
                            NodePositions::load(&case.dir.join("model.onnx")).unwrap_or_default()
                        })
                        .clone()
                };
                let why = [
                    ("decluttered", &plugin.decluttered, &stock.decluttered),
                    ("optimized", &plugin.optimized, &stock.optimized),
                ]
                .into_iter()
                .find_map(|(mode, p, s)| {
                    worse(p, s, &mut positions).map(|why| format!("{mode}: {why}"))
                });
                if let Some(why) = why {
                    gate.row(&case.suite, pairing.input_facts).plugin_worse += 1;
                    gate.worse.push(Worse {
                        suite: case.suite.clone(),
                        test: case.test.clone(),
                        input_facts: pairing.input_facts,
                        why,
                    });
                }
            }
        }
        gate
    }

    fn row(&mut self, suite: &str, input_facts: InputFacts) -> &mut Row {
        let at = match self
            .rows
            .iter()
            .position(|r| r.suite == suite && r.input_facts == input_facts)
        {
            Some(at) => at,
            None => {
                self.rows.push(Row {
                    suite: suite.to_string(),
                    input_facts,
                    models: 0,
                    plugin_pass: 0,
                    stock_pass: 0,
                    plugin_worse: 0,
                });
                self.rows.len() - 1
            }
        };
        &mut self.rows[at]
    }

    /// Both gates' results together (rows of the same suite and mode add up).
    pub fn merge(&mut self, other: NeverWorse) {
        for r in other.rows {
            let row = self.row(&r.suite, r.input_facts);
            row.models += r.models;
            row.plugin_pass += r.plugin_pass;
            row.stock_pass += r.stock_pass;
            row.plugin_worse += r.plugin_worse;
        }
        self.worse.extend(other.worse);
    }

    /// The gate passes: no model is plugin-worse.
    pub fn is_ok(&self) -> bool {
        self.worse.is_empty()
    }

    /// Totals over every suite, one per input mode, in the rows' order.
    pub fn totals(&self) -> Vec<Row> {
        let mut modes: Vec<InputFacts> = vec![];
        for row in &self.rows {
            if !modes.contains(&row.input_facts) {
                modes.push(row.input_facts);
            }
        }
        modes
            .into_iter()
            .map(|mode| {
                let mut total = Row {
                    suite: "total".into(),
                    input_facts: mode,
                    models: 0,
                    plugin_pass: 0,
                    stock_pass: 0,
                    plugin_worse: 0,
                };
                for r in self.rows.iter().filter(|r| r.input_facts == mode) {
                    total.models += r.models;
                    total.plugin_pass += r.plugin_pass;
                    total.stock_pass += r.stock_pass;
                    total.plugin_worse += r.plugin_worse;
                }
                total
            })
            .collect()
    }

    fn table(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let header = [
            "suite",
            "input facts",
            "models",
            "plugin pass",
            "stock pass",
            "plugin worse",
        ]
        .map(String::from)
        .to_vec();
        let rows = self
            .rows
            .iter()
            .chain(&self.totals())
            .map(|r| {
                vec![
                    r.suite.clone(),
                    r.input_facts.to_string(),
                    r.models.to_string(),
                    r.plugin_pass.to_string(),
                    r.stock_pass.to_string(),
                    r.plugin_worse.to_string(),
                ]
            })
            .collect();
        (header, rows)
    }

    /// One line: the verdict.
    pub fn verdict(&self) -> String {
        if self.is_ok() {
            "never worse than stock: OK (0 plugin-worse models)".to_string()
        } else {
            format!(
                "never worse than stock: FAILED ({} plugin-worse model runs)",
                self.worse.len()
            )
        }
    }

    /// Every plugin-worse model, one line each, with both outcomes.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        for w in &self.worse {
            let _ = writeln!(
                out,
                "  {} {} ({} input facts): {}",
                w.suite, w.test, w.input_facts, w.why
            );
        }
        out
    }

    /// The table (rows, then totals), the plugin-worse models when there are
    /// any, and the verdict, as plain text.
    pub fn text(&self) -> String {
        let (header, rows) = self.table();
        let mut out = String::from("never worse than stock, per model:\n");
        out.push_str(&aligned_table(&header, &rows));
        if !self.is_ok() {
            out.push_str("plugin worse than stock:\n");
            out.push_str(&self.explain());
        }
        let _ = writeln!(out, "{}", self.verdict());
        out
    }

    /// The same as [`NeverWorse::text`], as a markdown section.
    pub fn markdown(&self) -> String {
        let (header, rows) = self.table();
        let mut out = String::from("## Never worse than stock\n\n");
        markdown_table(&mut out, &header, &rows);
        if !self.is_ok() {
            let _ = write!(out, "\n```\n{}```\n", self.explain());
        }
        let _ = writeln!(out, "\n{}", self.verdict());
        out
    }

    /// A `<testsuite>` with one test per suite and input mode, failed by
    /// its plugin-worse models.
    pub fn junit_suite(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "  <testsuite name=\"never-worse-than-stock\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">",
            self.rows.len(),
            self.rows.iter().filter(|r| r.plugin_worse > 0).count()
        );
        for row in &self.rows {
            let _ = write!(
                out,
                "    <testcase classname=\"never-worse.{}\" name=\"{}\"",
                xml(&row.suite),
                row.input_facts
            );
            let worse: Vec<&Worse> = self
                .worse
                .iter()
                .filter(|w| w.suite == row.suite && w.input_facts == row.input_facts)
                .collect();
            if worse.is_empty() {
                out.push_str("/>\n");
                continue;
            }
            let text: String = worse
                .iter()
                .map(|w| format!("{}: {}\n", w.test, w.why))
                .collect();
            let _ = writeln!(
                out,
                ">\n      <failure message=\"{} plugin-worse models\">{}</failure>\n    </testcase>",
                worse.len(),
                xml(&text)
            );
        }
        out.push_str("  </testsuite>\n");
        out
    }
}

/// Why `plugin` did worse than `stock` on one model in one preparation
/// mode, or `None`. `positions` is only asked for when both fail in the
/// same phase.
pub fn worse(
    plugin: &Outcome,
    stock: &Outcome,
    positions: &mut dyn FnMut() -> NodePositions,
) -> Option<String> {
    let described = || format!("plugin {plugin}; stock {stock}");
    match (plugin, stock) {
        (Outcome::Pass, _) => None,
        (_, Outcome::Pass) => Some(format!(
            "stock passes, the plugin does not: {}",
            described()
        )),
        (Outcome::Panic { .. }, Outcome::Fail { .. }) => Some(format!(
            "the plugin panics, stock does not: {}",
            described()
        )),
        // Stock does not run the model cleanly: an error anywhere is no worse.
        (Outcome::Fail { .. }, Outcome::Panic { .. }) => None,
        _ => {
            let same_phase = stop_of(plugin, &Default::default())?.phase
                == stop_of(stock, &Default::default())?.phase;
            let positions = if same_phase {
                positions()
            } else {
                NodePositions::default()
            };
            let (p, s) = (stop_of(plugin, &positions)?, stop_of(stock, &positions)?);
            (p.order(&s) == Ordering::Less).then(|| {
                let at = |stop: crate::stop::Stop| match stop.node {
                    Some(node) => format!("{} (node {node})", stop.phase),
                    None => stop.phase.to_string(),
                };
                format!(
                    "the plugin stops earlier, at {}, than stock, at {}: {}",
                    at(p),
                    at(s),
                    described()
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{FrameworkOutcome, Phase};
    use std::path::PathBuf;

    fn fail(phase: Phase, reason: &str) -> Outcome {
        Outcome::Fail {
            phase,
            reason: reason.into(),
        }
    }

    fn no_positions() -> NodePositions {
        NodePositions::default()
    }

    #[test]
    fn a_plugin_failure_where_stock_passes_is_worse() {
        let why = worse(&fail(Phase::Run, "x"), &Outcome::Pass, &mut no_positions);
        assert!(why.unwrap().starts_with("stock passes"));
    }

    #[test]
    fn a_plugin_pass_is_never_worse() {
        assert_eq!(
            worse(&Outcome::Pass, &fail(Phase::Load, "x"), &mut no_positions),
            None
        );
        assert_eq!(
            worse(&Outcome::Pass, &Outcome::Pass, &mut no_positions),
            None
        );
    }

    #[test]
    fn stopping_in_an_earlier_phase_is_worse_and_in_a_later_one_is_not() {
        let analyse = fail(Phase::Analyse, "a");
        let run = fail(Phase::Run, "b");
        assert!(worse(&analyse, &run, &mut no_positions).is_some());
        assert_eq!(worse(&run, &analyse, &mut no_positions), None);
    }

    #[test]
    fn in_the_same_phase_the_earlier_onnx_node_is_worse() {
        use tract_onnx::pb::{GraphProto, ModelProto, NodeProto};
        let model = ModelProto {
            graph: Some(GraphProto {
                node: ["first", "second"]
                    .iter()
                    .map(|n| NodeProto {
                        name: n.to_string(),
                        ..NodeProto::default()
                    })
                    .collect(),
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        };
        let mut positions = || NodePositions::of(&model);
        let early = fail(Phase::Analyse, "Failed analyse for node #3 \"first\" Slice");
        let late = fail(Phase::Analyse, "Failed analyse for node #4 \"second\" Pad");
        let why = worse(&early, &late, &mut positions).unwrap();
        assert!(
            why.contains("at analyse (node 0), than stock, at analyse (node 1)"),
            "{why}"
        );
        assert_eq!(worse(&late, &early, &mut positions), None);
        assert_eq!(worse(&early, &early, &mut positions), None);
    }

    #[test]
    fn a_plugin_panic_where_stock_fails_cleanly_is_worse_and_not_the_reverse() {
        let panic = Outcome::Panic {
            phase: Phase::Run,
            message: "index out of bounds".into(),
        };
        assert!(worse(&panic, &fail(Phase::Run, "x"), &mut no_positions).is_some());
        let load_error = fail(Phase::Load, "index out of bounds, checked at load");
        assert_eq!(worse(&load_error, &panic, &mut no_positions), None);
    }

    fn case(test: &str, outcomes: Vec<Outcome>) -> CaseResult {
        CaseResult {
            suite: "torch".into(),
            test: test.into(),
            dir: PathBuf::from("/nonexistent"),
            opset: Some(18),
            outcomes: outcomes
                .into_iter()
                .map(|o| FrameworkOutcome {
                    decluttered: o.clone(),
                    optimized: o,
                })
                .collect(),
        }
    }

    #[test]
    fn judge_counts_each_suite_and_input_mode_and_lists_worse_models() {
        let cases = vec![
            case(
                "a",
                vec![
                    Outcome::Pass,
                    Outcome::Pass,
                    fail(Phase::Analyse, "late"),
                    Outcome::Pass,
                ],
            ),
            case(
                "b",
                vec![
                    Outcome::Pass,
                    fail(Phase::Typing, "x"),
                    Outcome::Pass,
                    fail(Phase::Typing, "x"),
                ],
            ),
        ];
        let gate = NeverWorse::judge(&cases, &Pairing::STANDARD);
        assert_eq!(gate.rows.len(), 2);
        assert_eq!(
            (
                gate.rows[0].models,
                gate.rows[0].plugin_pass,
                gate.rows[0].stock_pass,
                gate.rows[0].plugin_worse
            ),
            (2, 2, 1, 0)
        );
        assert_eq!(gate.rows[1].input_facts, InputFacts::Declared);
        assert_eq!(gate.rows[1].plugin_worse, 1);
        assert_eq!(gate.worse.len(), 1);
        assert_eq!(gate.worse[0].test, "a");
        assert!(gate.worse[0].why.starts_with("decluttered: stock passes"));
        assert!(!gate.is_ok());
        let text = gate.text();
        assert!(
            text.contains("torch  declared     2       1            1           1"),
            "{text}"
        );
        assert!(text.ends_with("never worse than stock: FAILED (1 plugin-worse model runs)\n"));
    }
}

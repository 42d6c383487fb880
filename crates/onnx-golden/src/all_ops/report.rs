//! The all-ops report: each framework outcome's category, the counts per
//! operator and framework, the rows with their first failure, and the
//! rendering in every [`Format`] (text, markdown, JSON, JUnit). It must not
//! depend on the cache or on running anything: it takes finished
//! [`CaseResult`]s and the operators `operators.rs` named.

use super::operators::{OperatorRule, TestOperator};
use crate::never_worse::NeverWorse;
use crate::outcome::{FrameworkOutcome, Outcome, Phase};
use crate::report::Format;
use crate::suite::CaseResult;
use crate::tables::{aligned_table, markdown_escape, markdown_table, xml};
use anyhow::Result;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Longest representative error kept in a table cell.
const MAX_ERROR_LINE: usize = 160;

/// What one framework did with one test, for the per-operator counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Both modes (decluttered and optimized) match the expected outputs.
    Pass,
    /// A mode ran without an error and returned a wrong value: outputs
    /// that differ from the expected ones, or outputs where the test
    /// expects an error. The worst outcome (nothing tells the user).
    Wrong,
    /// Loading, preparing or running failed with an error (no mode
    /// returned a wrong value).
    Fail,
    /// A panic in either mode (caught by the panic guard).
    Panic,
    /// Every failing mode failed because the framework has no implementation
    /// of an operator of the model (tract's `Unimplemented(<op>)`).
    Unsupported,
    /// The harness could not read the test's data files, so no framework
    /// ran: an element type tract has no equivalent for (float8, int4, int2,
    /// float4, bfloat16...) or a sequence/optional value (`SequenceProto`,
    /// `OptionalProto`, which the harness does not decode). Says nothing of
    /// the operator.
    Unreadable,
}

impl Category {
    /// The category of one framework's outcome on one test, the first that
    /// applies: [`Pass`](Category::Pass) when both modes pass,
    /// [`Unreadable`](Category::Unreadable) when both failed to read the test
    /// data, [`Wrong`](Category::Wrong) when either mode returned a wrong
    /// value without an error, [`Panic`](Category::Panic) when either mode
    /// panicked,
    /// [`Unsupported`](Category::Unsupported) when every failing mode failed on
    /// an operator the framework does not implement, else
    /// [`Fail`](Category::Fail).
    pub fn of(outcome: &FrameworkOutcome) -> Category {
        let modes = [&outcome.decluttered, &outcome.optimized];
        if outcome.is_pass() {
            Category::Pass
        } else if modes.iter().all(|o| is_unreadable(o)) {
            Category::Unreadable
        } else if modes.iter().any(|o| is_wrong(o)) {
            Category::Wrong
        } else if modes.iter().any(|o| matches!(o, Outcome::Panic { .. })) {
            Category::Panic
        } else if modes.iter().all(|o| match o {
            Outcome::Fail { reason, .. } => is_unimplemented(reason),
            _ => true,
        }) {
            Category::Unsupported
        } else {
            Category::Fail
        }
    }
}

/// [`crate::suite::run_case`]'s outcome when the test data cannot be read
/// (the framework never ran).
fn is_unreadable(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Fail { phase: Phase::Load, reason } if reason.starts_with(UNREADABLE_PREFIX))
}

/// Whether the framework ran without an error and its result was wrong:
/// [`crate::run`] fails at [`Phase::Compare`] exactly then (outputs that
/// differ, or outputs where an error was expected).
fn is_wrong(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Fail {
            phase: Phase::Compare,
            ..
        }
    )
}

/// How [`crate::suite::run_case`] prefixes a failure to read test data.
const UNREADABLE_PREFIX: &str = "reading test data: ";

/// tract builds an unknown ONNX op as `UnimplementedOp`, named
/// `Unimplemented(<op_type>)`, which fails when the model is typed.
fn is_unimplemented(reason: &str) -> bool {
    reason.contains("Unimplemented(")
}

/// One test of the all-ops run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllOpsCase {
    /// The operator the test exercises ([`TestOperator::operator`]), or
    /// `(unreadable model)` when none could be named.
    pub operator: String,
    /// How the operator was named; `None` when none could be.
    pub rule: Option<OperatorRule>,
    /// The test's suite, name, opset and outcomes, one per framework
    /// (flattened into the case's JSON object).
    #[serde(flatten)]
    pub result: CaseResult,
    /// One per framework, same order as `outcomes`.
    pub categories: Vec<Category>,
}

impl AllOpsCase {
    /// The case of a test from its operator, as
    /// [`assign_operators`](super::assign_operators) named it (an error, such
    /// as an unreadable model, becomes `(unreadable model)` without a rule),
    /// and its result, each outcome put in its [`Category`].
    pub fn new(operator: Result<TestOperator>, result: CaseResult) -> AllOpsCase {
        let categories = result.outcomes.iter().map(Category::of).collect();
        let (operator, rule) = match operator {
            Ok(t) => (t.operator, Some(t.rule)),
            Err(_) => ("(unreadable model)".to_string(), None),
        };
        AllOpsCase {
            operator,
            rule,
            result,
            categories,
        }
    }
}

/// Counts of one framework.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Tests in [`Category::Pass`].
    pub pass: usize,
    /// Tests in [`Category::Wrong`]: a wrong value without an error.
    pub wrong: usize,
    /// Tests in [`Category::Fail`].
    pub fail: usize,
    /// Tests in [`Category::Panic`].
    pub panic: usize,
    /// Tests in [`Category::Unsupported`].
    pub unsupported: usize,
    /// Tests in [`Category::Unreadable`].
    pub unreadable: usize,
}

impl Counts {
    fn add(&mut self, category: Category) {
        match category {
            Category::Pass => self.pass += 1,
            Category::Wrong => self.wrong += 1,
            Category::Fail => self.fail += 1,
            Category::Panic => self.panic += 1,
            Category::Unsupported => self.unsupported += 1,
            Category::Unreadable => self.unreadable += 1,
        }
    }

    fn cells(&self) -> [String; 6] {
        [
            self.pass,
            self.wrong,
            self.fail,
            self.panic,
            self.unsupported,
            self.unreadable,
        ]
        .map(|n| n.to_string())
    }
}

/// One operator's results per framework.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperatorRow {
    /// The operator's label (see [`TestOperator::operator`]).
    pub operator: String,
    /// Tests counted under the operator, function-expanded ones included.
    pub tests: usize,
    /// Of which function-expanded (`_expanded*`) tests.
    pub expanded: usize,
    /// One per framework.
    pub counts: Vec<Counts>,
    /// One per framework: the first non-passing test (in name order) and the
    /// first line of its error, `None` when every test passed.
    pub representative: Vec<Option<String>>,
}

/// A test left out of the run, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The test's name (its directory below `node/`).
    pub test: String,
    /// Why it is left out.
    pub reason: String,
}

/// The all-ops report: per-operator rows, totals per framework, every case.
#[derive(Debug, Clone, Serialize)]
pub struct AllOpsReport {
    /// onnx release whose node tests ran.
    pub release: String,
    /// Framework names, in the order of every per-framework list of the report.
    pub frameworks: Vec<String>,
    /// One row per operator, sorted by operator name.
    pub operators: Vec<OperatorRow>,
    /// One per framework, over every test.
    pub totals: Vec<Counts>,
    /// Tests left out of the run ([`SKIPPED`](super::SKIPPED)), with their reasons.
    pub skipped: Vec<Skipped>,
    /// Every test that ran, sorted by test name.
    pub cases: Vec<AllOpsCase>,
    /// The "never worse than stock" gate over these tests, when it was run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub never_worse: Option<NeverWorse>,
}

/// First line of what went wrong: the worst mode's reason, bounded.
fn error_line(outcome: &FrameworkOutcome) -> String {
    let text = match outcome.worst() {
        Outcome::Pass => return "pass".into(),
        Outcome::Fail { phase, reason } => format!("FAIL at {phase}: {reason}"),
        Outcome::Panic { phase, message } => format!("PANIC at {phase}: {message}"),
    };
    let line = text.lines().next().unwrap_or_default();
    if line.len() <= MAX_ERROR_LINE {
        return line.to_string();
    }
    let mut cut = MAX_ERROR_LINE;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &line[..cut])
}

impl AllOpsReport {
    /// Aggregates `cases` (any order) per operator, operators sorted by name.
    pub fn new(
        release: String,
        frameworks: Vec<String>,
        mut cases: Vec<AllOpsCase>,
        skipped: Vec<Skipped>,
    ) -> AllOpsReport {
        cases.sort_by(|a, b| a.result.test.cmp(&b.result.test));
        let n = frameworks.len();
        let mut rows: BTreeMap<String, OperatorRow> = BTreeMap::new();
        let mut totals = vec![Counts::default(); n];
        for case in &cases {
            let row = rows
                .entry(case.operator.clone())
                .or_insert_with(|| OperatorRow {
                    operator: case.operator.clone(),
                    tests: 0,
                    expanded: 0,
                    counts: vec![Counts::default(); n],
                    representative: vec![None; n],
                });
            row.tests += 1;
            if case.rule == Some(OperatorRule::Expanded) {
                row.expanded += 1;
            }
            for (ix, &category) in case.categories.iter().enumerate().take(n) {
                row.counts[ix].add(category);
                totals[ix].add(category);
                if category != Category::Pass && row.representative[ix].is_none() {
                    let line = case
                        .result
                        .outcomes
                        .get(ix)
                        .map(error_line)
                        .unwrap_or_default();
                    row.representative[ix] = Some(format!("{}: {line}", case.result.test));
                }
            }
        }
        AllOpsReport {
            release,
            frameworks,
            operators: rows.into_values().collect(),
            totals,
            skipped,
            cases,
            never_worse: None,
        }
    }

    /// The report with the "never worse than stock" gate's results.
    pub fn with_never_worse(mut self, never_worse: NeverWorse) -> AllOpsReport {
        self.never_worse = Some(never_worse);
        self
    }

    /// The report in `format`: in text and markdown, the legend, a table of
    /// the operators, their first failures and the totals, then the
    /// never-worse table when it ran; the whole report as pretty-printed
    /// JSON; or JUnit XML, one `<testsuite>` per framework (and one for the
    /// never-worse gate when it ran).
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => self.text(),
            Format::Markdown => self.markdown(),
            Format::Json => {
                serde_json::to_string_pretty(self)
                    .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
                    + "\n"
            }
            Format::Junit => self.junit(),
        }
    }

    fn header(&self) -> Vec<String> {
        let mut header = vec!["operator".to_string(), "tests".into()];
        for name in &self.frameworks {
            for what in [
                "pass",
                "wrong",
                "fail",
                "panic",
                "unsupported",
                "unreadable",
            ] {
                header.push(format!("{name} {what}"));
            }
        }
        header
    }

    fn count_cells(&self, row: &OperatorRow) -> Vec<String> {
        let tests = if row.expanded > 0 {
            format!("{} ({} expanded)", row.tests, row.expanded)
        } else {
            row.tests.to_string()
        };
        let mut cells = vec![row.operator.clone(), tests];
        for counts in &row.counts {
            cells.extend(counts.cells());
        }
        cells
    }

    /// Summary lines: tests, operators, and each framework's totals.
    pub fn totals_lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "onnx {}: {} node tests, {} operators{}",
            self.release,
            self.cases.len(),
            self.operators.len(),
            if self.skipped.is_empty() {
                String::new()
            } else {
                format!(", {} skipped", self.skipped.len())
            }
        )];
        for (name, t) in self.frameworks.iter().zip(&self.totals) {
            lines.push(format!(
                "{name}: {} passed, {} wrong without an error, {} failed with an error, {} panicked, {} unsupported, {} unreadable data",
                t.pass, t.wrong, t.fail, t.panic, t.unsupported, t.unreadable
            ));
        }
        lines.push(
            "counts are informational; only a plugin-worse test (never-worse gate) fails the command"
                .into(),
        );
        lines
    }

    /// Per framework, each operator where it returned a wrong value
    /// without an error, with those tests: `"<framework>: none"`, or
    /// `"<framework>: <operator> (<test>, ...)"` one line per operator.
    pub fn wrong_lines(&self) -> Vec<String> {
        let mut lines = vec![];
        for (ix, name) in self.frameworks.iter().enumerate() {
            let mut by_operator: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for case in &self.cases {
                if case.categories.get(ix) == Some(&Category::Wrong) {
                    by_operator
                        .entry(&case.operator)
                        .or_default()
                        .push(&case.result.test);
                }
            }
            if by_operator.is_empty() {
                lines.push(format!("{name}: none"));
            }
            for (operator, tests) in by_operator {
                lines.push(format!("{name}: {operator} ({})", tests.join(", ")));
            }
        }
        lines
    }

    /// What the columns count.
    pub const LEGEND: &'static str = "\
pass: decluttered and optimized both match the expected outputs. \
wrong: a mode ran without an error and returned a wrong value (outputs that \
differ, or outputs where the test expects an error): silently wrong. \
fail: an error while loading, typing, optimizing or running (no wrong value). \
panic: a panic in either mode (caught). \
unsupported: the model uses an operator the framework does not implement \
(tract's `Unimplemented(<op>)`). \
unreadable: the harness cannot decode the test data (an element type tract \
lacks, or a sequence/optional value), so nothing ran. \
An operator is the model's only node; a function-expanded test \
(`*_expanded*`) counts under its base test's operator; a model of several \
nodes under its first non-Constant node. \
First failure: the first non-passing test of the operator, by name, and the \
first line of its error.";

    fn text(&self) -> String {
        let header = self.header();
        let rows: Vec<Vec<String>> = self.operators.iter().map(|r| self.count_cells(r)).collect();
        let mut out = format!(
            "all official node tests of onnx {}\n{}\n\n",
            self.release,
            Self::LEGEND
        );
        out.push_str(&aligned_table(&header, &rows));
        out.push_str("\nrepresentative failures:\n");
        for row in &self.operators {
            for (name, rep) in self.frameworks.iter().zip(&row.representative) {
                if let Some(rep) = rep {
                    let _ = writeln!(out, "  [{name}] {}: {rep}", row.operator);
                }
            }
        }
        out.push_str("\nwrong values without an error (silently wrong), by operator:\n");
        for l in self.wrong_lines() {
            let _ = writeln!(out, "  {l}");
        }
        if !self.skipped.is_empty() {
            out.push_str("\nskipped:\n");
            for s in &self.skipped {
                let _ = writeln!(out, "  {}: {}", s.test, s.reason);
            }
        }
        out.push('\n');
        for l in self.totals_lines() {
            let _ = writeln!(out, "{l}");
        }
        if let Some(nw) = &self.never_worse {
            out.push('\n');
            out.push_str(&nw.text());
        }
        out
    }

    fn markdown(&self) -> String {
        let mut header = self.header();
        for name in &self.frameworks {
            header.push(format!("{name}: first failure"));
        }
        let mut out = format!("# All ONNX node tests of onnx {}\n\n", self.release);
        for l in self.totals_lines() {
            let _ = writeln!(out, "- {l}");
        }
        let _ = writeln!(out, "\n{}\n", Self::LEGEND);
        let mut rows = vec![];
        for row in &self.operators {
            let mut cells = self.count_cells(row);
            // A code span (error texts hold `<...>`); the same failure as
            // the first framework's is named, not repeated.
            for (ix, rep) in row.representative.iter().enumerate() {
                cells.push(match rep {
                    None => String::new(),
                    Some(_) if ix > 0 && row.representative.first() == Some(rep) => {
                        format!("same as {}", self.frameworks[0])
                    }
                    Some(r) => format!("`{}`", r.replace('`', "'")),
                });
            }
            rows.push(cells);
        }
        markdown_table(&mut out, &header, &rows);
        out.push_str("\n## Wrong values without an error (silently wrong), by operator\n\n");
        for l in self.wrong_lines() {
            let _ = writeln!(out, "- {}", markdown_escape(&l));
        }
        if !self.skipped.is_empty() {
            out.push_str("\n## Skipped\n\n");
            for s in &self.skipped {
                let _ = writeln!(out, "- `{}`: {}", s.test, markdown_escape(&s.reason));
            }
        }
        if let Some(nw) = &self.never_worse {
            out.push('\n');
            out.push_str(&nw.markdown());
        }
        out
    }

    /// One `<testsuite>` per framework, one `<testcase>` per test (class
    /// `<framework>.<operator>`): a failure is `<failure>`, a panic
    /// `<error>`, an unsupported operator or unreadable data `<skipped>`. The file reports; the
    /// command's exit status does not depend on it.
    fn junit(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
        for (ix, name) in self.frameworks.iter().enumerate() {
            let t = self.totals.get(ix).cloned().unwrap_or_default();
            let _ = writeln!(
                out,
                "  <testsuite name=\"all-ops {} {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
                xml(&self.release),
                xml(name),
                self.cases.len(),
                t.fail + t.wrong,
                t.panic,
                t.unsupported + t.unreadable
            );
            for case in &self.cases {
                let _ = write!(
                    out,
                    "    <testcase classname=\"{}.{}\" name=\"{}\"",
                    xml(name),
                    xml(&case.operator),
                    xml(&case.result.test)
                );
                let category = case.categories.get(ix).copied();
                let Some(outcome) = case
                    .result
                    .outcomes
                    .get(ix)
                    .filter(|_| category.is_some_and(|c| c != Category::Pass))
                else {
                    out.push_str("/>\n");
                    continue;
                };
                let description = xml(&outcome.describe());
                let element = match category {
                    Some(Category::Panic) => {
                        format!("      <error message=\"panic\">{description}</error>")
                    }
                    Some(Category::Unsupported) => format!(
                        "      <skipped message=\"unsupported operator\">{description}</skipped>"
                    ),
                    Some(Category::Unreadable) => format!(
                        "      <skipped message=\"unreadable test data\">{description}</skipped>"
                    ),
                    Some(Category::Wrong) => format!(
                        "      <failure message=\"wrong value without an error: {description}\"/>"
                    ),
                    _ => format!("      <failure message=\"{description}\"/>"),
                };
                let _ = writeln!(out, ">\n{element}\n    </testcase>");
            }
            out.push_str("  </testsuite>\n");
        }
        if let Some(nw) = &self.never_worse {
            out.push_str(&nw.junit_suite());
        }
        out.push_str("</testsuites>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::all_ops::test_support::{model, node, temp_dir};
    use prost::Message;
    use std::fs;
    use std::path::Path;

    #[test]
    fn unreadable_test_data_is_its_own_category() {
        let dir = temp_dir("unreadable").join("test_bad");
        fs::create_dir_all(dir.join("test_data_set_0")).unwrap();
        fs::write(
            dir.join("model.onnx"),
            model(vec![node("Abs", "")]).encode_to_vec(),
        )
        .unwrap();
        fs::write(dir.join("test_data_set_0/input_0.pb"), b"\xff\xff\xff").unwrap();
        let never = |_: &Path,
                     _: Option<&[tract_onnx::prelude::Tensor]>,
                     _: crate::framework::Mode,
                     _: &mut dyn FnMut(Phase)|
         -> Result<Vec<tract_onnx::prelude::Tensor>> {
            unreachable!("must not run")
        };
        let frameworks = [crate::suite::NamedFramework {
            name: "f".into(),
            framework: &never,
        }];
        let result = crate::suite::run_case("r".into(), "test_bad".into(), &dir, &frameworks);
        assert_eq!(Category::of(&result.outcomes[0]), Category::Unreadable);
        fs::remove_dir_all(dir.parent().unwrap()).ok();
    }

    fn both(o: Outcome) -> FrameworkOutcome {
        FrameworkOutcome {
            decluttered: o.clone(),
            optimized: o,
        }
    }

    fn fail(phase: Phase, reason: &str) -> Outcome {
        Outcome::Fail {
            phase,
            reason: reason.into(),
        }
    }

    fn case(test: &str, operator: &str, rule: OperatorRule, outcomes: Vec<Outcome>) -> AllOpsCase {
        AllOpsCase::new(
            Ok(TestOperator {
                operator: operator.into(),
                rule,
            }),
            CaseResult {
                suite: "1.22.0".into(),
                test: test.into(),
                dir: Default::default(),
                opset: Some(22),
                outcomes: outcomes.into_iter().map(both).collect(),
            },
        )
    }

    fn sample() -> AllOpsReport {
        use OperatorRule::*;
        let unimplemented = || {
            fail(
                Phase::Typing,
                "Translating node #1 \"y\" Unimplemented(Det) ToTypedTranslator: Operator can not be made a TypedOp.",
            )
        };
        let cases = vec![
            case(
                "test_scatternd_max",
                "ScatterND",
                SingleNode,
                vec![
                    Outcome::Pass,
                    fail(Phase::Load, "Building node (ScatterND): reduction max <&>"),
                ],
            ),
            case(
                "test_scatternd",
                "ScatterND",
                SingleNode,
                vec![Outcome::Pass, Outcome::Pass],
            ),
            case(
                "test_det_2d",
                "Det",
                SingleNode,
                vec![unimplemented(), unimplemented()],
            ),
            case(
                "test_det_nd",
                "Det",
                SingleNode,
                vec![unimplemented(), unimplemented()],
            ),
            case(
                "test_cast_FLOAT_to_INT4",
                "Cast",
                SingleNode,
                vec![
                    fail(
                        Phase::Load,
                        "reading test data: in \"<node>/test_cast_FLOAT_to_INT4/test_data_set_0/output_0.pb\": ONNX element type Int4 has no tract equivalent",
                    ),
                    fail(
                        Phase::Load,
                        "reading test data: in \"<node>/test_cast_FLOAT_to_INT4/test_data_set_0/output_0.pb\": ONNX element type Int4 has no tract equivalent",
                    ),
                ],
            ),
            case(
                "test_softmax_axis_0_expanded",
                "Softmax",
                Expanded,
                vec![
                    Outcome::Panic {
                        phase: Phase::Optimize,
                        message: "attempt to subtract with overflow (at src/x.rs:1)".into(),
                    },
                    fail(
                        Phase::Compare,
                        "output 0: value mismatch at [0]: got 1.0 expected 0.5",
                    ),
                ],
            ),
            case(
                "test_softmax_axis_0",
                "Softmax",
                SingleNode,
                vec![Outcome::Pass, Outcome::Pass],
            ),
            // Wrong in one mode, an error in the other: silently wrong.
            AllOpsCase::new(
                Ok(TestOperator {
                    operator: "Softmax".into(),
                    rule: SingleNode,
                }),
                CaseResult {
                    suite: "1.22.0".into(),
                    test: "test_softmax_axis_1".into(),
                    dir: Default::default(),
                    opset: Some(22),
                    outcomes: vec![
                        FrameworkOutcome {
                            decluttered: fail(Phase::Run, "out of memory"),
                            optimized: fail(
                                Phase::Compare,
                                "output 0: value mismatch at [1]: got 0.0 expected 0.5",
                            ),
                        },
                        FrameworkOutcome {
                            decluttered: fail(
                                Phase::Compare,
                                "expected error containing 'axis', got Ok",
                            ),
                            optimized: Outcome::Panic {
                                phase: Phase::Run,
                                message: "boom".into(),
                            },
                        },
                    ],
                },
            ),
        ];
        AllOpsReport::new(
            "1.22.0".into(),
            vec!["plugin".into(), "stock".into()],
            cases,
            vec![Skipped {
                test: "test_slow".into(),
                reason: "takes 20 minutes".into(),
            }],
        )
    }

    #[test]
    fn aggregates_per_operator_and_per_framework() {
        let r = sample();
        let rows: Vec<String> = r
            .operators
            .iter()
            .map(|row| {
                let counts: Vec<String> = row
                    .counts
                    .iter()
                    .map(|c| {
                        format!(
                            "{}/{}/{}/{}/{}/{}",
                            c.pass, c.wrong, c.fail, c.panic, c.unsupported, c.unreadable
                        )
                    })
                    .collect();
                format!(
                    "{} {} ({} expanded): {}",
                    row.operator,
                    row.tests,
                    row.expanded,
                    counts.join(" ")
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                "Cast 1 (0 expanded): 0/0/0/0/0/1 0/0/0/0/0/1",
                "Det 2 (0 expanded): 0/0/0/0/2/0 0/0/0/0/2/0",
                "ScatterND 2 (0 expanded): 2/0/0/0/0/0 1/0/1/0/0/0",
                "Softmax 3 (1 expanded): 1/1/0/1/0/0 1/2/0/0/0/0",
            ]
        );
        let totals: Vec<(usize, usize, usize, usize, usize, usize)> = r
            .totals
            .iter()
            .map(|c| {
                (
                    c.pass,
                    c.wrong,
                    c.fail,
                    c.panic,
                    c.unsupported,
                    c.unreadable,
                )
            })
            .collect();
        assert_eq!(totals, [(3, 1, 0, 1, 2, 1), (2, 2, 1, 0, 2, 1)]);
        assert_eq!(r.operators[2].representative[0], None);
        assert_eq!(
            r.operators[2].representative[1].as_deref(),
            Some("test_scatternd_max: FAIL at load: Building node (ScatterND): reduction max <&>")
        );
    }

    #[test]
    fn a_wrong_value_in_either_mode_counts_as_wrong_not_as_an_error() {
        let r = sample();
        let category = |test: &str| {
            r.cases
                .iter()
                .find(|c| c.result.test == test)
                .map(|c| c.categories.clone())
                .unwrap()
        };
        assert_eq!(
            category("test_softmax_axis_1"),
            [Category::Wrong, Category::Wrong]
        );
        assert_eq!(
            category("test_scatternd_max"),
            [Category::Pass, Category::Fail]
        );
        assert_eq!(
            r.wrong_lines(),
            [
                "plugin: Softmax (test_softmax_axis_1)",
                "stock: Softmax (test_softmax_axis_0_expanded, test_softmax_axis_1)",
            ]
        );
    }

    #[test]
    fn text_snapshot() {
        insta::assert_snapshot!(sample().render(Format::Text));
    }

    #[test]
    fn markdown_snapshot() {
        insta::assert_snapshot!(sample().render(Format::Markdown));
    }

    #[test]
    fn json_snapshot() {
        insta::assert_snapshot!(sample().render(Format::Json));
    }

    #[test]
    fn junit_snapshot() {
        insta::assert_snapshot!(sample().render(Format::Junit));
    }
}

//! Conformance reports: text, markdown, JSON and JUnit XML.

use crate::expected_failures::{ExpectedFailures, Gate};
use crate::never_worse::NeverWorse;
use crate::outcome::{FrameworkOutcome, Outcome};
use crate::suite::CaseResult;
use anyhow::{Result, bail};
use serde::Serialize;
use std::fmt::Write as _;
use std::str::FromStr;

/// Output format of [`Report::render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Junit,
}

impl FromStr for Format {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Format> {
        Ok(match s {
            "text" => Format::Text,
            "markdown" | "md" => Format::Markdown,
            "json" => Format::Json,
            "junit" => Format::Junit,
            other => bail!("unknown report format {other:?}: use text, markdown, json or junit"),
        })
    }
}

/// Everything a report shows: results per framework, which framework gates,
/// the expected-failure annotations and the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub frameworks: Vec<String>,
    /// Name of the framework whose failures gate (the others are informational).
    pub gating: String,
    pub cases: Vec<ReportCase>,
    pub totals: Vec<Totals>,
    pub gate: Gate,
    /// The "never worse than stock" gate, when it was run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub never_worse: Option<NeverWorse>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReportCase {
    #[serde(flatten)]
    pub result: CaseResult,
    /// Reason listed in expected-failures.toml for the gating framework.
    pub expected_failure: Option<String>,
}

/// Counts for one framework. A test counts as a panic if any mode panicked.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    pub framework: String,
    pub pass: usize,
    pub fail: usize,
    pub panic: usize,
}

fn panicked(o: &FrameworkOutcome) -> bool {
    matches!(o.decluttered, Outcome::Panic { .. }) || matches!(o.optimized, Outcome::Panic { .. })
}

impl Report {
    /// Builds the report; `gating` indexes `frameworks`.
    pub fn new(
        frameworks: Vec<String>,
        gating: usize,
        cases: Vec<CaseResult>,
        expected: &ExpectedFailures,
    ) -> Report {
        let gate = Gate::judge(&cases, gating, expected);
        let totals = frameworks
            .iter()
            .enumerate()
            .map(|(ix, name)| {
                let mut t = Totals {
                    framework: name.clone(),
                    ..Totals::default()
                };
                for o in cases.iter().filter_map(|c| c.outcomes.get(ix)) {
                    if o.is_pass() {
                        t.pass += 1;
                    } else if panicked(o) {
                        t.panic += 1;
                    } else {
                        t.fail += 1;
                    }
                }
                t
            })
            .collect();
        let cases = cases
            .into_iter()
            .map(|result| ReportCase {
                expected_failure: expected
                    .find(&result.suite, &result.test)
                    .map(|e| e.reason.clone()),
                result,
            })
            .collect();
        Report {
            gating: frameworks.get(gating).cloned().unwrap_or_default(),
            frameworks,
            cases,
            totals,
            gate,
            never_worse: None,
        }
    }

    /// The report with the "never worse than stock" gate's results.
    pub fn with_never_worse(mut self, never_worse: NeverWorse) -> Report {
        self.never_worse = Some(never_worse);
        self
    }

    /// Both gates passed (the never-worse one, when it was run).
    pub fn is_ok(&self) -> bool {
        self.gate.is_ok() && self.never_worse.as_ref().is_none_or(NeverWorse::is_ok)
    }

    /// Why the report fails, empty when it passes.
    pub fn explain(&self) -> String {
        let mut out = self.gate.explain();
        if let Some(nw) = self.never_worse.as_ref().filter(|nw| !nw.is_ok()) {
            out.push_str("plugin worse than stock:\n");
            out.push_str(&nw.explain());
        }
        out
    }

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

    /// Cell text; an expected failure of the gating framework is marked `xfail`.
    fn cell(&self, case: &ReportCase, ix: usize) -> String {
        let Some(outcome) = case.result.outcomes.get(ix) else {
            return "-".into();
        };
        let short = outcome.short();
        if !outcome.is_pass()
            && case.expected_failure.is_some()
            && self.frameworks[ix] == self.gating
        {
            format!("x{short}")
        } else {
            short
        }
    }

    fn rows(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let mut header = vec!["release".to_string(), "test".into(), "opset".into()];
        header.extend(self.frameworks.iter().cloned());
        let rows = self
            .cases
            .iter()
            .map(|c| {
                let mut row = vec![
                    c.result.suite.clone(),
                    c.result.test.clone(),
                    c.result.opset.map_or("?".into(), |o| o.to_string()),
                ];
                row.extend((0..self.frameworks.len()).map(|ix| self.cell(c, ix)));
                row
            })
            .collect();
        (header, rows)
    }

    /// `(framework, case, description)` of every non-pass outcome.
    fn failures(&self) -> Vec<(String, &ReportCase, String)> {
        let mut out = Vec::new();
        for (ix, name) in self.frameworks.iter().enumerate() {
            for case in &self.cases {
                if let Some(o) = case.result.outcomes.get(ix).filter(|o| !o.is_pass()) {
                    out.push((name.clone(), case, o.describe()));
                }
            }
        }
        out
    }

    fn totals_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("{} tests", self.cases.len())];
        for t in &self.totals {
            let gating = if t.framework == self.gating {
                format!(
                    " ({} expected, {} unexpected, {} stale expected failures)",
                    self.gate.expected,
                    self.gate.unexpected.len(),
                    self.gate.stale.len()
                )
            } else {
                " (informational)".to_string()
            };
            lines.push(format!(
                "{}: {} passed, {} failed, {} panicked{gating}",
                t.framework, t.pass, t.fail, t.panic
            ));
        }
        lines.push(if self.gate.is_ok() {
            format!("verdict: OK ({} results gate)", self.gating)
        } else {
            format!("verdict: FAILED ({} results gate)", self.gating)
        });
        lines
    }

    fn text(&self) -> String {
        let (header, rows) = self.rows();
        let mut out = aligned_table(&header, &rows);
        let failures = self.failures();
        if !failures.is_empty() {
            out.push_str("\nfailures:\n");
            for (framework, case, description) in failures {
                let expected = match &case.expected_failure {
                    Some(reason) if framework == self.gating => format!(" [expected: {reason}]"),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "  [{framework}] {} {}{expected}: {description}",
                    case.result.suite, case.result.test
                );
            }
        }
        out.push('\n');
        for l in self.totals_lines() {
            let _ = writeln!(out, "{l}");
        }
        if !self.gate.is_ok() {
            out.push_str(&self.gate.explain());
        }
        if let Some(nw) = &self.never_worse {
            out.push('\n');
            out.push_str(&nw.text());
        }
        out
    }

    fn markdown(&self) -> String {
        let (header, rows) = self.rows();
        let esc = markdown_escape;
        let mut out = String::from("# ONNX conformance\n\n");
        markdown_table(&mut out, &header, &rows);
        out.push_str("\n## Totals\n\n");
        for l in self.totals_lines() {
            let _ = writeln!(out, "- {l}");
        }
        let failures = self.failures();
        if !failures.is_empty() {
            out.push_str("\n## Failures\n\n");
            for (framework, case, description) in failures {
                let expected = match &case.expected_failure {
                    Some(reason) if framework == self.gating => {
                        format!(" (expected: {})", esc(reason))
                    }
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "- **{framework}** `{}` `{}`{expected}: {}",
                    case.result.suite,
                    case.result.test,
                    esc(&description)
                );
            }
        }
        if !self.gate.is_ok() {
            let _ = write!(out, "\n## Gate\n\n```\n{}```\n", self.gate.explain());
        }
        if let Some(nw) = &self.never_worse {
            out.push('\n');
            out.push_str(&nw.markdown());
        }
        out
    }

    /// One `<testsuite>` per framework; the gating framework's expected
    /// failures are `<skipped>`, non-gating frameworks' failures are reported
    /// as failures of their (informational) suite.
    fn junit(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
        for (ix, name) in self.frameworks.iter().enumerate() {
            let t = &self.totals[ix];
            let gating = *name == self.gating;
            let skipped = if gating { self.gate.expected } else { 0 };
            let _ = writeln!(
                out,
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{skipped}\">",
                xml(name),
                self.cases.len(),
                t.fail
                    - if gating {
                        self.gate.expected.min(t.fail)
                    } else {
                        0
                    },
                t.panic,
            );
            for case in &self.cases {
                let _ = write!(
                    out,
                    "    <testcase classname=\"{}.{}\" name=\"{}\"",
                    xml(name),
                    xml(&case.result.suite),
                    xml(&case.result.test)
                );
                let Some(o) = case.result.outcomes.get(ix).filter(|o| !o.is_pass()) else {
                    out.push_str("/>\n");
                    continue;
                };
                out.push_str(">\n");
                let description = xml(&o.describe());
                match (&case.expected_failure, gating, panicked(o)) {
                    (Some(reason), true, false) => {
                        let _ = writeln!(
                            out,
                            "      <skipped message=\"expected failure: {}\">{description}</skipped>",
                            xml(reason)
                        );
                    }
                    (_, _, true) => {
                        let _ =
                            writeln!(out, "      <error message=\"panic\">{description}</error>");
                    }
                    _ => {
                        let _ = writeln!(out, "      <failure message=\"{description}\"/>");
                    }
                }
                out.push_str("    </testcase>\n");
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

/// `s` escaped for XML text and attribute values.
/// `header` and `rows` as text columns, each padded to its widest cell and
/// separated by two spaces, one line each (trailing spaces trimmed).
pub(crate) fn aligned_table(header: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|col| {
            rows.iter()
                .map(|r| r[col].len())
                .chain([header[col].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(header);
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

/// `s` safe inside a markdown table cell: pipes escaped, newlines spaces.
pub(crate) fn markdown_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Appends `header` and `rows` to `out` as a markdown table, every cell
/// escaped ([`markdown_escape`]).
pub(crate) fn markdown_table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| markdown_escape(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

pub(crate) fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expected_failures::ExpectedFailure;
    use crate::outcome::Phase;

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

    fn sample() -> Report {
        let cases = vec![
            CaseResult {
                suite: "1.13.1".into(),
                test: "test_scatternd".into(),
                dir: Default::default(),
                opset: Some(18),
                outcomes: vec![both(Outcome::Pass), both(Outcome::Pass)],
            },
            CaseResult {
                suite: "1.22.0".into(),
                test: "test_tensorscatter".into(),
                dir: Default::default(),
                opset: Some(24),
                outcomes: vec![
                    both(fail(Phase::Load, "Unimplemented(TensorScatter)")),
                    both(fail(Phase::Load, "Unimplemented(TensorScatter)")),
                ],
            },
            CaseResult {
                suite: "extended".into(),
                test: "scatternd/negative_index".into(),
                dir: Default::default(),
                opset: Some(13),
                outcomes: vec![
                    FrameworkOutcome {
                        decluttered: Outcome::Pass,
                        optimized: fail(
                            Phase::Compare,
                            "output 0: value mismatch at [1, 2]: got 3.5 expected 3.0",
                        ),
                    },
                    both(Outcome::Panic {
                        phase: Phase::Run,
                        message: "index out of bounds: the len is 4 but the index is 7 <&>".into(),
                    }),
                ],
            },
            CaseResult {
                suite: "extended".into(),
                test: "scatter_elements/stale".into(),
                dir: Default::default(),
                opset: None,
                outcomes: vec![both(Outcome::Pass), both(fail(Phase::Typing, "bad"))],
            },
        ];
        let expected = ExpectedFailures {
            entries: vec![
                ExpectedFailure {
                    test: "test_tensorscatter".into(),
                    release: "1.22.0".into(),
                    reason: "TensorScatter-24 not implemented yet (issue 5)".into(),
                },
                ExpectedFailure {
                    test: "scatter_elements/stale".into(),
                    release: "extended".into(),
                    reason: "was broken".into(),
                },
            ],
        };
        Report::new(vec!["plugin".into(), "stock".into()], 0, cases, &expected)
    }

    #[test]
    fn gate_sees_unexpected_and_stale() {
        let r = sample();
        assert_eq!(r.gate.expected, 1);
        assert_eq!(r.gate.unexpected.len(), 1);
        assert_eq!(r.gate.stale.len(), 1);
        assert!(!r.gate.is_ok());
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

    #[test]
    fn format_names() {
        assert_eq!("junit".parse::<Format>().unwrap(), Format::Junit);
        assert!("html".parse::<Format>().is_err());
    }
}

//! Conformance reports: text, markdown, JSON and JUnit XML.

use crate::expected_failures::{ExpectedFailures, Gate};
use crate::framework::InputFacts;
use crate::never_worse::{NeverWorse, Row, Worse};
use crate::outcome::{FrameworkOutcome, Outcome, Phase};
use crate::suite::{CaseResult, Shard};
use crate::tables::{aligned_table, markdown_escape, markdown_table, xml};
use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::str::FromStr;

/// Output format of [`Report::render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned plain-text tables, for a terminal.
    Text,
    /// A markdown document.
    Markdown,
    /// The whole report as pretty-printed JSON (a [`Report`]'s is read back
    /// by [`ReadReport::from_json`]).
    Json,
    /// JUnit XML, for CI test viewers.
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
    /// Framework names, in the order of each case's outcomes and of the totals.
    pub frameworks: Vec<String>,
    /// Name of the framework whose failures gate (the others are informational).
    pub gating: String,
    /// Every test, in run order, with its expected-failure annotation.
    pub cases: Vec<ReportCase>,
    /// One per framework, in `frameworks` order.
    pub totals: Vec<Totals>,
    /// The gating framework's results judged against the expected failures.
    pub gate: Gate,
    /// The "never worse than stock" gate, when it was run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub never_worse: Option<NeverWorse>,
    /// The part of the suites this report covers (`--shard K/N`), when it
    /// covers one part only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
}

/// Which part of which suites a report covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShardOf {
    #[serde(flatten)]
    /// The part covered (flattened into `index` and `count`).
    pub shard: Shard,
    /// Every suite of the run, in the run's order (shards may miss some).
    pub suites: Vec<String>,
}

/// One test's results, with the gating framework's expected-failure reason.
#[derive(Debug, Clone, Serialize)]
pub struct ReportCase {
    /// The test's suite, name, opset and outcomes, one per framework
    /// (flattened into the case's JSON object).
    #[serde(flatten)]
    pub result: CaseResult,
    /// Reason listed in expected-failures.toml for the gating framework.
    pub expected_failure: Option<String>,
}

/// Counts for one framework. A test counts as a panic if any mode panicked.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Framework name.
    pub framework: String,
    /// Tests passed in both modes.
    pub pass: usize,
    /// Tests failed in some mode, without a panic.
    pub fail: usize,
    /// Tests that panicked in some mode.
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
            shard: None,
        }
    }

    /// The report of one part (`--shard K/N`) of `suites`, named in the
    /// run's order.
    pub fn with_shard(mut self, shard: Shard, suites: Vec<String>) -> Report {
        self.shard = Some(ShardOf { shard, suites });
        self
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

    /// A short summary for a terminal: one row per suite (tests, gating
    /// framework's passes, its expected and unexpected failures, stale
    /// expected failures, and the never-worse gate's plugin-worse runs out
    /// of those judged), the totals, what fails the run when something
    /// does, and the verdict as the last line. Suites only the never-worse
    /// gate judged show `-` in the gated columns.
    pub fn summary(&self) -> String {
        let gating = self
            .frameworks
            .iter()
            .position(|f| *f == self.gating)
            .unwrap_or(0);
        #[derive(Default)]
        struct Counts {
            tests: usize,
            pass: usize,
            expected: usize,
            unexpected: usize,
            stale: usize,
            judged: usize,
            worse: usize,
        }
        let mut suites: Vec<(String, Counts)> = vec![];
        fn entry<'a>(suites: &'a mut Vec<(String, Counts)>, name: &str) -> &'a mut Counts {
            let at = match suites.iter().position(|(n, _)| n == name) {
                Some(at) => at,
                None => {
                    suites.push((name.to_string(), Counts::default()));
                    suites.len() - 1
                }
            };
            &mut suites[at].1
        }
        for case in &self.cases {
            let c = entry(&mut suites, &case.result.suite);
            c.tests += 1;
            match case.result.outcomes.get(gating) {
                Some(o) if o.is_pass() => c.pass += 1,
                Some(_) if case.expected_failure.is_some() => c.expected += 1,
                Some(_) => c.unexpected += 1,
                None => {}
            }
        }
        for stale in &self.gate.stale {
            entry(&mut suites, &stale.release).stale += 1;
        }
        let gated: Vec<String> = suites.iter().map(|(n, _)| n.clone()).collect();
        if let Some(nw) = &self.never_worse {
            for row in &nw.rows {
                let c = entry(&mut suites, &row.suite);
                c.judged += row.models;
                c.worse += row.plugin_worse;
            }
        }
        let header = [
            "suite",
            "tests",
            &format!("{} pass", self.gating),
            "expected failures",
            "unexpected",
            "stale",
            "never-worse: plugin worse / judged",
        ]
        .map(String::from)
        .to_vec();
        let nw_cell = |c: &Counts| {
            if self.never_worse.is_some() {
                format!("{} / {}", c.worse, c.judged)
            } else {
                "-".into()
            }
        };
        let mut total = Counts::default();
        let mut rows: Vec<Vec<String>> = vec![];
        for (name, c) in &suites {
            total.judged += c.judged;
            total.worse += c.worse;
            if !gated.contains(name) {
                let mut row = vec![name.clone()];
                row.extend(["-"; 5].map(String::from));
                row.push(nw_cell(c));
                rows.push(row);
                continue;
            }
            total.tests += c.tests;
            total.pass += c.pass;
            total.expected += c.expected;
            total.unexpected += c.unexpected;
            total.stale += c.stale;
            rows.push(vec![
                name.clone(),
                c.tests.to_string(),
                c.pass.to_string(),
                c.expected.to_string(),
                c.unexpected.to_string(),
                c.stale.to_string(),
                nw_cell(c),
            ]);
        }
        rows.push(vec![
            "total".into(),
            total.tests.to_string(),
            total.pass.to_string(),
            total.expected.to_string(),
            total.unexpected.to_string(),
            total.stale.to_string(),
            nw_cell(&total),
        ]);
        let mut out = aligned_table(&header, &rows);
        out.push_str(&self.explain());
        let worse = self.never_worse.as_ref().map_or(0, |nw| nw.worse.len());
        let counts = format!(
            "{} unexpected failures, {} stale expected failures, {worse} plugin-worse runs",
            self.gate.unexpected.len(),
            self.gate.stale.len(),
        );
        let _ = writeln!(
            out,
            "verdict: {} ({counts})",
            if self.is_ok() { "OK" } else { "FAILED" }
        );
        out
    }

    /// The report in `format`: in text and markdown, a table of every test,
    /// the failures, the totals and the verdict, then the never-worse table
    /// when it ran; the whole report as pretty-printed JSON, which
    /// [`ReadReport::from_json`] reads back; or JUnit XML, one `<testsuite>`
    /// per framework (and one for the never-worse gate when it ran).
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

/// A report read back from its JSON form ([`Format::Json`]): the results,
/// without the verdicts (which [`Report::merge`] judges again).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadReport {
    /// Framework names, in the order of each case's outcomes.
    pub frameworks: Vec<String>,
    /// Name of the gating framework.
    pub gating: String,
    /// Every test's results, in report order (`dir` is empty: reports name
    /// no paths).
    pub cases: Vec<CaseResult>,
    /// The never-worse gate's rows and plugin-worse models, when the run had it.
    pub never_worse: Option<NeverWorse>,
    /// The part of the suites the report covers, when it covers one part only.
    pub shard: Option<ShardOf>,
}

impl ReadReport {
    /// Parses a report written with [`Format::Json`].
    pub fn from_json(text: &str) -> Result<ReadReport> {
        let v: Value = serde_json::from_str(text).context("not JSON")?;
        let strings = |v: &Value, what: &str| -> Result<Vec<String>> {
            v.as_array()
                .with_context(|| format!("no {what} list"))?
                .iter()
                .map(|s| s.as_str().map(str::to_string).context(what.to_string()))
                .collect()
        };
        let frameworks = strings(&v["frameworks"], "frameworks")?;
        let gating = text_of(&v["gating"], "gating")?;
        let cases = v["cases"]
            .as_array()
            .context("no cases list")?
            .iter()
            .enumerate()
            .map(|(ix, c)| read_case(c).with_context(|| format!("case {ix}")))
            .collect::<Result<Vec<_>>>()?;
        let never_worse = match &v["never_worse"] {
            Value::Null => None,
            nw => Some(read_never_worse(nw).context("never_worse")?),
        };
        let shard = match &v["shard"] {
            Value::Null => None,
            s => {
                let (index, count) = (
                    count_of(&s["index"], "shard index")?,
                    count_of(&s["count"], "shard count")?,
                );
                Some(ShardOf {
                    shard: format!("{index}/{count}")
                        .parse()
                        .map_err(anyhow::Error::msg)?,
                    suites: strings(&s["suites"], "shard suites")?,
                })
            }
        };
        Ok(ReadReport {
            frameworks,
            gating,
            cases,
            never_worse,
            shard,
        })
    }
}

fn text_of(v: &Value, what: &str) -> Result<String> {
    v.as_str()
        .map(str::to_string)
        .with_context(|| format!("no {what} text"))
}

fn count_of(v: &Value, what: &str) -> Result<usize> {
    v.as_u64()
        .map(|n| n as usize)
        .with_context(|| format!("no {what} count"))
}

fn read_case(v: &Value) -> Result<CaseResult> {
    let outcomes = v["outcomes"]
        .as_array()
        .context("no outcomes list")?
        .iter()
        .map(|o| {
            Ok(FrameworkOutcome {
                decluttered: read_outcome(&o["decluttered"]).context("decluttered")?,
                optimized: read_outcome(&o["optimized"]).context("optimized")?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(CaseResult {
        suite: text_of(&v["suite"], "suite")?,
        test: text_of(&v["test"], "test")?,
        dir: Default::default(),
        opset: v["opset"].as_i64(),
        outcomes,
    })
}

fn read_outcome(v: &Value) -> Result<Outcome> {
    let phase = || -> Result<Phase> {
        Ok(match v["phase"].as_str().unwrap_or_default() {
            "load" => Phase::Load,
            "analyse" => Phase::Analyse,
            "typing" => Phase::Typing,
            "declutter" => Phase::Declutter,
            "optimize" => Phase::Optimize,
            "run" => Phase::Run,
            "compare" => Phase::Compare,
            other => bail!("unknown phase {other:?}"),
        })
    };
    Ok(match v["status"].as_str().unwrap_or_default() {
        "pass" => Outcome::Pass,
        "fail" => Outcome::Fail {
            phase: phase()?,
            reason: text_of(&v["reason"], "reason")?,
        },
        "panic" => Outcome::Panic {
            phase: phase()?,
            message: text_of(&v["message"], "message")?,
        },
        other => bail!("unknown outcome status {other:?}"),
    })
}

fn read_input_facts(v: &Value) -> Result<InputFacts> {
    match v.as_str().unwrap_or_default() {
        "pinned" => Ok(InputFacts::Pinned),
        "declared" => Ok(InputFacts::Declared),
        other => bail!("unknown input facts {other:?}"),
    }
}

fn read_never_worse(v: &Value) -> Result<NeverWorse> {
    let rows = v["rows"]
        .as_array()
        .context("no rows list")?
        .iter()
        .map(|r| {
            Ok(Row {
                suite: text_of(&r["suite"], "suite")?,
                input_facts: read_input_facts(&r["input_facts"])?,
                models: count_of(&r["models"], "models")?,
                plugin_pass: count_of(&r["plugin_pass"], "plugin_pass")?,
                stock_pass: count_of(&r["stock_pass"], "stock_pass")?,
                plugin_worse: count_of(&r["plugin_worse"], "plugin_worse")?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let worse = v["worse"]
        .as_array()
        .context("no worse list")?
        .iter()
        .map(|w| {
            Ok(Worse {
                suite: text_of(&w["suite"], "suite")?,
                test: text_of(&w["test"], "test")?,
                input_facts: read_input_facts(&w["input_facts"])?,
                why: text_of(&w["why"], "why")?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(NeverWorse { rows, worse })
}

impl Report {
    /// One report of the reports of several runs (each named by its
    /// `label`, a file name, in errors), judged once with `expected` as a
    /// single run of all their tests is: the same cases in the same order
    /// (suites in the order the runs met them, tests in path order within
    /// a suite), totals, gate and never-worse table.
    ///
    /// The runs must have the same frameworks, all or none the never-worse
    /// gate, and no test in common; shards (`--shard K/N`) must all be of
    /// the same N, every one of 1..=N given once.
    pub fn merge(parts: &[(String, ReadReport)], expected: &ExpectedFailures) -> Result<Report> {
        let Some((first_label, first)) = parts.first() else {
            bail!("no report to merge");
        };
        for (label, part) in parts {
            if part.frameworks != first.frameworks || part.gating != first.gating {
                bail!(
                    "{label} has frameworks {:?} (gating {}), {first_label} {:?} (gating {}): reports of differently configured runs",
                    part.frameworks,
                    part.gating,
                    first.frameworks,
                    first.gating
                );
            }
            if part.never_worse.is_some() != first.never_worse.is_some() {
                bail!(
                    "{} ran the never-worse gate and {} did not: reports of differently configured runs",
                    if part.never_worse.is_some() {
                        label
                    } else {
                        first_label
                    },
                    if part.never_worse.is_some() {
                        first_label
                    } else {
                        label
                    },
                );
            }
        }
        check_shards(parts)?;

        // Suites in the run's order (shards name them all), else in the
        // order the runs met them: a suite one run has not seen goes before
        // the next suite of that run already placed.
        let mut suites: Vec<String> = first
            .shard
            .as_ref()
            .map(|s| s.suites.clone())
            .unwrap_or_default();
        for (_, part) in parts {
            let mut order: Vec<&str> = vec![];
            for case in &part.cases {
                if order.last() != Some(&case.suite.as_str()) {
                    order.push(&case.suite);
                }
            }
            for (ix, suite) in order.iter().enumerate() {
                if suites.iter().any(|s| s == suite) {
                    continue;
                }
                let before = order[ix + 1..]
                    .iter()
                    .find_map(|next| suites.iter().position(|s| s == next));
                suites.insert(before.unwrap_or(suites.len()), suite.to_string());
            }
        }
        let position: HashMap<&str, usize> = suites
            .iter()
            .enumerate()
            .map(|(ix, s)| (s.as_str(), ix))
            .collect();
        let mut cases: Vec<CaseResult> = vec![];
        let mut seen: HashMap<(String, String), &str> = HashMap::new();
        for (label, part) in parts {
            for case in &part.cases {
                if let Some(other) = seen.insert((case.suite.clone(), case.test.clone()), label) {
                    bail!(
                        "{} {} is in both {other} and {label}: reports of overlapping runs",
                        case.suite,
                        case.test
                    );
                }
                cases.push(case.clone());
            }
        }
        // Test names are `/`-separated paths, in path order (as discovered).
        cases.sort_by(|a, b| {
            position[a.suite.as_str()]
                .cmp(&position[b.suite.as_str()])
                .then_with(|| a.test.split('/').cmp(b.test.split('/')))
        });
        let never_worse = first.never_worse.as_ref().map(|_| {
            let mut merged = NeverWorse::default();
            for (_, part) in parts {
                merged.merge(part.never_worse.clone().unwrap_or_default());
            }
            // As judged in one run: by suite, pinned before declared; the
            // worse models in case order.
            let mode = |facts: InputFacts| usize::from(facts == InputFacts::Declared);
            merged
                .rows
                .sort_by_key(|r| (position.get(r.suite.as_str()).copied(), mode(r.input_facts)));
            let case_ix: HashMap<(&str, &str), usize> = cases
                .iter()
                .enumerate()
                .map(|(ix, c)| ((c.suite.as_str(), c.test.as_str()), ix))
                .collect();
            merged.worse.sort_by_key(|w| {
                (
                    case_ix.get(&(w.suite.as_str(), w.test.as_str())).copied(),
                    mode(w.input_facts),
                )
            });
            merged
        });
        let gating = first
            .frameworks
            .iter()
            .position(|f| *f == first.gating)
            .unwrap_or(0);
        let mut report = Report::new(first.frameworks.clone(), gating, cases, expected);
        if let Some(never_worse) = never_worse {
            report = report.with_never_worse(never_worse);
        }
        Ok(report)
    }
}

/// Shards: none, or all of the same count, each index once.
fn check_shards(parts: &[(String, ReadReport)]) -> Result<()> {
    let sharded: Vec<(&String, &ShardOf)> = parts
        .iter()
        .filter_map(|(label, p)| p.shard.as_ref().map(|s| (label, s)))
        .collect();
    let Some(&(first_label, first_of)) = sharded.first() else {
        return Ok(());
    };
    let first = first_of.shard;
    if let Some((whole, _)) = parts.iter().find(|(_, p)| p.shard.is_none()) {
        bail!(
            "{first_label} is shard {first} but {whole} is a whole run: merge the shards of one run"
        );
    }
    let mut given: Vec<Option<&String>> = vec![None; first.count];
    for (label, of) in sharded {
        let shard = of.shard;
        if shard.count != first.count || of.suites != first_of.suites {
            bail!(
                "{label} is shard {shard} but {first_label} is shard {first}: merge the shards of one run"
            );
        }
        if let Some(other) = given[shard.index - 1].replace(label) {
            bail!("{other} and {label} are both shard {shard}");
        }
    }
    let missing: Vec<String> = (1..=first.count)
        .filter(|&index| given[index - 1].is_none())
        .map(|index| {
            Shard {
                index,
                count: first.count,
            }
            .to_string()
        })
        .collect();
    if !missing.is_empty() {
        bail!(
            "shard(s) {} missing: give every shard of the run",
            missing.join(", ")
        );
    }
    Ok(())
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

    fn sample_expected() -> ExpectedFailures {
        let r = sample();
        ExpectedFailures {
            entries: vec![
                ExpectedFailure {
                    test: "test_tensorscatter".into(),
                    release: "1.22.0".into(),
                    reason: r.cases[1].expected_failure.clone().unwrap(),
                },
                ExpectedFailure {
                    test: "scatter_elements/stale".into(),
                    release: "extended".into(),
                    reason: "was broken".into(),
                },
            ],
        }
    }

    /// `report` as its JSON reads back.
    fn read(report: &Report) -> ReadReport {
        ReadReport::from_json(&report.render(Format::Json)).unwrap()
    }

    #[test]
    fn json_reads_back_and_merges_into_the_same_report() {
        // As a run reports them: in path order within a suite.
        let mut all: Vec<CaseResult> = sample().cases.into_iter().map(|c| c.result).collect();
        all.swap(2, 3);
        let whole = Report::new(sample().frameworks, 0, all, &sample_expected());
        let one = Report::merge(&[("a".into(), read(&whole))], &sample_expected()).unwrap();
        for format in [Format::Text, Format::Json, Format::Junit] {
            assert_eq!(one.render(format), whole.render(format));
        }
        // Two shards, given in either order, with a never-worse table.
        let (odd, even): (Vec<_>, Vec<_>) = whole
            .cases
            .iter()
            .map(|c| c.result.clone())
            .enumerate()
            .partition(|(ix, _)| ix % 2 == 1);
        let with_nw = |cases: Vec<(usize, CaseResult)>, index| {
            let cases: Vec<CaseResult> = cases.into_iter().map(|(_, c)| c).collect();
            let nw = NeverWorse::judge(&cases, &[crate::Pairing::STANDARD[0]]);
            Report::new(
                whole.frameworks.clone(),
                0,
                cases,
                &ExpectedFailures::default(),
            )
            .with_never_worse(nw)
            .with_shard(
                Shard { index, count: 2 },
                ["1.13.1", "1.22.0", "extended"].map(String::from).to_vec(),
            )
        };
        let all: Vec<CaseResult> = whole.cases.iter().map(|c| c.result.clone()).collect();
        let single = Report::new(whole.frameworks.clone(), 0, all.clone(), &sample_expected())
            .with_never_worse(NeverWorse::judge(&all, &[crate::Pairing::STANDARD[0]]));
        let parts = [
            ("s2".to_string(), read(&with_nw(odd, 2))),
            ("s1".to_string(), read(&with_nw(even, 1))),
        ];
        let merged = Report::merge(&parts, &sample_expected()).unwrap();
        assert_eq!(merged.render(Format::Text), single.render(Format::Text));
        assert_eq!(merged.render(Format::Json), single.render(Format::Json));

        // A missing shard, a duplicate one, mixed configurations.
        let err = |parts: &[(String, ReadReport)]| {
            format!(
                "{:#}",
                Report::merge(parts, &sample_expected()).unwrap_err()
            )
        };
        insta::assert_snapshot!(
            [
                err(&parts[..1]),
                err(&[parts[1].clone(), parts[1].clone()]),
                err(&[parts[0].clone(), ("w".into(), read(&single))]),
                err(&[parts[0].clone(), ("w".into(), read(&whole))]),
                err(&[("a".into(), read(&whole)), ("b".into(), read(&whole))]),
                err(&[]),
            ]
            .join("\n"),
            @r"
        shard(s) 1/2 missing: give every shard of the run
        s1 and s1 are both shard 1/2
        s2 is shard 2/2 but w is a whole run: merge the shards of one run
        s2 ran the never-worse gate and w did not: reports of differently configured runs
        1.13.1 test_scatternd is in both a and b: reports of overlapping runs
        no report to merge
        "
        );
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

    /// The last line of `text`.
    fn last_line(text: &str) -> &str {
        text.lines().last().unwrap_or_default()
    }

    #[test]
    fn the_summary_has_a_row_per_suite_and_ends_with_the_verdict() {
        let failing = sample();
        let summary = failing.summary();
        assert_eq!(
            last_line(&summary),
            "verdict: FAILED (1 unexpected failures, 1 stale expected failures, 0 plugin-worse runs)"
        );
        insta::assert_snapshot!("summary_failing", summary);

        // Passing, with the never-worse gate over one more suite.
        let mut cases: Vec<CaseResult> = sample().cases.into_iter().map(|c| c.result).collect();
        cases.truncate(2);
        let mut all_ops = cases[0].clone();
        all_ops.suite = "all-ops 1.22.0".into();
        let mut judged = cases.clone();
        judged.push(all_ops);
        let passing = Report::new(sample().frameworks, 0, cases, &sample_expected())
            .with_never_worse(NeverWorse::judge(&judged, &crate::Pairing::STANDARD[..1]));
        assert!(passing.is_ok());
        let summary = passing.summary();
        assert_eq!(
            last_line(&summary),
            "verdict: OK (0 unexpected failures, 0 stale expected failures, 0 plugin-worse runs)"
        );
        insta::assert_snapshot!("summary_passing", summary);
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

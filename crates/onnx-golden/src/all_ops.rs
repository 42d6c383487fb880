//! Every official node test of one onnx release, run and counted per operator.
//!
//! The scatter suites pin each file they use; this run takes the whole
//! `onnx/backend/test/data/node/` directory of a release's wheel. The wheel's
//! own SHA-256 (pinned in the manifest) covers every file inside it, so the
//! extraction is pinned too: the wheel is downloaded with pip through
//! [`crate::fetch::pip_download`] (which refuses a wheel whose hash differs)
//! or taken from a local directory after the same hash check, and every
//! extracted file's hash is recorded in `SHA256SUMS` next to `node/`, which
//! is re-checked on every use.
//!
//! ```text
//! <cache>/<version>-all/node/<test>/...   every node test of the wheel
//! <cache>/<version>-all/SHA256SUMS        wheel hash, then one line per file
//! ```
//!
//! Results are informational: [`AllOpsReport`] counts, per operator and per
//! framework, tests passed, failed, panicked and unsupported, and never
//! gates.

use crate::fetch::{Source, pip_download, sha256_file, sha256_hex};
use crate::manifest::{DATA_DIR_IN_WHEEL, Release};
use crate::outcome::{FrameworkOutcome, Outcome, Phase};
use crate::report::Format;
use crate::suite::CaseResult;
use anyhow::{Context, Result, bail};
use prost::Message;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use tract_onnx::pb::ModelProto;

/// Name of the hash list written next to `node/`.
const SUMS_FILE: &str = "SHA256SUMS";

/// Longest representative error kept in a table cell.
const MAX_ERROR_LINE: usize = 160;

/// Cache directory of the full node-test set of `version`.
pub fn all_ops_dir(cache_root: &Path, version: &str) -> PathBuf {
    cache_root.join(format!("{version}-all"))
}

/// The newest release of the manifest that ships node-test data (pins files),
/// by numeric version order.
pub fn newest_release(releases: &[Release]) -> Option<&Release> {
    releases
        .iter()
        .filter(|r| !r.files.is_empty())
        .max_by_key(|r| version_key(&r.version))
}

fn version_key(version: &str) -> Vec<u64> {
    version
        .split('.')
        .map(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or(0)
        })
        .collect()
}

/// Makes sure `<cache_root>/<version>-all/node/` holds every node test of
/// `release`'s wheel, each file matching the hash recorded when it was
/// extracted from the hash-verified wheel. Returns the `node/` directory.
///
/// `source`: pip, or a local directory that must hold the pinned wheel
/// itself (an unpacked checkout has no pin covering its files).
pub fn ensure_all_node_tests(
    release: &Release,
    cache_root: &Path,
    source: &Source,
) -> Result<PathBuf> {
    let dir = all_ops_dir(cache_root, &release.version);
    if verify_all(release, &dir).is_ok() {
        return Ok(dir.join("node"));
    }
    fs::create_dir_all(cache_root).with_context(|| format!("creating {cache_root:?}"))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let staging = cache_root.join(format!(
        ".staging-{}-all-{}-{nanos}",
        release.version,
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&staging);
    let result = populate(release, source, &staging).and_then(|()| {
        verify_all(release, &staging)?;
        if dir.exists() {
            fs::remove_dir_all(&dir).with_context(|| format!("removing stale cache {dir:?}"))?;
        }
        fs::rename(&staging, &dir).with_context(|| format!("moving {staging:?} to {dir:?}"))
    });
    let _ = fs::remove_dir_all(&staging);
    result.with_context(|| format!("fetching every node test of onnx {}", release.version))?;
    Ok(dir.join("node"))
}

fn populate(release: &Release, source: &Source, staging: &Path) -> Result<()> {
    match source {
        Source::Pip => {
            let download = staging.join(".download");
            let wheel = pip_download(release, &download)?;
            extract_node_dir(release, &wheel, staging)?;
            fs::remove_dir_all(&download).ok();
            Ok(())
        }
        Source::Local(root) => {
            let wheel = root.join(&release.wheel);
            if !wheel.is_file() {
                bail!(
                    "{root:?} does not hold the pinned wheel {}: the all-ops run extracts every \
                     node test from the hash-verified wheel (an unpacked checkout has no pin \
                     covering all its files). Put the wheel there, or unset --from / \
                     ONNX_TESTDATA_FROM to download it with pip.",
                    release.wheel
                );
            }
            let got = sha256_file(&wheel)?;
            if got != release.wheel_sha256 {
                bail!(
                    "{wheel:?} has sha256 {got}, the manifest pins {}",
                    release.wheel_sha256
                );
            }
            extract_node_dir(release, &wheel, staging)
        }
    }
}

/// Extracts every file below `onnx/backend/test/data/node/` of the (already
/// verified) wheel into `dest/node/` and writes `dest/SHA256SUMS`.
fn extract_node_dir(release: &Release, wheel: &Path, dest: &Path) -> Result<()> {
    let file = fs::File::open(wheel).with_context(|| format!("opening {wheel:?}"))?;
    let mut archive =
        zip::ZipArchive::new(file).with_context(|| format!("{wheel:?} is not a zip archive"))?;
    let prefix = format!("{DATA_DIR_IN_WHEEL}/");
    let mut sums = format!("# wheel {} {}\n", release.wheel, release.wheel_sha256);
    let mut count = 0usize;
    for ix in 0..archive.len() {
        let mut entry = archive.by_index(ix)?;
        if entry.is_dir() {
            continue;
        }
        let Some(relative) = entry.name().strip_prefix(&prefix).map(str::to_string) else {
            continue;
        };
        if !relative.starts_with("node/") {
            continue;
        }
        if !Path::new(&relative)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        {
            bail!("{wheel:?}: entry {relative:?} is not a plain relative path");
        }
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .with_context(|| format!("extracting {relative}"))?;
        let path = dest.join(&relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).with_context(|| format!("creating {parent:?}"))?;
        }
        fs::write(&path, &bytes).with_context(|| format!("writing {path:?}"))?;
        let _ = writeln!(sums, "{}  {relative}", sha256_hex(&bytes));
        count += 1;
    }
    if count == 0 {
        bail!("{wheel:?} holds no {prefix}node/ files");
    }
    fs::write(dest.join(SUMS_FILE), sums).with_context(|| format!("writing {SUMS_FILE}"))
}

/// Checks `dir/SHA256SUMS` names `release`'s pinned wheel and every file it
/// lists is present with its hash.
fn verify_all(release: &Release, dir: &Path) -> Result<()> {
    let sums = fs::read_to_string(dir.join(SUMS_FILE))
        .with_context(|| format!("reading {:?}", dir.join(SUMS_FILE)))?;
    let mut lines = sums.lines();
    let header = format!("# wheel {} {}", release.wheel, release.wheel_sha256);
    if lines.next() != Some(header.as_str()) {
        bail!(
            "{dir:?} was not extracted from the pinned wheel {}",
            release.wheel
        );
    }
    let mut count = 0usize;
    for line in lines {
        let Some((hash, relative)) = line.split_once("  ") else {
            bail!("{dir:?}/{SUMS_FILE}: malformed line {line:?}");
        };
        let path = dir.join(relative);
        let bytes = fs::read(&path).with_context(|| format!("reading {path:?}"))?;
        if sha256_hex(&bytes) != hash {
            bail!("{path:?} does not match its recorded sha256");
        }
        count += 1;
    }
    if count == 0 {
        bail!("{dir:?}/{SUMS_FILE} lists no file");
    }
    let present = count_files(&dir.join("node"))?;
    if present != count {
        bail!("{dir:?}/node holds {present} files, {SUMS_FILE} lists {count}");
    }
    Ok(())
}

fn count_files(dir: &Path) -> Result<usize> {
    let mut n = 0;
    for entry in fs::read_dir(dir).with_context(|| format!("listing {dir:?}"))? {
        let entry = entry?;
        n += if entry.file_type()?.is_dir() {
            count_files(&entry.path())?
        } else {
            1
        };
    }
    Ok(n)
}

/// The operator a node test exercises, read from its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestOperator {
    /// `op_type`, prefixed with `domain.` outside the default domain
    /// (`ai.onnx.ml.LabelEncoder`).
    pub operator: String,
    /// Where the operator came from (see [`assign_operators`]).
    pub rule: OperatorRule,
}

/// How [`assign_operators`] named a test's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OperatorRule {
    /// The model's only node.
    SingleNode,
    /// A function-expanded test (`<base>_expanded*`): the operator of `<base>`.
    Expanded,
    /// A model of several nodes: the first node that is not a `Constant`.
    FirstNonConstant,
}

/// The operator label of a model: its only node's; with several nodes the
/// first node that is not a `Constant`. `None` for a model without nodes.
pub fn model_operator(model: &ModelProto) -> Option<(String, OperatorRule)> {
    let nodes = &model.graph.as_ref()?.node;
    let label = |n: &tract_onnx::pb::NodeProto| {
        if n.domain.is_empty() || n.domain == "ai.onnx" {
            n.op_type.clone()
        } else {
            format!("{}.{}", n.domain, n.op_type)
        }
    };
    match nodes.as_slice() {
        [] => None,
        [only] => Some((label(only), OperatorRule::SingleNode)),
        several => several
            .iter()
            .find(|n| n.op_type != "Constant")
            .or(several.first())
            .map(|n| (label(n), OperatorRule::FirstNonConstant)),
    }
}

/// Names the operator of each test directory (`name`, `model.onnx` path).
///
/// The rule, in order:
/// 1. a test whose name contains `_expanded` (`_expanded`, `_expanded_ver18`,
///    ...) is the function-expanded twin of the test named by what precedes
///    `_expanded`; when that test exists and has an operator, the expanded
///    one counts under the same operator (its graph is the function body:
///    its first node says nothing about the operator under test);
/// 2. otherwise the model decides ([`model_operator`]): its only node, or,
///    in a model of several nodes, the first node that is not a `Constant`.
///
/// Test names (`test_<op>_<variant>`) are not used beyond rule 1: they do
/// not reliably name the operator (`test_mvn` is MeanVarianceNormalization).
/// A model that cannot be read, or has no node, is an error naming the test.
pub fn assign_operators(tests: &[(String, PathBuf)]) -> BTreeMap<String, Result<TestOperator>> {
    let mut from_model: HashMap<&str, Result<(String, OperatorRule)>> = HashMap::new();
    for (name, model_path) in tests {
        let read = fs::read(model_path)
            .with_context(|| format!("reading {model_path:?}"))
            .and_then(|bytes| {
                ModelProto::decode(bytes.as_slice())
                    .with_context(|| format!("decoding {model_path:?} as ModelProto"))
            })
            .and_then(|model| {
                model_operator(&model)
                    .with_context(|| format!("{model_path:?}: the graph has no node"))
            });
        from_model.insert(name.as_str(), read);
    }
    let mut assigned = BTreeMap::new();
    for (name, _) in tests {
        let base = name
            .find("_expanded")
            .map(|at| &name[..at])
            .and_then(|base| match from_model.get(base) {
                Some(Ok((operator, _))) => Some(operator.clone()),
                _ => None,
            });
        let operator = match (base, &from_model[name.as_str()]) {
            (Some(operator), _) => Ok(TestOperator {
                operator,
                rule: OperatorRule::Expanded,
            }),
            (None, Ok((operator, rule))) => Ok(TestOperator {
                operator: operator.clone(),
                rule: *rule,
            }),
            (None, Err(e)) => Err(anyhow::anyhow!("{e:#}")),
        };
        assigned.insert(name.clone(), operator);
    }
    assigned
}

/// What one framework did with one test, for the per-operator counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Pass,
    /// Loading, preparing or running failed, or the outputs differ.
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
    pub fn of(outcome: &FrameworkOutcome) -> Category {
        let modes = [&outcome.decluttered, &outcome.optimized];
        if outcome.is_pass() {
            Category::Pass
        } else if modes.iter().all(|o| is_unreadable(o)) {
            Category::Unreadable
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
    pub operator: String,
    pub rule: Option<OperatorRule>,
    #[serde(flatten)]
    pub result: CaseResult,
    /// One per framework, same order as `outcomes`.
    pub categories: Vec<Category>,
}

impl AllOpsCase {
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
    pub pass: usize,
    pub fail: usize,
    pub panic: usize,
    pub unsupported: usize,
    pub unreadable: usize,
}

impl Counts {
    fn add(&mut self, category: Category) {
        match category {
            Category::Pass => self.pass += 1,
            Category::Fail => self.fail += 1,
            Category::Panic => self.panic += 1,
            Category::Unsupported => self.unsupported += 1,
            Category::Unreadable => self.unreadable += 1,
        }
    }

    fn cells(&self) -> [String; 5] {
        [
            self.pass,
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
    pub operator: String,
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
    pub test: String,
    pub reason: String,
}

/// The all-ops report: per-operator rows, totals per framework, every case.
#[derive(Debug, Clone, Serialize)]
pub struct AllOpsReport {
    /// onnx release whose node tests ran.
    pub release: String,
    pub frameworks: Vec<String>,
    pub operators: Vec<OperatorRow>,
    /// One per framework, over every test.
    pub totals: Vec<Counts>,
    pub skipped: Vec<Skipped>,
    pub cases: Vec<AllOpsCase>,
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
        }
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

    fn header(&self) -> Vec<String> {
        let mut header = vec!["operator".to_string(), "tests".into()];
        for name in &self.frameworks {
            for what in ["pass", "fail", "panic", "unsupported", "unreadable"] {
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
                "{name}: {} passed, {} failed, {} panicked, {} unsupported, {} unreadable data",
                t.pass, t.fail, t.panic, t.unsupported, t.unreadable
            ));
        }
        lines.push(
            "informational: the all-ops run never fails the command (the scatter suites gate)"
                .into(),
        );
        lines
    }

    /// What the columns count.
    pub const LEGEND: &'static str = "\
pass: decluttered and optimized both match the expected outputs. \
fail: an error while loading, typing, optimizing or running, or a wrong output. \
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
        let mut out = format!(
            "all official node tests of onnx {}\n{}\n\n",
            self.release,
            Self::LEGEND
        );
        out.push_str(&line(&header));
        for row in &rows {
            out.push_str(&line(row));
        }
        out.push_str("\nrepresentative failures:\n");
        for row in &self.operators {
            for (name, rep) in self.frameworks.iter().zip(&row.representative) {
                if let Some(rep) = rep {
                    let _ = writeln!(out, "  [{name}] {}: {rep}", row.operator);
                }
            }
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
        out
    }

    fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let mut header = self.header();
        for name in &self.frameworks {
            header.push(format!("{name}: first failure"));
        }
        let mut out = format!("# All ONNX node tests of onnx {}\n\n", self.release);
        for l in self.totals_lines() {
            let _ = writeln!(out, "- {l}");
        }
        let _ = writeln!(out, "\n{}\n", Self::LEGEND);
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
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
            let cells: Vec<String> = cells.iter().map(|c| esc(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if !self.skipped.is_empty() {
            out.push_str("\n## Skipped\n\n");
            for s in &self.skipped {
                let _ = writeln!(out, "- `{}`: {}", s.test, esc(&s.reason));
            }
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
                t.fail,
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
                    _ => format!("      <failure message=\"{description}\"/>"),
                };
                let _ = writeln!(out, ">\n{element}\n    </testcase>");
            }
            out.push_str("  </testsuite>\n");
        }
        out.push_str("</testsuites>\n");
        out
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

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

/// Tests left out of the all-ops run, with the reason (none so far: see
/// ARCHITECTURE.md for how the run's time was measured).
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

#[cfg(test)]
mod tests {
    use super::*;
    use tract_onnx::pb::{GraphProto, NodeProto};

    fn node(op_type: &str, domain: &str) -> NodeProto {
        NodeProto {
            op_type: op_type.into(),
            domain: domain.into(),
            ..NodeProto::default()
        }
    }

    fn model(nodes: Vec<NodeProto>) -> ModelProto {
        ModelProto {
            graph: Some(GraphProto {
                node: nodes,
                ..GraphProto::default()
            }),
            ..ModelProto::default()
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "onnx-golden-all-ops-{name}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn operators_come_from_the_model_and_expanded_tests_from_their_base() {
        let dir = temp_dir("operators");
        let write = |name: &str, m: Option<ModelProto>| {
            let path = dir.join(format!("{name}.onnx"));
            match m {
                Some(m) => fs::write(&path, m.encode_to_vec()).unwrap(),
                None => fs::write(&path, b"\xff\xff not protobuf").unwrap(),
            }
            (name.to_string(), path)
        };
        let tests = vec![
            // The name says "mvn", the model says which operator it is.
            write(
                "test_mvn",
                Some(model(vec![node("MeanVarianceNormalization", "")])),
            ),
            write(
                "test_mvn_expanded",
                Some(model(vec![node("Constant", ""), node("ReduceMean", "")])),
            ),
            write(
                "test_softmax_expanded_ver18",
                Some(model(vec![node("Constant", ""), node("ReduceMax", "")])),
            ),
            write(
                "test_label_encoder",
                Some(model(vec![node("LabelEncoder", "ai.onnx.ml")])),
            ),
            write("test_empty", Some(model(vec![]))),
            write("test_garbage", None),
        ];
        let got: Vec<String> = assign_operators(&tests)
            .into_iter()
            .map(|(name, op)| match op {
                Ok(t) => format!("{name}: {} ({:?})", t.operator, t.rule),
                Err(e) => format!("{name}: error ({})", e.to_string().contains(&name)),
            })
            .collect();
        assert_eq!(
            got,
            [
                "test_empty: error (true)",
                "test_garbage: error (true)",
                "test_label_encoder: ai.onnx.ml.LabelEncoder (SingleNode)",
                "test_mvn: MeanVarianceNormalization (SingleNode)",
                "test_mvn_expanded: MeanVarianceNormalization (Expanded)",
                // No `test_softmax` beside it: the model decides.
                "test_softmax_expanded_ver18: ReduceMax (FirstNonConstant)",
            ]
        );
        fs::remove_dir_all(&dir).ok();
    }

    /// A wheel holding two node-test files and one file outside `node/`.
    fn fake_wheel(dir: &Path) -> (PathBuf, Release) {
        use std::io::Write as _;
        let path = dir.join("onnx-9.9.9-py3-none-any.whl");
        let mut zip = zip::ZipWriter::new(fs::File::create(&path).unwrap());
        let options = zip::write::SimpleFileOptions::default();
        for (name, bytes) in [
            (
                "onnx/backend/test/data/node/test_abs/model.onnx",
                &b"model"[..],
            ),
            (
                "onnx/backend/test/data/node/test_abs/test_data_set_0/input_0.pb",
                b"input",
            ),
            ("onnx/backend/test/data/simple/test_x/model.onnx", b"other"),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        let release = Release {
            version: "9.9.9".into(),
            python_version: "3.11".into(),
            platform: "any".into(),
            wheel: "onnx-9.9.9-py3-none-any.whl".into(),
            wheel_sha256: sha256_file(&path).unwrap(),
            files: vec![],
        };
        (path, release)
    }

    #[test]
    fn the_whole_node_dir_comes_from_the_verified_wheel_and_tampering_is_repaired() {
        let wheels = temp_dir("wheels");
        let cache = temp_dir("cache");
        let (_, release) = fake_wheel(&wheels);
        let source = Source::Local(wheels.clone());
        let node = ensure_all_node_tests(&release, &cache, &source).unwrap();
        assert_eq!(node, all_ops_dir(&cache, "9.9.9").join("node"));
        assert_eq!(
            fs::read(node.join("test_abs/model.onnx")).unwrap(),
            b"model"
        );
        assert!(!all_ops_dir(&cache, "9.9.9").join("simple").exists());

        // A changed file, or one the wheel did not hold: extracted afresh.
        fs::write(node.join("test_abs/model.onnx"), b"tampered").unwrap();
        ensure_all_node_tests(&release, &cache, &source).unwrap();
        assert_eq!(
            fs::read(node.join("test_abs/model.onnx")).unwrap(),
            b"model"
        );
        fs::create_dir_all(node.join("test_extra")).unwrap();
        fs::write(node.join("test_extra/model.onnx"), b"x").unwrap();
        ensure_all_node_tests(&release, &cache, &source).unwrap();
        assert!(!node.join("test_extra").exists());

        // A wheel that is not the pinned one is refused, naming both hashes.
        let mut other = release.clone();
        other.wheel_sha256 = "00".repeat(32);
        fs::remove_dir_all(all_ops_dir(&cache, "9.9.9")).unwrap();
        let err = format!(
            "{:#}",
            ensure_all_node_tests(&other, &cache, &source).unwrap_err()
        );
        assert!(err.contains("the manifest pins"), "{err}");
        // So is a directory without the wheel (nothing pins its files).
        let err = format!(
            "{:#}",
            ensure_all_node_tests(&release, &cache, &Source::Local(cache.clone())).unwrap_err()
        );
        assert!(err.contains("does not hold the pinned wheel"), "{err}");
        fs::remove_dir_all(&wheels).ok();
        fs::remove_dir_all(&cache).ok();
    }

    #[test]
    fn newest_release_with_data_is_chosen_numerically() {
        let release = |version: &str, files: usize| Release {
            version: version.into(),
            python_version: "3.11".into(),
            platform: "any".into(),
            wheel: "w".into(),
            wheel_sha256: "0".into(),
            files: (0..files)
                .map(|i| crate::manifest::PinnedFile {
                    path: format!("node/t/{i}"),
                    sha256: "0".into(),
                })
                .collect(),
        };
        let releases = [
            release("1.9.0", 1),
            release("1.22.0", 1),
            release("1.23.2", 0),
        ];
        assert_eq!(newest_release(&releases).unwrap().version, "1.22.0");
    }

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
                            "{}/{}/{}/{}/{}",
                            c.pass, c.fail, c.panic, c.unsupported, c.unreadable
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
                "Cast 1 (0 expanded): 0/0/0/0/1 0/0/0/0/1",
                "Det 2 (0 expanded): 0/0/0/2/0 0/0/0/2/0",
                "ScatterND 2 (0 expanded): 2/0/0/0/0 1/1/0/0/0",
                "Softmax 2 (1 expanded): 1/0/1/0/0 1/1/0/0/0",
            ]
        );
        let totals: Vec<(usize, usize, usize, usize, usize)> = r
            .totals
            .iter()
            .map(|c| (c.pass, c.fail, c.panic, c.unsupported, c.unreadable))
            .collect();
        assert_eq!(totals, [(3, 0, 1, 2, 1), (2, 2, 0, 2, 1)]);
        assert_eq!(r.operators[2].representative[0], None);
        assert_eq!(
            r.operators[2].representative[1].as_deref(),
            Some("test_scatternd_max: FAIL at load: Building node (ScatterND): reduction max <&>")
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

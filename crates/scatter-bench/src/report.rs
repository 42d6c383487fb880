//! The results: a time table (every calling mode of the plugin and of stock
//! tract, onnxruntime, the copy floors, ratios and geomeans), a gradient
//! table (the plugin against PyTorch autograd's backward), a peak-RSS
//! table, and one line per target of the performance issues.

use std::fmt::Write;
use std::time::Duration;

use crate::THREADS;
use crate::child::Measured;
use crate::loops;
use crate::ort::{TorchGnn, TorchGrad};
use crate::runner::Mode;
use crate::timing::human;

/// Everything measured on one case; `None` when not measured or failed.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub name: String,
    pub data_bytes: usize,
    pub copy_bound: bool,
    /// Counted in the geomean row.
    pub summarized: bool,
    /// Data into a warm buffer: timed between the plugin's one-shot calls
    /// when measured there, else on its own.
    pub memcpy: Option<Duration>,
    /// Data into a newly allocated buffer (`to_vec`).
    pub alloc_copy: Option<Duration>,
    pub ort: Option<Duration>,
    /// Per [`Mode::ALL`].
    pub plugin: [Option<Measured>; 3],
    pub stock: [Option<Measured>; 3],
    /// The plugin run by the baseline program (`--baseline`), per
    /// [`Mode::ALL`], and its one-shot at [`THREADS`] threads.
    pub baseline: [Option<Measured>; 3],
    pub baseline_threads: Option<Measured>,
    /// A gradient row: in the gradient table, not the time table.
    pub gradient: bool,
    /// PyTorch autograd on a gradient row.
    pub torch: Option<TorchGrad>,
    /// `(engine and mode, reason)` for each measurement that is n/a.
    pub not_measured: Vec<(String, String)>,
    /// Measured at [`THREADS`] threads too: the plugin's one-shot and
    /// onnxruntime ([`threads_table`]).
    pub threaded: bool,
    pub plugin_threads: Option<Measured>,
    pub ort_threads: Option<Duration>,
    /// The row's floor ([`crate::floor`]), random-index rows only, and
    /// the floor split over [`THREADS`] threads
    /// ([`crate::floor_on_tract_threads`]) for a threaded one.
    pub floor: Option<Duration>,
    pub floor_threads: Option<Duration>,
    /// A GNN row ([`gnn_table`]) and PyTorch's times on it.
    pub gnn: bool,
    pub torch_gnn: Option<TorchGnn>,
    /// Only the owned mode, a fresh copy of data moved into each call.
    pub fresh_each_call: bool,
    /// Only the owned mode (and onnxruntime), a new copy of the indices
    /// moved into each call.
    pub new_indices_each_call: bool,
    /// Per-round medians: round `i` of every series was timed within
    /// seconds of round `i` of the others, so their ratio is taken round
    /// by round ([`Rounds::paired`]).
    pub rounds: Rounds,
}

/// Per-round medians of a row's series (empty when not measured).
#[derive(Debug, Clone, Default)]
pub struct Rounds {
    /// Per [`Mode::ALL`].
    pub plugin: [Vec<Duration>; 3],
    pub stock: [Vec<Duration>; 3],
    /// The baseline's, per [`Mode::ALL`] and at [`THREADS`] threads.
    pub baseline: [Vec<Duration>; 3],
    pub baseline_threads: Vec<Duration>,
    pub ort: Vec<Duration>,
    /// The warm copy timed in the plugin's one-shot process.
    pub warm_copy: Vec<Duration>,
    /// The plugin's one-shot and onnxruntime at [`THREADS`] threads.
    pub plugin_threads: Vec<Duration>,
    pub ort_threads: Vec<Duration>,
    /// The warm copy split over [`THREADS`] threads, timed in the
    /// plugin's threaded process.
    pub warm_copy_threads: Vec<Duration>,
    /// The floor at 1 and [`THREADS`] threads, each in a process of its
    /// own ([`crate::child::FLOOR`]).
    pub floor: Vec<Duration>,
    pub floor_threads: Vec<Duration>,
}

impl Rounds {
    /// The median over rounds of `a[i] / b[i]`; `None` unless both series
    /// have every round. The machine's speed drifts by tens of percent
    /// over minutes: a ratio of two medians taken minutes apart carries
    /// that drift, a ratio within a round does not.
    pub fn paired(a: &[Duration], b: &[Duration]) -> Option<f64> {
        if a.is_empty() || a.len() != b.len() || b.iter().any(|d| d.is_zero()) {
            return None;
        }
        let mut ratios: Vec<f64> = a
            .iter()
            .zip(b)
            .map(|(x, y)| x.as_secs_f64() / y.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let n = ratios.len();
        Some(if n % 2 == 1 {
            ratios[n / 2]
        } else {
            (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0
        })
    }
}

fn index(mode: Mode) -> usize {
    Mode::ALL
        .iter()
        .position(|m| *m == mode)
        .expect("every mode is in ALL")
}

impl Row {
    pub fn plugin(&self, mode: Mode) -> Option<Duration> {
        self.plugin[index(mode)].map(|m| m.median)
    }

    pub fn stock(&self, mode: Mode) -> Option<Duration> {
        self.stock[index(mode)].map(|m| m.median)
    }

    /// The largest number of bytes the plugin's pools held after a mode.
    pub fn pooled(&self) -> Option<usize> {
        self.plugin.iter().flatten().map(|m| m.pooled).max()
    }

    /// What the plugin may hold over stock tract: one output per scatter
    /// node of the model (the bound), or what its pools held if
    /// more (a larger `--pool-capacity`).
    pub fn rss_allowance(&self) -> usize {
        let per_node = self.plugin.iter().chain(&self.stock).flatten();
        let per_node = per_node.map(|m| m.scatter_outputs).max().unwrap_or(0);
        per_node.max(self.pooled().unwrap_or(0))
    }

    /// The plugin in `mode` over onnxruntime: paired by round when both
    /// have every round, else the ratio of the medians.
    pub fn vs_ort(&self, mode: Mode) -> Option<f64> {
        Rounds::paired(&self.rounds.plugin[index(mode)], &self.rounds.ort)
            .or_else(|| ratio(self.plugin(mode), self.ort))
    }

    /// The plugin in `mode` over stock tract in the same mode (paired).
    pub fn vs_stock(&self, mode: Mode) -> Option<f64> {
        let i = index(mode);
        Rounds::paired(&self.rounds.plugin[i], &self.rounds.stock[i])
            .or_else(|| ratio(self.plugin(mode), self.stock(mode)))
    }

    /// The plugin's one-shot at [`THREADS`] threads over 1 thread (paired).
    pub fn plugin_scaling(&self) -> Option<f64> {
        let one = &self.rounds.plugin[index(Mode::OneShot)];
        Rounds::paired(&self.rounds.plugin_threads, one).or_else(|| {
            ratio(
                self.plugin_threads.map(|m| m.median),
                self.plugin(Mode::OneShot),
            )
        })
    }

    /// The warm copy split over [`THREADS`] threads over the serial one
    /// (paired): what a second core adds to the bandwidth of a copy, the
    /// bound of a copy-bound row's scaling.
    pub fn copy_scaling(&self) -> Option<f64> {
        Rounds::paired(&self.rounds.warm_copy_threads, &self.rounds.warm_copy)
    }

    /// The floor split over [`THREADS`] threads over the serial one
    /// (paired): what a second core adds to the memory a random-index row
    /// must move at least, the bound of its scaling.
    pub fn floor_scaling(&self) -> Option<f64> {
        Rounds::paired(&self.rounds.floor_threads, &self.rounds.floor)
            .or_else(|| ratio(self.floor_threads, self.floor))
    }

    /// Whether the copy's scaling says something of this row: a
    /// copy-bound row, or a random-index one beside its floor (the others
    /// are not bound by a copy).
    fn copy_scaling_applies(&self) -> bool {
        self.copy_bound || self.floor.is_some()
    }

    /// onnxruntime at [`THREADS`] threads over 1 thread (paired).
    pub fn ort_scaling(&self) -> Option<f64> {
        Rounds::paired(&self.rounds.ort_threads, &self.rounds.ort)
            .or_else(|| ratio(self.ort_threads, self.ort))
    }

    /// The plugin's one-shot over onnxruntime at [`THREADS`] threads each.
    pub fn threads_vs_ort(&self) -> Option<f64> {
        Rounds::paired(&self.rounds.plugin_threads, &self.rounds.ort_threads)
            .or_else(|| ratio(self.plugin_threads.map(|m| m.median), self.ort_threads))
    }

    /// The plugin's one-shot over the row's floor (paired).
    pub fn vs_floor(&self) -> Option<f64> {
        let one_shot = &self.rounds.plugin[index(Mode::OneShot)];
        Rounds::paired(one_shot, &self.rounds.floor)
            .or_else(|| ratio(self.plugin(Mode::OneShot), self.floor))
    }

    /// The plugin's one-shot over the row's floor, both at [`THREADS`]
    /// threads (paired).
    pub fn threads_vs_floor(&self) -> Option<f64> {
        Rounds::paired(&self.rounds.plugin_threads, &self.rounds.floor_threads)
            .or_else(|| ratio(self.plugin_threads.map(|m| m.median), self.floor_threads))
    }

    /// The plugin's one-shot at 1 thread (`slot` 0) or [`THREADS`] (1).
    fn one_shot_at(&self, slot: usize) -> Option<Duration> {
        match slot {
            0 => self.plugin(Mode::OneShot),
            _ => self.plugin_threads.map(|m| m.median),
        }
    }

    /// PyTorch's faster of `index_add_` and `scatter_add_` at 1 thread
    /// (`slot` 0) or [`THREADS`] (1).
    fn torch_best(&self, slot: usize) -> Option<Duration> {
        let t = self.torch_gnn?;
        [t.index_add[slot], t.scatter_add[slot]]
            .into_iter()
            .flatten()
            .min()
    }

    /// The plugin's one-shot over onnxruntime at 1 thread (`slot` 0) or
    /// [`THREADS`] (1).
    fn vs_ort_at(&self, slot: usize) -> Option<f64> {
        match slot {
            0 => self.vs_ort(Mode::OneShot),
            _ => self.threads_vs_ort(),
        }
    }

    /// The plugin's one-shot over PyTorch's faster op at 1 thread (`slot`
    /// 0) or [`THREADS`] (1).
    fn vs_torch_at(&self, slot: usize) -> Option<f64> {
        ratio(self.one_shot_at(slot), self.torch_best(slot))
    }

    /// The plugin's one-shot over the warm copy timed in its process.
    pub fn vs_warm_copy(&self) -> Option<f64> {
        let one_shot = &self.rounds.plugin[index(Mode::OneShot)];
        Rounds::paired(one_shot, &self.rounds.warm_copy)
            .or_else(|| ratio(self.plugin(Mode::OneShot), self.memcpy))
    }
}

fn ratio(a: Option<Duration>, b: Option<Duration>) -> Option<f64> {
    let (a, b) = (a?.as_secs_f64(), b?.as_secs_f64());
    (b > 0.0).then(|| a / b)
}

fn geomean(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let logs: Vec<f64> = values.flatten().map(f64::ln).collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

fn cell(d: Option<Duration>) -> String {
    d.map(human).unwrap_or_else(|| "n/a".into())
}

pub(crate) fn rcell(r: Option<f64>) -> String {
    match r {
        Some(r) if r >= 100.0 => format!("{r:.0}×"),
        Some(r) if r >= 0.01 => format!("{r:.2}×"),
        Some(r) => format!("{r:.1e}×"),
        None => "n/a".into(),
    }
}

fn mb(bytes: usize) -> String {
    format!("{:.1}", bytes as f64 / 1e6)
}

type RatioFn = fn(&Row) -> Option<f64>;

/// The ratio columns; `true`: its geomean is over copy-bound rows only.
const RATIOS: [(&str, bool, RatioFn); 5] = [
    ("one-shot/ort", false, |r| r.vs_ort(Mode::OneShot)),
    ("one-shot/warm copy", true, Row::vs_warm_copy),
    ("one-shot/stock one-shot", false, |r| {
        r.vs_stock(Mode::OneShot)
    }),
    ("persistent/ort", false, |r| r.vs_ort(Mode::Persistent)),
    ("owned/ort", false, |r| r.vs_ort(Mode::Owned)),
];

/// The time table: medians per calling mode, then ratios, then a geomean
/// row over the summarized rows (copy-bound ones for the copy ratio).
pub fn time_table(rows: &[Row]) -> String {
    let mut s = String::new();
    let modes = |engine: &str| {
        Mode::ALL
            .map(|m| format!("{engine} {}", m.name()))
            .join(" | ")
    };
    let _ = writeln!(
        s,
        "| workload | data | warm copy | fresh copy | ort 1-thread | {} | {} | {} |",
        modes("plugin"),
        modes("stock"),
        RATIOS.map(|r| r.0).join(" | ")
    );
    let _ = writeln!(s, "|{}", "---|".repeat(11 + RATIOS.len()));
    for r in rows.iter().filter(|r| !r.gradient) {
        let star = if r.copy_bound { "*" } else { "" };
        let _ = writeln!(
            s,
            "| {}{star} | {} MB | {} | {} | {} | {} | {} | {} |",
            r.name,
            mb(r.data_bytes),
            cell(r.memcpy),
            cell(r.alloc_copy),
            cell(r.ort),
            Mode::ALL.map(|m| cell(r.plugin(m))).join(" | "),
            Mode::ALL.map(|m| cell(r.stock(m))).join(" | "),
            RATIOS.map(|(_, _, f)| rcell(f(r))).join(" | ")
        );
    }
    let summarized = || rows.iter().filter(|r| r.summarized);
    if summarized().next().is_some() {
        let means = RATIOS.map(|(_, copy_only, f)| {
            let m = geomean(summarized().filter(|r| !copy_only || r.copy_bound).map(f));
            format!("**{}**", rcell(m))
        });
        let _ = writeln!(
            s,
            "| **geomean** |{} {} |",
            " |".repeat(10),
            means.join(" | ")
        );
    }
    s
}

/// The thread-count table of the threaded rows: the plugin's one-shot and
/// onnxruntime at 1 and [`THREADS`] threads, each one's scaling (paired),
/// and the random-index rows' floor with the one-shot's distance from it.
/// `None` without threaded rows.
pub fn threads_table(rows: &[Row]) -> Option<String> {
    let threaded: Vec<&Row> = rows.iter().filter(|r| r.threaded).collect();
    if threaded.is_empty() {
        return None;
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| workload | plugin one-shot 1 thread | plugin one-shot {THREADS} threads | plugin \
         {THREADS}/1 | warm copy {THREADS}/1 | ort 1 thread | ort {THREADS} threads | ort \
         {THREADS}/1 | plugin/ort {THREADS} threads | floor | floor {THREADS}/1 | one-shot/floor \
         | one-shot/floor {THREADS} threads |"
    );
    let _ = writeln!(s, "|{}", "---|".repeat(13));
    for r in threaded {
        let star = if r.copy_bound { "*" } else { "" };
        let _ = writeln!(
            s,
            "| {}{star} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            cell(r.plugin(Mode::OneShot)),
            cell(r.plugin_threads.map(|m| m.median)),
            rcell(r.plugin_scaling()),
            if r.copy_scaling_applies() {
                rcell(r.copy_scaling())
            } else {
                "–".into()
            },
            cell(r.ort),
            cell(r.ort_threads),
            rcell(r.ort_scaling()),
            rcell(r.threads_vs_ort()),
            floor_cell(r, cell(r.floor)),
            floor_cell(r, rcell(r.floor_scaling())),
            floor_cell(r, rcell(r.vs_floor())),
            floor_cell(r, rcell(r.threads_vs_floor())),
        );
    }
    Some(s)
}

/// A floor column's `value`, `–` for a row without a floor.
fn floor_cell(r: &Row, value: String) -> String {
    if r.floor.is_some() {
        value
    } else {
        "–".into()
    }
}

/// The GNN table: the plugin's one-shot against onnxruntime and PyTorch's
/// `index_add_` and `scatter_add_` at 1 and [`THREADS`] threads; the
/// ratios against onnxruntime are paired, against PyTorch (timed after
/// every row) of medians, over its faster op. `None` without GNN rows.
pub fn gnn_table(rows: &[Row]) -> Option<String> {
    let gnn: Vec<&Row> = rows.iter().filter(|r| r.gnn).collect();
    if gnn.is_empty() {
        return None;
    }
    let mut s = String::new();
    let at = |what: &str| format!("{what} 1 thread | {what} {THREADS} threads");
    let _ = writeln!(
        s,
        "| workload | {} | {} | {} | {} | {} | {} |",
        at("plugin one-shot"),
        at("ort"),
        at("PyTorch index_add_"),
        at("PyTorch scatter_add_"),
        at("plugin/ort"),
        at("plugin/PyTorch"),
    );
    let _ = writeln!(s, "|{}", "---|".repeat(13));
    for r in gnn {
        let torch = r.torch_gnn.unwrap_or_default();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.name,
            cell(r.one_shot_at(0)),
            cell(r.one_shot_at(1)),
            cell(r.ort),
            cell(r.ort_threads),
            cell(torch.index_add[0]),
            cell(torch.index_add[1]),
            cell(torch.scatter_add[0]),
            cell(torch.scatter_add[1]),
            rcell(r.vs_ort_at(0)),
            rcell(r.vs_ort_at(1)),
            rcell(r.vs_torch_at(0)),
            rcell(r.vs_torch_at(1)),
        );
    }
    Some(s)
}

/// `met`, `missed`, or `n/a` when nothing was measured.
fn met(values: &[Option<f64>], target: f64) -> &'static str {
    if values.iter().all(Option::is_none) {
        "n/a"
    } else if values.iter().flatten().all(|x| *x <= target) {
        "met"
    } else {
        "missed"
    }
}

/// The target lines of issue 25's rows: thread scaling per threaded row,
/// GNN rows against onnxruntime and PyTorch, the fresh-cache row against
/// stock tract, and how far the random-index rows are from their floor.
pub fn thread_targets(rows: &[Row]) -> Vec<String> {
    let mut lines = vec![];
    for r in rows.iter().filter(|r| r.threaded) {
        let plugin = r.plugin_scaling();
        let copy = match r.copy_scaling() {
            Some(c) if r.copy_scaling_applies() => {
                format!(", warm copy {}", rcell(Some(c)))
            }
            _ => String::new(),
        };
        let floor = match r.floor_scaling() {
            Some(f) => format!(", floor {}", rcell(Some(f))),
            None => String::new(),
        };
        lines.push(format!(
            "{}: {THREADS} threads ≤ 0.6× of 1 thread: plugin one-shot {} ({}), onnxruntime \
             {}{copy}{floor}",
            r.name,
            rcell(plugin),
            met(&[plugin], 0.6),
            rcell(r.ort_scaling())
        ));
    }
    for r in rows.iter().filter(|r| r.gnn) {
        let ratios = [
            r.vs_ort_at(0),
            r.vs_torch_at(0),
            r.vs_ort_at(1),
            r.vs_torch_at(1),
        ];
        lines.push(format!(
            "{} ≤ onnxruntime and ≤ PyTorch at equal thread counts: 1 thread: ort {}, PyTorch {}; \
             {THREADS} threads: ort {}, PyTorch {} ({})",
            r.name,
            rcell(ratios[0]),
            rcell(ratios[1]),
            rcell(ratios[2]),
            rcell(ratios[3]),
            met(&ratios, 1.0)
        ));
    }
    for r in rows.iter().filter(|r| r.fresh_each_call) {
        let owned = r.vs_stock(Mode::Owned);
        lines.push(format!(
            "{} owned, a fresh cache moved into every call, within 1.2× of stock tract's: {} ({})",
            r.name,
            rcell(owned),
            met(&[owned], 1.2)
        ));
    }
    for r in rows.iter().filter(|r| r.new_indices_each_call) {
        let (ort, stock) = (r.vs_ort(Mode::Owned), r.vs_stock(Mode::Owned));
        lines.push(format!(
            "{} owned, new indices moved into every call (checked every call), ≤ onnxruntime: \
             {} ({}); over stock tract: {}",
            r.name,
            rcell(ort),
            met(&[ort], 1.0),
            rcell(stock)
        ));
    }
    let floored: Vec<String> = rows
        .iter()
        .filter(|r| r.floor.is_some())
        .map(|r| format!("{} {}", r.name, rcell(r.vs_floor())))
        .collect();
    if !floored.is_empty() {
        lines.push(format!(
            "random-index rows' one-shot over their floor (read indices and updates once, write \
             the output once): {}",
            floored.join(", ")
        ));
    }
    lines
}

/// The gradient table: the plugin's kept-inputs modes against PyTorch's
/// backward (and forward+backward); then why the other columns are n/a.
/// `None` without gradient rows.
pub fn gradient_table(rows: &[Row]) -> Option<String> {
    let grads: Vec<&Row> = rows.iter().filter(|r| r.gradient).collect();
    if grads.is_empty() {
        return None;
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| gradient of | data | warm copy | plugin one-shot | plugin persistent | \
         PyTorch forward+backward | PyTorch backward | one-shot/backward | persistent/backward |"
    );
    let _ = writeln!(s, "|{}", "---|".repeat(9));
    for r in &grads {
        let backward = r.torch.map(|t| t.backward);
        let alias = if r.torch.is_some_and(|t| t.aliased) {
            "†"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "| {} | {} MB | {} | {} | {} | {} | {}{alias} | {} | {} |",
            r.name,
            mb(r.data_bytes),
            cell(r.memcpy),
            cell(r.plugin(Mode::OneShot)),
            cell(r.plugin(Mode::Persistent)),
            cell(r.torch.map(|t| t.forward_backward)),
            cell(backward),
            rcell(ratio(r.plugin(Mode::OneShot), backward)),
            rcell(ratio(r.plugin(Mode::Persistent), backward)),
        );
    }
    if grads.iter().any(|r| r.torch.is_some_and(|t| t.aliased)) {
        let _ = writeln!(
            s,
            "\n† PyTorch's grad_data is grad_output itself (its scatter_add backward passes the \
             incoming gradient through, no copy)."
        );
    }
    let mut notes = vec![];
    for r in &grads {
        let mut reasons: Vec<(&str, Vec<&str>)> = vec![];
        for (what, why) in &r.not_measured {
            match reasons.iter_mut().find(|(w, _)| *w == why.as_str()) {
                Some((_, list)) => list.push(what),
                None => reasons.push((why, vec![what])),
            }
        }
        for (why, what) in reasons {
            notes.push(format!("- {} {}: n/a ({why})", r.name, what.join(", ")));
        }
    }
    if !notes.is_empty() {
        let _ = writeln!(s, "\n{}", notes.join("\n"));
    }
    Some(s)
}

/// The peak-RSS table: per mode, the plugin's and stock tract's peak
/// resident set (each measured in a process of its own, model and inputs
/// included) and the difference, against what the plugin's output pools
/// hold and one output per scatter node (the bound).
/// A paired ratio of this build over the baseline outside this band is
/// flagged: the noise of paired rounds on the bench machine.
pub const BASELINE_NOISE: f64 = 0.10;

/// This build's plugin against the baseline's, per row and mode (and the
/// one-shot at [`THREADS`] threads): both medians and their paired ratio,
/// flagged `slower` or `faster` outside ±[`BASELINE_NOISE`]; a last line
/// counts the flags and the series the baseline did not run (a row it
/// lacks).
pub fn baseline_table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| workload | mode | this build | baseline | this / baseline | |\n|---|---|---:|---:|---:|---|"
    );
    let (mut slower, mut faster, mut missing, mut within) = (vec![], vec![], vec![], 0);
    for r in rows {
        let modes = Mode::ALL.iter().enumerate().map(|(m, mode)| {
            (
                mode.name().to_string(),
                r.plugin[m].as_ref(),
                r.baseline[m].as_ref(),
                &r.rounds.plugin[m],
                &r.rounds.baseline[m],
            )
        });
        let threaded = (
            format!("{} {THREADS} threads", Mode::OneShot.name()),
            r.plugin_threads.as_ref(),
            r.baseline_threads.as_ref(),
            &r.rounds.plugin_threads,
            &r.rounds.baseline_threads,
        );
        for (mode, this, base, this_rounds, base_rounds) in modes.chain(std::iter::once(threaded)) {
            if base.is_none() {
                if this.is_some() {
                    missing.push(format!("{} {mode}", r.name));
                }
                continue;
            }
            let paired = Rounds::paired(this_rounds, base_rounds);
            let flag = match paired {
                Some(x) if x > 1.0 + BASELINE_NOISE => {
                    slower.push(format!("{} {mode}", r.name));
                    "slower"
                }
                Some(x) if x < 1.0 - BASELINE_NOISE => {
                    faster.push(format!("{} {mode}", r.name));
                    "faster"
                }
                Some(_) => {
                    within += 1;
                    ""
                }
                None => "",
            };
            let _ = writeln!(
                s,
                "| {} | {mode} | {} | {} | {} | {flag} |",
                r.name,
                cell(this.map(|m| m.median)),
                cell(base.map(|m| m.median)),
                paired.map_or_else(|| "n/a".into(), |x| format!("{x:.2}×")),
            );
        }
    }
    let _ = writeln!(
        s,
        "\nWithin ±{:.0}%: {within}; slower: {} ({}); faster: {} ({}); not run by the baseline: {}.",
        BASELINE_NOISE * 100.0,
        slower.len(),
        slower.join(", "),
        faster.len(),
        faster.join(", "),
        missing.len()
    );
    s
}

pub fn rss_table(rows: &[Row]) -> String {
    let mut s = String::new();
    let heads = Mode::ALL
        .map(|m| {
            let m = m.name();
            format!("plugin {m} | stock {m} | Δ {m}")
        })
        .join(" | ");
    let _ = writeln!(
        s,
        "| workload | {heads} | pooled at end | one output per scatter node |"
    );
    let _ = writeln!(s, "|{}", "---|".repeat(3 + 3 * Mode::ALL.len()));
    for r in rows {
        let cells = Mode::ALL
            .map(|m| {
                let (p, st) = (
                    r.plugin[index(m)].and_then(|x| x.peak_rss),
                    r.stock[index(m)].and_then(|x| x.peak_rss),
                );
                let delta = match (p, st) {
                    (Some(p), Some(st)) => format!("{:+.1}", (p as f64 - st as f64) / 1e6),
                    _ => "n/a".into(),
                };
                format!(
                    "{} | {} | {delta}",
                    p.map_or("n/a".into(), mb),
                    st.map_or("n/a".into(), mb)
                )
            })
            .join(" | ");
        let _ = writeln!(
            s,
            "| {} | {cells} | {} | {} |",
            r.name,
            r.pooled().map_or("n/a".into(), mb),
            mb(r.rss_allowance())
        );
    }
    s
}

/// `name ratio` pairs of the rows where `f` is measured, worst first.
fn listed(rows: &[&Row], f: impl Fn(&Row) -> Option<f64>) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = rows
        .iter()
        .filter_map(|r| f(r).map(|x| (r.name.clone(), x)))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v
}

/// `met on 7 of 9 rows (misses: a 1.20×, b 1.05×)`.
fn verdict(values: &[(String, f64)], target: f64) -> String {
    let misses: Vec<String> = values
        .iter()
        .filter(|(_, x)| *x > target)
        .map(|(n, x)| format!("{n} {}", rcell(Some(*x))))
        .collect();
    let met = values.len() - misses.len();
    if values.is_empty() {
        "n/a (no row measured)".into()
    } else if misses.is_empty() {
        format!("met on all {} rows", values.len())
    } else {
        format!(
            "met on {met} of {} rows (misses: {})",
            values.len(),
            misses.join(", ")
        )
    }
}

/// Slack for the RSS target: allocator and page-table noise between two
/// processes running the same binary.
const RSS_SLACK: usize = 2 << 20;

/// One line per target of the performance issues.
pub fn targets(rows: &[Row]) -> Vec<String> {
    // The recurrent layers have targets of their own (`recurrent_targets`).
    let all: Vec<&Row> = rows
        .iter()
        .filter(|r| !crate::recurrent::NAMES.contains(&r.name.as_str()))
        .collect();
    let mut lines = vec![];
    let one_shot_ort = listed(&all, |r| r.vs_ort(Mode::OneShot));
    lines.push(format!(
        "one-shot `run` with kept inputs ≤ onnxruntime: {}",
        verdict(&one_shot_ort, 1.0)
    ));
    let copy_bound: Vec<&Row> = rows.iter().filter(|r| r.copy_bound).collect();
    let one_shot_copy = listed(&copy_bound, Row::vs_warm_copy);
    lines.push(format!(
        "copy-bound one-shot within 1.3× of the warm copy: {}",
        verdict(&one_shot_copy, 1.3)
    ));
    let kv: Vec<String> = rows
        .iter()
        // A fresh cache moved in frees the last one each call: its own
        // target is against stock tract (`thread_targets`).
        .filter(|r| r.name.contains("kv") && !r.fresh_each_call)
        .filter_map(|r| r.plugin(Mode::Owned).map(|d| (r, d)))
        .map(|(r, d)| {
            let ok = if d < Duration::from_micros(100) {
                "met"
            } else {
                "missed"
            };
            format!("{} {} ({ok})", r.name, human(d))
        })
        .collect();
    if !kv.is_empty() {
        lines.push(format!("owned KV write < 0.1 ms: {}", kv.join(", ")));
    }
    for r in rows.iter().filter(|r| r.name == crate::gtcrn::NAME) {
        let per_mode: Vec<(String, f64)> = Mode::ALL
            .iter()
            .filter_map(|&m| r.vs_stock(m).map(|x| (m.name().to_string(), x)))
            .collect();
        lines.push(format!(
            "{} within 5% of stock tract: {} ({})",
            r.name,
            per_mode
                .iter()
                .map(|(m, x)| format!("{m} {}", rcell(Some(*x))))
                .collect::<Vec<_>>()
                .join(", "),
            if per_mode.iter().all(|(_, x)| *x <= 1.05) {
                "met"
            } else {
                "missed"
            }
        ));
    }
    lines.extend(loop_targets(rows));
    lines.extend(recurrent_targets(rows));
    let over: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            Mode::ALL.iter().filter_map(move |&m| {
                let p = r.plugin[index(m)]?;
                let st = r.stock[index(m)]?;
                let extra = p.peak_rss?.saturating_sub(st.peak_rss?);
                let allowed = r.rss_allowance() + RSS_SLACK;
                (extra > allowed).then(|| format!("{} {} +{} MB", r.name, m.name(), mb(extra)))
            })
        })
        .collect();
    let compared = rows
        .iter()
        .flat_map(|r| Mode::ALL.map(|m| (r.plugin[index(m)], r.stock[index(m)])))
        .filter(|(p, s)| p.is_some() && s.is_some())
        .count();
    let grads: Vec<&Row> = rows.iter().filter(|r| r.gradient).collect();
    if !grads.is_empty() {
        let vs_torch = listed(&grads, |r| {
            ratio(r.plugin(Mode::OneShot), r.torch.map(|t| t.backward))
        });
        let unmeasured = grads.len() - vs_torch.len();
        lines.push(format!(
            "gradient (plugin one-shot) no slower than PyTorch's backward: {}{}",
            verdict(&vs_torch, 1.0),
            if unmeasured > 0 {
                format!(" ({unmeasured} of {} rows not measured)", grads.len())
            } else {
                String::new()
            }
        ));
    }
    lines.push(format!(
        "peak RSS over stock tract ≤ one output per scatter node (+{} MB slack): {}",
        RSS_SLACK >> 20,
        if compared == 0 {
            "n/a (no row/mode pair measured by both)".into()
        } else if over.is_empty() {
            format!("met on all {compared} row/mode pairs measured by both")
        } else {
            format!("missed on {}", over.join(", "))
        }
    ));
    lines
}

/// Ratio at most which the [`loops::DECODE_16X`] row's owned time over
/// [`loops::DECODE`]'s shows the loop writing in place: each step costs
/// the row, so both take the same time; copied per step, the larger
/// buffer would take [`loops::BIG_BUFFER_FACTOR`]× as long.
pub const IN_PLACE_RATIO: f64 = 1.5;

/// The recurrent layers' targets ([`crate::recurrent`]): one line per
/// target and pair, when either row of the pair was run:
/// the Loop row's plugin one-shot within [`crate::recurrent::VS_ORT`]× of onnxruntime's
/// one-shot on it, and within [`crate::recurrent::VS_NATIVE`]× of stock tract's one-shot on
/// the op row (paired round by round when timed in shared rounds).
pub fn recurrent_targets(rows: &[Row]) -> Vec<String> {
    use crate::recurrent::{PAIRS, TORCH_GRU_PACKED, VS_NATIVE, VS_ORT};
    let find = |name: &str| rows.iter().find(|r| r.name == name);
    let verdict = |x: Option<f64>, target: f64| match x {
        None => "n/a",
        Some(x) if x <= target => "met",
        Some(_) => "missed",
    };
    let times = |a: Option<std::time::Duration>, b: Option<std::time::Duration>| match (a, b) {
        (Some(a), Some(b)) => format!(" ({} vs {})", human(a), human(b)),
        _ => String::new(),
    };
    let mut lines = vec![];
    if let Some(packed) = find(TORCH_GRU_PACKED) {
        let ort = packed.vs_ort(Mode::OneShot);
        lines.push(format!(
            "packed-sequence GRU ({TORCH_GRU_PACKED}): plugin one-shot ≤ {VS_ORT}× onnxruntime \
             one-shot: {}{}: {}",
            rcell(ort),
            times(packed.plugin(Mode::OneShot), packed.ort),
            verdict(ort, VS_ORT)
        ));
    }
    for (layer, l, op, op_type) in PAIRS {
        let (lp, native) = (find(l), find(op));
        if lp.is_none() && native.is_none() {
            continue;
        }
        let one_shot = lp.and_then(|r| r.plugin(Mode::OneShot));
        let ort = lp.and_then(|r| r.vs_ort(Mode::OneShot));
        lines.push(format!(
            "{layer} Loop ({l}): plugin one-shot ≤ {VS_ORT}× onnxruntime one-shot: {}{}: {}",
            rcell(ort),
            times(one_shot, lp.and_then(|r| r.ort)),
            verdict(ort, VS_ORT)
        ));
        let stock = native.and_then(|r| r.stock(Mode::OneShot));
        let vs_native = lp
            .zip(native)
            .and_then(|(lp, native)| Rounds::paired(&lp.rounds.plugin[0], &native.rounds.stock[0]))
            .or_else(|| {
                let (a, b) = (one_shot?.as_secs_f64(), stock?.as_secs_f64());
                (b > 0.0).then(|| a / b)
            });
        lines.push(format!(
            "{layer} Loop ({l}): plugin one-shot ≤ {VS_NATIVE}× stock tract one-shot of the \
             native {op_type} op ({op}): {}{}: {}",
            rcell(vs_native),
            times(one_shot, stock),
            verdict(vs_native, VS_NATIVE)
        ));
    }
    lines
}

/// The `Loop` rows' targets (issue 22), when any `Loop` row was run.
fn loop_targets(rows: &[Row]) -> Vec<String> {
    let of = |names: &[&str]| -> Vec<&Row> {
        rows.iter()
            .filter(|r| names.contains(&r.name.as_str()))
            .collect()
    };
    if of(&loops::NAMES).is_empty() {
        return vec![];
    }
    let decode = listed(&of(&[loops::DECODE, loops::DECODE_16X]), |r| {
        r.vs_ort(Mode::OneShot)
    });
    let empty = listed(&of(&[loops::EMPTY]), |r| r.vs_ort(Mode::OneShot));
    let greedy = listed(&of(&[loops::GREEDY]), |r| r.vs_ort(Mode::OneShot));
    let owned = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .and_then(|r| r.plugin(Mode::Owned))
    };
    let in_place = match (owned(loops::DECODE_16X), owned(loops::DECODE)) {
        (Some(big), Some(small)) => {
            let x = ratio(Some(big), Some(small));
            format!(
                "{} ({} vs {}; copied at each step it would be about {}×): {}",
                rcell(x),
                human(big),
                human(small),
                loops::BIG_BUFFER_FACTOR,
                if x.is_some_and(|x| x <= IN_PLACE_RATIO) {
                    "met"
                } else {
                    "missed"
                }
            )
        }
        _ => "n/a (both decode rows' owned mode not measured)".into(),
    };
    vec![
        format!(
            "Loop decode one-shot within 2× of onnxruntime per run: {}",
            verdict(&decode, 2.0)
        ),
        format!(
            "Loop per-iteration overhead of an empty body (one-shot, {} iterations) within 5× of onnxruntime's: {}",
            loops::EMPTY_ITERATIONS,
            verdict(&empty, 5.0)
        ),
        format!(
            "in-place Loop: owned time of the {}× buffer row ({}) over the 1× buffer row ({}) ≤ {IN_PLACE_RATIO}: {in_place}",
            loops::BIG_BUFFER_FACTOR,
            loops::DECODE_16X,
            loops::DECODE
        ),
        format!(
            "greedy decoder Loop with a run-time If (one-shot) within 2× of onnxruntime: {}",
            verdict(&greedy, 2.0)
        ),
    ]
}

/// `kv_step dynamo/TorchScript: one-shot 1.02×, persistent 0.98×, owned
/// 0.91×, stock one-shot 0.96×, ort 4.69×; dynamo within 1.2× of
/// TorchScript (one-shot and owned): met` for the rows `<stem>_dynamo` and
/// `<stem>_torchscript`; the plugin's ratios paired round by round when
/// the two were timed in shared rounds; `None` when neither is in `rows`.
pub fn export_ratios(rows: &[Row], stem: &str, target: f64) -> Option<String> {
    let find = |export: &str| rows.iter().find(|r| r.name == format!("{stem}_{export}"));
    let (dynamo, torchscript) = (find("dynamo"), find("torchscript"));
    if dynamo.is_none() && torchscript.is_none() {
        return None;
    }
    let both =
        |f: &dyn Fn(&Row) -> Option<Duration>| ratio(dynamo.and_then(f), torchscript.and_then(f));
    // Timed in shared rounds ([`Row::rounds`]): paired, else the medians'.
    let plugin = |m: Mode| {
        let i = index(m);
        dynamo
            .zip(torchscript)
            .and_then(|(d, t)| Rounds::paired(&d.rounds.plugin[i], &t.rounds.plugin[i]))
            .or_else(|| both(&|r| r.plugin(m)))
    };
    let judged = [Mode::OneShot, Mode::Owned];
    let worst = judged.iter().filter_map(|&m| plugin(m)).reduce(f64::max);
    let verdict = match worst {
        None => "n/a",
        Some(w) if w <= target => "met",
        Some(_) => "missed",
    };
    let mut parts: Vec<String> = Mode::ALL
        .iter()
        .map(|&m| format!("{} {}", m.name(), rcell(plugin(m))))
        .collect();
    parts.push(format!(
        "stock one-shot {}",
        rcell(both(&|r| r.stock(Mode::OneShot)))
    ));
    parts.push(format!("ort {}", rcell(both(&|r| r.ort))));
    Some(format!(
        "{stem} dynamo/TorchScript: {}; dynamo within {target}× of TorchScript \
         (one-shot and owned): {verdict}",
        parts.join(", ")
    ))
}

/// For every bfloat16 row of `rows` beside its float32 twin
/// ([`crate::workloads::FLOAT32_TWINS`]): `snd_bf16_kv_cache over
/// snd_kv_cache: one-shot 1.02×, persistent 0.98×, owned 1.10×; within
/// 1.3× in each mode: met`, the plugin's ratios paired round by round
/// (the two are timed in shared rounds); a KV row adds its owned target,
/// within 2× of float32's owned time.
pub fn bfloat16_ratios(rows: &[Row]) -> Vec<String> {
    const EACH_MODE: f64 = 1.3;
    const OWNED_KV: f64 = 2.0;
    let find = |name: &str| rows.iter().find(|r| r.name == name);
    crate::workloads::FLOAT32_TWINS
        .iter()
        .filter_map(|(bf16, f32)| Some((find(bf16)?, find(f32)?)))
        .map(|(bf16, f32)| {
            let ratio_in = |m: Mode| {
                let i = index(m);
                Rounds::paired(&bf16.rounds.plugin[i], &f32.rounds.plugin[i])
                    .or_else(|| ratio(bf16.plugin(m), f32.plugin(m)))
            };
            let ratios: Vec<(Mode, Option<f64>)> =
                Mode::ALL.iter().map(|&m| (m, ratio_in(m))).collect();
            let verdict = |worst: Option<f64>, target: f64| match worst {
                None => "n/a",
                Some(w) if w <= target => "met",
                Some(_) => "missed",
            };
            let worst = ratios.iter().filter_map(|(_, r)| *r).reduce(f64::max);
            let parts: Vec<String> = ratios
                .iter()
                .map(|(m, r)| format!("{} {}", m.name(), rcell(*r)))
                .collect();
            let mut line = format!(
                "{} over {}: {}; within {EACH_MODE}× in each mode: {}",
                bf16.name,
                f32.name,
                parts.join(", "),
                verdict(worst, EACH_MODE)
            );
            if bf16.name.contains("kv") {
                line.push_str(&format!(
                    "; owned within {OWNED_KV}× of float32's: {}",
                    verdict(ratio_in(Mode::Owned), OWNED_KV)
                ));
            }
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_ratios_take_the_median_round_by_round() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&x| Duration::from_millis(x))
                .collect::<Vec<_>>()
        };
        // The machine slows down threefold in round 2: both series see it.
        let a = ms(&[10, 30, 11]);
        let b = ms(&[10, 30, 10]);
        assert_eq!(Rounds::paired(&a, &b), Some(1.0));
        // The ratio of the medians would say 11 / 10.
        let of_medians = ratio(Some(a[2]), Some(b[2])).unwrap();
        assert!((of_medians - 1.1).abs() < 1e-9, "{of_medians}");
        assert_eq!(Rounds::paired(&ms(&[4, 6]), &ms(&[2, 2])), Some(2.5));
        assert_eq!(Rounds::paired(&a, &b[..2]), None, "a round is missing");
        assert_eq!(Rounds::paired(&[], &[]), None);
        assert_eq!(Rounds::paired(&a, &ms(&[1, 0, 1])), None);
    }

    fn measured(ms: u64, peak_mb: usize, pooled_mb: usize) -> Option<Measured> {
        Some(Measured {
            median: Duration::from_millis(ms),
            calls: 10,
            peak_rss: Some(peak_mb << 20),
            pooled: pooled_mb << 20,
            warm_copy: None,
            scatter_outputs: pooled_mb << 20,
        })
    }

    fn row() -> Row {
        Row {
            name: "snd_kv_cache".into(),
            data_bytes: 32 << 20,
            copy_bound: true,
            summarized: true,
            memcpy: Some(Duration::from_millis(4)),
            alloc_copy: Some(Duration::from_millis(20)),
            ort: Some(Duration::from_millis(5)),
            plugin: [measured(5, 100, 32), measured(4, 100, 32), None],
            stock: [measured(20, 66, 0), measured(20, 66, 0), None],
            ..Row::default()
        }
    }

    fn loop_row(name: &str, ort_ms: u64, one_shot_ms: u64, owned_ms: Option<u64>) -> Row {
        Row {
            name: name.into(),
            ort: Some(Duration::from_millis(ort_ms)),
            plugin: [
                measured(one_shot_ms, 10, 0),
                measured(one_shot_ms, 10, 0),
                owned_ms.and_then(|ms| measured(ms, 10, 0)),
            ],
            ..Row::default()
        }
    }

    #[test]
    fn the_baseline_table_flags_paired_ratios_outside_ten_percent() {
        let ms = |v: &[u64]| v.iter().map(|&x| Duration::from_millis(x)).collect();
        let mut r = row();
        r.baseline = [measured(5, 100, 32), measured(4, 100, 32), None];
        // One-shot: the machine slows down in round 2 for both; 1.0× paired.
        r.rounds.plugin[0] = ms(&[5, 15, 5]);
        r.rounds.baseline[0] = ms(&[5, 15, 5]);
        // Persistent: this build 1.25× the baseline in every round.
        r.rounds.plugin[1] = ms(&[5, 5, 5]);
        r.rounds.baseline[1] = ms(&[4, 4, 4]);
        let table = baseline_table(&[r]);
        assert!(
            table.contains("| snd_kv_cache | one-shot | 5.00 ms | 5.00 ms | 1.00× |  |"),
            "{table}"
        );
        assert!(table.contains("| 1.25× | slower |"), "{table}");
        assert!(
            table.contains(
                "Within ±10%: 1; slower: 1 (snd_kv_cache persistent); faster: 0 (); not run by the baseline: 0."
            ),
            "{table}"
        );
        // No baseline series: no row, and counted.
        let table = baseline_table(&[loop_row("x", 1, 1, None)]);
        assert!(!table.contains("| x |"), "{table}");
        assert!(table.contains("not run by the baseline: 2."), "{table}");
    }

    #[test]
    fn the_loop_targets_compare_the_16x_buffer_with_the_1x_buffer() {
        let rows = [
            loop_row(loops::DECODE, 4, 1, Some(1)),
            loop_row(loops::DECODE_16X, 4, 3, Some(1)),
            loop_row(loops::EMPTY, 1, 6, None),
        ];
        let lines = targets(&rows);
        let find = |start: &str| lines.iter().find(|l| l.starts_with(start)).cloned();
        assert_eq!(
            find("Loop decode").unwrap(),
            "Loop decode one-shot within 2× of onnxruntime per run: met on all 2 rows"
        );
        assert_eq!(
            find("Loop per-iteration").unwrap(),
            "Loop per-iteration overhead of an empty body (one-shot, 1000 iterations) within 5× of onnxruntime's: met on 0 of 1 rows (misses: loop_empty_body_1000_iters 6.00×)"
        );
        assert_eq!(
            find("in-place").unwrap(),
            "in-place Loop: owned time of the 16× buffer row (loop_decode_256_steps_4096x512_buf) over the 1× buffer row (loop_decode_256_steps_256x512_buf) ≤ 1.5: 1.00× (1.00 ms vs 1.00 ms; copied at each step it would be about 16×): met"
        );
        let copied = [
            loop_row(loops::DECODE, 4, 1, Some(1)),
            loop_row(loops::DECODE_16X, 4, 16, Some(16)),
        ];
        let line = find_in(&targets(&copied), "in-place");
        assert!(
            line.contains("≤ 1.5: 16.00× (") && line.ends_with(": missed"),
            "{line}"
        );
        let no_owned = [loop_row(loops::DECODE, 4, 1, None)];
        assert!(
            find_in(&targets(&no_owned), "in-place")
                .ends_with("n/a (both decode rows' owned mode not measured)")
        );
        assert!(targets(&[row()]).iter().all(|l| !l.contains("Loop")));
    }

    fn find_in(lines: &[String], start: &str) -> String {
        lines.iter().find(|l| l.starts_with(start)).unwrap().clone()
    }

    #[test]
    fn targets_name_every_miss_with_its_ratio() {
        let lines = targets(&[row()]);
        assert_eq!(
            lines[..2],
            [
                "one-shot `run` with kept inputs ≤ onnxruntime: met on all 1 rows",
                "copy-bound one-shot within 1.3× of the warm copy: met on all 1 rows",
            ]
        );
        let mut slow = row();
        slow.plugin[0] = measured(6, 100, 32);
        let lines = targets(&[slow, row()]);
        assert_eq!(
            lines[..2],
            [
                "one-shot `run` with kept inputs ≤ onnxruntime: met on 1 of 2 rows (misses: snd_kv_cache 1.20×)",
                "copy-bound one-shot within 1.3× of the warm copy: met on 1 of 2 rows (misses: snd_kv_cache 1.50×)",
            ]
        );
    }

    #[test]
    fn gradient_rows_leave_the_time_table_for_their_own() {
        let mut grad = row();
        grad.name = "snd_kv_cache_grad".into();
        grad.gradient = true;
        grad.ort = None;
        grad.torch = Some(TorchGrad {
            backward: Duration::from_millis(4),
            forward_backward: Duration::from_millis(9),
            aliased: false,
        });
        grad.not_measured = vec![
            ("stock one-shot".into(), "unknown op".into()),
            ("stock persistent".into(), "unknown op".into()),
        ];
        let rows = [row(), grad];
        assert!(!time_table(&rows).contains("_grad"));
        let table = gradient_table(&rows).unwrap();
        assert!(
            table.contains("| snd_kv_cache_grad | 33.6 MB | 4.00 ms | 5.00 ms | 4.00 ms | 9.00 ms | 4.00 ms | 1.25× | 1.00× |"),
            "{table}"
        );
        assert!(
            table
                .contains("- snd_kv_cache_grad stock one-shot, stock persistent: n/a (unknown op)"),
            "{table}"
        );
        assert!(gradient_table(&rows[..1]).is_none());
        let line = targets(&rows)
            .into_iter()
            .find(|l| l.starts_with("gradient"))
            .unwrap();
        assert_eq!(
            line,
            "gradient (plugin one-shot) no slower than PyTorch's backward: met on 0 of 1 rows (misses: snd_kv_cache_grad 1.25×)"
        );
    }

    #[test]
    fn an_export_pair_is_judged_on_one_shot_and_owned_paired_round_by_round() {
        let ms = |v: &[u64]| v.iter().map(|&x| Duration::from_millis(x)).collect();
        let pair = |one_shot: [&[u64]; 2], persistent: [&[u64]; 2], owned: [&[u64]; 2]| {
            let mut rows = [row(), row()];
            for (i, (r, name)) in rows
                .iter_mut()
                .zip(["h_dynamo", "h_torchscript"])
                .enumerate()
            {
                r.name = name.into();
                r.rounds.plugin = [ms(one_shot[i]), ms(persistent[i]), ms(owned[i])];
                r.plugin = [measured(5, 1, 0), measured(5, 1, 0), measured(5, 1, 0)];
            }
            export_ratios(&rows, "h", 1.2).unwrap()
        };
        // The machine slows down in round 2 for both: paired, 1.00×.
        let line = pair(
            [&[10, 30, 10], &[10, 30, 10]],
            [&[20, 20, 20], &[10, 10, 10]],
            [&[11, 33, 11], &[10, 30, 10]],
        );
        assert!(
            line.contains("one-shot 1.00×, persistent 2.00×, owned 1.10×"),
            "{line}"
        );
        // Persistent is shown, not judged.
        assert!(line.ends_with("(one-shot and owned): met"), "{line}");
        let line = pair(
            [&[10, 30, 10], &[10, 30, 10]],
            [&[10, 10, 10], &[10, 10, 10]],
            [&[13, 39, 13], &[10, 30, 10]],
        );
        assert!(line.ends_with("(one-shot and owned): missed"), "{line}");
        assert!(export_ratios(&[row()], "h", 1.2).is_none());
    }

    #[test]
    fn rss_over_one_output_per_scatter_node_plus_slack_is_a_miss() {
        let mut r = row();
        assert!(
            targets(&[r.clone()])
                .last()
                .unwrap()
                .contains("met on all 2")
        );
        r.plugin[0] = measured(5, 140, 32);
        let last = targets(&[r]).last().unwrap().clone();
        assert!(
            last.contains("missed on snd_kv_cache one-shot +77.6 MB"),
            "{last}"
        );
    }

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    /// A threaded random-index row measured in three rounds: the plugin
    /// halves at 2 threads in every round while the machine drifts.
    fn threaded_row() -> Row {
        let mut r = row();
        r.name = "se_max_dense_axis0".into();
        r.copy_bound = false;
        r.threaded = true;
        r.plugin_threads = measured(3, 100, 32);
        r.ort_threads = Some(ms(4));
        r.floor = Some(ms(2));
        r.floor_threads = Some(ms(2));
        r.rounds.plugin[0] = vec![ms(6), ms(5), ms(12)];
        r.rounds.plugin_threads = vec![ms(3), ms(3), ms(6)];
        r.rounds.ort = vec![ms(5), ms(5), ms(10)];
        r.rounds.ort_threads = vec![ms(4), ms(4), ms(8)];
        r.rounds.warm_copy = vec![ms(2), ms(2), ms(4)];
        r.rounds.warm_copy_threads = vec![ms(1), ms(2), ms(3)];
        r.rounds.floor = vec![ms(2), ms(2), ms(4)];
        r.rounds.floor_threads = vec![ms(2), ms(1), ms(3)];
        r
    }

    fn gnn_row() -> Row {
        let mut r = threaded_row();
        r.name = "gnn_painn".into();
        r.gnn = true;
        r.torch_gnn = Some(TorchGnn {
            index_add: [Some(ms(6)), Some(ms(2))],
            scatter_add: [Some(ms(8)), None],
        });
        r
    }

    fn fresh_row() -> Row {
        let mut r = row();
        r.name = "snd_kv_fresh".into();
        r.fresh_each_call = true;
        r.plugin = [None, None, measured(2, 100, 32)];
        r.stock = [None, None, measured(1, 66, 0)];
        r.rounds.plugin[2] = vec![ms(2), ms(2), ms(3)];
        r.rounds.stock[2] = vec![ms(2), ms(1), ms(2)];
        r
    }

    #[test]
    fn a_fresh_cache_row_is_judged_against_stock_not_by_the_owned_kv_write_line() {
        let mut fed_back = row();
        fed_back.plugin[2] = Some(Measured {
            median: Duration::from_micros(2),
            ..measured(0, 100, 32).unwrap()
        });
        let lines = targets(&[fed_back, fresh_row()]);
        let kv = lines
            .iter()
            .find(|l| l.starts_with("owned KV write"))
            .unwrap();
        assert_eq!(kv, "owned KV write < 0.1 ms: snd_kv_cache 2.00 µs (met)");
    }

    #[test]
    fn the_threads_table_shows_both_thread_counts_their_scaling_and_the_floor() {
        let rows = [row(), threaded_row()];
        insta::assert_snapshot!(threads_table(&rows).unwrap());
        assert!(threads_table(&rows[..1]).is_none(), "no threaded row");
    }

    #[test]
    fn the_gnn_table_compares_the_plugin_with_ort_and_pytorch_at_each_thread_count() {
        let rows = [threaded_row(), gnn_row()];
        insta::assert_snapshot!(gnn_table(&rows).unwrap());
        assert!(gnn_table(&rows[..1]).is_none(), "no GNN row");
    }

    #[test]
    fn a_new_indices_row_is_judged_against_onnxruntime_in_its_owned_mode() {
        let mut r = row();
        r.name = "snd_elems_new_indices".into();
        r.new_indices_each_call = true;
        r.plugin = [None, None, measured(3, 100, 0)];
        r.stock = [None, None, measured(12, 100, 0)];
        r.ort = Some(ms(4));
        r.rounds.plugin[2] = vec![ms(3), ms(3), ms(5)];
        r.rounds.stock[2] = vec![ms(12), ms(11), ms(13)];
        r.rounds.ort = vec![ms(4), ms(4), ms(4)];
        let lines = thread_targets(&[r.clone()]);
        insta::assert_snapshot!(lines.join("\n"));
        r.rounds.plugin[2] = vec![ms(5), ms(5), ms(5)];
        assert!(thread_targets(&[r])[0].contains("(missed)"));
    }

    #[test]
    fn thread_targets_give_one_verdict_per_threaded_gnn_and_fresh_row() {
        let mut unmeasured = gnn_row();
        unmeasured.name = "gnn_large".into();
        unmeasured.torch_gnn = None;
        unmeasured.ort_threads = None;
        unmeasured.rounds.ort_threads.clear();
        insta::assert_snapshot!(
            thread_targets(&[row(), threaded_row(), gnn_row(), unmeasured, fresh_row()]).join("\n")
        );
    }
}

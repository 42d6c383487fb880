//! The results table: medians and ratios, with geomeans.

use std::fmt::Write;
use std::time::Duration;

use crate::timing::human;

/// Medians of one workload; `None` when not measured or failed.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub name: String,
    pub data_bytes: usize,
    pub copy_bound: bool,
    /// A PyTorch-exported model ([`crate::exported`]): listed, but left out
    /// of the geomeans (they keep summarizing the scatter workloads and
    /// GTCRN, whose targets they state).
    pub exported: bool,
    pub memcpy: Option<Duration>,
    /// A copy of data into a freshly allocated buffer (`to_vec`): the
    /// floor of an op that returns a new tensor.
    pub alloc_copy: Option<Duration>,
    pub plugin_exclusive: Option<Duration>,
    pub plugin_shared: Option<Duration>,
    pub stock_shared: Option<Duration>,
    pub ort: Option<Duration>,
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

fn rcell(r: Option<f64>) -> String {
    match r {
        Some(r) if r >= 100.0 => format!("{r:.0}×"),
        Some(r) if r >= 0.01 => format!("{r:.2}×"),
        Some(r) => format!("{r:.1e}×"),
        None => "n/a".into(),
    }
}

type RatioFn = fn(&Row) -> Option<f64>;

const RATIOS: [(&str, RatioFn); 6] = [
    ("excl/ort", |r| ratio(r.plugin_exclusive, r.ort)),
    ("shared/ort", |r| ratio(r.plugin_shared, r.ort)),
    ("shared/stock", |r| ratio(r.plugin_shared, r.stock_shared)),
    ("shared/memcpy", |r| ratio(r.plugin_shared, r.memcpy)),
    ("excl/memcpy", |r| ratio(r.plugin_exclusive, r.memcpy)),
    ("shared/fresh copy", |r| {
        ratio(r.plugin_shared, r.alloc_copy)
    }),
];

/// A markdown table of medians and ratios, then a geomean row (geomean
/// over the workloads where both sides were measured, exported models left
/// out, no row when only those are listed; `shared/memcpy` over the
/// copy-bound workloads only, marked `*`).
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "| workload | data | memcpy | fresh copy | plugin excl | plugin shared | stock tract | ort 1-thread | {} |",
        RATIOS.map(|r| r.0).join(" | ")
    );
    let _ = writeln!(s, "|{}", "---|".repeat(8 + RATIOS.len()));
    for r in rows {
        let name = if r.copy_bound {
            format!("{}*", r.name)
        } else {
            r.name.clone()
        };
        let _ = writeln!(
            s,
            "| {name} | {:.1} MB | {} | {} | {} | {} | {} | {} | {} |",
            r.data_bytes as f64 / 1e6,
            cell(r.memcpy),
            cell(r.alloc_copy),
            cell(r.plugin_exclusive),
            cell(r.plugin_shared),
            cell(r.stock_shared),
            cell(r.ort),
            RATIOS.map(|(_, f)| rcell(f(r))).join(" | ")
        );
    }
    let summarized = || rows.iter().filter(|r| !r.exported);
    let means = RATIOS.map(|(label, f)| {
        if label.ends_with("memcpy") || label.ends_with("copy") {
            rcell(geomean(summarized().filter(|r| r.copy_bound).map(f)))
        } else {
            rcell(geomean(summarized().map(f)))
        }
    });
    if summarized().next().is_some() {
        let _ = writeln!(
            s,
            "| **geomean** | | | | | | | | {} |",
            means.map(|m| format!("**{m}**")).join(" | ")
        );
    }
    s
}

type ModeFn = fn(&Row) -> Option<Duration>;

/// The timed columns, plugin modes first.
const MODES: [(&str, ModeFn); 4] = [
    ("excl", |r| r.plugin_exclusive),
    ("shared", |r| r.plugin_shared),
    ("stock", |r| r.stock_shared),
    ("ort", |r| r.ort),
];

/// `kv_step dynamo/TorchScript: excl 1.02×, shared 0.98×, stock n/a,
/// ort 1.01× (target ≤ 2× in the plugin modes: met)` for the rows
/// `<stem>_dynamo` and `<stem>_torchscript`; `None` when neither is in
/// `rows`. The target is met when every plugin mode measured on both
/// rows is within `target`.
pub fn export_ratios(rows: &[Row], stem: &str, target: f64) -> Option<String> {
    let find = |export: &str| rows.iter().find(|r| r.name == format!("{stem}_{export}"));
    let (dynamo, torchscript) = (find("dynamo"), find("torchscript"));
    if dynamo.is_none() && torchscript.is_none() {
        return None;
    }
    let ratios = MODES.map(|(label, f)| {
        let r = ratio(dynamo.and_then(f), torchscript.and_then(f));
        (label, r)
    });
    let plugin: Vec<f64> = ratios[..2].iter().filter_map(|(_, r)| *r).collect();
    let verdict = match plugin.iter().copied().reduce(f64::max) {
        None => "n/a",
        Some(worst) if worst <= target => "met",
        Some(_) => "missed",
    };
    Some(format!(
        "{stem} dynamo/TorchScript: {} (target ≤ {target}× in the plugin modes: {verdict})",
        ratios
            .map(|(label, r)| format!("{label} {}", rcell(r)))
            .join(", ")
    ))
}

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
/// over the workloads where both sides were measured; `shared/memcpy` over
/// the copy-bound workloads only, marked `*`).
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
    let means = RATIOS.map(|(label, f)| {
        if label.ends_with("memcpy") || label.ends_with("copy") {
            rcell(geomean(rows.iter().filter(|r| r.copy_bound).map(f)))
        } else {
            rcell(geomean(rows.iter().map(f)))
        }
    });
    let _ = writeln!(
        s,
        "| **geomean** | | | | | | | | {} |",
        means.map(|m| format!("**{m}**")).join(" | ")
    );
    s
}

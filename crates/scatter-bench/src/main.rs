//! `scatter-bench`: times every workload with the plugin (data exclusive
//! and shared), stock tract, a warm memcpy of data and onnxruntime, then
//! the real GTCRN model per streaming frame (`gtcrn_frame`: plugin, stock
//! tract, onnxruntime; no memcpy), then the PyTorch-exported models
//! (`kv_step_*`, `yolo_head_*`: the same rows, exclusive for the KV step
//! only), and prints a markdown table with a dynamo/TorchScript ratio line
//! per exported pair. `--filter piper` adds Piper's VITS voice per run
//! (`piper_run`: plugin, stock, onnxruntime; fetched by `cargo xtask
//! conformance --filter piper`). Run through `cargo xtask bench` (release).
//!
//! Options: `--filter SUBSTRING`, `--budget-ms N` (per measurement),
//! `--python PATH`, `--no-ort`, `--no-stock`, `--output FILE`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use scatter_bench::exported::{self, Exported, ModelRunner};
use scatter_bench::gtcrn::{self, Gtcrn, GtcrnRunner};
use scatter_bench::piper::{self, Piper};
use scatter_bench::report::{Row, export_ratios, markdown};
use scatter_bench::timing::{Budget, human, measure};
use scatter_bench::{Runner, Workload, memcpy, ort, workloads};
use tract_onnx_scatter::tract_onnx;
use tract_onnx_scatter::tract_onnx::prelude::TractResult;

struct Options {
    filter: Option<String>,
    budget: Budget,
    python: Option<PathBuf>,
    ort: bool,
    stock: bool,
    output: Option<PathBuf>,
}

fn options() -> Result<Options> {
    let mut o = Options {
        filter: None,
        budget: Budget::default(),
        python: None,
        ort: true,
        stock: true,
        output: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--filter" => o.filter = Some(value()?),
            "--budget-ms" => o.budget.time = Duration::from_millis(value()?.parse()?),
            "--python" => o.python = Some(value()?.into()),
            "--output" => o.output = Some(value()?.into()),
            "--no-ort" => o.ort = false,
            "--no-stock" => o.stock = false,
            // `cargo bench` passes this to every target.
            "--bench" => {}
            other => bail!(
                "unknown option {other:?} (--filter S, --budget-ms N, --python PATH, --no-ort, \
                 --no-stock, --output FILE)"
            ),
        }
    }
    Ok(o)
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {cpu}")
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// A warm memcpy and a fresh copy (`to_vec`) of `data`.
fn measure_copies(row: &mut Row, data: &[f32], budget: Budget) -> Result<()> {
    let mut dst = vec![0f32; data.len()];
    row.memcpy = Some(
        measure(budget, || {
            memcpy(&mut dst, data);
            std::hint::black_box(&dst);
            Ok::<_, anyhow::Error>(())
        })?
        .median(),
    );
    drop(dst);
    row.alloc_copy = Some(
        measure(budget, || {
            std::hint::black_box(data.to_vec());
            Ok::<_, anyhow::Error>(())
        })?
        .median(),
    );
    Ok(())
}

type RunFn<R> = fn(&mut R) -> TractResult<()>;

/// Times the runner `plan` builds into `row`: with the plugin, `shared`
/// then `exclusive` (when given); with stock tract, `shared` (reported and
/// left `None` when stock tract cannot plan or run it).
fn measure_engines<R>(
    mut row: Row,
    o: &Options,
    plan: impl Fn(&tract_onnx::Onnx) -> TractResult<R>,
    shared: RunFn<R>,
    exclusive: Option<RunFn<R>>,
) -> Result<Row> {
    let budget = o.budget;
    let mut runner = plan(&tract_onnx_scatter::onnx()).context("planning with the plugin")?;
    row.plugin_shared = Some(measure(budget, || shared(&mut runner))?.median());
    if let Some(exclusive) = exclusive {
        row.plugin_exclusive = Some(measure(budget, || exclusive(&mut runner))?.median());
    }
    drop(runner);

    if o.stock {
        match plan(&tract_onnx::onnx()) {
            Ok(mut runner) => {
                // Stock tract can be very slow: fewer samples suffice.
                let b = Budget {
                    min_iters: 3,
                    ..budget
                };
                match measure(b, || shared(&mut runner)) {
                    Ok(s) => row.stock_shared = Some(s.median()),
                    Err(e) => eprintln!("  stock tract failed on {}: {e:#}", row.name),
                }
            }
            Err(e) => eprintln!("  stock tract cannot plan {}: {e:#}", row.name),
        }
    }
    Ok(row)
}

/// Times the plugin, stock tract and memcpy on `w`.
fn measure_tract(w: &Workload, o: &Options) -> Result<Row> {
    let mut row = Row {
        name: w.name.into(),
        data_bytes: w.data_bytes(),
        copy_bound: w.copy_bound,
        ..Row::default()
    };
    measure_copies(&mut row, &w.data, o.budget)?;
    measure_engines(
        row,
        o,
        |onnx| Runner::new(w, onnx),
        |r| r.run_shared().map(drop),
        Some(Runner::run_exclusive),
    )
}

/// Times GTCRN per frame: the plugin with the caches moved in (exclusive)
/// and kept by the caller (shared), stock tract shared. The caches are fed
/// back frame after frame in every mode.
fn measure_gtcrn(g: &Gtcrn, o: &Options) -> Result<Row> {
    let row = Row {
        name: gtcrn::NAME.into(),
        data_bytes: g.input_bytes(),
        ..Row::default()
    };
    measure_engines(
        row,
        o,
        |onnx| GtcrnRunner::new(g, onnx),
        GtcrnRunner::run_shared,
        Some(GtcrnRunner::run_exclusive),
    )
}

/// Times an exported model: memcpy of its data input, the plugin with the
/// inputs kept by the caller (shared: nothing fed back, outputs dropped)
/// and, for the KV step, the cache moved in and the output fed back as the
/// next cache (exclusive); stock tract shared.
fn measure_exported(e: &Exported, o: &Options) -> Result<Row> {
    let data = e.data()?;
    let mut row = Row {
        name: e.name.into(),
        data_bytes: std::mem::size_of_val(data),
        exported: true,
        ..Row::default()
    };
    measure_copies(&mut row, data, o.budget)?;
    measure_engines(
        row,
        o,
        |onnx| e.runner(onnx),
        |r| r.run_shared().map(drop),
        e.feeds_back
            .then_some(ModelRunner::run_exclusive as RunFn<ModelRunner>),
    )
}

/// Times Piper per run (inputs kept by the caller), plugin and stock; stock
/// cannot type it, which the row shows as n/a.
fn measure_piper(p: &Piper, o: &Options) -> Result<Row> {
    let row = Row {
        name: piper::NAME.into(),
        data_bytes: p.input_bytes(),
        exported: true,
        ..Row::default()
    };
    measure_engines(
        row,
        o,
        |onnx| p.runner(onnx),
        |r| r.run_shared().map(drop),
        None,
    )
}

fn report(row: &Row) {
    eprintln!(
        "  memcpy {}  plugin excl {}  plugin shared {}  stock {}",
        row.memcpy.map_or("n/a".into(), human),
        row.plugin_exclusive.map_or("n/a".into(), human),
        row.plugin_shared.map_or("n/a".into(), human),
        row.stock_shared.map_or("n/a".into(), human),
    );
}

fn main() -> Result<()> {
    let o = options()?;
    let started = Instant::now();
    if cfg!(debug_assertions) {
        eprintln!("warning: scatter-bench built without optimizations; numbers are meaningless");
    }
    let machine = machine();
    let load_before = load();
    eprintln!("machine: {machine}; load average before: {load_before}");

    let selected = |n: &str| o.filter.as_deref().is_none_or(|f| n.contains(f));
    let with_gtcrn = selected(gtcrn::NAME);
    // Piper is a 63 MB model fetched on demand: only when asked for by name.
    let with_piper = o.filter.as_deref().is_some_and(|f| piper::NAME.contains(f));
    let exported_names: Vec<&str> = exported::NAMES
        .into_iter()
        .filter(|n| selected(n))
        .collect();
    if !with_gtcrn
        && !with_piper
        && exported_names.is_empty()
        && !scatter_bench::NAMES.into_iter().any(selected)
    {
        bail!("no workload matches {:?}", o.filter);
    }

    let python = if o.ort {
        match ort::find_python(o.python.as_deref()) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("onnxruntime column skipped: {e:#}");
                None
            }
        }
    } else {
        None
    };
    let ort_dir = std::env::temp_dir().join(format!("scatter-bench-{}", std::process::id()));

    let mut rows = vec![];
    for w in workloads(o.filter.as_deref()) {
        eprintln!("{}: measuring tract...", w.name);
        let row = measure_tract(&w, &o).with_context(|| w.name)?;
        report(&row);
        if python.is_some() {
            ort::write_workload(&ort_dir, &w)?;
        }
        rows.push(row);
    }
    if with_gtcrn {
        eprintln!("{}: measuring tract...", gtcrn::NAME);
        let g = Gtcrn::load().context("loading GTCRN")?;
        let row = measure_gtcrn(&g, &o).context(gtcrn::NAME)?;
        report(&row);
        if python.is_some() {
            ort::write_model(&ort_dir, gtcrn::NAME, &g.model, &g.inputs, &g.feedback())?;
        }
        rows.push(row);
    }
    for name in exported_names {
        eprintln!("{name}: measuring tract...");
        let e = Exported::load(name).with_context(|| format!("loading {name}"))?;
        let row = measure_exported(&e, &o).context(name)?;
        report(&row);
        if python.is_some() {
            ort::write_model(&ort_dir, name, &e.model, &e.inputs, &e.feedback())?;
        }
        rows.push(row);
    }

    if with_piper {
        eprintln!("{}: measuring tract...", piper::NAME);
        let p = Piper::load()?;
        let row = measure_piper(&p, &o).context(piper::NAME)?;
        report(&row);
        if python.is_some() {
            ort::write_model(&ort_dir, piper::NAME, &p.model, &p.inputs, &[])?;
        }
        rows.push(row);
    }

    let mut ort_version = None;
    if let Some(python) = &python {
        eprintln!("onnxruntime: timing {} workloads...", rows.len());
        match ort::run(python, &ort_dir, o.budget) {
            Ok(medians) => {
                for row in &mut rows {
                    row.ort = medians.get(&row.name).copied();
                }
                ort_version = ort::version(python).ok();
            }
            Err(e) => eprintln!("onnxruntime column skipped: {e:#}"),
        }
        let _ = std::fs::remove_dir_all(&ort_dir);
    }

    let load_after = load();
    let mut out = markdown(&rows);
    out.push_str(&format!(
        "\nmachine: {machine}; load average (1/5/15 min) before: {load_before}, after: {load_after}; \
         onnxruntime: {}; total {:.0} s.\n\
         `*` copy-bound workload (the geomeans of the /memcpy and /fresh copy ratios are over these). \
         memcpy: data into a warm buffer; fresh copy: data into a newly allocated one (`to_vec`). \
         gtcrn_frame: one GTCRN frame, caches fed back (data: all its inputs); \
         ts_kv_decode: TensorScatter, which stock tract lacks. \
         kv_step_*, yolo_head_*: models of PyTorch's TorchScript and dynamo exporters \
         (data: the cache / x input; not in the geomeans); piper_run: Piper's VITS voice per \
         run, 13 phonemes (only with --filter piper).\n",
        ort_version.as_deref().unwrap_or("not run"),
        started.elapsed().as_secs_f64()
    ));
    for (stem, target) in exported::PAIRS {
        if let Some(line) = export_ratios(&rows, stem, target) {
            out.push_str(&format!("{line}.\n"));
        }
    }
    print!("{out}");
    if let Some(path) = &o.output {
        std::fs::write(path, &out).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

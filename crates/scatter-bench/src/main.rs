//! `scatter-bench`: times every case in every calling mode (one-shot `run` and persistent state
//! with the inputs kept by the caller, owned inputs) with the plugin and with stock tract, each
//! (engine, mode) in a process of its own for its peak RSS; then a warm and a fresh copy of
//! data, and onnxruntime (1 thread, io binding); the gradient rows against PyTorch autograd's
//! backward (1 thread) when a Python with torch is found. Threaded rows (large copy-bound,
//! random-index and GNN) also time the plugin's one-shot with tract's executor of [`THREADS`]
//! threads and onnxruntime at [`THREADS`] intra-op threads; random-index rows their floor (a
//! pseudo-engine [`child::FLOOR`] of the rounds, at both thread counts for a threaded row); GNN
//! rows PyTorch's `index_add_`/`scatter_add_` at 1 and [`THREADS`] threads. Prints the time,
//! threads, GNN, gradient and peak-RSS tables, one line per target and a dynamo/TorchScript
//! ratio line per exported pair. `--filter piper` adds Piper's VITS voice per run (fetched by
//! `cargo xtask conformance --filter piper`). Run through `cargo xtask bench` (release); its
//! options are on [`Options`].

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use scatter_bench::case::Case;
use scatter_bench::case::Ownership;
use scatter_bench::child::{self, BASELINE, ChildRounds, ENGINES, FLOOR, Measured, Program};
use scatter_bench::ort::OrtRounds;
use scatter_bench::report::{
    Row, baseline_table, bfloat16_ratios, export_ratios, gnn_table, gradient_table, rss_table,
    targets, thread_targets, threads_table, time_table,
};
use scatter_bench::runner::Mode;
use scatter_bench::timing::{Budget, human, measure};
use scatter_bench::{THREADS, case_names, exported, grads, memcpy, ort, recurrent, workloads};

/// The command line: `--filter S[,S...]` (substrings; `name$` matches the end),
/// `--budget-ms N` (per measurement), `--python PATH`, `--no-ort`, `--torch-python PATH`,
/// `--no-torch`, `--no-stock`, `--output FILE`, `--pool-capacity N` (every output pool's
/// capacity, default 1), `--huge-page-inputs` (the caller's large inputs on huge pages, as
/// numpy's for onnxruntime); `--child NAME ENGINE MODE [--threads N]` is the
/// per-measurement process ([`scatter_bench::child`]).
struct Options {
    filter: Option<String>,
    budget: Budget,
    python: Option<PathBuf>,
    ort: bool,
    torch_python: Option<PathBuf>,
    torch: bool,
    stock: bool,
    output: Option<PathBuf>,
    child: Option<[String; 3]>,
    /// Passed on to every child.
    settings: child::Settings,
    /// `--baseline EXE` and `--baseline-env NAME=VALUE[,...]`: the
    /// plugin's series again, run by this program, in the same rounds.
    baseline: Option<Program>,
}

fn options() -> Result<Options> {
    let mut o = Options {
        filter: None,
        budget: Budget::default(),
        python: None,
        ort: true,
        torch_python: None,
        torch: true,
        stock: true,
        output: None,
        child: None,
        settings: child::Settings::default(),
        baseline: None,
    };
    let mut baseline_exe: Option<PathBuf> = None;
    let mut baseline_env: Vec<(String, String)> = vec![];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--filter" => o.filter = Some(value()?),
            "--budget-ms" => o.budget.time = Duration::from_millis(value()?.parse()?),
            "--python" => o.python = Some(value()?.into()),
            "--output" => o.output = Some(value()?.into()),
            "--no-ort" => o.ort = false,
            "--torch-python" => o.torch_python = Some(value()?.into()),
            "--no-torch" => o.torch = false,
            "--no-stock" => o.stock = false,
            "--child" => o.child = Some([value()?, value()?, value()?]),
            "--pool-capacity" => o.settings.pool_capacity = Some(value()?.parse()?),
            "--huge-page-inputs" => o.settings.huge_page_inputs = true,
            "--threads" => o.settings.threads = value()?.parse()?,
            "--baseline" => baseline_exe = Some(value()?.into()),
            "--baseline-env" => {
                for pair in value()?.split(',') {
                    let Some((name, value)) = pair.split_once('=') else {
                        bail!("--baseline-env takes NAME=VALUE[,NAME=VALUE...], got {pair:?}");
                    };
                    baseline_env.push((name.into(), value.into()));
                }
            }
            // `cargo bench` passes this to every target.
            "--bench" => {}
            other => bail!(
                "unknown option {other:?} (--filter S[,S...], --budget-ms N, --python PATH, --no-ort, \
                 --torch-python PATH, --no-torch, --no-stock, --output FILE, --pool-capacity N, \
                 --huge-page-inputs, --baseline EXE, --baseline-env NAME=VALUE[,...])"
            ),
        }
    }
    if baseline_exe.is_some() || !baseline_env.is_empty() {
        let exe = match baseline_exe {
            Some(exe) => exe,
            None => std::env::current_exe().context("locating scatter-bench for the baseline")?,
        };
        o.baseline = Some(Program {
            exe,
            env: baseline_env,
        });
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
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    // glibc's malloc thresholds decide whether a call's large tensors are
    // reused heap or fresh pages (docs/performance.md, exported models); a run that
    // pinned them says so. Every child and onnxruntime inherit it.
    let malloc = match std::env::var("GLIBC_TUNABLES") {
        Ok(tunables) => format!(", GLIBC_TUNABLES={tunables}"),
        Err(_) => String::new(),
    };
    format!("{cores} cores, {cpu}, transparent huge pages {thp}{malloc}")
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

/// Rounds per row. A round times every (engine, mode) and onnxruntime
/// once, one after the other (the order rotating from round to round), in
/// processes kept alive across rounds; each gets a fifth of the budget.
/// The machine's speed drifts by tens of percent over minutes (see
/// docs/performance.md, "Why the mechanisms exist"): ratios are taken within
/// each round ([`scatter_bench::report::Rounds::paired`]), where the drift is shared.
const ROUNDS: u32 = 5;

/// What one round asks of: an (engine, mode) child, or onnxruntime, at a
/// thread count.
enum Series {
    Child {
        engine: &'static str,
        mode: Mode,
        threads: usize,
        rounds: ChildRounds,
    },
    Ort {
        threads: usize,
        /// The case as [`ort::write_case`] wrote it.
        dir: PathBuf,
    },
}

/// The onnxruntime servers: 1 thread, and [`THREADS`] for the threaded
/// rows.
struct OrtServers {
    one: OrtRounds,
    threads: Option<OrtRounds>,
}

/// `plugin one-shot`, `plugin one-shot 2 threads`: what the notes and
/// progress lines call a child's series.
fn series_name(engine: &str, mode: Mode, threads: usize) -> String {
    match (engine, threads) {
        (FLOOR, 1) => FLOOR.into(),
        (FLOOR, _) => format!("{FLOOR} {threads} threads"),
        (_, 1) => format!("{engine} {}", mode.name()),
        _ => format!("{engine} {} {threads} threads", mode.name()),
    }
}

/// A child of `engine` (the baseline's: the plugin run by the baseline
/// program) for `case`.
fn start(
    program: &Program,
    o: &Options,
    case: &str,
    engine: &str,
    mode: Mode,
    settings: child::Settings,
) -> Result<ChildRounds> {
    match (&o.baseline, engine) {
        (Some(baseline), BASELINE) => ChildRounds::start(baseline, case, "plugin", mode, settings),
        _ => ChildRounds::start(program, case, engine, mode, settings),
    }
}

/// A started child as a series, or why it is n/a (it failed to plan:
/// stock tract lacks an op).
fn push_child(
    series: &mut Vec<(usize, Option<Series>)>,
    c: usize,
    row: &mut Row,
    engine: &'static str,
    mode: Mode,
    threads: usize,
    started: Result<ChildRounds>,
) {
    match started {
        Ok(rounds) => series.push((
            c,
            Some(Series::Child {
                engine,
                mode,
                threads,
                rounds,
            }),
        )),
        Err(err) => {
            let what = series_name(engine, mode, threads);
            eprintln!("  {}: {what}: n/a ({err:#})", row.name);
            row.not_measured.push((what, format!("{err:#}")));
        }
    }
}

/// Every (engine, mode) of each case and, for a case with an onnxruntime
/// directory ([`ort::write_case`]) and `ort` the servers, onnxruntime, in
/// [`ROUNDS`] paired rounds. Several cases (an exported pair,
/// [`exported::twin`]) share their rounds: round `i` of each of their
/// series is timed within seconds of the others', so ratios between the
/// cases are paired too.
fn measure_cases(
    cases: &[(Case, Option<PathBuf>)],
    o: &Options,
    program: &Program,
    mut ort: Option<&mut OrtServers>,
) -> Result<Vec<Row>> {
    let budget = Budget {
        time: o.budget.time / ROUNDS,
        ..o.budget
    };
    let mut rows = vec![];
    // (case index, series)
    let mut series: Vec<(usize, Option<Series>)> = vec![];
    for (c, (case, ort_dir)) in cases.iter().enumerate() {
        let mut row = Row {
            name: case.name.clone(),
            data_bytes: case.data_bytes(),
            copy_bound: case.copy_bound,
            summarized: case.summarized,
            gradient: case.gradient.is_some(),
            threaded: case.extras.threaded,
            gnn: case.extras.gnn,
            fresh_each_call: case.extras.fresh_each_call,
            new_indices_each_call: case.extras.new_indices_each_call,
            ..Row::default()
        };
        if let Some(data) = case.copy_floor_data()? {
            measure_copies(&mut row, data, o.budget)?;
        }
        // A row repeating another in its other calling modes.
        let owned_only = if case.extras.fresh_each_call {
            Some("owned mode only: the other modes are snd_kv_cache's")
        } else if case.extras.new_indices_each_call {
            Some("owned mode only: the modes whose indices come back are another row's")
        } else {
            None
        };
        let engines = ENGINES
            .into_iter()
            .filter(|e| *e != "stock" || o.stock)
            .chain(o.baseline.is_some().then_some(BASELINE));
        for engine in engines {
            for mode in Mode::ALL {
                if mode == Mode::Owned && case.ownership == Ownership::None {
                    row.not_measured.push((
                        format!("{engine} owned"),
                        "no owned mode: the case moves no input in".into(),
                    ));
                    continue;
                }
                if mode != Mode::Owned
                    && let Some(why) = owned_only
                {
                    row.not_measured
                        .push((format!("{engine} {}", mode.name()), why.into()));
                    continue;
                }
                let started = start(program, o, &case.name, engine, mode, o.settings);
                push_child(&mut series, c, &mut row, engine, mode, 1, started);
            }
        }
        let threaded = child::Settings {
            threads: THREADS,
            ..o.settings
        };
        if case.extras.threaded {
            let engines = std::iter::once("plugin").chain(o.baseline.is_some().then_some(BASELINE));
            for engine in engines {
                let started = start(program, o, &case.name, engine, Mode::OneShot, threaded);
                push_child(
                    &mut series,
                    c,
                    &mut row,
                    engine,
                    Mode::OneShot,
                    THREADS,
                    started,
                );
            }
        }
        // The floor in the rounds too, paired with the plugin's one-shot
        // at each thread count.
        if case.extras.floor {
            for (threads, settings) in [(1, o.settings), (THREADS, threaded)] {
                if threads > 1 && !case.extras.threaded {
                    continue;
                }
                let started = start(program, o, &case.name, FLOOR, Mode::OneShot, settings);
                push_child(
                    &mut series,
                    c,
                    &mut row,
                    FLOOR,
                    Mode::OneShot,
                    threads,
                    started,
                );
            }
        }
        // onnxruntime has no owned mode to compare a fresh cache's with.
        if let (Some(servers), Some(dir)) = (ort.as_ref(), ort_dir)
            && !case.extras.fresh_each_call
        {
            series.push((
                c,
                Some(Series::Ort {
                    threads: 1,
                    dir: dir.clone(),
                }),
            ));
            if case.extras.threaded && servers.threads.is_some() {
                series.push((
                    c,
                    Some(Series::Ort {
                        threads: THREADS,
                        dir: dir.clone(),
                    }),
                ));
            }
        }
        rows.push(row);
    }
    let mut measured: Vec<Vec<Measured>> = vec![vec![]; series.len()];
    for round in 0..ROUNDS as usize {
        for k in 0..series.len() {
            let i = (k + round) % series.len();
            let (c, entry) = &mut series[i];
            let result = match entry.as_mut() {
                None => continue,
                Some(Series::Child { rounds, .. }) => rounds.round(budget.time),
                Some(Series::Ort { threads, dir }) => {
                    let servers = ort.as_mut().expect("an Ort series has a server");
                    let server = match threads {
                        1 => Some(&mut servers.one),
                        _ => servers.threads.as_mut(),
                    };
                    server
                        .context("no onnxruntime server at this thread count")
                        .and_then(|server| server.round(dir, budget))
                        .map(|median| Measured {
                            median,
                            ..Measured::default()
                        })
                }
            };
            match result {
                Ok(m) => measured[i].push(m),
                Err(err) => {
                    let what = match entry {
                        Some(Series::Child {
                            engine,
                            mode,
                            threads,
                            ..
                        }) => series_name(engine, *mode, *threads),
                        _ => "onnxruntime".into(),
                    };
                    eprintln!("  {}: {what}: n/a ({err:#})", rows[*c].name);
                    rows[*c].not_measured.push((what, format!("{err:#}")));
                    // Dropping a child waits for it: its memory is freed.
                    *entry = None;
                    measured[i].clear();
                }
            }
        }
    }
    for ((c, s), rounds) in series.iter().zip(&measured) {
        let Some(combined) = Measured::combine(rounds) else {
            continue;
        };
        let row = &mut rows[*c];
        let medians: Vec<Duration> = rounds.iter().map(|m| m.median).collect();
        match s {
            Some(Series::Child {
                engine,
                mode,
                threads,
                ..
            }) => {
                eprintln!(
                    "  {}: {}: {} ({} calls in {ROUNDS} rounds, peak RSS {:.1} MB)",
                    row.name,
                    series_name(engine, *mode, *threads),
                    human(combined.median),
                    combined.calls,
                    combined.peak_rss.unwrap_or(0) as f64 / 1e6
                );
                if *engine == FLOOR {
                    if *threads > 1 {
                        row.floor_threads = Some(combined.median);
                        row.rounds.floor_threads = medians;
                    } else {
                        row.floor = Some(combined.median);
                        row.rounds.floor = medians;
                    }
                    continue;
                }
                if *engine == BASELINE {
                    if *threads > 1 {
                        row.baseline_threads = Some(combined);
                        row.rounds.baseline_threads = medians;
                    } else {
                        let m = Mode::ALL.iter().position(|x| x == mode).expect("in ALL");
                        row.baseline[m] = Some(combined);
                        row.rounds.baseline[m] = medians;
                    }
                    continue;
                }
                if *threads > 1 {
                    row.rounds.warm_copy_threads =
                        rounds.iter().filter_map(|m| m.warm_copy).collect();
                    row.plugin_threads = Some(combined);
                    row.rounds.plugin_threads = medians;
                    continue;
                }
                let m = Mode::ALL.iter().position(|x| x == mode).expect("in ALL");
                if *engine == "plugin" {
                    if *mode == Mode::OneShot && combined.warm_copy.is_some() {
                        row.memcpy = combined.warm_copy;
                        row.rounds.warm_copy = rounds.iter().filter_map(|m| m.warm_copy).collect();
                    }
                    row.plugin[m] = Some(combined);
                    row.rounds.plugin[m] = medians;
                } else {
                    row.stock[m] = Some(combined);
                    row.rounds.stock[m] = medians;
                }
            }
            Some(Series::Ort { threads, .. }) => {
                eprintln!(
                    "  {}: onnxruntime {threads} thread(s): {}",
                    row.name,
                    human(combined.median)
                );
                if *threads > 1 {
                    row.ort_threads = Some(combined.median);
                    row.rounds.ort_threads = medians;
                } else {
                    row.ort = Some(combined.median);
                    row.rounds.ort = medians;
                }
            }
            None => {}
        }
    }
    Ok(rows)
}

fn main() -> Result<()> {
    let o = options()?;
    if let Some([name, engine, mode]) = &o.child {
        // One line either way: the parent reads stdout, or stderr's last line.
        match child::serve(name, engine, mode, o.budget, o.settings) {
            Ok(()) => {}
            Err(e) => {
                eprintln!("{e:#}");
                std::process::exit(2);
            }
        }
        return Ok(());
    }
    let started = Instant::now();
    if cfg!(debug_assertions) {
        eprintln!("warning: scatter-bench built without optimizations; numbers are meaningless");
    }
    let machine = machine();
    let load_before = load();
    eprintln!("machine: {machine}; load average before: {load_before}");

    let names = case_names(o.filter.as_deref());
    if names.is_empty() {
        bail!("no case matches {:?}", o.filter);
    }
    let program = Program {
        exe: std::env::current_exe().context("locating scatter-bench for its children")?,
        env: vec![],
    };
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
    let torch_rows = |n: &&str| grads::NAMES.contains(n) || workloads::GNN.contains(n);
    let torch_python = if o.torch && names.iter().any(torch_rows) {
        match ort::find_torch_python(o.torch_python.as_deref(), o.python.as_deref()) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("PyTorch column skipped: {e:#}");
                None
            }
        }
    } else {
        None
    };
    let ort_dir = std::env::temp_dir().join(format!("scatter-bench-{}", std::process::id()));
    let torch_dir = ort_dir.join("torch");

    let threaded = names.iter().any(|n| workloads::THREADED.contains(n));
    let mut ort_rounds = match &python {
        Some(python) => match OrtRounds::start(python, 1) {
            Ok(one) => Some(OrtServers {
                one,
                threads: if threaded {
                    match OrtRounds::start(python, THREADS) {
                        Ok(server) => Some(server),
                        Err(e) => {
                            eprintln!("onnxruntime {THREADS}-thread column skipped: {e:#}");
                            None
                        }
                    }
                } else {
                    None
                },
            }),
            Err(e) => {
                eprintln!("onnxruntime column skipped: {e:#}");
                None
            }
        },
        None => None,
    };

    let mut rows = vec![];
    let mut done: Vec<&str> = vec![];
    for &name in &names {
        if done.contains(&name) {
            continue;
        }
        // An exported pair (or a recurrent Loop row and its op row) is
        // timed in shared rounds when both are asked for.
        let twin = exported::twin(name).or_else(|| recurrent::twin(name));
        // A bfloat16 row is timed with the float32 row it repeats, asked
        // for or not: its ratios over that row are what it is for.
        let float32_twin = workloads::float32_twin(name);
        let bfloat16_twin = workloads::bfloat16_twin(name).filter(|t| names.contains(t));
        let group: Vec<&str> = std::iter::once(name)
            .chain(twin.filter(|twin| names.contains(twin)))
            .chain(float32_twin.into_iter().chain(bfloat16_twin))
            .collect();
        done.extend(&group);
        eprintln!("{}:", group.join(" + "));
        let mut cases = vec![];
        for &name in &group {
            let case = scatter_bench::case(name).with_context(|| format!("loading {name}"))?;
            // onnxruntime cannot load the plugin's training domain: gradient
            // rows go to PyTorch instead (a directory bench_ort.py never reads).
            let ort_dir = if case.extras.bfloat16 {
                // onnxruntime's CPU scatter has no bfloat16 reduction.
                None
            } else if case.gradient.is_some() {
                if torch_python.is_some() {
                    ort::write_case(&torch_dir, &case)?;
                }
                None
            } else if ort_rounds.is_some() || (case.extras.gnn && torch_python.is_some()) {
                // GNN rows are written for PyTorch too (bench_torch_gnn.py).
                ort::write_case(&ort_dir, &case)?;
                ort_rounds.is_some().then(|| ort_dir.join(&case.name))
            } else {
                None
            };
            cases.push((case, ort_dir));
        }
        rows.extend(
            measure_cases(&cases, &o, &program, ort_rounds.as_mut()).context(group.join(" + "))?,
        );
    }
    let ort_version = match (&python, &ort_rounds) {
        (Some(python), Some(_)) => ort::version(python).ok(),
        _ => None,
    };
    drop(ort_rounds);

    let mut torch_version = None;
    if let Some((python, version)) = torch_python.as_ref().filter(|_| rows.iter().any(|r| r.gnn)) {
        eprintln!("PyTorch: timing index_add_ and scatter_add_ on the GNN rows...");
        // bench_torch_gnn.py reads only the directories marked gnn.txt.
        match ort::run_torch_gnn(python, &ort_dir, o.budget) {
            Ok(times) => {
                for row in &mut rows {
                    row.torch_gnn = times.get(&row.name).copied();
                }
                torch_version = Some(version.clone());
            }
            Err(e) => eprintln!("PyTorch GNN columns skipped: {e:#}"),
        }
    }
    if let Some((python, version)) = torch_python
        .as_ref()
        .filter(|_| rows.iter().any(|r| r.gradient))
    {
        eprintln!("PyTorch: timing the gradient rows' backward...");
        match ort::run_torch(python, &torch_dir, o.budget) {
            Ok(times) => {
                for row in &mut rows {
                    row.torch = times.get(&row.name).copied();
                }
                torch_version = Some(version.clone());
            }
            Err(e) => eprintln!("PyTorch column skipped: {e:#}"),
        }
        let _ = std::fs::remove_dir_all(&torch_dir);
    }
    let _ = std::fs::remove_dir_all(&ort_dir);

    let load_after = load();
    let mut out = String::new();
    let forward_rows = rows.iter().any(|r| !r.gradient);
    if forward_rows {
        out.push_str(&time_table(&rows));
        out.push('\n');
    }
    out.push_str(&format!(
        "machine: {machine}; load average (1/5/15 min) before: {load_before}, after: {load_after}; \
         onnxruntime: {}; total {:.0} s.\n\n",
        ort_version.as_deref().unwrap_or("not run"),
        started.elapsed().as_secs_f64()
    ));
    if forward_rows {
        out.push_str(
            "Modes: *one-shot* `plan.run(inputs)` per call (a fresh state each time), the caller \
         keeping its tensors; *persistent* `state.run(inputs)` on a state spawned once, tensors \
         kept; *owned* the data moved in (the output fed back as the next data, or a copy made \
         before the timed call for yolo_head*_* and the loop_decode_* buffers). Fed-back caches \
         (gtcrn_frame, kv_step_*) are fed back in every mode. ort: onnxruntime, 1 thread, inputs and outputs bound with io \
         binding; numpy's arrays, which it backs with huge pages from 4 MiB, as inputs. warm copy: \
         data into a reused buffer, timed between the plugin's one-shot calls in their process; \
         fresh copy: into a new one (`to_vec`). Times are medians of 5 rounds; a round times \
         every engine and mode once, each in a process kept alive across rounds, and every \
         ratio is the median of the ratios within a round (paired), so that the machine's drift \
         over minutes cancels out. \
         `*` copy-bound (the geomean of one-shot/warm copy is over these). Geomeans over the \
         one-node workloads and gtcrn_frame. kv_step_*: PyTorch's `cache[:, :, pos] = k` with \
         `pos` advancing every call; yolo_head_*: YOLOv5's head decode (two slices assigned), \
         yolo_head3_*: the same with a third; each exported pair is timed in shared rounds; \
         ts_kv_decode: TensorScatter, which stock tract lacks; loop_*: ONNX `Loop` models \
         (issue 22): 256 decode steps writing one 1×512 row each into a 256×512 or a 4096×512 \
         buffer, and an empty body's 1000 iterations. rnn_*: a Keras GRU (128 units) and a \
         masked Keras BiLSTM as tf2onnx writes them (`Loop`s), and the same layers as one ONNX \
         GRU/LSTM op (PyTorch's TorchScript exporter), on x [8, 64 steps, 64]; each Loop row is \
         timed in shared rounds with its op row; rnn_torch_gru_packed: an nn.GRU(64, 128) \
         behind pack_padded_sequence(enforce_sorted=False), lengths 16 to 64 (run-time \
         sequence_lens, which stock tract refuses). *_new_indices: the random-index rows with \
         a new copy of the indices (made before the timed call) moved into every owned call, \
         so the plugin checks (and sorts) them every call: in the other modes the same \
         indices come back and the plugin keeps its check.\n\n",
        );
    }
    if o.settings.huge_page_inputs {
        out.push_str(
            "The caller's inputs of 4 MiB and more on huge pages, as numpy's for onnxruntime \
             (`--huge-page-inputs`).\n\n",
        );
    }
    if let Some(capacity) = o.settings.pool_capacity {
        out.push_str(&format!(
            "Output pools set to capacity {capacity} (`--pool-capacity`; the default is 1).\n\n"
        ));
    }
    if let Some(table) = threads_table(&rows) {
        out.push_str(&format!(
            "Threads: the plugin's one-shot with tract's executor of {THREADS} threads installed \
             (`tract_linalg::multithread::set_default_executor(Executor::multithread({THREADS}))`, \
             in a process of its own) and onnxruntime with `intra_op_num_threads={THREADS}`, \
             against 1 thread, in the same paired rounds. warm copy {THREADS}/1: the warm \
             copy split over those {THREADS} threads (timed in the threaded process) over the \
             serial one, what a second core adds to a copy here. floor: the random-index rows' data \
             copied into a warm output and their indices and updates read once, in order, no \
             scatter (`scatter_bench::floor`), timed in a process of its own in the same rounds; \
             floor {THREADS}/1: each of the three cut in {THREADS} chunks, one per thread of the \
             same executor (`scatter_bench::floor_on_tract_threads`), over the serial floor, what \
             a second core adds to the memory such a row must move; one-shot/floor at 1 and \
             {THREADS} threads: the plugin's one-shot over the floor at the same thread count.\n\n"
        ));
        out.push_str(&table);
        out.push('\n');
    }
    if let Some(table) = gnn_table(&rows) {
        out.push_str(&format!(
            "GNN message passing (`ScatterElements` add along axis 0 of the [E] destinations \
             `Unsqueeze`d and `Expand`ed along the features, as PyTorch's dynamo exporter writes \
             `scatter_add_`; uniform random destinations): the plugin's one-shot \
             and onnxruntime as above; PyTorch {} `data.clone().index_add_(0, dst, msg)` and \
             `data.clone().scatter_add_(0, dst.view(-1, 1).expand_as(msg), msg)` with \
             `torch.set_num_threads(n)`, timed after every row (ratios of medians, over its \
             faster op).\n\n",
            torch_version.as_deref().unwrap_or("(not run)")
        ));
        out.push_str(&table);
        out.push('\n');
    }
    if let Some(table) = gradient_table(&rows) {
        out.push_str(&format!(
            "Gradients (`ScatterElementsGrad`/`ScatterNDGrad` of the plugin's training domain on \
             the forward row's inputs, include_self 1, lda_coeff 1, plus a random grad_output; \
             onnxruntime cannot load the domain and stock tract lacks the ops) against PyTorch {} \
             autograd on one thread: *backward* `torch.autograd.grad(out, (data, updates), \
             grad_output, retain_graph=True)` on a forward built once outside the timed part (the \
             comparison), *forward+backward* both per call; the forward as a PyTorch user writes \
             it (`scatter_add` along the axis; ScatterND as `index_put` on the \
             [prod(shape[:k]), slice] view). Every timed call includes freeing its outputs.\n\n",
            torch_version.as_deref().unwrap_or("(not run)")
        ));
        out.push_str(&table);
        out.push('\n');
    }
    if let Some(baseline) = &o.baseline {
        out.push_str(&format!(
            "Against a baseline: the plugin's series again, run by `{}`{}, in the same \
             rounds; this build over the baseline is the median of the within-round ratios, \
             flagged outside ±10%.\n\n",
            baseline.exe.display(),
            baseline
                .env
                .iter()
                .map(|(k, v)| format!(" with {k}={v}"))
                .collect::<String>()
        ));
        out.push_str(&baseline_table(&rows));
        out.push('\n');
    }
    out.push_str("Peak RSS (MB, each engine and mode in a process of its own):\n\n");
    out.push_str(&rss_table(&rows));
    out.push('\n');
    for line in targets(&rows).into_iter().chain(thread_targets(&rows)) {
        out.push_str(&format!("- {line}.\n"));
    }
    for (stem, target) in exported::PAIRS {
        if let Some(line) = export_ratios(&rows, stem, target) {
            out.push_str(&format!("- {line}.\n"));
        }
    }
    for line in bfloat16_ratios(&rows) {
        out.push_str(&format!("- {line}.\n"));
    }
    print!("{out}");
    if let Some(path) = &o.output {
        std::fs::write(path, &out).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

//! One (engine, mode) in a process of its own: `scatter-bench --child NAME ENGINE MODE
//! [--pool-capacity N] [--threads N]` (tract's executor of N threads installed first) plans case
//! NAME with ENGINE (`plugin` or `stock`) once, then [`serve`]s timing rounds over stdin and
//! stdout ([`ChildRounds`] is the parent's side).
//!
//! A process per (engine, mode) makes its peak RSS (VmHWM) that mode's alone: in one process,
//! memory freed by an earlier measurement and kept by malloc would hide a later one's.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tract_onnx_scatter::tract_onnx;

use crate::case::Case;
use crate::runner::{Mode, Runner};
use crate::server::Server;
use crate::timing::{Budget, Stats, measure_prepared};

/// The line a child prints once planned, before serving rounds.
const READY: &str = "ready";

/// The engines a child can plan with.
pub const ENGINES: [&str; 2] = ["plugin", "stock"];

/// The pseudo-engine of a random-index row's floor: no model, the timed
/// call is [`crate::floor`] (split over tract's executor when the child
/// has one), so that the floor is timed in the rounds, paired with the
/// engines, at each thread count.
pub const FLOOR: &str = "floor";

/// The plugin run by the baseline program (`--baseline`,
/// `--baseline-env`): a series of the parent's, never a child's engine.
pub const BASELINE: &str = "baseline";

/// What a child measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Measured {
    pub median: Duration,
    pub calls: usize,
    /// The process's peak resident set (VmHWM), model and inputs included.
    pub peak_rss: Option<usize>,
    /// Bytes the plugin's output pools held at the end (0 for stock).
    pub pooled: usize,
    /// A warm copy of the data input, timed between the calls (outside the timed call), where
    /// the case has a copy floor and the mode keeps its inputs: the two medians then share
    /// the process, its pages and the machine's load, which differs from process to process
    /// on the bench machine (see docs/performance.md, "Why the mechanisms exist").
    pub warm_copy: Option<Duration>,
    /// One output of every scatter node of the model (typed, before
    /// decluttering folds some into other ops): the memory the plugin may
    /// hold beyond stock tract.
    pub scatter_outputs: usize,
}

impl Measured {
    /// Rounds of one (engine, mode) as one figure: the median of the
    /// rounds' medians (and of their warm copies), every call counted, the
    /// largest peak RSS and pool; `None` without rounds.
    pub fn combine(rounds: &[Measured]) -> Option<Measured> {
        fn median(mut v: Vec<Duration>) -> Option<Duration> {
            v.sort();
            let n = v.len();
            match n {
                0 => None,
                _ if n % 2 == 1 => Some(v[n / 2]),
                _ => Some((v[n / 2 - 1] + v[n / 2]) / 2),
            }
        }
        Some(Measured {
            median: median(rounds.iter().map(|r| r.median).collect())?,
            calls: rounds.iter().map(|r| r.calls).sum(),
            peak_rss: rounds.iter().filter_map(|r| r.peak_rss).max(),
            pooled: rounds.iter().map(|r| r.pooled).max().unwrap_or(0),
            warm_copy: median(rounds.iter().filter_map(|r| r.warm_copy).collect()),
            scatter_outputs: rounds.iter().map(|r| r.scatter_outputs).max().unwrap_or(0),
        })
    }
}

/// `case` planned by `engine`'s framework.
fn runner(case: &Case, engine: &str) -> Result<Runner> {
    match engine {
        "plugin" => Ok(Runner::new(case, &tract_onnx_scatter::onnx())?),
        "stock" => Ok(Runner::new(case, &tract_onnx::onnx())?),
        _ => bail!("unknown engine {engine:?} (plugin or stock)"),
    }
}

/// What every child of a bench run is told besides its case, engine and
/// mode.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Settings {
    /// Every output pool's capacity (the plugin's default otherwise).
    pub pool_capacity: Option<usize>,
    /// The caller's inputs of 4 MiB and more on huge pages, as numpy
    /// allocates them for onnxruntime ([`Runner::advise_huge_page_inputs`]).
    pub huge_page_inputs: bool,
    /// tract's executor with this many threads installed in the child
    /// (`set_default_executor`); 0 or 1: tract's default single thread.
    pub threads: usize,
}

impl Settings {
    /// The command-line options that carry these settings to a child.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec![];
        if let Some(capacity) = self.pool_capacity {
            args.extend(["--pool-capacity".to_string(), capacity.to_string()]);
        }
        if self.huge_page_inputs {
            args.push("--huge-page-inputs".into());
        }
        if self.threads > 1 {
            args.extend(["--threads".to_string(), self.threads.to_string()]);
        }
        args
    }
}

/// The child's work: plans, prints `ready`, then answers every `<budget ms>` line of stdin
/// with one round's line, until stdin closes: `<median ns> <calls> <peak RSS bytes> <pooled
/// bytes> <warm copy median ns> <bytes of one output per scatter node>`.
pub fn serve(
    name: &str,
    engine: &str,
    mode: &str,
    budget: Budget,
    settings: Settings,
) -> Result<()> {
    let mode = Mode::parse(mode).with_context(|| format!("unknown mode {mode:?}"))?;
    if settings.threads > 1 {
        // As a tract user turning on threads does: the matmuls and the
        // plugin's scatters then split over this pool.
        tract_linalg::multithread::set_default_executor(
            tract_linalg::multithread::Executor::multithread(settings.threads),
        );
    }
    if engine == FLOOR {
        if mode != Mode::OneShot {
            bail!("the floor is timed in the one-shot mode only");
        }
        return serve_floor(name, budget, settings.threads);
    }
    let case = crate::case(name)?;
    let mut runner = runner(&case, engine).context("planning")?;
    // The warm copy reads the data input's memory, whatever pages it is on.
    let mut floor_input = case.copy_floor_data()?.map(|_| runner.input(0).clone());
    // The runner holds its own copy of the inputs: the case's would double
    // the process's memory (1.6 GB for gnn_large).
    drop(case);
    if settings.huge_page_inputs {
        runner.advise_huge_page_inputs()?;
        floor_input = floor_input.map(|_| runner.input(0).clone());
    }
    if let Some(capacity) = settings.pool_capacity {
        for (_, pool) in tract_onnx_scatter::output_pools(runner.plan().model()) {
            pool.set_capacity(capacity);
        }
    }
    if !runner.supports(mode) {
        bail!("{name} has no {} mode", mode.name());
    }
    let budget = if engine == "stock" {
        // Stock tract can be very slow: fewer samples suffice.
        Budget {
            min_iters: 3,
            ..budget
        }
    } else {
        budget
    };
    // Not between owned calls: a 30 MB copy would evict the cache lines an
    // O(updates) write touches, and the write would time the misses (see
    // docs/performance.md, "Why the mechanisms exist").
    let data = match &floor_input {
        Some(input) if mode != Mode::Owned => Some(input.try_as_plain_ram()?.as_slice::<f32>()?),
        _ => None,
    };
    let mut warm = data.map(|d| vec![0f32; d.len()]);
    // At more than one thread the warm copy is split over them too.
    let threads = settings.threads;
    let scatter_outputs = runner.scatter_output_bytes();
    // Planned: the parent starts the next child only now, so that no two
    // hold a case's transient copies at once (2.4 GB each for gnn_large).
    println!("{READY}");
    std::io::stdout().flush()?;
    for request in std::io::stdin().lines() {
        let budget = round_budget(&request?, budget)?;
        reset_peak_rss();
        let mut copies = Stats { samples: vec![] };
        // `runner` is borrowed by both closures in turn, never at once.
        let cell = std::cell::RefCell::new(&mut runner);
        let stats = measure_prepared(
            budget,
            || {
                if let (Some(src), Some(dst)) = (data, warm.as_mut()) {
                    let t = Instant::now();
                    if threads > 1 {
                        crate::memcpy_on_tract_threads(dst, src);
                    } else {
                        crate::memcpy(dst, src);
                    }
                    std::hint::black_box(&dst);
                    copies.samples.push(t.elapsed());
                }
                cell.borrow_mut().prepare(mode)
            },
            || cell.borrow_mut().run(mode),
        )?;
        let pooled: usize = tract_onnx_scatter::output_pools(runner.plan().model())
            .iter()
            .map(|(_, pool)| pool.retained_bytes())
            .sum();
        println!(
            "{} {} {} {} {} {}",
            stats.median().as_nanos(),
            stats.runs(),
            peak_rss().unwrap_or(0),
            pooled,
            copies.median().as_nanos(),
            scatter_outputs
        );
        std::io::stdout().flush()?;
    }
    Ok(())
}

/// [`serve`] for the [`FLOOR`] pseudo-engine: each call is the case's
/// floor into a warm output, the same line per round (no pool, no warm
/// copy, no scatter outputs).
fn serve_floor(name: &str, budget: Budget, threads: usize) -> Result<()> {
    let case = crate::case(name)?;
    let (data, indices, updates) = case.floor_inputs()?;
    let mut dst = vec![0f32; data.len()];
    println!("{READY}");
    std::io::stdout().flush()?;
    for request in std::io::stdin().lines() {
        let budget = round_budget(&request?, budget)?;
        reset_peak_rss();
        let stats = crate::timing::measure(budget, || {
            std::hint::black_box(if threads > 1 {
                crate::floor_on_tract_threads(&mut dst, data, indices, updates)
            } else {
                crate::floor(&mut dst, data, indices, updates)
            });
            Ok::<_, anyhow::Error>(())
        })?;
        println!(
            "{} {} {} 0 0 0",
            stats.median().as_nanos(),
            stats.runs(),
            peak_rss().unwrap_or(0)
        );
        std::io::stdout().flush()?;
    }
    Ok(())
}

/// A round's budget from its request line (`<budget ms>`).
fn round_budget(request: &str, budget: Budget) -> Result<Budget> {
    let ms: u64 = request
        .trim()
        .parse()
        .context("a round request is a budget in ms")?;
    Ok(Budget {
        time: Duration::from_millis(ms),
        ..budget
    })
}

/// Makes the peak resident set (VmHWM) the current one (Linux 4.0+), so
/// that a round's peak is its own: planning's transient memory and the
/// layout an earlier round left are not counted again.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// This process's peak resident set size (VmHWM), Linux only.
pub fn peak_rss() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The `scatter-bench` binary a child runs and the environment it gets:
/// this build, or a baseline (another commit's build, or this one with
/// speed mechanisms switched off).
#[derive(Debug, Clone)]
pub struct Program {
    pub exe: PathBuf,
    /// Variables set in the child's environment, e.g.
    /// `SCATTER_MECHANISMS_OFF`
    /// ([`tract_onnx_scatter::scatter_kernels::mechanisms`]).
    pub env: Vec<(String, String)>,
}

/// The parent's side of a child: one (engine, mode) of a case, planned
/// once, timed a round at a time.
pub struct ChildRounds(Server);

impl ChildRounds {
    /// Starts `program --child name engine mode` and waits until it has
    /// planned; `Err` with its error (its last stderr line) if it fails
    /// to.
    pub fn start(
        program: &Program,
        name: &str,
        engine: &str,
        mode: Mode,
        settings: Settings,
    ) -> Result<ChildRounds> {
        let mut command = Command::new(&program.exe);
        command
            .args(["--child", name, engine, mode.name()])
            .args(settings.args())
            .envs(program.env.iter().map(|(k, v)| (k, v)))
            .stderr(Stdio::piped());
        let what = format!("{name} {engine} {}", mode.name());
        let mut server = Server::start(command, &what)?;
        let line = server.read()?;
        if line != READY {
            bail!("{what} printed {line:?} before {READY:?}");
        }
        Ok(ChildRounds(server))
    }

    /// One round of `budget`; `Err` with the child's error (its last
    /// stderr line) when it fails.
    pub fn round(&mut self, budget: Duration) -> Result<Measured> {
        let line = self.0.ask(&budget.as_millis().to_string())?;
        parse_line(&line)
    }
}

fn parse_line(line: &str) -> Result<Measured> {
    let fields: Vec<u128> = line
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .with_context(|| format!("parsing the child's line {line:?}"))?;
    let [median, calls, peak, pooled, copy, scatter_outputs] = fields[..] else {
        bail!("the child printed {line:?}, expected six numbers");
    };
    Ok(Measured {
        median: Duration::from_nanos(median as u64),
        calls: calls as usize,
        peak_rss: (peak > 0).then_some(peak as usize),
        pooled: pooled as usize,
        warm_copy: (copy > 0).then(|| Duration::from_nanos(copy as u64)),
        scatter_outputs: scatter_outputs as usize,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(ms: u64, peak: usize, copy: Option<u64>) -> Measured {
        Measured {
            median: Duration::from_millis(ms),
            calls: 10,
            peak_rss: Some(peak),
            pooled: 1,
            warm_copy: copy.map(Duration::from_millis),
            scatter_outputs: 7,
        }
    }

    #[test]
    fn rounds_combine_into_their_median_and_largest_peak() {
        let combined = Measured::combine(&[
            round(9, 100, Some(3)),
            round(4, 300, Some(2)),
            round(5, 200, None),
        ])
        .unwrap();
        assert_eq!(combined.median, Duration::from_millis(5));
        assert_eq!(combined.calls, 30);
        assert_eq!(combined.peak_rss, Some(300));
        assert_eq!(combined.scatter_outputs, 7);
        assert_eq!(combined.warm_copy, Some(Duration::from_micros(2500)));
        assert!(Measured::combine(&[]).is_none());
    }

    #[test]
    fn a_round_line_has_six_numbers() {
        let m = parse_line("2000000 10 300 4 1000 7").unwrap();
        assert_eq!(m.median, Duration::from_millis(2));
        assert_eq!((m.calls, m.peak_rss, m.pooled), (10, Some(300), 4));
        assert_eq!(m.warm_copy, Some(Duration::from_micros(1)));
        assert_eq!(m.scatter_outputs, 7);
        let err = parse_line("1 2 3 4 5").unwrap_err();
        assert!(format!("{err}").contains("six numbers"), "{err}");
    }
}

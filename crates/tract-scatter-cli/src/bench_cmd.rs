//! `tract-scatter bench MODEL`: per-call time in each calling mode, and a
//! per-op-type profile.
//!
//! The profile times every node's evaluation through
//! `SimpleState::run_plan_with_eval` (tract's own evaluation, wrapped in a
//! timer), summed over the rounds; it is not a stable tract profiler API,
//! only the plan's public evaluation hook.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tract_onnx_scatter::tract_core::internal::*;
use tract_onnx_scatter::tract_core::plan::eval;

use crate::Failed;
use crate::cli::BenchArgs;
use crate::dump_cmd::plugin_kind;
use crate::model::prepare;
use crate::progress::Progress;

/// The calling modes timed, then the profile.
const MODES: [&str; 4] = [
    "plan.run(inputs.clone())",
    "SimpleState::run(inputs.clone())",
    "SimpleState::run(owned inputs)",
    "profile",
];

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    let prepared = prepare(&args.model, &args.inputs)?;
    let path = args.model.model.display().to_string();
    let plan = &prepared.plan;
    let inputs = &prepared.inputs;
    let rounds = args.rounds as usize;
    let failed = |e: anyhow::Error| Failed(e.context(format!("running {path}")));
    // One checked run first: a failure (on random inputs, one that says
    // so) before any timing.
    crate::run_cmd::checked_run(&prepared, &path, || plan.run(inputs.clone()))?;
    // Every call is a step: each mode's warm-up and rounds, the profile's rounds.
    let progress = Progress::new(args.quiet, 4 * rounds + 3);
    let done =
        |mode: usize| progress.line(&format!("[{}/4] {}: done", mode + 1, MODES[mode]), false);

    // One-shot: plan.run with cloned inputs (a fresh state per call).
    let one_shot = time(rounds, &progress, MODES[0], || {
        plan.run(inputs.clone())?;
        Ok(())
    })
    .map_err(failed)?;
    done(0);
    // A persistent state, inputs cloned per call.
    let mut state = SimpleState::new(plan).map_err(failed)?;
    let persistent = time(rounds, &progress, MODES[1], || {
        state.run(inputs.clone())?;
        Ok(())
    })
    .map_err(failed)?;
    done(1);
    // A persistent state, owned inputs moved in (copied outside the timer:
    // the kernels may then reuse the input buffers).
    let mut owned_times = vec![];
    for round in 0..=rounds {
        let owned: TVec<TValue> = inputs
            .iter()
            .map(|v| v.clone().into_tensor().into_tvalue())
            .collect();
        let start = Instant::now();
        let outputs = state.run(owned).map_err(failed)?;
        let elapsed = start.elapsed();
        // Released outside the timer: freeing a large output costs the
        // allocator milliseconds (glibc returns it to the kernel), which
        // is no part of an in-place call.
        drop(outputs);
        if round > 0 {
            owned_times.push(elapsed);
        }
        progress.step(MODES[2]);
    }
    done(2);

    // Per node, summed over the rounds.
    let mut per_node = vec![Duration::ZERO; plan.model().nodes().len()];
    for _ in 0..rounds {
        state
            .run_plan_with_eval(
                inputs.clone(),
                |ctx: &EvalContext<'_>,
                 op_state: Option<&mut (dyn OpState + 'static)>,
                 node: &TypedNode,
                 input: TVec<TValue>| {
                    let start = Instant::now();
                    let out = eval(ctx, op_state, node, input);
                    per_node[node.id] += start.elapsed();
                    out
                },
            )
            .map_err(failed)?;
        progress.step(MODES[3]);
    }
    done(3);
    progress.finish();

    println!(
        "{path}: {} nodes in the optimized plan, {rounds} rounds per mode",
        plan.model().nodes().len()
    );
    println!("{:<34} {:>12}  {:>25}", "mode", "median", "min .. max");
    for (mode, times) in MODES.into_iter().zip([one_shot, persistent, owned_times]) {
        let (median, min, max) = spread(times);
        println!(
            "{mode:<34} {:>12}  {:>25}",
            show(median),
            format!("{} .. {}", show(min), show(max))
        );
    }
    let total: Duration = per_node.iter().sum();
    // op name -> (nodes, time, built by the plugin)
    let mut per_op: BTreeMap<String, (usize, Duration, Option<&'static str>)> = BTreeMap::new();
    for node in plan.model().nodes() {
        let entry = per_op
            .entry(node.op().name().to_string())
            .or_insert((0, Duration::ZERO, None));
        entry.0 += 1;
        entry.1 += per_node[node.id];
        entry.2 = entry.2.or(plugin_kind(node));
    }
    let mut rows: Vec<_> = per_op.into_iter().collect();
    rows.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(&b.0)));
    println!(
        "profile by op type (node evaluations only, {} per call):",
        show(total / rounds as u32)
    );
    println!(
        "{:<40} {:>5} {:>7} {:>12}",
        "op", "nodes", "share", "per call"
    );
    for (op, (nodes, time, kind)) in rows {
        let share = if total.is_zero() {
            0.0
        } else {
            100.0 * time.as_secs_f64() / total.as_secs_f64()
        };
        let name = match kind {
            Some(kind) => format!("{op} [plugin {kind}]"),
            None => op,
        };
        println!(
            "{name:<40} {nodes:>5} {share:>6.1}% {:>12}",
            show(time / rounds as u32)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `rounds` timed calls after one untimed warm-up, each a step of `progress`.
fn time(
    rounds: usize,
    progress: &Progress,
    mode: &str,
    mut f: impl FnMut() -> TractResult<()>,
) -> Result<Vec<Duration>> {
    f().context("warm-up call")?;
    progress.step(mode);
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        f()?;
        times.push(start.elapsed());
        progress.step(mode);
    }
    Ok(times)
}

/// Median, min, max.
fn spread(mut times: Vec<Duration>) -> (Duration, Duration, Duration) {
    times.sort();
    let n = times.len();
    let median = if n % 2 == 1 {
        times[n / 2]
    } else {
        (times[n / 2 - 1] + times[n / 2]) / 2
    };
    (median, times[0], times[n - 1])
}

fn show(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

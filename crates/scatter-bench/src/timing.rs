//! A plain timing loop: one warm-up call, then samples of one call each
//! until a time budget or an iteration cap, the median reported.

use std::time::{Duration, Instant};

/// How long and how often to measure one thing.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Stop sampling once this much time was spent (after `min_iters`).
    pub time: Duration,
    pub min_iters: usize,
    pub max_iters: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            time: Duration::from_millis(1500),
            min_iters: 5,
            max_iters: 2000,
        }
    }
}

/// Per-call durations of one measurement.
#[derive(Debug, Clone)]
pub struct Stats {
    pub samples: Vec<Duration>,
}

impl Stats {
    pub fn median(&self) -> Duration {
        let mut s = self.samples.clone();
        s.sort();
        match s.len() {
            0 => Duration::ZERO,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2,
        }
    }

    pub fn min(&self) -> Duration {
        self.samples.iter().copied().min().unwrap_or_default()
    }

    pub fn runs(&self) -> usize {
        self.samples.len()
    }
}

/// Times `f`: one warm-up call, then one sample per call.
pub fn measure<E>(budget: Budget, f: impl FnMut() -> Result<(), E>) -> Result<Stats, E> {
    measure_prepared(budget, || Ok(()), f)
}

/// Times `f`, `prepare` called before each call outside the timed part:
/// one warm-up call, then one sample per call.
pub fn measure_prepared<E>(
    budget: Budget,
    mut prepare: impl FnMut() -> Result<(), E>,
    mut f: impl FnMut() -> Result<(), E>,
) -> Result<Stats, E> {
    prepare()?;
    f()?;
    let start = Instant::now();
    let mut samples = Vec::new();
    while samples.len() < budget.max_iters
        && (samples.len() < budget.min_iters || start.elapsed() < budget.time)
    {
        prepare()?;
        let t = Instant::now();
        f()?;
        samples.push(t.elapsed());
    }
    Ok(Stats { samples })
}

/// `1.234 ms`-style rendering with three significant digits.
pub fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    let (v, unit) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "µs")
    } else {
        (s * 1e9, "ns")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

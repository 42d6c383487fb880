//! Progress on stderr for `conformance`: an indicatif bar when stderr is a
//! terminal; otherwise a plain line at each tenth of the run (logs, CI).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal as _;
use std::time::Instant;

pub enum Progress {
    /// Plain lines: the last tenth printed, and when the run started.
    Lines {
        total: usize,
        tenth: usize,
        started: Instant,
    },
    Bar(ProgressBar),
}

impl Progress {
    /// Progress over `total` steps, in the form stderr calls for.
    pub fn new(total: usize) -> Progress {
        if std::io::stderr().is_terminal() {
            let bar =
                ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{elapsed:>4} [{bar:30}] {pos}/{len} (eta {eta}) {wide_msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            Progress::Bar(bar)
        } else {
            Progress::Lines {
                total,
                tenth: 0,
                started: Instant::now(),
            }
        }
    }

    /// A line worth keeping (above the bar on a terminal).
    pub fn line(&self, text: &str) {
        match self {
            Progress::Lines { .. } => eprintln!("{text}"),
            Progress::Bar(bar) => bar.println(text),
        }
    }

    /// Step `done` of the total finished; `what` names it.
    pub fn step(&mut self, done: usize, what: &str) {
        match self {
            Progress::Bar(bar) => {
                bar.set_message(what.to_string());
                bar.set_position(done as u64);
            }
            Progress::Lines {
                total,
                tenth,
                started,
            } => {
                if let Some(line) = tenth_line(done, *total, tenth, started.elapsed().as_secs_f64())
                {
                    eprintln!("{line} ({what})");
                }
            }
        }
    }

    /// Removes the bar, before the command's own output.
    pub fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// The line to print when `done` of `total` steps crosses the next tenth
/// (`tenth` is the last one printed), else `None`.
fn tenth_line(done: usize, total: usize, tenth: &mut usize, seconds: f64) -> Option<String> {
    let reached = (done * 10).checked_div(total)?;
    if reached <= *tenth {
        return None;
    }
    *tenth = reached;
    Some(format!(
        "[{done}/{total}] {}% after {seconds:.0} s",
        reached * 10
    ))
}

#[cfg(test)]
mod tests {
    use super::tenth_line;

    #[test]
    fn plain_progress_prints_one_line_per_tenth() {
        let mut tenth = 0;
        let lines: Vec<String> = (1..=95)
            .filter_map(|done| tenth_line(done, 95, &mut tenth, 1.0))
            .collect();
        assert_eq!(lines.len(), 10);
        assert_eq!(lines[0], "[10/95] 10% after 1 s");
        assert_eq!(lines[9], "[95/95] 100% after 1 s");
        let mut tenth = 0;
        assert_eq!(tenth_line(0, 0, &mut tenth, 0.0), None);
    }
}

//! Progress on stderr for `test` and `bench`: an indicatif bar when stderr
//! is a terminal, plain lines otherwise (logs, CI), nothing with `--quiet`.

use std::io::IsTerminal as _;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub enum Progress {
    Quiet,
    Lines,
    Bar(ProgressBar),
}

impl Progress {
    /// Progress over `steps` steps, in the form stderr calls for.
    pub fn new(quiet: bool, steps: usize) -> Progress {
        if quiet {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar =
                ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            Progress::Bar(bar)
        } else {
            Progress::Lines
        }
    }

    /// A progress line: printed as is without a bar; above the bar when
    /// `keep` (a failure worth seeing), else dropped (the bar shows it).
    pub fn line(&self, text: &str, keep: bool) {
        match self {
            Progress::Quiet => {}
            Progress::Lines => eprintln!("{text}"),
            Progress::Bar(bar) => {
                if keep {
                    bar.println(text);
                }
            }
        }
    }

    /// One step done; the bar shows `message` (what was just done).
    pub fn step(&self, message: &str) {
        if let Progress::Bar(bar) = self {
            bar.set_message(message.to_string());
            bar.inc(1);
        }
    }

    /// Removes the bar, before the command's own output.
    pub fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

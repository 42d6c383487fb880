//! `tract-scatter`: ONNX models through tract with the scatter plugin, from
//! the command line. See docs/command-line.md.
//!
//! Exit codes: 0 success, 1 a test, comparison or model run failed, 2 the
//! user's mistake (bad arguments, missing or unreadable files, inputs that
//! do not fit the model, a model that does not load). Every error is one
//! line on stderr: `error: ...`.

mod bench_cmd;
mod cli;
mod compare_cmd;
mod convert_cmd;
mod dump_cmd;
mod merge_cmd;
mod model;
mod progress;
mod run_cmd;
mod tensors;
mod test_cmd;

use std::process::ExitCode;

use clap::Parser as _;
use cli::{Cli, Command};

/// Exit code of a failed check (test, comparison) or a failed model run.
pub const FAILED: u8 = 1;
/// Exit code of a usage error.
pub const USAGE: u8 = 2;

/// An error that is not the user's doing: the model failed at run time,
/// or tract panicked. Exits 1; every other error exits 2.
#[derive(Debug)]
pub struct Failed(pub anyhow::Error);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Failed {}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || matches!(
                    e.kind(),
                    ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                )
            {
                let _ = e.print();
                return ExitCode::from(if e.use_stderr() { USAGE } else { 0 });
            }
            // clap's message, on one line (its tips and usage are elsewhere: --help).
            // (The first paragraph, which may list missing arguments on
            // lines of their own.)
            let rendered = e.render().to_string();
            let first: Vec<&str> = rendered
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            eprintln!("{} (see tract-scatter --help)", first.join(" "));
            return ExitCode::from(USAGE);
        }
    };
    // tract and the plugin panic rarely; a panic is a failure on one line,
    // never a backtrace.
    let result = onnx_golden::panic_guard::catch(|| run(cli));
    match result {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            let code = if e.is::<Failed>() { FAILED } else { USAGE };
            eprintln!("error: {}", one_line(&e));
            ExitCode::from(code)
        }
        Err(panic) => {
            eprintln!("error: tract panicked: {}", panic.replace('\n', " "));
            ExitCode::from(FAILED)
        }
    }
}

/// The error chain on one line: `context: cause: root cause`.
pub fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Test(args) => test_cmd::run(args),
        Command::Merge(args) => merge_cmd::run(args),
        Command::Run(args) => run_cmd::run(args),
        Command::Compare(args) => compare_cmd::run(args),
        Command::Dump(args) => dump_cmd::run(args),
        Command::Bench(args) => bench_cmd::run(args),
        Command::Convert(args) => convert_cmd::run(args),
    }
}

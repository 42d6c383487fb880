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

/// The system allocator, but an allocation it cannot satisfy is one line
/// on stderr and exit 2, not an abort with a backtrace: every size a file
/// declares is checked before it is allocated, this is for the others.
struct ExitOnOutOfMemory;

// SAFETY: every call goes to `System`, which upholds `GlobalAlloc`'s
// contract; on a null pointer the process exits without returning it.
unsafe impl std::alloc::GlobalAlloc for ExitOnOutOfMemory {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's promise for this method, passed on to `System`.
        let p = unsafe { std::alloc::System.alloc(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's promise for this method, passed on to `System`.
        let p = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if p.is_null() {
            out_of_memory(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's promise for this method, passed on to `System`.
        let p = unsafe { std::alloc::System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            out_of_memory(new_size);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: the caller's promise for this method, passed on to `System`.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: ExitOnOutOfMemory = ExitOnOutOfMemory;

/// `error: out of memory: an allocation of N bytes failed`, exit 2; writes
/// without allocating.
fn out_of_memory(size: usize) -> ! {
    use std::io::Write as _;
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = size;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(b"error: out of memory: an allocation of ");
    let _ = stderr.write_all(&digits[at..]);
    let _ = stderr.write_all(b" bytes failed\n");
    std::process::exit(USAGE as i32)
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so a closed stdout (`tract-scatter ... | head`)
    // makes `println!` panic; with the default action the process ends
    // quietly, as other command-line tools do.
    #[cfg(unix)]
    // SAFETY: called first in main, before any other thread exists;
    // SIG_DFL is a valid action for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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
    tensors::MAX_TENSOR_BYTES.store(cli.max_tensor_bytes, std::sync::atomic::Ordering::Relaxed);
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

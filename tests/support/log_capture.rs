//! Capturing the log records a test's own thread emits: the test binary's
//! one logger (tests run in parallel threads of one process and share it).

#![allow(dead_code)]

use std::cell::Cell;
use std::sync::Mutex;

static RECORDS: Mutex<Vec<(std::thread::ThreadId, log::Level, String)>> = Mutex::new(Vec::new());

thread_local! {
    /// Whether this thread is inside [`records_of`].
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
}

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Info
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) && CAPTURING.get() {
            RECORDS.lock().unwrap_or_else(|p| p.into_inner()).push((
                std::thread::current().id(),
                record.level(),
                record.args().to_string(),
            ));
        }
    }

    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

/// Runs `f` and returns what it returned with the records at `level` and
/// above this thread logged meanwhile.
fn records_of<T>(level: log::Level, f: impl FnOnce() -> T) -> (T, Vec<String>) {
    // Only the first call installs the logger; later ones find it there.
    let _ = log::set_logger(&CAPTURE).map(|()| log::set_max_level(log::LevelFilter::Info));
    let me = std::thread::current().id();
    let take = || {
        let mut all = RECORDS.lock().unwrap_or_else(|p| p.into_inner());
        let mine = all
            .iter()
            .filter(|(t, l, _)| *t == me && *l <= level)
            .map(|(_, _, r)| r.clone())
            .collect::<Vec<_>>();
        all.retain(|(t, _, _)| *t != me);
        mine
    };
    take();
    let outer = CAPTURING.replace(true);
    let out = f();
    CAPTURING.set(outer);
    (out, take())
}

/// Runs `f` and returns what it returned with the warnings (and errors)
/// this thread logged meanwhile.
pub fn warnings_of<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    records_of(log::Level::Warn, f)
}

/// Runs `f` and returns what it returned with the records at info level
/// and above this thread logged meanwhile.
pub fn logged<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    records_of(log::Level::Info, f)
}

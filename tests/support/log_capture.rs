//! Capturing the `log::warn!` records a test's own thread emits (tests of
//! one binary run in parallel threads and share the global logger).

#![allow(dead_code)]

use std::sync::Mutex;

static WARNINGS: Mutex<Vec<(std::thread::ThreadId, String)>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Warn
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            WARNINGS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((std::thread::current().id(), record.args().to_string()));
        }
    }

    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

/// Runs `f` and returns what it returned with the warnings this thread
/// logged meanwhile.
pub fn warnings_of<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    // Only the first call installs the logger; later ones find it there.
    let _ = log::set_logger(&CAPTURE).map(|()| log::set_max_level(log::LevelFilter::Warn));
    let me = std::thread::current().id();
    let take = || {
        let mut all = WARNINGS.lock().unwrap_or_else(|p| p.into_inner());
        let mine = all
            .iter()
            .filter(|(t, _)| *t == me)
            .map(|(_, w)| w.clone())
            .collect::<Vec<_>>();
        all.retain(|(t, _)| *t != me);
        mine
    };
    take();
    let out = f();
    (out, take())
}

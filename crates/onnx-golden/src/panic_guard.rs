//! Catching panics of the framework under test without polluting stderr.
//!
//! A panic is a test result here, not a crash: the default hook's
//! "thread panicked at" output would be noise between report lines. The
//! process-wide hook is swapped for a wrapper that stays silent only on
//! threads currently inside [`catch`] and delegates to the previous hook on
//! all other threads (so parallel `#[test]`s still print their own panics).
//! The wrapper is installed by the first concurrent user and the previous
//! hook restored by the last one.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::{Arc, Mutex};

type Hook = Box<dyn Fn(&PanicHookInfo<'_>) + Sync + Send + 'static>;

thread_local! {
    static SILENCED: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

struct HookState {
    users: usize,
    previous: Option<Arc<Hook>>,
}

static STATE: Mutex<HookState> = Mutex::new(HookState {
    users: 0,
    previous: None,
});

/// Runs `f`, turning a panic into `Err(message)` where the message is the
/// panic payload followed by its source location when known.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let _hook = HookGuard::install();
    let was_silenced = SILENCED.with(|s| s.replace(true));
    LAST_PANIC.with(|l| l.borrow_mut().take());
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    SILENCED.with(|s| s.set(was_silenced));
    result.map_err(|payload| {
        LAST_PANIC
            .with(|l| l.borrow_mut().take())
            .unwrap_or_else(|| {
                payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic with a non-string payload".to_string())
            })
    })
}

struct HookGuard;

impl HookGuard {
    fn install() -> HookGuard {
        let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
        if state.users == 0 {
            let previous: Arc<Hook> = Arc::new(panic::take_hook());
            let delegate = previous.clone();
            panic::set_hook(Box::new(move |info| {
                if SILENCED.with(|s| s.get()) {
                    let message = info
                        .payload_as_str()
                        .unwrap_or("panic with a non-string payload");
                    let message = match info.location() {
                        Some(l) => format!("{message} (at {}:{})", l.file(), l.line()),
                        None => message.to_string(),
                    };
                    LAST_PANIC.with(|l| *l.borrow_mut() = Some(message));
                } else {
                    delegate(info)
                }
            }));
            state.previous = Some(previous);
        }
        state.users += 1;
        HookGuard
    }
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
        state.users -= 1;
        if state.users == 0 {
            // Dropping our wrapper releases its clone of the previous hook,
            // which can then be put back as it was.
            drop(panic::take_hook());
            if let Some(previous) = state.previous.take() {
                match Arc::try_unwrap(previous) {
                    Ok(hook) => panic::set_hook(hook),
                    Err(shared) => panic::set_hook(Box::new(move |info| shared(info))),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_messages() {
        let r: Result<(), String> = catch(|| panic!("boom {}", 42));
        let message = r.unwrap_err();
        assert!(message.starts_with("boom 42 (at "), "{message}");
        assert_eq!(catch(|| 3).unwrap(), 3);
    }

    #[test]
    fn nested_and_repeated_use_is_fine() {
        for _ in 0..3 {
            let r = catch(|| catch(|| panic!("inner")).unwrap_err());
            assert!(r.unwrap().starts_with("inner"));
        }
    }
}

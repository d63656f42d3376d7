//! Ctrl-C during a run. Python runs signal handlers only on its main thread, between bytecodes,
//! and a run evaluates with the GIL released: so the run itself asks Python for pending
//! signals (`PyErr_CheckSignals`) every few milliseconds through the sandbox's interrupt hook,
//! and a KeyboardInterrupt there ends the run with an uncatchable error; the caller then
//! raises the KeyboardInterrupt itself.
//!
//! Only the main thread asks, and only on its own stack unless the interpreter counts its
//! recursion (CPython before 3.14): from 3.14 on Python checks the stack pointer against the
//! thread's stack, and a run that can suspend evaluates on a stack of its own. Such a run
//! is interrupted when it next stops at a tool call, or by its time limit.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use pyo3::prelude::*;

use ptc_lisp::{Error, ErrorKind, Interrupt, Runtime};

/// How often a run asks for pending signals.
const POLL_EVERY: Duration = Duration::from_millis(5);

/// How far below the run's start the main thread's stack may reach and still be its own.
const OWN_STACK: usize = 64 << 20;

struct MainThread {
    id: ThreadId,
    /// Whether Python code may run on any stack (CPython before 3.14).
    any_stack: bool,
}

static MAIN_THREAD: OnceLock<MainThread> = OnceLock::new();

/// Remembers the interpreter's main thread, when the module is imported on it.
pub(crate) fn record_main_thread(py: Python<'_>) -> PyResult<()> {
    let threading = py.import("threading")?;
    let current = threading.call_method0("current_thread")?;
    let main = threading.call_method0("main_thread")?;
    if current.is(&main) {
        let version = py.version_info();
        let _ = MAIN_THREAD.set(MainThread {
            id: std::thread::current().id(),
            any_stack: (version.major, version.minor) < (3, 14),
        });
    }
    Ok(())
}

/// The signal a run was interrupted by, once it ended.
pub(crate) struct Watch {
    caught: Arc<Mutex<Option<PyErr>>>,
}

impl Watch {
    /// The exception a signal handler raised during the run (a KeyboardInterrupt), if any.
    pub(crate) fn take(&self) -> Option<PyErr> {
        self.caught.lock().ok()?.take()
    }
}

fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// `runtime` with the hook that lets Ctrl-C end its runs, when called on the main thread.
pub(crate) fn watched(runtime: &Runtime) -> (Runtime, Option<Watch>) {
    let Some(main) = MAIN_THREAD
        .get()
        .filter(|m| m.id == std::thread::current().id())
    else {
        return (runtime.clone(), None);
    };
    let any_stack = main.any_stack;
    let main_id = main.id;
    let anchor = stack_address();
    let started = Instant::now();
    let last_poll = AtomicU64::new(0);
    let stopped = Arc::new(AtomicBool::new(false));
    let caught: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let slot = caught.clone();
    let interrupted = || Error::new(ErrorKind::Timeout, "interrupted (KeyboardInterrupt)");
    let hook = Interrupt::new(move || {
        if stopped.load(Ordering::Relaxed) {
            return Some(interrupted());
        }
        if std::thread::current().id() != main_id {
            return None;
        }
        let here = stack_address();
        let on_own_stack = here <= anchor && anchor - here < OWN_STACK;
        if !(any_stack || on_own_stack) {
            return None;
        }
        let now = started.elapsed().as_micros() as u64;
        if now.saturating_sub(last_poll.load(Ordering::Relaxed)) < POLL_EVERY.as_micros() as u64 {
            return None;
        }
        last_poll.store(now, Ordering::Relaxed);
        let signal = Python::attach(|py| py.check_signals().err());
        let signal = signal?;
        stopped.store(true, Ordering::Relaxed);
        if let Ok(mut slot) = slot.lock() {
            *slot = Some(signal);
        }
        Some(interrupted())
    });
    (runtime.clone().with_interrupt(hook), Some(Watch { caught }))
}

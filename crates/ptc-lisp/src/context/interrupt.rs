//! A host's way to stop a run from outside while it evaluates (an interrupted process, a
//! cancelled request): [`Interrupt`].

use crate::error::Error;
use std::sync::Arc;

/// A check a run makes whenever it reads the clock for its time limit (every few thousand
/// evaluation steps, on every `pmap` worker too): when it returns an error, the run ends with
/// it. Give an error of a limit kind ([`ErrorKind::Timeout`](crate::ErrorKind::Timeout), say)
/// so that the program cannot catch it with `try`.
///
/// The check runs on the thread evaluating the program, often: it should cost no more than
/// reading an atomic flag.
///
/// ```
/// use ptc_lisp::{Error, ErrorKind, Interrupt, Runtime, UserNamespace};
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// let stop = Arc::new(AtomicBool::new(true));
/// let flag = stop.clone();
/// let runtime = Runtime::new().with_interrupt(Interrupt::new(move || {
///     flag.load(Ordering::Relaxed)
///         .then(|| Error::new(ErrorKind::Timeout, "interrupted by the host"))
/// }));
/// let out = runtime.run_str("(try (loop [i 0] (recur (inc i))) (catch Exception e :caught))", &UserNamespace::new());
/// assert_eq!(out.outcome.error().unwrap().message, "interrupted by the host");
/// ```
#[derive(Clone)]
pub struct Interrupt(Arc<dyn Fn() -> Option<Error> + Send + Sync>);

impl Interrupt {
    /// An interrupt that ends a run with the error `check` returns, once it returns one.
    pub fn new(check: impl Fn() -> Option<Error> + Send + Sync + 'static) -> Interrupt {
        Interrupt(Arc::new(check))
    }

    /// The error to end the run with, if the host asks it to end.
    pub(crate) fn check(&self) -> Option<Error> {
        (self.0)()
    }
}

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Interrupt")
    }
}

//! Runs that wait for their host: [`Runtime::start`], [`Progress`] and [`SuspendedRun`].

use super::{RunOutcome, Runtime, UserNamespace};
use crate::context::fiber::{Fiber, FiberStep, Resume};
use crate::context::tools::{ToolAnswer, ToolError, ToolRequest};
use crate::error::Error;
use crate::reader::read;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How far a run started with [`Runtime::start`] got.
#[must_use = "a suspended run goes on only when it is resumed"]
pub enum Progress {
    /// The run ended.
    Finished(RunOutcome),
    /// The run waits for the answers to its tool calls.
    Suspended(SuspendedRun),
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Progress::Finished(out) => f.debug_tuple("Finished").field(out).finish(),
            Progress::Suspended(run) => f.debug_tuple("Suspended").field(run).finish(),
        }
    }
}

/// A run stopped at calls of host-answered tools ([`Tools::insert_awaited`]); it holds no
/// thread while it waits.
///
/// The calls of one [`SuspendedRun::requests`] are independent of each other (the items of a
/// `pmap` or `pcalls` waiting at the same time): make them concurrently, then
/// [`SuspendedRun::resume`] the run with their answers, in the same order. The run can be
/// resumed on any thread. Dropping it ends the run; what it was evaluating is dropped.
///
/// Time spent suspended does not count against [`Limits::timeout`](crate::Limits::timeout),
/// which limits the time the program spends evaluating: a host that wants a deadline for the
/// whole run, waits included, keeps its own (and drops the run when it passes).
///
/// [`Tools::insert_awaited`]: crate::Tools::insert_awaited
pub struct SuspendedRun {
    fiber: Fiber<'static, RunOutcome>,
    requests: Vec<ToolRequest>,
}

impl std::fmt::Debug for SuspendedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SuspendedRun")
            .field("requests", &self.requests)
            .finish_non_exhaustive()
    }
}

impl SuspendedRun {
    /// The tool calls the run waits for.
    pub fn requests(&self) -> &[ToolRequest] {
        &self.requests
    }

    /// Go on with `answers`, one for each of [`SuspendedRun::requests`], in order; the run
    /// evaluates on the calling thread until it stops at tool calls again or ends. A request
    /// without an answer (too few were given) fails with a tool error; answers past the last
    /// request are ignored.
    pub fn resume(self, answers: Vec<ToolAnswer>) -> Progress {
        let mut answers = answers;
        let asked = self.requests.len();
        answers.truncate(asked);
        while answers.len() < asked {
            answers.push(ToolAnswer::new(
                Err(ToolError::new("the host gave no answer")),
                Duration::ZERO,
            ));
        }
        self.go_on(Resume::Answers(answers))
    }

    /// End the run because the host gives up on its calls: each fails with `error`, which the
    /// program cannot catch when its kind is a limit (a [`ErrorKind::Timeout`] for a deadline
    /// that passed, say). The run ends as it would at any such error, with every call it made
    /// recorded.
    ///
    /// [`ErrorKind::Timeout`]: crate::ErrorKind::Timeout
    pub fn stop(self, error: Error) -> Progress {
        self.go_on(Resume::Stop(error))
    }

    fn go_on(mut self, input: Resume) -> Progress {
        match self.fiber.resume(input) {
            FiberStep::Done(outcome) => Progress::Finished(outcome),
            FiberStep::Suspended(requests) => {
                self.requests = requests;
                Progress::Suspended(self)
            }
        }
    }
}

impl Runtime {
    /// Start running `source` with the definitions of `namespace`, in a run that suspends at each
    /// call of a tool registered with [`Tools::insert_awaited`] instead of blocking the
    /// thread. It evaluates on the calling thread until the first such call (or the end), on a
    /// stack of its own; see [`SuspendedRun`] for what to do next. Tools registered as
    /// synchronous functions are called as in [`Runtime::run`].
    ///
    /// An async host drives it like this (here without a runtime: the answer is at hand):
    ///
    /// ```
    /// use ptc_lisp::{Progress, Runtime, ToolAnswer, ToolSpec, Tools, UserNamespace, Value};
    /// use std::time::Duration;
    ///
    /// let mut tools = Tools::new();
    /// tools.insert_awaited(ToolSpec::new("double", "Twice n").with_params(["n"]));
    /// let runtime = Runtime::new().with_tools(tools);
    /// let mut progress = runtime.start(
    ///     "(+ (tool/double 1) (reduce + (pmap tool/double [10 20])))",
    ///     &UserNamespace::new(),
    /// );
    /// let mut waits = Vec::new();
    /// let outcome = loop {
    ///     match progress {
    ///         Progress::Finished(outcome) => break outcome,
    ///         Progress::Suspended(run) => {
    ///             waits.push(run.requests().len());
    ///             // An async host awaits these calls concurrently.
    ///             let answers = run
    ///                 .requests()
    ///                 .iter()
    ///                 .map(|call| {
    ///                     let n = call.args[0].as_int().unwrap();
    ///                     ToolAnswer::new(Ok(Value::Int(2 * n)), Duration::ZERO)
    ///                 })
    ///                 .collect();
    ///             progress = run.resume(answers);
    ///         }
    ///     }
    /// };
    /// assert_eq!(outcome.outcome.value(), Some(&Value::Int(62)));
    /// // The call before pmap, then both pmap calls at once.
    /// assert_eq!(waits, [1, 2]);
    /// assert_eq!(outcome.tool_calls.len(), 3);
    /// ```
    ///
    /// [`Tools::insert_awaited`]: crate::Tools::insert_awaited
    pub fn start(&self, source: &str, namespace: &UserNamespace) -> Progress {
        let started = Instant::now();
        // Read on the caller's stack, as `run_str` does: reading never suspends.
        let forms = match read(source, &self.limits.read) {
            Ok(forms) => forms,
            Err(e) => return Progress::Finished(RunOutcome::unread(e, namespace)),
        };
        let runtime = self.clone();
        let source: Arc<str> = Arc::from(source);
        let namespace = namespace.clone();
        let fiber = Fiber::new(move |suspender| {
            runtime.run_since(
                &source,
                &forms,
                &namespace,
                started,
                Instant::now(),
                Some(suspender),
            )
        });
        SuspendedRun {
            fiber,
            requests: Vec::new(),
        }
        .go_on(Resume::Answers(Vec::new()))
    }
}

//! The sandbox a run's programs run in: the task's data and limits, its tools as calls that
//! suspend the program for the driver to answer, and a stretch of evaluation, timed, with an
//! interpreter panic caught.

use std::time::{Duration, Instant};

use ptc_lisp::{Limits, Progress, Runtime, ToolSpec, Tools, panic_text};
use ptc_turn::Task;

/// The sandbox every program of a run runs in: `limits`, the task's data, and its tools as
/// calls that suspend the program for the driver to answer.
pub fn runtime_for(limits: &Limits, task: &Task) -> Runtime {
    let mut runtime = Runtime::new()
        .with_limits(limits.clone())
        .with_firewalled_output(true);
    for (name, value) in &task.data {
        runtime = runtime.with_data(name.clone(), value.clone());
    }
    runtime.with_tools(awaited_tools(&task.tools))
}

/// The sandbox's tools for `specs`: each call suspends the run, to be answered by its host.
pub fn awaited_tools<'s>(specs: impl IntoIterator<Item = &'s ToolSpec>) -> Tools {
    let mut tools = Tools::new();
    for spec in specs {
        tools.insert_awaited(spec.clone());
    }
    tools
}

/// One stretch of evaluation, with a panic caught: its text is the error.
pub(crate) fn evaluating(f: impl FnOnce() -> Progress) -> Result<Progress, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|payload| panic_text(payload.as_ref()))
}

/// One stretch of a program's evaluation (its start, or its resumption with the answers to
/// its tool calls, until it suspends at calls again or ends) and how long it ran.
pub(crate) struct Stretch {
    /// How far the program got; an interpreter panic's text is the error.
    pub(crate) progress: Result<Progress, String>,
    /// The time the stretch ran, as the sandbox measured it.
    pub(crate) took: Duration,
}

/// Runs one stretch of evaluation, timed, with a panic caught.
pub(crate) fn stretch(f: impl FnOnce() -> Progress) -> Stretch {
    let started = Instant::now();
    let progress = evaluating(f);
    Stretch {
        progress,
        took: started.elapsed(),
    }
}

/// The time of a program's evaluation, from the event that started it to its end, its tool
/// calls included. Each stretch that suspended ran before the event that answered its calls,
/// so the events' times cover it; only the stretch that ended the program ran after the last
/// event, and the sandbox's measure of that one stretch is added.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EvaluationTime {
    started: Instant,
    last_stretch: Duration,
}

impl EvaluationTime {
    /// An evaluation started at the time of the event that gave the program.
    pub(crate) fn starting(at: Instant) -> EvaluationTime {
        EvaluationTime {
            started: at,
            last_stretch: Duration::ZERO,
        }
    }

    /// A stretch of the evaluation ran for `took`.
    pub(crate) fn ran(&mut self, took: Duration) {
        self.last_stretch = took;
    }

    /// The time of the latest stretch: after the time of the event that ran it.
    pub(crate) fn after_event(&self) -> Duration {
        self.last_stretch
    }

    /// The whole evaluation's time, when its latest stretch ended it; `now` is the time of the
    /// event that ran that stretch.
    pub(crate) fn at_end(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.started) + self.last_stretch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_program_without_tool_calls_takes_its_one_stretch() {
        let start = Instant::now();
        let mut time = EvaluationTime::starting(start);
        time.ran(ms(7));
        assert_eq!(time.at_end(start), ms(7));
        assert_eq!(time.after_event(), ms(7));
    }

    #[test]
    fn a_program_with_tool_calls_counts_each_stretch_once() {
        let start = Instant::now();
        let mut time = EvaluationTime::starting(start);
        // 30 ms of evaluation, then it waits for a call answered 100 ms after the start.
        time.ran(ms(30));
        // 20 ms more after that event, then a second call, answered at 250 ms.
        time.ran(ms(20));
        // The last 5 ms after the last event end the program.
        time.ran(ms(5));
        assert_eq!(time.at_end(start + ms(250)), ms(255));
        assert_eq!(time.after_event(), ms(5));
    }
}

//! The sandbox a run's programs run in: the task's data and limits, its tools as calls that
//! suspend the program for the driver to answer, and a stretch of evaluation with an
//! interpreter panic caught.

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

//! What a finished run gives Python: `ptc.Result` (its value, prints and tool calls) and
//! `ptc.ToolCall`, or the exception that ends it.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;

use ptc_lisp::{Outcome, RunOutcome, ToolCallRecord, ToolOutcome, Value};

use crate::convert::to_python;
use crate::errors;

/// One tool call a program made: the tool's name, the arguments, what it returned or why it
/// failed, and how long it took.
#[pyclass(module = "ptc", name = "ToolCall", frozen)]
pub(crate) struct PyToolCall {
    record: ToolCallRecord,
}

#[pymethods]
impl PyToolCall {
    /// The tool's name (without `tool/`).
    #[getter]
    fn name(&self) -> &str {
        &self.record.name
    }

    /// The arguments, as Python values.
    #[getter]
    fn args<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.record
            .args
            .iter()
            .map(|arg| to_python(py, arg, "the argument"))
            .collect()
    }

    /// What the tool returned (None for a call that failed).
    #[getter]
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.record.result {
            ToolOutcome::Ok(value) => to_python(py, value, "the tool's result"),
            ToolOutcome::Error(_) => Ok(py.None().into_bound(py)),
        }
    }

    /// Why the call failed (None for a call that returned).
    #[getter]
    fn error(&self) -> Option<&str> {
        match &self.record.result {
            ToolOutcome::Ok(_) => None,
            ToolOutcome::Error(message) => Some(message),
        }
    }

    /// How long the call took, in seconds.
    #[getter]
    fn duration(&self) -> f64 {
        self.record.duration().as_secs_f64()
    }

    fn __repr__(&self) -> String {
        let args: Vec<String> = self.record.args.iter().map(ptc_lisp::pr_str).collect();
        let outcome = match &self.record.result {
            ToolOutcome::Ok(value) => format!("-> {}", ptc_lisp::pr_str(value)),
            ToolOutcome::Error(message) => format!("failed: {message}"),
        };
        format!(
            "<ToolCall (tool/{} {}) {outcome}>",
            self.record.name,
            args.join(" ")
        )
    }
}

/// The tool calls of a run as a list of `ptc.ToolCall`.
pub(crate) fn tool_calls<'py>(
    py: Python<'py>,
    records: &[ToolCallRecord],
) -> PyResult<Bound<'py, PyList>> {
    let calls: Vec<PyToolCall> = records
        .iter()
        .map(|record| PyToolCall {
            record: record.clone(),
        })
        .collect();
    PyList::new(py, calls)
}

/// A program that ran to its end or returned: its value, what it printed and its tool calls.
#[pyclass(module = "ptc", name = "Result", frozen)]
pub(crate) struct RunResult {
    value: Value,
    returned: bool,
    prints: Vec<String>,
    tool_calls: Vec<ToolCallRecord>,
    steps: u64,
    converted: PyOnceLock<Py<PyAny>>,
}

#[pymethods]
impl RunResult {
    /// The value, as Python objects (converted once, when first read).
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.converted
            .get_or_try_init(py, || {
                to_python(py, &self.value, "the result").map(Bound::unbind)
            })
            .map(|v| v.bind(py).clone())
    }

    /// The value as PTC-Lisp prints it (`pr-str`): every value has one, functions included.
    #[getter]
    fn text(&self) -> String {
        ptc_lisp::pr_str(&self.value)
    }

    /// Whether the program ended with `(return value)` rather than by running to its end.
    #[getter]
    fn returned(&self) -> bool {
        self.returned
    }

    /// What the program printed, one entry per `println`.
    #[getter]
    fn prints(&self) -> Vec<String> {
        self.prints.clone()
    }

    /// Every tool call the program made, in order.
    #[getter]
    fn tool_calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        tool_calls(py, &self.tool_calls)
    }

    /// The evaluation steps the run took.
    #[getter]
    fn steps(&self) -> u64 {
        self.steps
    }

    fn __repr__(&self) -> String {
        format!("<Result {}>", ptc_lisp::pr_str(&self.value))
    }

    /// The run as HTML for a notebook: its value, output and tool calls.
    fn _repr_html_(&self) -> String {
        let turn = ptc_turn::Turn::success(1, "", self.value.clone())
            .with_prints(self.prints.clone())
            .with_tool_calls(self.tool_calls.clone());
        ptc_view::notebook_frame(&ptc_view::program_page(&turn), NOTEBOOK_HEIGHT / 2)
    }
}

/// The height in pixels of a run's page in a notebook's output cell (it scrolls inside).
pub(crate) const NOTEBOOK_HEIGHT: u32 = 640;

/// What a run printed and the tool calls it made, for the exception that ends it.
fn record<'py>(py: Python<'py>, out: &RunOutcome) -> PyResult<RunRecord<'py>> {
    Ok(RunRecord {
        prints: PyList::new(py, &out.prints)?.into_any(),
        tool_calls: tool_calls(py, &out.tool_calls)?.into_any(),
    })
}

/// The Python side of a finished run: a `ptc.Result`, or the exception for an error or a
/// `(fail ...)`. Python errors met by the run's tools (`causes`, newest last) become the
/// `__cause__` of a tool error that ended it.
pub(crate) fn finish(
    py: Python<'_>,
    out: RunOutcome,
    causes: Vec<PyErr>,
) -> PyResult<Py<RunResult>> {
    match &out.outcome {
        Outcome::Value(_) | Outcome::Returned(_) => {
            let returned = matches!(out.outcome, Outcome::Returned(_));
            let value = match out.outcome {
                Outcome::Value(v) | Outcome::Returned(v) => v,
                _ => Value::Nil,
            };
            Py::new(
                py,
                RunResult {
                    value,
                    returned,
                    prints: out.prints,
                    tool_calls: out.tool_calls,
                    steps: out.stats.steps,
                    converted: PyOnceLock::new(),
                },
            )
        }
        Outcome::Failed(reason) => {
            Err(program_failed(py, reason, out.failed_at, record(py, &out)?))
        }
        Outcome::Error(error) => {
            let raised = program_error(py, error, record(py, &out)?);
            if error.kind == ptc_lisp::ErrorKind::Tool
                && let Some(cause) = causes.into_iter().last()
            {
                raised.set_cause(py, Some(cause));
            }
            Err(raised)
        }
    }
}

/// What a run printed and the tool calls it made, for the exception that ends it.
struct RunRecord<'py> {
    prints: Bound<'py, PyAny>,
    tool_calls: Bound<'py, PyAny>,
}

/// `ptc.ProgramError` (or `ptc.LimitError` for a limit) for a run that ended with `error`.
fn program_error<'py>(py: Python<'py>, error: &ptc_lisp::Error, record: RunRecord<'py>) -> PyErr {
    let class = if error.kind.is_limit() {
        errors::limit_error_class(py)
    } else {
        errors::program_error_class(py)
    };
    let data = error
        .data
        .as_ref()
        .and_then(|d| to_python(py, d, "the exception's data").ok())
        .unwrap_or_else(|| py.None().into_bound(py));
    let (line, column) = match error.pos {
        Some(pos) => (Some(pos.line), Some(pos.col)),
        None => (None, None),
    };
    errors::raise(
        py,
        class,
        (error.kind.as_str(), error.message.as_str(), line, column),
        vec![
            ("data", data),
            ("prints", record.prints),
            ("tool_calls", record.tool_calls),
        ],
    )
}

/// `ptc.ProgramFailed` for a run that called `(fail reason)` at `pos`.
fn program_failed<'py>(
    py: Python<'py>,
    reason: &ptc_lisp::Value,
    pos: Option<ptc_lisp::Pos>,
    record: RunRecord<'py>,
) -> PyErr {
    let value = match to_python(py, reason, "the reason") {
        Ok(value) => value,
        Err(e) => return e,
    };
    let (line, column) = match pos {
        Some(pos) => (Some(pos.line), Some(pos.col)),
        None => (None, None),
    };
    errors::raise(
        py,
        errors::program_failed_class(py),
        (value, ptc_lisp::pr_str(reason), line, column),
        vec![("prints", record.prints), ("tool_calls", record.tool_calls)],
    )
}

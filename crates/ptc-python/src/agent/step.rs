//! `ptc.Step` and `ptc.Turn`: an agent run as Python objects, and as its JSON record.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList};

use ptc_agent::RunUsage;
use ptc_turn::{Step, StepOutcome, Turn};

use crate::convert::to_python;
use crate::outcome::{NOTEBOOK_HEIGHT, tool_calls};

fn json_loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    LOADS.import(py, "json", "loads")?.call1((text,))
}

fn to_json<T: serde::Serialize>(record: &T, indent: Option<usize>) -> PyResult<String> {
    let text = match indent {
        None => serde_json::to_string(record),
        Some(_) => serde_json::to_string_pretty(record),
    };
    text.map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))
}

/// How an agent run ended, with every turn it took and what it cost.
#[pyclass(module = "ptc", name = "Step", frozen)]
pub(crate) struct PyStep {
    step: Step,
    /// What the run used beyond tokens and time, taken before its turns were left out.
    run_usage: Option<RunUsage>,
    converted: PyOnceLock<Py<PyAny>>,
}

impl PyStep {
    /// The step of a run with what it used (see `Agent::run_usage`).
    pub(crate) fn with_usage(step: Step, run_usage: RunUsage) -> PyStep {
        PyStep {
            step,
            run_usage: Some(run_usage),
            converted: PyOnceLock::new(),
        }
    }
}

#[pymethods]
impl PyStep {
    /// Whether the run returned a value.
    #[getter]
    fn success(&self) -> bool {
        self.step.is_success()
    }

    /// The value the run returned, as Python objects (None for a failed run).
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let Some(value) = self.step.value() else {
            return Ok(py.None().into_bound(py));
        };
        self.converted
            .get_or_try_init(py, || {
                to_python(py, value, "the returned value").map(Bound::unbind)
            })
            .map(|v| v.bind(py).clone())
    }

    /// The returned value as PTC-Lisp prints it (None for a failed run).
    #[getter]
    fn text(&self) -> Option<String> {
        self.step.value().map(ptc_lisp::pr_str)
    }

    /// Why the run failed, as a stable kind (`failed`, `max_turns_exceeded`, `llm_error`,
    /// `signature_mismatch`, `timeout`, `interrupted`, ...); None for a run that returned.
    #[getter]
    fn failure_kind(&self) -> Option<&'static str> {
        match &self.step.outcome {
            StepOutcome::Failed { kind, .. } => Some(kind.as_str()),
            StepOutcome::Returned { .. } => None,
        }
    }

    /// Why the run failed, in words; None for a run that returned.
    #[getter]
    fn reason(&self) -> Option<&str> {
        match &self.step.outcome {
            StepOutcome::Failed { reason, .. } => Some(reason),
            StepOutcome::Returned { .. } => None,
        }
    }

    /// Every turn, oldest first.
    #[getter]
    fn turns(&self) -> Vec<PyTurn> {
        self.step
            .turns
            .as_slice()
            .iter()
            .map(|turn| PyTurn { turn: turn.clone() })
            .collect()
    }

    /// Tokens, model requests and durations of the whole run, as a dict, with the system
    /// prompt's size (`system_prompt_chars`, `system_prompt_tokens`), what the run kept after
    /// its last turn (`definitions_kept`, `memory_kept_bytes`) and what compression did to its
    /// last request (`compression`, a dict of its statistics).
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut usage = serde_json::to_value(&self.step.usage)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        if let (Some(fields), Some(Ok(serde_json::Value::Object(more)))) = (
            usage.as_object_mut(),
            self.run_usage.as_ref().map(serde_json::to_value),
        ) {
            fields.extend(more);
        }
        json_loads(py, &to_json(&usage, None)?)
    }

    /// The run's record as JSON text (the form `ptc run --dump-step` writes and `ptc render`
    /// reads); `indent` for a pretty form.
    #[pyo3(signature = (indent=None))]
    fn to_json(&self, indent: Option<usize>) -> PyResult<String> {
        to_json(&self.step, indent)
    }

    /// The run's record as a dict (the JSON form, read back).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_loads(py, &self.to_json(None)?)
    }

    /// The run's page for a notebook (what `ptc.view` writes), in a frame of its own.
    fn _repr_html_(&self) -> String {
        ptc_view::notebook_frame(
            &ptc_view::run_page(&self.step, &ptc_view::PageOptions::default()),
            NOTEBOOK_HEIGHT,
        )
    }

    fn __repr__(&self) -> String {
        match &self.step.outcome {
            StepOutcome::Returned { value } => format!(
                "<Step returned {} after {} turns>",
                ptc_lisp::pr_str(value),
                self.step.turns.as_slice().len()
            ),
            StepOutcome::Failed { kind, .. } => format!(
                "<Step failed ({}) after {} turns>",
                kind.as_str(),
                self.step.turns.as_slice().len()
            ),
        }
    }
}

/// One turn of an agent run: the model's reply, its program, and what running it produced.
#[pyclass(module = "ptc", name = "Turn", frozen)]
pub(crate) struct PyTurn {
    turn: Turn,
}

impl PyTurn {
    pub(crate) fn new(turn: Turn) -> PyTurn {
        PyTurn { turn }
    }
}

#[pymethods]
impl PyTurn {
    /// The turn's number, from 1.
    #[getter]
    fn number(&self) -> u32 {
        self.turn.number()
    }

    /// The program taken from the reply (empty when it had none).
    #[getter]
    fn program(&self) -> &str {
        self.turn.program()
    }

    /// Whether the program ran without an error.
    #[getter]
    fn success(&self) -> bool {
        self.turn.is_success()
    }

    /// The value of the program's last form, as Python objects (None after an error).
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.turn.value() {
            Some(value) => to_python(py, value, "the turn's value"),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The error, as a dict of `kind`, `message`, `line` and `column` (None after success).
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(error) = self.turn.error() else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("kind", error.kind.as_str())?;
        dict.set_item("message", &error.message)?;
        dict.set_item("line", error.line)?;
        dict.set_item("column", error.col)?;
        Ok(Some(dict))
    }

    /// What the program printed.
    #[getter]
    fn prints(&self) -> Vec<String> {
        self.turn.prints().to_vec()
    }

    /// The tool calls the program made.
    #[getter]
    fn tool_calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        tool_calls(py, self.turn.tool_calls())
    }

    /// The model's reply, as it came.
    #[getter]
    fn reply(&self) -> &str {
        self.turn.raw_response()
    }

    /// What the turn spent: tokens, model requests and durations, as a dict (the form of
    /// `Step.usage`).
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_loads(py, &to_json(self.turn.usage(), None)?)
    }

    fn __repr__(&self) -> String {
        let outcome = match (self.turn.value(), self.turn.error()) {
            (Some(value), _) => ptc_lisp::pr_str(value),
            (None, Some(error)) => format!("error[{}]", error.kind),
            (None, None) => String::new(),
        };
        format!("<Turn {} {outcome}>", self.turn.number())
    }
}

/// `ptc.view(step, path, compression=None)`: writes the run's page (one self-contained HTML
/// file) to `path`, its bill modelled with `compression` (a spec such as `"on"`; the full
/// history when not given), and returns the path.
#[pyfunction]
#[pyo3(signature = (step, path, compression=None))]
pub(crate) fn view(
    step: &Bound<'_, PyStep>,
    path: std::path::PathBuf,
    compression: Option<&str>,
) -> PyResult<std::path::PathBuf> {
    let mut options = ptc_view::PageOptions::default();
    if let Some(spec) = compression {
        options.compression = ptc_compression::CompressionConfig::parse(spec)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    }
    let page = ptc_view::run_page(&step.get().step, &options);
    std::fs::write(&path, page).map_err(|e| {
        pyo3::exceptions::PyOSError::new_err(format!("cannot write {}: {e}", path.display()))
    })?;
    Ok(path)
}

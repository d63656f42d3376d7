//! `ptc.Limits`: the sandbox limits of a run, in seconds and counts.

use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The sandbox limits of every run: time, steps, call depth, memory, value depth, tool calls,
/// output. Each argument left out (or None) keeps its default.
///
/// `timeout` bounds a run's own evaluation time (tools' time is not counted) and
/// `tool_timeout` each tool call (`math.inf`: no limit); both are in seconds.
#[pyclass(module = "ptc", name = "Limits", frozen)]
#[derive(Clone)]
pub(crate) struct PyLimits {
    pub(crate) inner: ptc_lisp::Limits,
}

fn seconds(name: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        PyValueError::new_err(format!(
            "{name} must be a number of seconds, 0 or more, got {value}"
        ))
    })
}

#[pymethods]
impl PyLimits {
    #[new]
    #[pyo3(signature = (*, timeout=None, max_steps=None, max_call_depth=None, max_memory_bytes=None, max_value_depth=None, max_tool_calls=None, tool_timeout=None, max_output_bytes=None, max_print_chars=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        timeout: Option<f64>,
        max_steps: Option<u64>,
        max_call_depth: Option<usize>,
        max_memory_bytes: Option<usize>,
        max_value_depth: Option<u32>,
        max_tool_calls: Option<usize>,
        tool_timeout: Option<f64>,
        max_output_bytes: Option<usize>,
        max_print_chars: Option<usize>,
    ) -> PyResult<PyLimits> {
        let mut limits = ptc_lisp::Limits::default();
        if let Some(t) = timeout {
            limits.timeout = seconds("timeout", t)?;
        }
        if let Some(t) = tool_timeout {
            limits.tool_timeout = if t == f64::INFINITY {
                None
            } else {
                Some(seconds("tool_timeout", t)?)
            };
        }
        limits.max_steps = max_steps.unwrap_or(limits.max_steps);
        limits.max_call_depth = max_call_depth.unwrap_or(limits.max_call_depth);
        limits.max_memory_bytes = max_memory_bytes.unwrap_or(limits.max_memory_bytes);
        limits.max_value_depth = max_value_depth.unwrap_or(limits.max_value_depth);
        limits.max_tool_calls = max_tool_calls.unwrap_or(limits.max_tool_calls);
        limits.max_output_bytes = max_output_bytes.unwrap_or(limits.max_output_bytes);
        limits.max_print_chars = max_print_chars.unwrap_or(limits.max_print_chars);
        Ok(PyLimits { inner: limits })
    }

    /// Seconds a run may evaluate (reading and analysis included, tools' time not).
    #[getter]
    fn timeout(&self) -> f64 {
        self.inner.timeout.as_secs_f64()
    }

    /// Evaluation steps a run may take.
    #[getter]
    fn max_steps(&self) -> u64 {
        self.inner.max_steps
    }

    /// The deepest chain of nested function calls.
    #[getter]
    fn max_call_depth(&self) -> usize {
        self.inner.max_call_depth
    }

    /// Bytes the values a run builds may take.
    #[getter]
    fn max_memory_bytes(&self) -> usize {
        self.inner.max_memory_bytes
    }

    /// The deepest nesting of collections inside one value.
    #[getter]
    fn max_value_depth(&self) -> u32 {
        self.inner.max_value_depth
    }

    /// Tool calls a run may make.
    #[getter]
    fn max_tool_calls(&self) -> usize {
        self.inner.max_tool_calls
    }

    /// Seconds one tool call may take (`math.inf`: no limit).
    #[getter]
    fn tool_timeout(&self) -> f64 {
        self.inner
            .tool_timeout
            .map_or(f64::INFINITY, |t| t.as_secs_f64())
    }

    /// Bytes a run may print.
    #[getter]
    fn max_output_bytes(&self) -> usize {
        self.inner.max_output_bytes
    }

    /// Characters each printed line is cut to.
    #[getter]
    fn max_print_chars(&self) -> usize {
        self.inner.max_print_chars
    }

    fn __repr__(&self) -> String {
        let l = &self.inner;
        format!(
            "Limits(timeout={}, max_steps={}, max_call_depth={}, max_memory_bytes={}, \
             max_value_depth={}, max_tool_calls={}, tool_timeout={}, max_output_bytes={}, \
             max_print_chars={})",
            self.timeout(),
            l.max_steps,
            l.max_call_depth,
            l.max_memory_bytes,
            l.max_value_depth,
            l.max_tool_calls,
            match l.tool_timeout {
                Some(t) => t.as_secs_f64().to_string(),
                None => "math.inf".to_string(),
            },
            l.max_output_bytes,
            l.max_print_chars
        )
    }
}

/// The limits `limits=` gives: a `ptc.Limits`, a dict of its arguments, or None (the defaults).
pub(crate) fn limits_from(limits: Option<&Bound<'_, PyAny>>) -> PyResult<ptc_lisp::Limits> {
    let Some(limits) = limits.filter(|l| !l.is_none()) else {
        return Ok(ptc_lisp::Limits::default());
    };
    if let Ok(given) = limits.cast::<PyLimits>() {
        return Ok(given.get().inner.clone());
    }
    if let Ok(dict) = limits.cast::<PyDict>() {
        let made = limits.py().get_type::<PyLimits>().call((), Some(dict))?;
        return Ok(made.cast::<PyLimits>()?.get().inner.clone());
    }
    Err(PyTypeError::new_err(format!(
        "limits must be a ptc.Limits or a dict of its arguments, got {}",
        limits.get_type().name()?
    )))
}

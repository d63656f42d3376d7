//! The exceptions the package raises, defined in Python (`ptc/_errors.py`) so that they carry
//! their fields as ordinary attributes: their classes, and making one.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyType};

fn class<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    name: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.import(py, "ptc._errors", name)
}

macro_rules! error_class {
    ($fn:ident, $name:literal) => {
        pub(crate) fn $fn(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
            static CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();
            class(py, &CLASS, $name)
        }
    };
}

error_class!(program_error_class, "ProgramError");
error_class!(limit_error_class, "LimitError");
error_class!(program_failed_class, "ProgramFailed");
error_class!(conversion_error_class, "ConversionError");
error_class!(agent_error_class, "AgentError");

/// `ExceptionType: message`, as a tool error or an LLM error shows a Python exception.
pub(crate) fn exception_text(py: Python<'_>, error: &PyErr) -> String {
    let name = error
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".to_string());
    let text = error
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    if text.is_empty() {
        name
    } else {
        format!("{name}: {text}")
    }
}

/// An instance of the exception class `class` made with `args` and `kwargs`, as a `PyErr`
/// (or the error of making it).
pub(crate) fn raise<'py>(
    py: Python<'py>,
    class: PyResult<&Bound<'py, PyType>>,
    args: impl pyo3::call::PyCallArgs<'py>,
    kwargs: Vec<(&str, Bound<'py, PyAny>)>,
) -> PyErr {
    let made = class.and_then(|class| {
        let kwargs = kwargs.into_py_dict(py)?;
        class.call(args, Some(&kwargs))
    });
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// `ptc.ConversionError(message)`.
pub(crate) fn conversion_error(py: Python<'_>, message: &str) -> PyErr {
    raise(py, conversion_error_class(py), (message,), Vec::new())
}

/// `ptc.AgentError(message)`.
pub(crate) fn agent_error(py: Python<'_>, message: &str) -> PyErr {
    raise(py, agent_error_class(py), (message,), Vec::new())
}

//! The host's Python tools: what `tools=` gives (normalized by `ptc._tools`), as the sandbox's
//! tool specs, and calling one.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

use crate::convert;

/// One tool: its spec, and the function that answers its calls (None when the host answers
/// them itself, through `start()` and `resume()`).
pub(crate) struct PyTool {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) params: Vec<String>,
    pub(crate) signature: Option<String>,
    pub(crate) function: Option<Py<PyAny>>,
}

/// The tools of a session or an agent, by name.
#[derive(Default)]
pub(crate) struct ToolTable {
    by_name: BTreeMap<String, PyTool>,
}

impl ToolTable {
    /// The tools `tools=` gives: a dict of names to functions or `ptc.Tool`s, a list of
    /// functions and `ptc.Tool`s, or None.
    pub(crate) fn from_python(tools: Option<&Bound<'_, PyAny>>) -> PyResult<ToolTable> {
        let Some(tools) = tools.filter(|t| !t.is_none()) else {
            return Ok(ToolTable::default());
        };
        static NORMALIZE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let normalize = NORMALIZE.import(tools.py(), "ptc._tools", "tools_from")?;
        let mut by_name = BTreeMap::new();
        for tool in normalize.call1((tools,))?.try_iter()? {
            let tool = tool?;
            // The function as a program calls it: a map of its parameter names binds them by name.
            let function = tool.getattr("_call")?;
            let tool = PyTool {
                name: tool.getattr("name")?.extract()?,
                description: tool.getattr("description")?.extract()?,
                params: tool.getattr("params")?.extract()?,
                signature: tool.getattr("signature")?.extract()?,
                function: (!function.is_none()).then(|| function.unbind()),
            };
            by_name.insert(tool.name.clone(), tool);
        }
        Ok(ToolTable { by_name })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &PyTool> {
        self.by_name.values()
    }

    /// The tools as the sandbox sees them: every call is answered by the host, while the run
    /// waits.
    pub(crate) fn sandbox_tools(&self) -> ptc_lisp::Tools {
        let mut tools = ptc_lisp::Tools::new();
        for tool in self.by_name.values() {
            let mut spec = ptc_lisp::ToolSpec::new(&tool.name, &tool.description)
                .with_params(tool.params.iter().cloned());
            spec.signature = tool.signature.clone();
            tools.insert_awaited(spec);
        }
        tools
    }

    /// The function that answers calls of `name`.
    pub(crate) fn function<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyAny>> {
        self.by_name
            .get(name)?
            .function
            .as_ref()
            .map(|f| f.bind(py).clone())
    }
}

/// What calling a tool's function gave.
pub(crate) enum Called<'py> {
    /// A value, not converted yet.
    Returned(Bound<'py, PyAny>),
    /// An awaitable (the function is `async def`), to be awaited by the caller.
    Awaitable(Bound<'py, PyAny>),
    /// The exception it raised (or why it could not be called).
    Raised(PyErr),
}

fn is_awaitable(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    static IS_AWAITABLE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    IS_AWAITABLE
        .import(value.py(), "inspect", "isawaitable")?
        .call1((value,))?
        .is_truthy()
}

/// Calls the function of tool `name` with `args`, positionally.
pub(crate) fn call<'py>(
    py: Python<'py>,
    table: &ToolTable,
    name: &str,
    args: &[ptc_lisp::Value],
) -> Called<'py> {
    let Some(function) = table.function(py, name) else {
        return Called::Raised(pyo3::exceptions::PyLookupError::new_err(format!(
            "tool/{name} has no function to call: give it one, or answer its calls with \
             start() and resume()"
        )));
    };
    let mut converted = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        match convert::to_python(py, arg, &format!("argument {} of tool/{name}", i + 1)) {
            Ok(arg) => converted.push(arg),
            Err(e) => return Called::Raised(e),
        }
    }
    let result = PyTuple::new(py, converted).and_then(|args| function.call1(args));
    match result {
        Ok(value) => match is_awaitable(&value) {
            Ok(true) => Called::Awaitable(value),
            Ok(false) => Called::Returned(value),
            Err(e) => Called::Raised(e),
        },
        Err(e) => Called::Raised(e),
    }
}

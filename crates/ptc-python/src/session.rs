//! `ptc.Session` and `ptc.run`: programs run against data, tools and limits, keeping the
//! `user/` namespace from one program to the next; `ptc.Suspended`, a run waiting for its host
//! to answer tool calls.
//!
//! Every Python tool is a tool the host answers: a run that calls one suspends (its fiber
//! keeps its state) and returns the calls here, where the GIL is taken to call the functions;
//! the run resumes with the GIL released. `run()` answers the calls itself; `start()` hands
//! them to the caller; `run_async()` (`ptc/_drive.py`) awaits coroutine tools concurrently.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use pyo3::exceptions::{PyException, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use ptc_lisp::{
    Progress, RunOutcome, Runtime, SuspendedRun, ToolAnswer, ToolError, ToolRequest, UserNamespace,
};

use crate::convert::{from_python, to_python};
use crate::errors::exception_text;
use crate::interrupt::{Watch, watched};
use crate::limits::{PyLimits, limits_from};
use crate::outcome::{RunResult, finish};
use crate::tools::{Called, ToolTable, call};

/// Runs programs against input data, tools and limits, and keeps what they define: each
/// program sees the definitions of the programs before it that succeeded, as an agent's turns
/// do.
#[pyclass(module = "ptc", name = "Session", frozen)]
pub(crate) struct PySession {
    runtime: Runtime,
    tools: Arc<ToolTable>,
    memory: Mutex<UserNamespace>,
}

/// The input data `data=` gives: a dict of names (`data/<name>`) to values.
pub(crate) fn data_entries(
    py: Python<'_>,
    data: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<(String, ptc_lisp::Value)>> {
    let Some(data) = data.filter(|d| !d.is_none()) else {
        return Ok(Vec::new());
    };
    let dict = data.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "data must be a dict of names to values, got {}",
            data.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut entries = Vec::with_capacity(dict.len());
    for (name, value) in dict.iter() {
        let name: String = name.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "data's keys name data/ values and must be str, got {}",
                name.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        let value = from_python(py, &value, &format!("data/{name}"))?;
        entries.push((name, value));
    }
    Ok(entries)
}

impl PySession {
    pub(crate) fn create(
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        limits: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySession> {
        let tools = ToolTable::from_python(tools)?;
        let mut runtime = Runtime::new()
            .with_limits(limits_from(limits)?)
            .with_tools(tools.sandbox_tools());
        for (name, value) in data_entries(py, data)? {
            runtime = runtime.with_data(name, value);
        }
        Ok(PySession {
            runtime,
            tools: Arc::new(tools),
            memory: Mutex::new(UserNamespace::new()),
        })
    }

    fn memory(&self) -> UserNamespace {
        self.memory.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Keeps what a finished run defined, if it succeeded (a failed run's definitions are
    /// discarded, as an agent discards a failed turn's).
    fn keep(&self, out: &RunOutcome) {
        if out.outcome.value().is_some()
            && let Ok(mut memory) = self.memory.lock()
        {
            *memory = out.namespace.clone();
        }
    }

    /// Reads `program` and evaluates it until it ends or waits for tool calls, with the GIL
    /// released.
    fn begin(&self, py: Python<'_>, program: &str) -> (Progress, Option<Watch>) {
        let memory = self.memory();
        let (runtime, watch) = watched(&self.runtime);
        let progress = py.detach(|| {
            if self.tools.is_empty() {
                // Nothing to wait for: the plain run, on the caller's stack.
                Progress::Finished(runtime.run_str(program, &memory))
            } else {
                runtime.start(program, &memory)
            }
        });
        (progress, watch)
    }
}

#[pymethods]
impl PySession {
    #[new]
    #[pyo3(signature = (*, data=None, tools=None, limits=None))]
    fn new(
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        limits: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySession> {
        PySession::create(py, data, tools, limits)
    }

    /// Runs `program` to its end, calling the tools' functions as it calls them (coroutine
    /// functions are awaited on an event loop of their own; use `run_async` inside one), and
    /// returns its `ptc.Result`. Raises `ptc.ProgramError` (`ptc.LimitError` for a limit) for
    /// an error and `ptc.ProgramFailed` for `(fail reason)`.
    fn run(slf: &Bound<'_, Self>, program: &str) -> PyResult<Py<RunResult>> {
        let py = slf.py();
        let (progress, watch) = slf.get().begin(py, program);
        drive(py, slf.clone().unbind(), progress, watch, Vec::new())
    }

    /// Starts `program`: returns its `ptc.Result` if it ends without calling a tool, else a
    /// `ptc.Suspended` whose `resume(value)` or `resume_error(error)` answers the call. The
    /// tools' functions are not called: the caller answers every call.
    fn start(slf: &Bound<'_, Self>, program: &str) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let (progress, watch) = slf.get().begin(py, program);
        advance(py, slf.clone().unbind(), progress, watch, Vec::new())
    }

    /// `await session.run_async(program)`: as `run`, on the running event loop; the calls a
    /// program makes at once (`pmap`, `pcalls`) are awaited concurrently, each within the
    /// limits' `tool_timeout`.
    fn run_async<'py>(slf: &Bound<'py, Self>, program: &str) -> PyResult<Bound<'py, PyAny>> {
        static RUN_ASYNC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        RUN_ASYNC
            .import(slf.py(), "ptc._drive", "run_async")?
            .call1((slf, program))
    }

    /// The names defined so far, in the order they were first defined.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.memory()
            .definitions()
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    /// The limits every run gets.
    #[getter]
    fn limits(&self) -> PyLimits {
        PyLimits {
            inner: self.runtime.limits().clone(),
        }
    }

    /// Forgets every definition.
    fn reset(&self) {
        if let Ok(mut memory) = self.memory.lock() {
            *memory = UserNamespace::new();
        }
    }

    fn __contains__(&self, name: &str) -> bool {
        self.memory().get(name).is_some()
    }

    /// The value defined as `name`, as Python objects.
    fn __getitem__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match self.memory().get(name) {
            Some(value) => to_python(py, value, name),
            None => Err(pyo3::exceptions::PyKeyError::new_err(name.to_string())),
        }
    }

    fn __repr__(&self) -> String {
        format!("<Session defining {}>", self.names().join(", "))
    }
}

/// Runs one PTC-Lisp program in a new session and returns its `ptc.Result`.
///
/// Args:
///     program: The program's text, one or more forms; the value of the last one is the
///         result (or the value given to `(return x)`).
///     data: Input the program reads as `data/NAME`: a dict of names to Python data (dicts,
///         lists, strings, numbers, booleans, None), or None for no input.
///     tools: The functions the program calls as `(tool/NAME arg ...)`: a dict of names to
///         functions or `ptc.Tool`s, or a list of functions and `ptc.Tool`s (see `ptc.Tool`).
///     limits: A `ptc.Limits`, or a dict of its arguments (`timeout`, `max_steps`, ...);
///         the defaults when None.
///
/// Returns:
///     A `ptc.Result`: `value` (as Python objects), `text` (as PTC-Lisp prints it),
///     `prints`, `tool_calls`, `returned` and `steps`.
///
/// Raises:
///     ptc.ProgramError: The program ended with an error (`ptc.LimitError` for a limit).
///     ptc.ProgramFailed: The program called `(fail reason)`.
#[pyfunction]
#[pyo3(signature = (program, *, data=None, tools=None, limits=None))]
pub(crate) fn run(
    py: Python<'_>,
    program: &str,
    data: Option<&Bound<'_, PyAny>>,
    tools: Option<&Bound<'_, PyAny>>,
    limits: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<RunResult>> {
    let given = |o: Option<&Bound<'_, PyAny>>| o.is_some_and(|o| !o.is_none());
    if given(data) || given(tools) || given(limits) {
        let session = Bound::new(py, PySession::create(py, data, tools, limits)?)?;
        return PySession::run(&session, program);
    }
    // The common case costs no session: one runtime, defaults everywhere.
    static PLAIN: OnceLock<Runtime> = OnceLock::new();
    let (runtime, watch) = watched(PLAIN.get_or_init(Runtime::new));
    let out = py.detach(|| runtime.run_str(program, &UserNamespace::new()));
    if let Some(signal) = watch.and_then(|w| w.take()) {
        return Err(signal);
    }
    finish(py, out, Vec::new())
}

/// Answers tool calls as the sync driver and `resume` do: the tool's value converted, or an
/// error the program sees. A Python exception that is not an `Exception` (KeyboardInterrupt,
/// SystemExit, a cancelled task) is not the tool's answer: it is returned as `Err`, and the run
/// is dropped by the caller.
fn answer(
    py: Python<'_>,
    request: &ToolRequest,
    result: Result<Bound<'_, PyAny>, PyErr>,
    started: Instant,
    causes: &mut Vec<PyErr>,
) -> PyResult<ToolAnswer> {
    let outcome = match result {
        Ok(value) => {
            match from_python(
                py,
                &value,
                &format!("the value tool/{} returned", request.name),
            ) {
                Ok(value) => Ok(value),
                Err(e) => {
                    let message = e.value(py).str().map(|s| s.to_string()).unwrap_or_default();
                    causes.push(e);
                    Err(ToolError::new(format!(
                        "it returned something that is not data: {message}"
                    )))
                }
            }
        }
        Err(e) if !e.is_instance_of::<PyException>(py) => return Err(e),
        Err(e) => {
            let message = exception_text(py, &e);
            causes.push(e);
            Err(ToolError::new(message))
        }
    };
    Ok(ToolAnswer::new(outcome, started.elapsed()))
}

/// Calls the functions of every request of a suspended run (awaiting coroutines together on
/// an event loop of their own) and returns their answers, in order.
fn answer_all(
    py: Python<'_>,
    tools: &ToolTable,
    requests: &[ToolRequest],
    timeout: f64,
    causes: &mut Vec<PyErr>,
) -> PyResult<Vec<ToolAnswer>> {
    let started = Instant::now();
    let mut answers: Vec<Option<ToolAnswer>> = Vec::with_capacity(requests.len());
    let mut awaited = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        let called_at = Instant::now();
        match call(py, tools, &request.name, &request.args) {
            Called::Returned(value) => {
                answers.push(Some(answer(py, request, Ok(value), called_at, causes)?))
            }
            Called::Raised(e) => {
                answers.push(Some(answer(py, request, Err(e), called_at, causes)?))
            }
            Called::Awaitable(awaitable) => {
                answers.push(None);
                awaited.push((i, awaitable));
            }
        }
    }
    if !awaited.is_empty() {
        static AWAIT_ALL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        let awaitables = PyList::new(py, awaited.iter().map(|(_, a)| a))?;
        let settled = AWAIT_ALL
            .import(py, "ptc._drive", "await_all")?
            .call1((awaitables, timeout))?;
        for ((i, _), outcome) in awaited.iter().zip(settled.try_iter()?) {
            let (ok, payload): (bool, Bound<'_, PyAny>) = outcome?.extract()?;
            let result = if ok {
                Ok(payload)
            } else {
                Err(PyErr::from_value(payload))
            };
            answers[*i] = Some(answer(py, &requests[*i], result, started, causes)?);
        }
    }
    Ok(answers.into_iter().flatten().collect())
}

fn tool_timeout(py: Python<'_>, session: &Py<PySession>) -> f64 {
    session
        .bind(py)
        .get()
        .runtime
        .limits()
        .tool_timeout
        .map_or(f64::INFINITY, |t| t.as_secs_f64())
}

/// The sync driver: answers every tool call until the run ends.
fn drive(
    py: Python<'_>,
    session: Py<PySession>,
    mut progress: Progress,
    watch: Option<Watch>,
    mut causes: Vec<PyErr>,
) -> PyResult<Py<RunResult>> {
    loop {
        if let Some(signal) = watch.as_ref().and_then(Watch::take) {
            return Err(signal);
        }
        match progress {
            Progress::Finished(out) => {
                session.get().keep(&out);
                return finish(py, out, causes);
            }
            Progress::Suspended(run) => {
                // A Ctrl-C while the run evaluated on its own stack is handled here.
                py.check_signals()?;
                let answers = answer_all(
                    py,
                    &session.get().tools,
                    run.requests(),
                    tool_timeout(py, &session),
                    &mut causes,
                )?;
                progress = py.detach(move || run.resume(answers));
            }
        }
    }
}

/// A finished run's result, or the run waiting for its next calls as a `ptc.Suspended`.
fn advance(
    py: Python<'_>,
    session: Py<PySession>,
    progress: Progress,
    watch: Option<Watch>,
    causes: Vec<PyErr>,
) -> PyResult<Py<PyAny>> {
    if let Some(signal) = watch.as_ref().and_then(Watch::take) {
        return Err(signal);
    }
    match progress {
        Progress::Finished(out) => {
            session.get().keep(&out);
            finish(py, out, causes).map(|r| r.into_any())
        }
        Progress::Suspended(run) => {
            let pending = Pending {
                run,
                answers: Vec::new(),
                suspended_at: Instant::now(),
                causes,
                session,
                watch,
            };
            Ok(Py::new(
                py,
                PySuspended {
                    pending: Mutex::new(Some(pending)),
                },
            )?
            .into_any())
        }
    }
}

struct Pending {
    run: SuspendedRun,
    /// The answers given so far, for the first of the run's requests.
    answers: Vec<ToolAnswer>,
    suspended_at: Instant,
    causes: Vec<PyErr>,
    session: Py<PySession>,
    watch: Option<Watch>,
}

/// A run waiting for the host to answer a tool call: `name` and `args` say which; answer with
/// `resume(value)` or `resume_error(error)`, which return the next `ptc.Suspended` or the
/// `ptc.Result` (or raise, as `run` does). The calls a program makes at once (`pmap`,
/// `pcalls`) are answered one after the other, in the order of `calls`. Dropping it ends the
/// run.
#[pyclass(module = "ptc", name = "Suspended", frozen)]
pub(crate) struct PySuspended {
    pending: Mutex<Option<Pending>>,
}

impl PySuspended {
    fn with_pending<T>(&self, f: impl FnOnce(&Pending) -> T) -> PyResult<T> {
        let pending = self
            .pending
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the run was lost"))?;
        match pending.as_ref() {
            Some(pending) => Ok(f(pending)),
            None => Err(PyRuntimeError::new_err(
                "this call was already answered: continue with the object resume() returned",
            )),
        }
    }

    fn current(&self) -> PyResult<ToolRequest> {
        self.with_pending(|p| p.run.requests()[p.answers.len()].clone())
    }

    /// Records `answer` for the current call; once every call has one, the run goes on.
    fn settle(
        &self,
        py: Python<'_>,
        make: impl FnOnce(&ToolRequest, Instant, &mut Vec<PyErr>) -> PyResult<ToolAnswer>,
    ) -> PyResult<Py<PyAny>> {
        let mut pending = self
            .pending
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the run was lost"))?
            .take()
            .ok_or_else(|| {
                PyRuntimeError::new_err(
                    "this call was already answered: continue with the object resume() returned",
                )
            })?;
        let request = pending.run.requests()[pending.answers.len()].clone();
        let answer = make(&request, pending.suspended_at, &mut pending.causes)?;
        pending.answers.push(answer);
        if pending.answers.len() < pending.run.requests().len() {
            return Ok(Py::new(
                py,
                PySuspended {
                    pending: Mutex::new(Some(pending)),
                },
            )?
            .into_any());
        }
        let Pending {
            run,
            answers,
            causes,
            session,
            watch,
            ..
        } = pending;
        let progress = py.detach(move || run.resume(answers));
        advance(py, session, progress, watch, causes)
    }
}

#[pymethods]
impl PySuspended {
    /// The tool called (without `tool/`).
    #[getter]
    fn name(&self) -> PyResult<String> {
        Ok(self.current()?.name)
    }

    /// The call's arguments, as Python values.
    #[getter]
    fn args<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let request = self.current()?;
        request
            .args
            .iter()
            .map(|a| to_python(py, a, &format!("an argument of tool/{}", request.name)))
            .collect()
    }

    /// Every call not answered yet, as `(name, args)`: this one first, then the others the
    /// program made at the same time.
    #[getter]
    fn calls<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let requests = self.with_pending(|p| p.run.requests()[p.answers.len()..].to_vec())?;
        requests
            .iter()
            .map(|request| {
                let args: PyResult<Vec<_>> = request
                    .args
                    .iter()
                    .map(|a| to_python(py, a, &format!("an argument of tool/{}", request.name)))
                    .collect();
                PyTuple::new(
                    py,
                    [
                        PyString::new(py, &request.name).into_any(),
                        PyList::new(py, args?)?.into_any(),
                    ],
                )
            })
            .collect()
    }

    /// Answers the call with `value`: returns the next `ptc.Suspended`, or the `ptc.Result`
    /// once the program ends. A value that is not data fails the call, as a tool error the
    /// program sees.
    fn resume(&self, py: Python<'_>, value: Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.settle(py, |request, started, causes| {
            answer(py, request, Ok(value), started, causes)
        })
    }

    /// Fails the call with `error` (a message, or the exception the tool raised), as a tool
    /// error the program sees (and may catch).
    fn resume_error(&self, py: Python<'_>, error: Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.settle(py, |_, started, causes| {
            let message = if let Ok(text) = error.cast::<PyString>() {
                text.to_string()
            } else if error.is_instance_of::<pyo3::exceptions::PyBaseException>() {
                let e = PyErr::from_value(error.clone());
                let text = exception_text(py, &e);
                causes.push(e);
                text
            } else {
                return Err(PyValueError::new_err(
                    "resume_error takes a message (str) or an exception",
                ));
            };
            Ok(ToolAnswer::new(
                Err(ToolError::new(message)),
                started.elapsed(),
            ))
        })
    }

    /// The functions of the calls not answered yet, with their arguments (for `run_async`).
    fn _pending<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let (requests, session) = self.with_pending(|p| {
            (
                p.run.requests()[p.answers.len()..].to_vec(),
                p.session.clone_ref(py),
            )
        })?;
        let tools = &session.get().tools;
        let timeout = tool_timeout(py, &session);
        requests
            .iter()
            .map(|request| {
                let function = tools
                    .function(py, &request.name)
                    .unwrap_or_else(|| py.None().into_bound(py));
                let args: PyResult<Vec<_>> = request
                    .args
                    .iter()
                    .map(|a| to_python(py, a, &format!("an argument of tool/{}", request.name)))
                    .collect();
                let args = match args {
                    Ok(args) => PyList::new(py, args)?.into_any(),
                    // Refused by the call itself, as the sync driver refuses it.
                    Err(e) => e.into_value(py).into_bound(py).into_any(),
                };
                PyTuple::new(
                    py,
                    [
                        PyString::new(py, &request.name).into_any(),
                        function,
                        args,
                        timeout.into_pyobject(py)?.into_any(),
                    ],
                )
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        match self.current() {
            Ok(request) => {
                let args: Vec<String> = request.args.iter().map(ptc_lisp::pr_str).collect();
                format!("<Suspended at (tool/{} {})>", request.name, args.join(" "))
            }
            Err(_) => "<Suspended, answered>".to_string(),
        }
    }
}

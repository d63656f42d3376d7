//! How a run on the tokio runtime asks Python for model replies and tool results: each request
//! is an event handed to the run's Python driver (`ptc/_drive.py`) through the callable it
//! gave (`queue.put`, or `call_soon_threadsafe` onto an event loop), with a `Responder` that
//! the driver answers. A request whose future is dropped unanswered (the tool timed out, the
//! run stopped) is followed by a `cancel` event, so the driver can cancel what it awaits.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use tokio::sync::oneshot;

use ptc_lisp::Value;

use crate::convert::{from_python, to_python};
use crate::errors::exception_text;

/// What the driver answered.
pub(crate) enum Answer {
    /// A tool's value.
    Value(Value),
    /// A model's reply.
    Text(String),
    /// The call failed, for this reason.
    Failed(String),
}

/// What a request is for, which decides how its answer converts.
#[derive(Clone)]
enum Asking {
    Tool(String),
    Llm,
}

/// The handle the driver answers one request with.
#[pyclass(module = "ptc", name = "_Responder", frozen)]
pub(crate) struct Responder {
    id: u64,
    asking: Asking,
    sender: Mutex<Option<oneshot::Sender<Answer>>>,
}

impl Responder {
    fn send(&self, answer: Answer) {
        if let Some(sender) = self.sender.lock().ok().and_then(|mut s| s.take()) {
            // The run may have stopped waiting; then nobody needs the answer.
            let _ = sender.send(answer);
        }
    }
}

#[pymethods]
impl Responder {
    /// The request's number, as the `cancel` event names it.
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    /// Answers with what the function returned: a tool's value (data), a model's reply (str).
    fn ok(&self, py: Python<'_>, value: Bound<'_, PyAny>) {
        let answer = match &self.asking {
            Asking::Tool(name) => {
                match from_python(py, &value, &format!("the value tool/{name} returned")) {
                    Ok(value) => Answer::Value(value),
                    Err(e) => Answer::Failed(format!(
                        "it returned something that is not data: {}",
                        e.value(py).str().map(|s| s.to_string()).unwrap_or_default()
                    )),
                }
            }
            Asking::Llm => match value.cast::<PyString>() {
                Ok(text) => Answer::Text(text.to_string()),
                Err(_) => Answer::Failed(format!(
                    "the llm function must return the reply's text (a str), got {}",
                    value
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                )),
            },
        };
        self.send(answer);
    }

    /// Answers with a failure: the exception the function raised, or a message.
    fn error(&self, py: Python<'_>, error: Bound<'_, PyAny>) {
        let message = match error.cast::<PyString>() {
            Ok(text) => text.to_string(),
            Err(_) => exception_text(py, &PyErr::from_value(error)),
        };
        self.send(Answer::Failed(message));
    }
}

/// The run's way to its Python driver.
pub(crate) struct Dispatch {
    deliver: Py<PyAny>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A request in flight: when dropped before its answer came, the driver is told to cancel it.
pub(crate) struct InFlight<'d> {
    dispatch: &'d Dispatch,
    id: u64,
    answered: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.answered {
            let id = self.id;
            Python::attach(|py| {
                let event = PyTuple::new(
                    py,
                    [
                        PyString::new(py, "cancel").into_any(),
                        id.into_pyobject(py)
                            .map(|i| i.into_any())
                            .unwrap_or_else(|_| py.None().into_bound(py)),
                    ],
                );
                if let Ok(event) = event {
                    let _ = self.dispatch.deliver.bind(py).call1((event,));
                }
            });
        }
    }
}

impl Dispatch {
    pub(crate) fn new(deliver: Py<PyAny>) -> Dispatch {
        Dispatch { deliver }
    }

    /// Hands `(kind, id, function, payload, responder)` to the driver and waits for the answer.
    async fn ask(
        &self,
        kind: &str,
        asking: Asking,
        function: &Py<PyAny>,
        payload: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>>,
    ) -> Answer {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        let delivered = Python::attach(|py| -> PyResult<()> {
            let responder = Py::new(
                py,
                Responder {
                    id,
                    asking,
                    sender: Mutex::new(Some(sender)),
                },
            )?;
            let event = PyTuple::new(
                py,
                [
                    PyString::new(py, kind).into_any(),
                    id.into_pyobject(py)?.into_any(),
                    function.bind(py).clone(),
                    payload(py)?,
                    responder.into_bound(py).into_any(),
                ],
            )?;
            self.deliver.bind(py).call1((event,))?;
            Ok(())
        });
        if let Err(e) = delivered {
            let message = Python::attach(|py| exception_text(py, &e));
            return Answer::Failed(format!(
                "the Python driver could not take the call: {message}"
            ));
        }
        let mut in_flight = InFlight {
            dispatch: self,
            id,
            answered: false,
        };
        let answer = receiver.await;
        in_flight.answered = true;
        answer.unwrap_or_else(|_| {
            Answer::Failed("the Python driver stopped before it answered".into())
        })
    }

    /// Asks for tool `name`'s result for `args`, from `function`.
    pub(crate) async fn call_tool(
        &self,
        name: &str,
        function: &Py<PyAny>,
        args: &[Value],
    ) -> Answer {
        self.ask("tool", Asking::Tool(name.to_string()), function, |py| {
            let mut converted = Vec::with_capacity(args.len());
            for (i, arg) in args.iter().enumerate() {
                match to_python(py, arg, &format!("argument {} of tool/{name}", i + 1)) {
                    Ok(arg) => converted.push(arg),
                    // The driver fails the call with it.
                    Err(e) => return Ok(e.into_value(py).into_bound(py).into_any()),
                }
            }
            Ok(pyo3::types::PyList::new(py, converted)?.into_any())
        })
        .await
    }

    /// Asks `function` for a model reply to `messages` (dicts of `role` and `content`).
    pub(crate) async fn complete(
        &self,
        function: &Py<PyAny>,
        messages: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>>,
    ) -> Answer {
        self.ask("llm", Asking::Llm, function, messages).await
    }

    /// Hands the driver an event that asks for no answer (a turn for `on_turn`, a log record).
    pub(crate) fn notify(
        &self,
        event: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
    ) {
        Python::attach(|py| {
            // The driver is gone, or the event could not be made: nobody is told.
            let _ = event(py).and_then(|event| self.deliver.bind(py).call1((event,)));
        });
    }

    /// Tells the driver the run ended with `result` (a `ptc.Step`, or the exception to raise).
    pub(crate) fn done(
        &self,
        result: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>>,
    ) {
        Python::attach(|py| {
            let outcome = result(py).unwrap_or_else(|e| e.into_value(py).into_bound(py).into_any());
            let event = PyTuple::new(py, [PyString::new(py, "done").into_any(), outcome]);
            match event.and_then(|event| self.deliver.bind(py).call1((event,))) {
                Ok(_) => {}
                // The driver is gone (its event loop closed): nobody waits for the run.
                Err(e) => drop(e),
            }
        });
    }
}

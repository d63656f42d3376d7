//! One run of a `ptc.Agent`, driven by a Python loop (`ptc/_drive.py`): the loop calls
//! `_AgentRun.step` with its answer to the last request, and the run advances its core
//! (`ptc_run::RunCore`, built by `ptc_agent::Agent::run_core`) until it needs Python again.
//! What Rust answers is carried out here, as `ptc-agent`'s own driver carries it out (a model
//! named by its spec, the MCP servers' tools, the checkpoint store, the turns' spans and log
//! lines); what Python answers goes back to the loop as a request:
//!
//! - `("llm", function, messages, remaining)`: the model function's reply to `messages`;
//! - `("tools", calls, remaining)`: the answers of Python tools, each call `(name, function,
//!   args, timeout)` (`args` is the exception of converting them when they could not be);
//! - `("turn", on_turn, turn)`: a turn just recorded, for `on_turn`;
//! - `("wait",)`, under `run_async` only: the run waits for the runtime (a model named by its
//!   spec, MCP tools), which calls the loop's waker when it is done;
//! - `("done", step)`: the run's `ptc.Step`.
//!
//! `remaining` is the seconds left before the run's deadline, None without one. A reply or a
//! tool's answer is `(ok, value, seconds)`: `ok` True for what the function returned, False for
//! the exception it raised (or a message), None for a call the loop gave up at its timeout;
//! `seconds` is how long it took by the loop's clock. `"deadline"` answers that the deadline
//! passed while the loop waited. Time reaches the core as `Instant::now()`, read when each
//! event is handed to it.

use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use tokio::sync::watch;
use tracing::Instrument;
use tracing::instrument::WithSubscriber;

use ptc_agent::store::RunStore;
use ptc_agent::{
    Agent, LlmError, LlmRequest, LlmResponse, RunOptions, checkpoint_end, checkpoint_turn,
    log_deadline_passed, log_stopped, record_turn, turn_span,
};
use ptc_lisp::{ToolAnswer, ToolError, ToolRequest, Value};
use ptc_run::{Action, Event, PlannedCall, RunCore, Start};
use ptc_turn::{Step, TraceMode, Turn, Usage};

use super::answers::{Settled, deadline_at, reply, signal_raised, stop_requested, tool_answer};
use super::llm::messages;
use super::opening::{Opening, opening};
use super::progress::{LogForwarder, Records};
use super::runtime::runtime;
use super::step::{PyStep, PyTurn};
use crate::convert::to_python;
use crate::errors::agent_error;
use crate::tools::ToolTable;

/// What a run is given besides its agent: how Python answers it, and where it is kept.
pub(super) struct Given {
    pub(super) agent: Arc<Agent>,
    /// The model's function, None for a model named by its spec.
    pub(super) model: Option<Py<PyAny>>,
    pub(super) tools: Arc<ToolTable>,
    pub(super) on_turn: Option<Py<PyAny>>,
    pub(super) trace: TraceMode,
    /// The limit the run's deadline was set by.
    pub(super) deadline: Option<Duration>,
    pub(super) data: Vec<(String, Value)>,
    /// The checkpoint store, its path and the run's id there, and whether to resume it.
    pub(super) store: Option<Box<dyn RunStore>>,
    pub(super) checkpoint: Option<std::path::PathBuf>,
    pub(super) id: String,
    pub(super) resume: bool,
    /// The least `logging` level the `ptc` logger handles.
    pub(super) log_level: u32,
    /// Under `run_async`: called, from the runtime, when a wait of the run is over.
    pub(super) waker: Option<Py<PyAny>>,
}

/// A run of an agent, advanced by its Python loop: `step(answer)` gives the next request.
#[pyclass(module = "ptc", name = "_AgentRun", frozen)]
pub(crate) struct AgentRun {
    /// The run until it is over.
    state: Mutex<Option<Running>>,
    /// Set by `stop()`: the wait in progress ends and the run ends `interrupted`.
    stop: watch::Sender<bool>,
    /// The log records its loop has not logged yet.
    records: Records,
}

/// How a run stands between two steps.
struct Running {
    /// Borrows `agent` (see [`core_of`]); declared first, so that it is dropped first.
    core: Option<RunCore<'static>>,
    agent: Arc<Agent>,
    model: Option<Py<PyAny>>,
    tools: Arc<ToolTable>,
    on_turn: Option<Py<PyAny>>,
    trace: TraceMode,
    deadline: Option<Duration>,
    store: Option<(Arc<dyn RunStore>, String)>,
    started: Instant,
    /// The span of the turn in progress, made when the core starts a turn.
    turn_span: Option<tracing::Span>,
    /// The subscriber the run's log events go to.
    logs: tracing::Dispatch,
    waker: Option<Py<PyAny>>,
    stopped: watch::Receiver<bool>,
    pending: Pending,
    /// A signal (Ctrl-C) caught while the run waited: raised once the run has ended.
    caught: Option<PyErr>,
}

/// What the run waits for.
enum Pending {
    /// Nothing: the next step starts the run, or goes on after `on_turn`.
    Next,
    /// The model function's reply.
    Model,
    /// The answers of the Python tools among `requests` (at `python`); the others' are in
    /// `answers`.
    Tools {
        requests: Vec<ToolRequest>,
        answers: Vec<Option<ToolAnswer>>,
        python: Vec<usize>,
    },
    /// A wait on the runtime (under `run_async`), whose outcome is in `slot` once it is over.
    Runtime {
        slot: Arc<Mutex<Option<Waited>>>,
        then: Then,
    },
    /// A resumed run that had ended: its step.
    Ended(Box<Step>),
}

/// How a wait on the runtime ended.
enum Waited {
    Replied(Result<LlmResponse, LlmError>, Usage),
    Answered(Vec<ToolAnswer>),
    Cut(Cut),
}

/// Why the run stopped waiting before its answer came.
enum Cut {
    Stopped,
    DeadlinePassed,
    /// Ctrl-C, while `run()` waited: the exception to raise.
    Signal(PyErr),
}

/// What a wait on the runtime answers.
enum Then {
    /// The model's request.
    Reply,
    /// The calls at `rust` among `requests`; the Python tools' at `python` come next.
    Tools {
        requests: Vec<ToolRequest>,
        answers: Vec<Option<ToolAnswer>>,
        rust: Vec<usize>,
        python: Vec<usize>,
    },
}

/// What the run needs of its Python loop next.
enum Handoff {
    Model(Box<LlmRequest>),
    Tools(Vec<ToolRequest>),
    Turn(Box<Turn>),
    Wait,
    Done(Box<Step>),
}

/// What a step starts from.
enum Input {
    Event(Event),
    Waited(Waited, Then),
}

/// The core of a run of `agent`, kept with it.
fn core_of(agent: &Arc<Agent>, task: ptc_turn::Task, start: Start) -> RunCore<'static> {
    // SAFETY: the core borrows the agent's settings and signature, which live in the `Agent`
    // this `Arc` owns: a heap allocation that neither moves nor changes while the `Arc` lives.
    // `Running` holds that `Arc` beside the core and declares the core first, so the core is
    // dropped (or consumed by `into_step`) before the agent; and the core is only advanced,
    // asked and consumed, never handed anything borrowed for its `'static`.
    let agent: &'static Agent = unsafe { &*Arc::as_ptr(agent) };
    agent.run_core(task, start, Instant::now())
}

impl AgentRun {
    /// Opens a run as `given` says: its task made, its checkpoint started or loaded.
    pub(super) fn open(py: Python<'_>, given: Given) -> PyResult<AgentRun> {
        let Given {
            agent,
            model,
            tools,
            on_turn,
            trace,
            deadline,
            data,
            store,
            checkpoint,
            id,
            resume,
            log_level,
            waker,
        } = given;
        let records = Records::default();
        let logs = tracing::Dispatch::new(LogForwarder {
            level: log_level,
            records: records.clone(),
        });
        let runtime = runtime()?;
        let store: Option<Arc<dyn RunStore>> = store.map(Arc::from);
        let opened = py.detach(|| {
            let mut options = RunOptions::new();
            for (name, value) in data {
                options = options.with_data_value(name, value);
            }
            let opening = opening(
                &agent,
                options,
                store.as_deref(),
                checkpoint.as_deref(),
                &id,
                resume,
            );
            runtime.block_on(opening.with_subscriber(logs.clone()))
        });
        let (core, pending) = match opened.map_err(|e| agent_error(py, &e))? {
            Opening::Ended(step) => (None, Pending::Ended(Box::new(step))),
            Opening::GoesOn(task, start) => (Some(core_of(&agent, task, start)), Pending::Next),
        };
        let (stop, stopped) = watch::channel(false);
        let running = Running {
            core,
            agent,
            model,
            tools,
            on_turn,
            trace,
            deadline,
            store: store.map(|store| (store, id)),
            started: Instant::now(),
            turn_span: None,
            logs,
            waker,
            stopped,
            pending,
            caught: None,
        };
        Ok(AgentRun {
            state: Mutex::new(Some(running)),
            stop,
            records,
        })
    }
}

fn lost() -> PyErr {
    PyRuntimeError::new_err("the run was lost")
}

impl AgentRun {
    /// The run's state, waited for without the GIL (its loop is the only one that takes it).
    fn lock(&self, py: Python<'_>) -> PyResult<std::sync::MutexGuard<'_, Option<Running>>> {
        loop {
            match self.state.try_lock() {
                Ok(state) => return Ok(state),
                Err(std::sync::TryLockError::WouldBlock) => {
                    py.detach(|| std::thread::sleep(Duration::from_millis(1)))
                }
                Err(std::sync::TryLockError::Poisoned(_)) => return Err(lost()),
            }
        }
    }
}

#[pymethods]
impl AgentRun {
    /// Takes the answer to the last request (None for none) and gives the next request.
    #[pyo3(signature = (answer=None))]
    fn step<'py>(
        &self,
        py: Python<'py>,
        answer: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let mut state = self.lock(py)?;
        let Some(running) = state.as_mut() else {
            return Err(PyRuntimeError::new_err("the run is over"));
        };
        let pending = std::mem::replace(&mut running.pending, Pending::Next);
        let handoff = match running.input(py, pending, answer)? {
            ControlFlow::Break(handoff) => handoff,
            ControlFlow::Continue(input) => {
                let logs = running.logs.clone();
                py.detach(|| tracing::dispatcher::with_default(&logs, || running.go(input)))
            }
        };
        let request = running.request(py, handoff)?;
        if request.0 {
            let caught = state.take().and_then(|mut running| running.caught.take());
            if let Some(signal) = caught {
                return Err(signal);
            }
        }
        Ok(request.1)
    }

    /// Stops the run: a wait in progress ends, the turn in progress is cut off and the run
    /// ends `interrupted` (with a checkpoint, it can be resumed).
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        self.stop.send_replace(true);
        let mut state = self.lock(py)?;
        if let Some(mut running) = state.take() {
            let logs = running.logs.clone();
            py.detach(|| tracing::dispatcher::with_default(&logs, || running.stop_now()));
        }
        Ok(())
    }

    /// The log records not logged yet, as `(level, message)`, oldest first.
    fn _logs(&self) -> Vec<(u32, String)> {
        self.records
            .lock()
            .map(|mut records| std::mem::take(&mut *records))
            .unwrap_or_default()
    }
}

impl Running {
    fn core(&mut self) -> &mut RunCore<'static> {
        self.core
            .as_mut()
            .expect("a running run has its core until it finishes")
    }

    /// What the loop's `answer` to `pending` makes: the event to go on with, or (for a wait
    /// not over yet, or a resumed run that had ended) what to hand back at once.
    fn input(
        &mut self,
        py: Python<'_>,
        pending: Pending,
        answer: Option<Bound<'_, PyAny>>,
    ) -> PyResult<ControlFlow<Handoff, Input>> {
        let deadline_passed = answer
            .as_ref()
            .and_then(|a| a.cast::<PyString>().ok())
            .is_some_and(|a| a.to_cow().is_ok_and(|a| a == "deadline"));
        let answered = match pending {
            Pending::Ended(step) => return Ok(ControlFlow::Break(Handoff::Done(step))),
            Pending::Runtime { slot, then } => {
                let waited = slot.lock().map_err(|_| lost())?.take();
                return Ok(match waited {
                    Some(waited) => ControlFlow::Continue(Input::Waited(waited, then)),
                    None => {
                        // Woken before its end: wait on.
                        self.pending = Pending::Runtime { slot, then };
                        ControlFlow::Break(Handoff::Wait)
                    }
                });
            }
            _ if deadline_passed => {
                return Ok(ControlFlow::Continue(Input::Waited(
                    Waited::Cut(Cut::DeadlinePassed),
                    Then::Reply,
                )));
            }
            Pending::Next => Event::Next,
            Pending::Model => {
                let settled: Settled<'_> = answer
                    .ok_or_else(|| PyRuntimeError::new_err("the model's reply is missing"))?
                    .extract()?;
                let (result, spent) = reply(py, settled);
                Event::Replied { result, spent }
            }
            Pending::Tools {
                requests,
                mut answers,
                python,
            } => {
                let settled = answer
                    .ok_or_else(|| PyRuntimeError::new_err("the tools' answers are missing"))?;
                let settled = settled.cast::<PyList>()?;
                if settled.len() != python.len() {
                    return Err(PyRuntimeError::new_err(format!(
                        "{} answers for {} tool calls",
                        settled.len(),
                        python.len()
                    )));
                }
                let timeout = self.agent.limits().tool_timeout;
                for (&i, item) in python.iter().zip(settled.iter()) {
                    let answer = tool_answer(py, &requests[i].name, item.extract()?, timeout);
                    answers[i] = Some(answer);
                }
                Event::ToolsAnswered {
                    answers: answers.into_iter().flatten().collect(),
                    spent: Usage::default(),
                }
            }
        };
        // Stopped, or out of time, while the loop answered.
        let cut = if *self.stopped.borrow() {
            Some(Cut::Stopped)
        } else if self.deadline_passed() {
            Some(Cut::DeadlinePassed)
        } else {
            None
        };
        Ok(ControlFlow::Continue(match cut {
            Some(cut) => Input::Waited(Waited::Cut(cut), Then::Reply),
            None => Input::Event(answered),
        }))
    }

    fn deadline_passed(&self) -> bool {
        self.core
            .as_ref()
            .and_then(RunCore::deadline)
            .is_some_and(|at| Instant::now() >= at)
    }

    /// The seconds left before the deadline, if there is one.
    fn remaining(&self) -> Option<f64> {
        let at = self.core.as_ref()?.deadline()?;
        Some(at.saturating_duration_since(Instant::now()).as_secs_f64())
    }

    /// Advances the run from `input` until it needs the loop.
    fn go(&mut self, input: Input) -> Handoff {
        let mut event = match input {
            Input::Event(event) => event,
            Input::Waited(waited, then) => match self.waited(waited, then) {
                ControlFlow::Continue(event) => event,
                ControlFlow::Break(handoff) => return handoff,
            },
        };
        loop {
            event = match self.drive(event) {
                ControlFlow::Continue(event) => event,
                ControlFlow::Break(handoff) => return handoff,
            };
        }
    }

    /// The core's next action after `event`, decided now, in the span of the turn in progress,
    /// with the turn's span and log line made from it, as `ptc-agent`'s driver makes them.
    fn advance(&mut self, event: Event) -> Action {
        let span = self.turn_span.clone().unwrap_or_else(tracing::Span::none);
        let Some(core) = self.core.as_mut() else {
            return Action::Finished;
        };
        let action = span.in_scope(|| core.advance(event, Instant::now()));
        let max_turns = core.max_turns();
        match &action {
            Action::Rendered { turn, .. } => self.turn_span = Some(turn_span(*turn, max_turns)),
            Action::Recorded => {
                if let (Some(span), Some(turn)) = (self.turn_span.take(), core.last_turn()) {
                    record_turn(&span, turn, max_turns);
                }
            }
            Action::Finished => self.turn_span = None,
            _ => {}
        }
        action
    }

    /// Carries out the core's action after `event`: the next event, or what the loop does.
    fn drive(&mut self, event: Event) -> ControlFlow<Handoff, Event> {
        let action = self.advance(event);
        ControlFlow::Continue(match action {
            // Python's agents set no turn budget shared with sub-agents (they have none), and
            // the core asks only for a budget it was given.
            Action::TakeTurn => Event::TurnTaken { granted: true },
            Action::Rendered { .. } => Event::Next,
            // Nor a history policy: the messages go as rendered.
            Action::ApplyHistory(messages) => Event::HistoryApplied {
                messages,
                spent: Usage::default(),
            },
            Action::Ask(request) => {
                if let Some(cut) = self.cut_now() {
                    return self.waited(Waited::Cut(cut), Then::Reply);
                }
                if self.model.is_some() {
                    self.pending = Pending::Model;
                    return ControlFlow::Break(Handoff::Model(request));
                }
                let agent = self.agent.clone();
                let turn = self.core().turn_number();
                let asking = async move {
                    let mut spent = Usage::default();
                    let result = agent.ask_model(turn, &request, &mut spent).await;
                    Waited::Replied(result, spent)
                };
                return self.wait(asking, Then::Reply);
            }
            // A Python agent's store keeps no intent log: every call is made, without a key.
            Action::CallTools { calls, .. } => {
                let requests = calls
                    .into_iter()
                    .filter(PlannedCall::is_made)
                    .map(|call| call.request)
                    .collect();
                return self.call_tools(requests);
            }
            Action::Recorded => {
                let turn = self.core().last_turn().cloned();
                if let (Some(turn), Some((store, id))) = (&turn, &self.store)
                    && let Ok(runtime) = runtime()
                {
                    let writing = checkpoint_turn(&**store, id, turn);
                    runtime.block_on(writing.with_subscriber(self.logs.clone()));
                }
                match turn {
                    Some(turn) if self.on_turn.is_some() => {
                        return ControlFlow::Break(Handoff::Turn(Box::new(turn)));
                    }
                    _ => Event::Next,
                }
            }
            Action::Finished => return ControlFlow::Break(Handoff::Done(Box::new(self.finish()))),
        })
    }

    /// The run's step, its end checkpointed.
    fn finish(&mut self) -> Step {
        let Some(core) = self.core.take() else {
            unreachable!("a run finishes once")
        };
        let step = core.into_step(self.started.elapsed());
        if let (Some((store, id)), Ok(runtime)) = (&self.store, runtime()) {
            let writing = checkpoint_end(&**store, id, &step);
            runtime.block_on(writing.with_subscriber(self.logs.clone()));
        }
        step
    }

    /// Whether the run must stop before it waits for anything more.
    fn cut_now(&self) -> Option<Cut> {
        if *self.stopped.borrow() {
            Some(Cut::Stopped)
        } else if self.deadline_passed() {
            Some(Cut::DeadlinePassed)
        } else {
            None
        }
    }

    /// Answers `requests`: the MCP servers' tools on the runtime, the Python tools by the
    /// loop, a Python tool without a function at once.
    fn call_tools(&mut self, requests: Vec<ToolRequest>) -> ControlFlow<Handoff, Event> {
        if let Some(cut) = self.cut_now() {
            return self.waited(Waited::Cut(cut), Then::Reply);
        }
        let mut answers: Vec<Option<ToolAnswer>> = requests.iter().map(|_| None).collect();
        let (mut rust, mut python) = (Vec::new(), Vec::new());
        for (i, request) in requests.iter().enumerate() {
            match self.tools.iter().find(|t| t.name == request.name) {
                None => rust.push(i),
                Some(tool) if tool.function.is_some() => python.push(i),
                Some(_) => {
                    answers[i] = Some(ToolAnswer::new(
                        Err(ToolError::new(format!(
                            "tool/{} has no function to call",
                            request.name
                        ))),
                        Duration::ZERO,
                    ));
                }
            }
        }
        if rust.is_empty() {
            return self.python_tools(requests, answers, python);
        }
        let agent = self.agent.clone();
        let calls: Vec<ToolRequest> = rust.iter().map(|&i| requests[i].clone()).collect();
        let calling = async move { Waited::Answered(agent.call_tools(calls).await) };
        self.wait(
            calling,
            Then::Tools {
                requests,
                answers,
                rust,
                python,
            },
        )
    }

    /// Hands the Python tools' calls to the loop, or goes on when there are none.
    fn python_tools(
        &mut self,
        requests: Vec<ToolRequest>,
        answers: Vec<Option<ToolAnswer>>,
        python: Vec<usize>,
    ) -> ControlFlow<Handoff, Event> {
        if python.is_empty() {
            return ControlFlow::Continue(Event::ToolsAnswered {
                answers: answers.into_iter().flatten().collect(),
                spent: Usage::default(),
            });
        }
        let calls = python.iter().map(|&i| requests[i].clone()).collect();
        self.pending = Pending::Tools {
            requests,
            answers,
            python,
        };
        ControlFlow::Break(Handoff::Tools(calls))
    }

    /// Waits for `work` on the runtime, unless the run is stopped, its deadline passes or
    /// (under `run()`) Ctrl-C is pressed first: at once under `run()`, on the runtime under
    /// `run_async`, which wakes the loop when it is over.
    fn wait(
        &mut self,
        work: impl Future<Output = Waited> + Send + 'static,
        then: Then,
    ) -> ControlFlow<Handoff, Event> {
        let Ok(runtime) = runtime() else {
            return self.waited(Waited::Cut(Cut::Stopped), then);
        };
        let span = self.turn_span.clone().unwrap_or_else(tracing::Span::none);
        let work = work.instrument(span).with_subscriber(self.logs.clone());
        let stopped = stop_requested(self.stopped.clone());
        let deadline = deadline_at(self.core.as_ref().and_then(RunCore::deadline));
        let Some(waker) = &self.waker else {
            let waited = runtime.block_on(async {
                tokio::select! {
                    biased;
                    () = stopped => Waited::Cut(Cut::Stopped),
                    () = deadline => Waited::Cut(Cut::DeadlinePassed),
                    signal = signal_raised() => Waited::Cut(Cut::Signal(signal)),
                    waited = work => waited,
                }
            });
            return self.waited(waited, then);
        };
        let waker = Python::attach(|py| waker.clone_ref(py));
        let slot = Arc::new(Mutex::new(None));
        let filled = slot.clone();
        runtime.spawn(async move {
            let waited = tokio::select! {
                biased;
                () = stopped => Waited::Cut(Cut::Stopped),
                () = deadline => Waited::Cut(Cut::DeadlinePassed),
                waited = work => waited,
            };
            if let Ok(mut slot) = filled.lock() {
                *slot = Some(waited);
            }
            // The loop may be closed by now: then nobody waits for the run.
            Python::attach(|py| drop(waker.call0(py)));
        });
        self.pending = Pending::Runtime { slot, then };
        ControlFlow::Break(Handoff::Wait)
    }

    /// The event a wait that ended as `waited` makes (or, for tools, the Python tools' calls
    /// that come next).
    fn waited(&mut self, waited: Waited, then: Then) -> ControlFlow<Handoff, Event> {
        let cut = match waited {
            Waited::Replied(result, spent) => {
                return ControlFlow::Continue(Event::Replied { result, spent });
            }
            Waited::Answered(rust_answers) => {
                let Then::Tools {
                    requests,
                    mut answers,
                    rust,
                    python,
                } = then
                else {
                    unreachable!("tool answers answer tool calls")
                };
                for (i, answer) in rust.into_iter().zip(rust_answers) {
                    answers[i] = Some(answer);
                }
                return self.python_tools(requests, answers, python);
            }
            Waited::Cut(cut) => cut,
        };
        let turn = self.core().turn_number();
        let spent = Usage::default();
        ControlFlow::Continue(match cut {
            Cut::DeadlinePassed => {
                log_deadline_passed(turn, self.deadline.unwrap_or_default());
                Event::DeadlinePassed { spent }
            }
            Cut::Stopped => {
                log_stopped(turn);
                Event::Stopped { spent }
            }
            Cut::Signal(signal) => {
                self.caught = Some(signal);
                log_stopped(turn);
                Event::Stopped { spent }
            }
        })
    }

    /// Ends the run now, as `interrupted` (unless it is over already).
    fn stop_now(&mut self) {
        if self.core.is_none() {
            return;
        }
        log_stopped(self.core().turn_number());
        // Told of the stop, the core finishes at once, whatever it waited for.
        self.advance(Event::Stopped {
            spent: Usage::default(),
        });
        self.finish();
    }

    /// The loop's request for `handoff`, and whether it is the run's end.
    fn request<'py>(
        &mut self,
        py: Python<'py>,
        handoff: Handoff,
    ) -> PyResult<(bool, Bound<'py, PyTuple>)> {
        let kind = |name: &str| PyString::new(py, name).into_any();
        let remaining = || -> PyResult<Bound<'py, PyAny>> {
            Ok(self.remaining().into_pyobject(py)?.into_any())
        };
        let request = match handoff {
            Handoff::Model(request) => {
                let function = match &self.model {
                    Some(function) => function.bind(py).clone(),
                    None => unreachable!("only a model function is handed to the loop"),
                };
                PyTuple::new(
                    py,
                    [kind("llm"), function, messages(py, &request)?, remaining()?],
                )?
            }
            Handoff::Tools(calls) => {
                let timeout = self
                    .agent
                    .limits()
                    .tool_timeout
                    .map_or(f64::INFINITY, |t| t.as_secs_f64());
                let mut items = Vec::with_capacity(calls.len());
                for call in &calls {
                    let function = self
                        .tools
                        .function(py, &call.name)
                        .unwrap_or_else(|| py.None().into_bound(py));
                    let args: PyResult<Vec<_>> = call
                        .args
                        .iter()
                        .enumerate()
                        .map(|(i, a)| {
                            to_python(py, a, &format!("argument {} of tool/{}", i + 1, call.name))
                        })
                        .collect();
                    let args = match args {
                        Ok(args) => PyList::new(py, args)?.into_any(),
                        // The loop fails the call with it.
                        Err(e) => e.into_value(py).into_bound(py).into_any(),
                    };
                    items.push(PyTuple::new(
                        py,
                        [
                            PyString::new(py, &call.name).into_any(),
                            function,
                            args,
                            timeout.into_pyobject(py)?.into_any(),
                        ],
                    )?);
                }
                PyTuple::new(
                    py,
                    [
                        kind("tools"),
                        PyList::new(py, items)?.into_any(),
                        remaining()?,
                    ],
                )?
            }
            Handoff::Turn(turn) => {
                let on_turn = match &self.on_turn {
                    Some(on_turn) => on_turn.bind(py).clone(),
                    None => unreachable!("a turn is handed to the loop only for on_turn"),
                };
                PyTuple::new(
                    py,
                    [
                        kind("turn"),
                        on_turn,
                        Py::new(py, PyTurn::new(*turn))?.into_bound(py).into_any(),
                    ],
                )?
            }
            Handoff::Wait => PyTuple::new(py, [kind("wait")])?,
            Handoff::Done(step) => {
                // What the run used comes from every turn, before the trace option leaves
                // them out.
                let usage = self.agent.run_usage(&step);
                let step = PyStep::with_usage(self.trace.apply(*step), usage);
                let step = Py::new(py, step)?.into_bound(py).into_any();
                return Ok((true, PyTuple::new(py, [kind("done"), step])?));
            }
        };
        Ok((false, request))
    }
}

//! `ptc.Agent`: the agent loop of `ptc-agent`, with a model named by its spec or answered by a
//! Python function, Python functions and MCP servers' tools, and checkpoints as `ptc run` keeps
//! them. Each run is driven by a Python loop (`ptc/_drive.py`) that advances the run's core
//! (see `run`) and calls the model's and the tools' functions itself, on the thread (or event
//! loop) that runs it; what Rust waits for (a model named by its spec, MCP servers) is waited
//! for on a tokio runtime the process shares, and no Python code runs on its threads.
//!
//! The `ptc_agent::Agent` is built once, with the `ptc.Agent`, and its runs share it, so one
//! `ptc.Agent` can run any number of times at once.

mod answers;
mod llm;
mod opening;
mod progress;
mod run;
mod runtime;
mod step;
mod tool;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;

use ptc_agent::llm::{ProviderOptions, RetryPolicy, parse_llm_spec_with};
use ptc_agent::store::{JsonlStore, RunStore};
use ptc_agent::{Agent, Llm, PromptLimit};
use ptc_compression::CompressionConfig;
use ptc_lisp::Value;
use ptc_mcp::{McpConfig, McpServers, ServerConfig};
use ptc_store::SqliteStore;
use ptc_turn::TraceMode;

use crate::errors::agent_error;
use crate::limits::limits_from;
use crate::session::data_entries;
use crate::tools::ToolTable;

use llm::FunctionModel;
use run::{AgentRun, Given};
use runtime::runtime;
pub(crate) use step::{PyStep, PyTurn};
use tool::PyAgentTool;

/// Where replies come from.
enum Model {
    /// A provider from its spec (`openai:MODEL`, `anthropic:MODEL`, ...).
    Spec(Arc<dyn Llm>),
    /// A Python function of the messages.
    Function(Py<PyAny>),
}

/// An agent: a mission, a model, tools, input data, an output signature and the loop's
/// settings. `run()` and `await run_async()` return its `ptc.Step`.
///
/// Args:
///     mission: What the model is asked to do; `{{name}}` is replaced by the input `name`.
///     llm: The model: a spec (`openai:MODEL`, `anthropic:MODEL`,
///         `openai-compatible:URL:MODEL`, `replay:FILE.jsonl`), or a function (or `async def`)
///         of the messages, a list of dicts with `role` and `content`, that returns the reply.
///     tools: Python functions the programs call as `(tool/NAME ...)`: a dict of names to
///         functions or `ptc.Tool`s, or a list of them; described to the model from their type
///         hints and docstrings (see `ptc.Tool`).
///     data: Input the programs read as `data/NAME`: a dict of names to Python data.
///     signature: The shape the returned value must have, e.g. `"{owners [:string]}"`.
///     compression: History compression: True (the default strategy), False, or a strategy
///         spec such as `"rolling-window?window=3"`.
///     max_turns: The most turns a run may take (5 by default).
///     limits: The sandbox limits of each program: a `ptc.Limits` or a dict of its arguments.
///     mcp: MCP servers whose tools the programs may call: command lines, or URLs of
///         streamable HTTP servers.
///     mcp_config: An `mcpServers` JSON file naming MCP servers.
///     request_timeout: Seconds one model request may take before it is abandoned and sent
///         again (120 by default, or `PTC_REQUEST_TIMEOUT`).
///     headers: Headers sent with every request of a model given by its spec, for gateways
///         and proxies: a dict of names to values, e.g. `{"X-Title": "My app"}`; each replaces
///         the provider's header of the same name.
///     retries: How many times a failed model request is sent again (3 by default, or
///         `PTC_RETRIES`); a request that timed out is sent again once at most.
///     deadline: Seconds a whole run may take before it ends with `timeout` (none by default,
///         or `PTC_DEADLINE`).
///     temperature: The sampling temperature of each reply (the provider's by default).
///     max_tokens: The most tokens of each reply (4096 by default).
///     on_turn: A function called with each `ptc.Turn` as it is recorded (its `number`,
///         `program`, `prints`, `error` and `usage`), on the thread (or event loop) driving
///         the run; an exception it raises stops the run and is raised by `run()`.
///     trace: Which steps keep their turns: True (every step, the default), False (none), or
///         `"on_error"` (only a step that failed). The outcome and `usage` are always there,
///         and a checkpoint still records every turn.
///     prompt_limit: The most characters of the system prompt sent: an int, or a dict
///         `{"max_chars": N}`. A longer prompt is cut there and ends with a note saying so,
///         and a warning is logged (none by default: the prompt is sent whole).
///
/// Each run logs through Python's `logging`, logger `ptc`: each turn's outcome, tokens and
/// time at INFO; for a model named by its spec, notices of a request still waiting for its
/// answer at INFO and failed requests and retries at WARNING.
///
/// Raises:
///     ptc.AgentError: The model spec, a tool signature, an MCP server or the input data
///         cannot work.
#[pyclass(module = "ptc", name = "Agent", frozen)]
pub(crate) struct PyAgent {
    mission: String,
    model: Model,
    tools: Arc<ToolTable>,
    data: Vec<(String, Value)>,
    signature: Option<String>,
    compression: CompressionConfig,
    max_turns: Option<u32>,
    limits: ptc_lisp::Limits,
    mcp: Mutex<Option<Arc<McpServers>>>,
    /// The agent every run drives, rebuilt without the MCP servers' tools once they are closed.
    agent: Mutex<Option<Arc<Agent>>>,
    /// The longest a whole run may take.
    deadline: Option<std::time::Duration>,
    temperature: Option<f32>,
    max_tokens: Option<u32>,
    /// Called with each turn as it is recorded.
    on_turn: Option<Py<PyAny>>,
    /// Which steps keep their turns.
    trace: TraceMode,
    /// The most characters of the system prompt sent.
    prompt_limit: Option<usize>,
}

/// A duration given as seconds (`30`, `1.5`) or as `ptc` takes one (`30s`, `1500ms`, `2m`,
/// `2min`, `1h`).
fn parse_duration(text: &str) -> Option<std::time::Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let seconds = match unit.trim() {
        "" | "s" | "sec" | "secs" => number,
        "ms" => number / 1000.0,
        "m" | "min" | "mins" => number * 60.0,
        "h" | "hr" | "hrs" => number * 3600.0,
        _ => return None,
    };
    std::time::Duration::try_from_secs_f64(seconds).ok()
}

/// A duration argument in seconds, else the environment variable `name` (as `ptc` reads it).
fn seconds_or_env(
    py: Python<'_>,
    argument: &str,
    seconds: Option<f64>,
    name: &str,
) -> PyResult<Option<std::time::Duration>> {
    if let Some(seconds) = seconds {
        return std::time::Duration::try_from_secs_f64(seconds)
            .map(Some)
            .map_err(|_| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "{argument} must be a number of seconds of at least 0, got {seconds}"
                ))
            });
    }
    match std::env::var(name) {
        Ok(text) if !text.trim().is_empty() => parse_duration(&text).map(Some).ok_or_else(|| {
            agent_error(
                py,
                &format!("{name}={text} is not a duration; write it as 30s, 1500ms or 2m"),
            )
        }),
        _ => Ok(None),
    }
}

/// The MCP servers `mcp=` (command lines, or URLs of streamable HTTP servers) and
/// `mcp_config=` (an `mcpServers` JSON file) name.
fn server_configs(
    mcp: Option<Vec<String>>,
    mcp_config: Option<PathBuf>,
) -> Result<Vec<ServerConfig>, String> {
    let mut configs = Vec::new();
    for line in mcp.unwrap_or_default() {
        let line = line.trim();
        if line.starts_with("http://") || line.starts_with("https://") {
            let host = line
                .split("://")
                .nth(1)
                .and_then(|rest| rest.split(['/', ':']).next())
                .unwrap_or("remote");
            configs.push(ServerConfig::http(host, line));
        } else {
            configs.push(ServerConfig::from_command_line(line).map_err(|e| e.message)?);
        }
    }
    if let Some(path) = mcp_config {
        configs.extend(McpConfig::from_file(&path).map_err(|e| e.message)?.servers);
    }
    Ok(configs)
}

/// The store of `checkpoint=`: SQLite for a database name, JSON lines otherwise.
fn open_store(path: &Path) -> Result<Box<dyn RunStore>, String> {
    let sqlite = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "db" | "sqlite" | "sqlite3"));
    if sqlite {
        SqliteStore::open(path)
            .map(|store| Box::new(store) as Box<dyn RunStore>)
            .map_err(|e| e.to_string())
    } else {
        JsonlStore::open(path)
            .map(|store| Box::new(store) as Box<dyn RunStore>)
            .map_err(|e| e.to_string())
    }
}

impl PyAgent {
    /// The agent its runs drive: the Python functions' tools and model as descriptions (each
    /// run's Python loop calls them), the MCP servers' tools while they run.
    fn build(&self) -> Result<Agent, String> {
        let mut builder = Agent::builder(self.mission.clone())
            .compression_config(self.compression)
            .limits(self.limits.clone());
        builder = match &self.model {
            Model::Spec(llm) => builder.llm_arc(llm.clone()),
            Model::Function(_) => builder.llm(FunctionModel),
        };
        for tool in self.tools.iter() {
            builder = builder.tool(PyAgentTool {
                name: tool.name.clone(),
                description: tool.description.clone(),
                signature: tool.signature.clone(),
                params: tool.params.clone(),
            });
        }
        if let Some(servers) = self.mcp.lock().ok().and_then(|m| m.clone()) {
            for tool in servers.tools() {
                builder = builder.tool_arc(tool);
            }
        }
        for (name, value) in &self.data {
            builder = builder.data_value(name.clone(), value.clone());
        }
        if let Some(signature) = &self.signature {
            builder = builder.signature(signature.clone());
        }
        if let Some(turns) = self.max_turns {
            builder = builder.max_turns(turns);
        }
        if let Some(deadline) = self.deadline {
            builder = builder.deadline(deadline);
        }
        if let Some(t) = self.temperature {
            builder = builder.temperature(t);
        }
        if let Some(n) = self.max_tokens {
            builder = builder.max_tokens(n);
        }
        if let Some(max_chars) = self.prompt_limit {
            builder = builder.prompt_limit(PromptLimit { max_chars });
        }
        builder.build().map_err(|e| e.to_string())
    }

    /// The agent its runs drive.
    fn agent(&self, py: Python<'_>) -> PyResult<Arc<Agent>> {
        self.agent
            .lock()
            .ok()
            .and_then(|agent| agent.clone())
            .ok_or_else(|| agent_error(py, "the agent was lost"))
    }
}

#[pymethods]
impl PyAgent {
    #[new]
    #[pyo3(signature = (mission, *, llm, tools=None, data=None, signature=None, compression=None, max_turns=None, limits=None, mcp=None, mcp_config=None, request_timeout=None, headers=None, retries=None, deadline=None, temperature=None, max_tokens=None, on_turn=None, trace=None, prompt_limit=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        mission: String,
        llm: Bound<'_, PyAny>,
        tools: Option<&Bound<'_, PyAny>>,
        data: Option<&Bound<'_, PyAny>>,
        signature: Option<String>,
        compression: Option<Bound<'_, PyAny>>,
        max_turns: Option<u32>,
        limits: Option<&Bound<'_, PyAny>>,
        mcp: Option<Vec<String>>,
        mcp_config: Option<PathBuf>,
        request_timeout: Option<f64>,
        headers: Option<std::collections::BTreeMap<String, String>>,
        retries: Option<u32>,
        deadline: Option<f64>,
        temperature: Option<f32>,
        max_tokens: Option<u32>,
        on_turn: Option<Py<PyAny>>,
        trace: Option<Bound<'_, PyAny>>,
        prompt_limit: Option<Bound<'_, PyAny>>,
    ) -> PyResult<PyAgent> {
        let trace = trace_mode(trace)?;
        let prompt_limit = max_chars(prompt_limit)?;
        if let Some(f) = on_turn.as_ref().filter(|f| !f.bind(py).is_callable()) {
            return Err(PyTypeError::new_err(format!(
                "on_turn must be a function of a ptc.Turn, got {}",
                f.bind(py).get_type().name()?
            )));
        }
        let request_timeout = seconds_or_env(
            py,
            "request_timeout",
            request_timeout,
            "PTC_REQUEST_TIMEOUT",
        )?;
        let deadline = seconds_or_env(py, "deadline", deadline, "PTC_DEADLINE")?;
        let retries = match retries {
            Some(n) => Some(n),
            None => match std::env::var("PTC_RETRIES") {
                Ok(text) if !text.trim().is_empty() => Some(text.trim().parse().map_err(|_| {
                    agent_error(
                        py,
                        &format!("PTC_RETRIES={text} is not a number of retries"),
                    )
                })?),
                _ => None,
            },
        };
        if let Some(t) = temperature.filter(|t| !t.is_finite()) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "temperature must be a number, got {t}"
            )));
        }
        let model = if let Ok(spec) = llm.cast::<PyString>() {
            let provider = ProviderOptions {
                request_timeout,
                retry: retries.map(|max_retries| RetryPolicy {
                    max_retries,
                    ..RetryPolicy::default()
                }),
                stream: false,
                headers: headers.into_iter().flatten().collect(),
            };
            Model::Spec(
                parse_llm_spec_with(&spec.to_cow()?, &provider)
                    .map_err(|e| agent_error(py, &e.to_string()))?,
            )
        } else if llm.is_callable() {
            Model::Function(llm.unbind())
        } else {
            return Err(PyTypeError::new_err(format!(
                "llm must be a model spec (openai:MODEL, anthropic:MODEL, \
                 openai-compatible:URL:MODEL) or a function of the messages, got {}",
                llm.get_type().name()?
            )));
        };
        let compression = match compression {
            None => CompressionConfig::default(),
            Some(c) if c.is_none() => CompressionConfig::default(),
            Some(c) => {
                let spec = if let Ok(on) = c.extract::<bool>() {
                    if on {
                        "on".to_string()
                    } else {
                        "off".to_string()
                    }
                } else if let Ok(text) = c.extract::<String>() {
                    text
                } else {
                    return Err(PyTypeError::new_err(
                        "compression must be True, False or a strategy spec such as \
                         'append-compact' or 'rolling-window?window=3'",
                    ));
                };
                CompressionConfig::parse(&spec).map_err(|e| agent_error(py, &e.to_string()))?
            }
        };
        let configs = server_configs(mcp, mcp_config).map_err(|e| agent_error(py, &e))?;
        let agent = PyAgent {
            mission,
            model,
            tools: Arc::new(ToolTable::from_python(tools)?),
            data: data_entries(py, data)?,
            signature,
            compression,
            max_turns,
            limits: limits_from(limits)?,
            mcp: Mutex::new(None),
            agent: Mutex::new(None),
            deadline,
            temperature,
            max_tokens,
            on_turn,
            trace,
            prompt_limit,
        };
        if !configs.is_empty() {
            let runtime = runtime()?;
            let servers = py
                .detach(|| runtime.block_on(McpServers::connect(configs)))
                .map_err(|e| agent_error(py, &e.to_string()))?;
            if let Ok(mut mcp) = agent.mcp.lock() {
                *mcp = Some(Arc::new(servers));
            }
        }
        // Built once now, so that a tool signature or an input that cannot work is reported
        // here rather than by the first run.
        match agent.build() {
            Ok(built) => {
                if let Ok(mut slot) = agent.agent.lock() {
                    *slot = Some(Arc::new(built));
                }
                Ok(agent)
            }
            Err(message) => {
                agent.close(py);
                Err(agent_error(py, &message))
            }
        }
    }

    /// Runs the agent until a program returns or fails, or the turns run out, and returns
    /// the `ptc.Step`. `data` adds input for this run; with `checkpoint` (a `.jsonl` file, or
    /// `.db` for SQLite) every turn is kept as it completes under `run_id`, and
    /// `resume=True` continues that run from its last completed turn. The model's and tools'
    /// functions are called on this thread (`async def` ones on an event loop of their own).
    #[pyo3(signature = (*, data=None, checkpoint=None, run_id="run", resume=false))]
    fn run<'py>(
        slf: &Bound<'py, Self>,
        data: Option<&Bound<'py, PyAny>>,
        checkpoint: Option<PathBuf>,
        run_id: &str,
        resume: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        static RUN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        RUN.import(slf.py(), "ptc._drive", "run_agent")?
            .call1((slf, data, checkpoint, run_id, resume))
    }

    /// `await agent.run_async(...)`: as `run`, on the running event loop: the model's and the
    /// tools' functions are awaited there, tool calls made at once concurrently.
    #[pyo3(signature = (*, data=None, checkpoint=None, run_id="run", resume=false))]
    fn run_async<'py>(
        slf: &Bound<'py, Self>,
        data: Option<&Bound<'py, PyAny>>,
        checkpoint: Option<PathBuf>,
        run_id: &str,
        resume: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        static RUN_ASYNC: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
        RUN_ASYNC
            .import(slf.py(), "ptc._drive", "run_agent_async")?
            .call1((slf, data, checkpoint, run_id, resume))
    }

    /// Opens a run for the loops of `ptc/_drive.py`: its task made and its checkpoint
    /// started or loaded. `log_level` is the least `logging` level the `ptc` logger handles;
    /// `waker`, under `run_async`, is called when a wait of the run on the runtime is over.
    #[pyo3(signature = (data, checkpoint, run_id, resume, log_level, waker))]
    #[allow(clippy::too_many_arguments)]
    fn _open(
        &self,
        py: Python<'_>,
        data: Option<&Bound<'_, PyAny>>,
        checkpoint: Option<PathBuf>,
        run_id: String,
        resume: bool,
        log_level: u32,
        waker: Option<Py<PyAny>>,
    ) -> PyResult<AgentRun> {
        let data = data_entries(py, data)?;
        let store = checkpoint
            .as_deref()
            .map(open_store)
            .transpose()
            .map_err(|e| agent_error(py, &e))?;
        let model = match &self.model {
            Model::Function(function) => Some(function.clone_ref(py)),
            Model::Spec(_) => None,
        };
        let given = Given {
            agent: self.agent(py)?,
            model,
            tools: self.tools.clone(),
            on_turn: self.on_turn.as_ref().map(|f| f.clone_ref(py)),
            trace: self.trace,
            deadline: self.deadline,
            data,
            store,
            checkpoint,
            id: run_id,
            resume,
            log_level,
            waker: waker.filter(|w| !w.is_none(py)),
        };
        AgentRun::open(py, given)
    }

    /// The tools programs may call, by name: the Python functions', then the MCP servers'.
    #[getter]
    fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tools.iter().map(|t| t.name.clone()).collect();
        if let Some(servers) = self.mcp.lock().ok().and_then(|m| m.clone()) {
            names.extend(servers.tools().iter().map(|t| t.name().to_string()));
        }
        names
    }

    /// Stops the agent's MCP servers (they stop when the agent is dropped, too).
    fn close(&self, py: Python<'_>) {
        let servers = self.mcp.lock().ok().and_then(|mut m| m.take());
        if let (Some(servers), Ok(runtime)) = (servers, runtime()) {
            // Later runs see the Python tools alone, as `tool_names` does.
            if let (Ok(built), Ok(mut agent)) = (self.build(), self.agent.lock())
                && agent.is_some()
            {
                *agent = Some(Arc::new(built));
            }
            py.detach(|| runtime.block_on(servers.close()));
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.close(py);
    }
}

impl Drop for PyAgent {
    fn drop(&mut self) {
        let servers = self.mcp.get_mut().ok().and_then(|m| m.take());
        if let (Some(servers), Ok(runtime)) = (servers, runtime()) {
            runtime.spawn(async move { servers.close().await });
        }
    }
}

/// Adds the agent's classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAgent>()?;
    m.add_class::<PyStep>()?;
    m.add_class::<PyTurn>()?;
    m.add_function(wrap_pyfunction!(step::view, m)?)?;
    m.add_class::<AgentRun>()?;
    Ok(())
}

/// The `trace` argument: True or None (every step keeps its turns), False (none), or a mode's
/// name (`"on_error"`, `"always"`, `"never"`).
fn trace_mode(trace: Option<Bound<'_, PyAny>>) -> PyResult<TraceMode> {
    let Some(trace) = trace.filter(|t| !t.is_none()) else {
        return Ok(TraceMode::Always);
    };
    if let Ok(on) = trace.extract::<bool>() {
        return Ok(if on {
            TraceMode::Always
        } else {
            TraceMode::Never
        });
    }
    match trace.extract::<String>() {
        Ok(text) => text
            .parse()
            .map_err(pyo3::exceptions::PyValueError::new_err),
        Err(_) => Err(PyTypeError::new_err(format!(
            "trace must be True, False or \"on_error\", got {}",
            trace.get_type().name()?
        ))),
    }
}

/// The `prompt_limit` argument: None, a number of characters, or `{"max_chars": N}`.
fn max_chars(limit: Option<Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    let Some(limit) = limit.filter(|l| !l.is_none()) else {
        return Ok(None);
    };
    if let Ok(n) = limit.extract::<usize>() {
        return Ok(Some(n));
    }
    if let Ok(dict) = limit.cast::<pyo3::types::PyDict>() {
        let keys: Vec<String> = dict
            .keys()
            .iter()
            .map(|k| k.str().map(|s| s.to_string()))
            .collect::<PyResult<_>>()?;
        if keys == ["max_chars"]
            && let Some(n) = dict.get_item("max_chars")?
            && let Ok(n) = n.extract::<usize>()
        {
            return Ok(Some(n));
        }
    }
    Err(PyTypeError::new_err(format!(
        "prompt_limit must be a number of characters or {{\"max_chars\": N}}, got {}",
        limit.repr()?
    )))
}

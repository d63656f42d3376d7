//! Compiled agents: the program a model wrote once, kept and run again on new inputs without
//! a model.
//!
//! [`Agent::compile`] runs the agent once on sample input. When the run returns, its program
//! is kept: the programs of its *successful* turns, in order. A multi-turn run builds on the
//! definitions of its earlier turns (a failed turn's definitions were discarded by the run, so
//! its program is left out too), and running those programs again in order rebuilds them
//! before the final program uses them. Each program is a *stage* of the compiled agent; the
//! stages share one namespace, as the turns did. Earlier stages run in full, prints and tool
//! calls included.
//!
//! A compiled run drives the same run core as an agent run, with its stages as the programs,
//! so it ends like one, judged with the compiling run's settings: a `(return v)` in any stage is the answer (checked against the
//! output signature, its floats rounded to the run's precision), `(fail reason)` fails it, an
//! error or a namespace above the run's kept limit fails it with `program_error`, and a last
//! stage that ends without `(return ...)` fails it — except for a single-shot agent, whose last
//! value is the answer, as it was when compiled. `*1 *2 *3` are the earlier stages' values, as
//! they were the earlier successful turns'; `*e` is the error the stage was written after.
//!
//! A run whose failed turn called tools is not compiled: those calls happened in the run (a
//! message sent, a transient failure retried) and would not happen in the compiled agent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use ptc_lisp::{Form, FormKind, Limits, Program, ToolSpec, Value};
use ptc_turn::{Step, StepOutcome, Task, TokenUsage, Turn, Usage};
use serde::{Deserialize, Serialize};

use crate::agent::{Agent, data_from_serialize, expand_mission};
use crate::live_tools::LiveTools;
use crate::run::{RunError, RunOptions};
use crate::tool::{AsyncTool, SyncToolAdapter};
use ptc_run::Rules;
use ptc_run::signature::Signature;
use ptc_run::{Action, Event, PlannedCall, RunCore, Source, Start, runtime_for};
use ptc_run::{error_value, last_error};

mod cases;

pub use cases::{Case, CaseOutcome, ValidationReport};

/// The version of the file format [`CompiledAgent::save`] writes. [`CompiledAgent::load`] reads
/// it and every older one: version 1 lacks the run settings that shape the answer (float
/// precision, the limit on what is kept between stages, the `*e` each stage read), and such a
/// file runs as it always did, without them.
pub const COMPILED_FORMAT: u32 = 2;

/// The oldest format version [`CompiledAgent::load`] reads.
const OLDEST_FORMAT: u32 = 1;

/// An agent's program, compiled from one model run, that runs on new inputs with no model.
/// Make one with [`Agent::compile`]; inspect it ([`source`](Self::source),
/// [`signature`](Self::signature), [`metadata`](Self::metadata),
/// [`tool_names`](Self::tool_names)); run it with [`run`](Self::run) or
/// [`run_batch`](Self::run_batch); keep it with [`save`](Self::save) and [`load`](Self::load).
///
/// A compiled agent made by [`Agent::compile`] has the agent's tools and sandbox limits. One
/// loaded from a file has neither (they are code and host settings, not data): give the tools
/// with [`with_tool`](Self::with_tool) and the limits with [`with_limits`](Self::with_limits)
/// (the defaults otherwise).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ptc_agent::{Agent, ScriptedLlm};
/// use ptc_lisp::Value;
///
/// let agent = Agent::builder("Total the prices")
///     .llm(ScriptedLlm::new(["(return (reduce + (map :price data/items)))"]))
///     .signature("(items [{price :int}]) -> :int")
///     .data(&serde_json::json!({"items": [{"price": 2}, {"price": 3}]}))
///     .build()
///     .unwrap();
/// let compiled = agent.compile().await.unwrap();
/// assert_eq!(compiled.source(), "(return (reduce + (map :price data/items)))");
/// // New input, no model.
/// let step = compiled
///     .run(&serde_json::json!({"items": [{"price": 10}, {"price": 5}]}))
///     .await
///     .unwrap();
/// assert_eq!(step.value(), Some(&Value::Int(15)));
/// # });
/// ```
#[derive(Clone)]
pub struct CompiledAgent {
    file: CompiledFile,
    signature: Option<Signature>,
    tools: Vec<Arc<dyn AsyncTool>>,
    limits: Limits,
}

/// What a compiled agent's file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CompiledFile {
    format: u32,
    mission: String,
    signature: Option<String>,
    /// The stages, in order.
    programs: Vec<String>,
    /// Whether the last stage's value is the answer (the agent was single-shot).
    last_value_is_answer: bool,
    /// Decimals the floats of the answer are rounded to, as the run rounded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    float_precision: Option<u32>,
    /// The most the namespace may hold after a stage, in estimated bytes, as in the run;
    /// absent in files of format 1, which run without the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_kept_bytes: Option<usize>,
    /// The `*e` of each stage whose program reads it, by stage number: the error of the
    /// compiling run's turn it was written after. The failed turns are not stages, so their
    /// errors cannot happen again; a stage reads the one its program was written to handle.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    last_errors: BTreeMap<u32, LastError>,
    tools: Vec<String>,
    metadata: CompileMetadata,
}

/// A turn error as `*e` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LastError {
    /// The number of the compiling run's turn that failed.
    turn: u32,
    kind: String,
    message: String,
}

/// How a compiled agent was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompileMetadata {
    /// The model that wrote the program.
    pub model: String,
    /// Its provider (`openai`, `anthropic`, ...).
    pub provider: String,
    /// The tokens the compiling run spent.
    pub tokens: TokenUsage,
    /// The model requests it sent, retries included.
    pub llm_requests: u32,
    /// Its turns, failed ones included.
    pub turns: u32,
    /// Its wall-clock time in milliseconds.
    pub duration_ms: u64,
    /// Its compression setting.
    pub compression: String,
    /// When it was compiled, as an HTTP date (`Thu, 26 Nov 2026 04:30:25 GMT`).
    pub created_at: String,
}

/// Why an agent could not be compiled.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileError {
    /// A tool of the agent asks a model when called, and a compiled agent has none.
    #[error(
        "cannot compile: tool/{0} needs a model when it is called (a sub-agent or a model \
         call), and a compiled agent runs without one; remove the tool or run the agent instead"
    )]
    UsesModel(String),
    /// A failed turn of the run called tools. The compiled agent runs the successful turns'
    /// programs only, so it would not make those calls, while the turns after may rely on
    /// them (a message already sent, a transient failure that the next turn retried).
    #[error(
        "cannot compile: turn {turn} failed after calling {called}, and a compiled agent runs \
         only the programs of the successful turns: it would not make those calls, which the \
         turns after it may rely on (a side effect already done, a failure retried); run the \
         agent instead, or compile a run whose failed turns call no tools",
        called = .tools.iter().map(|t| format!("tool/{t}")).collect::<Vec<_>>().join(", ")
    )]
    FailedTurnCalledTools {
        /// The number of the first such turn.
        turn: u32,
        /// The tools it called, each once, in the order first called.
        tools: Vec<String>,
    },
    /// The compiling run could not start.
    #[error("cannot compile: {0}")]
    Run(RunError),
    /// The compiling run did not return a value, so there is no program to keep.
    #[error("cannot compile: the run failed ({kind}) after {turns} turn(s): {reason}")]
    RunFailed {
        /// The failure kind, as the Step names it (`max_turns`, `timeout`, ...).
        kind: String,
        /// The turns the run took.
        turns: usize,
        /// The failure's message.
        reason: String,
    },
}

/// Why a compiled agent could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What the operating system said.
        message: String,
    },
    /// The text is not a compiled agent of a known format.
    #[error("not a valid compiled agent: {0}")]
    Corrupt(String),
    /// The file was written by a newer version.
    #[error(
        "the compiled agent has format version {found}, but this version reads only versions \
         {OLDEST_FORMAT} to {COMPILED_FORMAT}; upgrade to run it, or compile the agent again"
    )]
    Version {
        /// The format version the file states.
        found: u64,
    },
}

/// Why a compiled agent could not run on an input. Once it runs, failures are in the
/// [`Step`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExecError {
    /// The input is invalid, does not match the signature's parameters, or there is no tokio
    /// runtime.
    #[error(transparent)]
    Run(RunError),
    /// Tools the program calls that were not given.
    #[error(
        "the compiled agent calls {names} but was not given {them}; add {them} with with_tool",
        names = .0.iter().map(|t| format!("tool/{t}")).collect::<Vec<_>>().join(", "),
        them = if .0.len() == 1 { "it" } else { "them" }
    )]
    MissingTools(Vec<String>),
}

impl Agent {
    /// Runs the agent once on its own data and compiles the program it wrote; see
    /// [`Agent::compile_with`].
    pub async fn compile(&self) -> Result<CompiledAgent, CompileError> {
        self.compile_with(RunOptions::new()).await
    }

    /// Runs the agent once with `options` (its sample input) and keeps the program that
    /// produced the accepted answer as a [`CompiledAgent`]. An agent with a tool that asks a
    /// model ([`AsyncTool::uses_model`]) is refused before anything is sent.
    pub async fn compile_with(
        &self,
        options: RunOptions<'_>,
    ) -> Result<CompiledAgent, CompileError> {
        self.check_compilable()?;
        let step = self.run_with(options).await.map_err(CompileError::Run)?;
        self.compiled_from(&step)
    }

    /// Whether the agent can be compiled: an error naming the first tool that asks a model.
    pub fn check_compilable(&self) -> Result<(), CompileError> {
        match self.inner.tools.iter().find(|t| t.uses_model()) {
            Some(tool) => Err(CompileError::UsesModel(tool.name().to_string())),
            None => Ok(()),
        }
    }

    /// The compiled agent of a run of this agent that has already ended (for example one
    /// made with an observer or a store): its successful turns' programs. A failed run has
    /// no program to keep.
    pub fn compiled_from(&self, step: &Step) -> Result<CompiledAgent, CompileError> {
        self.check_compilable()?;
        if let StepOutcome::Failed { kind, reason, .. } = &step.outcome {
            return Err(CompileError::RunFailed {
                kind: kind.as_str().to_string(),
                turns: step.turns.len(),
                reason: reason.clone(),
            });
        }
        // Without its failed turns' tool calls, a run is not the run that returned.
        if let Some(turn) = step
            .turns
            .iter()
            .find(|t| !t.is_success() && !t.tool_calls().is_empty())
        {
            let mut tools: Vec<String> = Vec::new();
            for call in turn.tool_calls() {
                if !tools.contains(&call.name) {
                    tools.push(call.name.clone());
                }
            }
            return Err(CompileError::FailedTurnCalledTools {
                turn: turn.number(),
                tools,
            });
        }
        let inner = &self.inner;
        let turns: &[Turn] = &step.turns;
        let mut programs = Vec::new();
        let mut last_errors = BTreeMap::new();
        for (index, turn) in turns.iter().enumerate().filter(|(_, t)| t.is_success()) {
            programs.push(turn.program().to_string());
            if symbols_of(turn.program()).contains("*e")
                && let Some((number, kind, message)) = last_error(&turns[..index])
            {
                let stage = u32::try_from(programs.len()).unwrap_or(u32::MAX);
                last_errors.insert(
                    stage,
                    LastError {
                        turn: number,
                        kind: kind.to_string(),
                        message: message.to_string(),
                    },
                );
            }
        }
        let named: BTreeSet<String> = programs.iter().flat_map(|p| tools_named(p)).collect();
        let tools = inner
            .specs
            .iter()
            .filter(|spec| named.contains(&spec.name))
            .map(|spec| spec.name.clone())
            .collect();
        let llm = &inner.llm;
        let usage = &step.usage;
        let file = CompiledFile {
            format: COMPILED_FORMAT,
            mission: inner.mission.clone(),
            signature: inner.signature.as_ref().map(|s| s.source().to_string()),
            programs,
            last_value_is_answer: inner.settings.max_turns <= 1,
            float_precision: inner.settings.run.float_precision,
            max_kept_bytes: Some(inner.settings.run.max_kept_bytes),
            last_errors,
            tools,
            metadata: CompileMetadata {
                model: llm.model_name().to_string(),
                provider: llm.provider_name().to_string(),
                tokens: usage.tokens,
                llm_requests: usage.llm_requests,
                turns: u32::try_from(step.turns.len()).unwrap_or(u32::MAX),
                duration_ms: usage.duration_us / 1000,
                compression: inner.settings.compression.to_string(),
                created_at: httpdate::fmt_http_date(SystemTime::now()),
            },
        };
        Ok(CompiledAgent {
            file,
            signature: inner.signature.clone(),
            tools: inner.tools.clone(),
            limits: inner.settings.run.limits.clone(),
        })
    }
}

/// The tools a program names: its `tool/NAME` symbols.
fn tools_named(program: &str) -> BTreeSet<String> {
    symbols_of(program)
        .into_iter()
        .filter_map(|symbol| symbol.strip_prefix("tool/").map(str::to_string))
        .collect()
}

/// The symbols of a program, wherever they are (quoted ones too), and not the text of its
/// comments and strings.
fn symbols_of(program: &str) -> BTreeSet<String> {
    fn collect(form: &Form, names: &mut BTreeSet<String>) {
        if let Some(meta) = &form.meta {
            collect(meta, names);
        }
        match &form.kind {
            FormKind::Symbol(symbol) => {
                names.insert(symbol.to_string());
            }
            FormKind::List(forms)
            | FormKind::Vector(forms)
            | FormKind::Map(forms)
            | FormKind::Set(forms)
            | FormKind::AnonFn(forms) => forms.iter().for_each(|f| collect(f, names)),
            FormKind::Quote(form)
            | FormKind::Deref(form)
            | FormKind::Tagged(_, form)
            | FormKind::SyntaxQuote(form)
            | FormKind::Unquote(form)
            | FormKind::UnquoteSplicing(form) => collect(form, names),
            _ => {}
        }
    }
    let mut names = BTreeSet::new();
    // The programs of successful turns: they were read once already, so they read again.
    if let Ok(program) = Program::parse(program) {
        for form in program.forms() {
            collect(form, &mut names);
        }
    }
    names
}

impl std::fmt::Debug for CompiledAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledAgent")
            .field("mission", &self.file.mission)
            .field("signature", &self.file.signature)
            .field("programs", &self.file.programs)
            .field("tools", &self.file.tools)
            .field("metadata", &self.file.metadata)
            .finish_non_exhaustive()
    }
}

/// Two compiled agents are equal when their files are (tools and limits are not compared).
impl PartialEq for CompiledAgent {
    fn eq(&self, other: &CompiledAgent) -> bool {
        self.file == other.file
    }
}

impl CompiledAgent {
    /// The program: its stages, each followed by a blank line when there are several.
    pub fn source(&self) -> String {
        self.file.programs.join("\n\n")
    }

    /// The stages: the programs of the compiling run's successful turns, in order.
    pub fn programs(&self) -> &[String] {
        &self.file.programs
    }

    /// The mission of the agent it was compiled from, as written.
    pub fn mission(&self) -> &str {
        &self.file.mission
    }

    /// The input and output signature, if the agent had one.
    pub fn signature(&self) -> Option<&Signature> {
        self.signature.as_ref()
    }

    /// The names of the tools the program calls (without `tool/`).
    pub fn tool_names(&self) -> &[String] {
        &self.file.tools
    }

    /// How it was compiled.
    pub fn metadata(&self) -> &CompileMetadata {
        &self.file.metadata
    }

    /// Decimals the floats of the answer are rounded to, as the compiling run rounded them.
    pub fn float_precision(&self) -> Option<u32> {
        self.file.float_precision
    }

    /// The most the namespace may hold after a stage that does not answer, in estimated
    /// bytes, as in the compiling run (a stage keeping more fails); `None` for a file of
    /// format 1, which has no such limit.
    pub fn max_kept_bytes(&self) -> Option<usize> {
        self.file.max_kept_bytes
    }

    /// The sandbox limits each stage runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Adds (or replaces, by name) a tool the program may call.
    #[must_use]
    pub fn with_tool(self, tool: impl AsyncTool + 'static) -> CompiledAgent {
        self.with_tool_arc(Arc::new(tool))
    }

    /// Adds (or replaces, by name) a shared tool.
    #[must_use]
    pub fn with_tool_arc(mut self, tool: Arc<dyn AsyncTool>) -> CompiledAgent {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
        self
    }

    /// Adds every tool of a sandbox registry.
    #[must_use]
    pub fn with_lisp_tools(mut self, tools: &ptc_lisp::Tools) -> CompiledAgent {
        for tool in SyncToolAdapter::all(tools) {
            self = self.with_tool(tool);
        }
        self
    }

    /// The sandbox limits of each stage.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> CompiledAgent {
        self.limits = limits;
        self
    }

    /// The compiled agent as JSON text (pretty-printed, with its format version).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.file)
            .unwrap_or_else(|e| unreachable!("a compiled agent always serializes: {e}"));
        text.push('\n');
        text
    }

    /// A compiled agent from the JSON text of [`to_json`](Self::to_json), without tools and
    /// with default limits. A newer format version, or text that is not a compiled agent, is
    /// an error saying so.
    pub fn from_json(text: &str) -> Result<CompiledAgent, LoadError> {
        let raw: serde_json::Value =
            serde_json::from_str(text).map_err(|e| LoadError::Corrupt(e.to_string()))?;
        let Some(format) = raw.get("format") else {
            return Err(LoadError::Corrupt(
                "it has no \"format\" field (is it a file written by `ptc run --compile-to`?)"
                    .into(),
            ));
        };
        match format.as_u64() {
            Some(found) if found > u64::from(COMPILED_FORMAT) => {
                return Err(LoadError::Version { found });
            }
            Some(found) if found >= u64::from(OLDEST_FORMAT) => {}
            _ => {
                return Err(LoadError::Corrupt(format!(
                    "its format {format} is not a version this library ever wrote"
                )));
            }
        }
        let file: CompiledFile =
            serde_json::from_value(raw).map_err(|e| LoadError::Corrupt(e.to_string()))?;
        if file.programs.is_empty() {
            return Err(LoadError::Corrupt("it has no program".into()));
        }
        let signature = file
            .signature
            .as_deref()
            .map(Signature::parse)
            .transpose()
            .map_err(|e| LoadError::Corrupt(format!("its signature: {e}")))?;
        Ok(CompiledAgent {
            file,
            signature,
            tools: Vec::new(),
            limits: Limits::default(),
        })
    }

    /// Writes the compiled agent to `path` as JSON.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), LoadError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_json()).map_err(|e| LoadError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// Reads a compiled agent written by [`save`](Self::save); see
    /// [`from_json`](Self::from_json).
    pub fn load(path: impl AsRef<Path>) -> Result<CompiledAgent, LoadError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| LoadError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        CompiledAgent::from_json(&text)
    }

    /// Runs the program on `data` (anything serializing to a JSON object, whose keys are the
    /// `data/` values); see [`run_data`](Self::run_data).
    pub async fn run<D: Serialize + ?Sized>(&self, data: &D) -> Result<Step, ExecError> {
        let data =
            data_from_serialize(data).map_err(|message| ExecError::Run(RunError::Data(message)))?;
        self.run_data(data.into_iter().collect()).await
    }

    /// Runs the program on `data` (the whole of `data/`; the sample input it was compiled on
    /// is not kept) with the tools and limits given, and returns a [`Step`] with one turn per
    /// stage and no model usage. The input is checked against the signature's parameters
    /// first, and the answer against its output. Must be called within a tokio runtime.
    pub async fn run_data(&self, data: BTreeMap<String, Value>) -> Result<Step, ExecError> {
        tokio::runtime::Handle::try_current().map_err(|_| ExecError::Run(RunError::NoRuntime))?;
        let missing: Vec<String> = self
            .file
            .tools
            .iter()
            .filter(|name| !self.tools.iter().any(|t| t.name() == name.as_str()))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Err(ExecError::MissingTools(missing));
        }
        if let Some(signature) = &self.signature {
            signature
                .validate_input(|name| data.get(name))
                .map_err(|m| ExecError::Run(RunError::Input(m)))?;
        }
        let specs: Vec<ToolSpec> = self
            .tools
            .iter()
            .map(|t| {
                t.spec()
                    .unwrap_or_else(|_| ToolSpec::new(t.name(), t.description()))
            })
            .collect();
        let task = Task {
            mission: expand_mission(&self.file.mission, &data)
                .unwrap_or_else(|_| self.file.mission.clone()),
            system_prompt: String::new(),
            tools: specs,
            data,
            max_turns: u32::try_from(self.file.programs.len()).unwrap_or(u32::MAX),
            signature: self.signature.as_ref().map(|s| s.source().to_string()),
            ..Task::default()
        };
        Ok(self.execute(task).await)
    }

    /// Runs the program on each input, all at once; the results are in the order of the
    /// inputs. [`run_batch_bounded`](Self::run_batch_bounded) keeps fewer in flight, for
    /// tools that must not be called too often at once.
    pub async fn run_batch(
        &self,
        inputs: Vec<BTreeMap<String, Value>>,
    ) -> Vec<Result<Step, ExecError>> {
        self.run_batch_bounded(inputs, usize::MAX).await
    }

    /// Runs the program on each input, at most `max_in_flight` runs at a time (`0` counts as
    /// one); the results are in the order of the inputs.
    pub async fn run_batch_bounded(
        &self,
        inputs: Vec<BTreeMap<String, Value>>,
        max_in_flight: usize,
    ) -> Vec<Result<Step, ExecError>> {
        if tokio::runtime::Handle::try_current().is_err() {
            return inputs
                .iter()
                .map(|_| Err(ExecError::Run(RunError::NoRuntime)))
                .collect();
        }
        let permits = max_in_flight.clamp(1, tokio::sync::Semaphore::MAX_PERMITS);
        let in_flight = std::sync::Arc::new(tokio::sync::Semaphore::new(permits));
        let mut set = tokio::task::JoinSet::new();
        for (index, data) in inputs.into_iter().enumerate() {
            let compiled = self.clone();
            let in_flight = in_flight.clone();
            set.spawn(async move {
                // The semaphore is never closed, so a permit always comes.
                let _permit = in_flight.acquire_owned().await;
                (index, compiled.run_data(data).await)
            });
        }
        let mut results: Vec<Option<Result<Step, ExecError>>> = Vec::new();
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok((index, result)) => {
                    if results.len() <= index {
                        results.resize_with(index + 1, || None);
                    }
                    results[index] = Some(result);
                }
                // A run never panics out of its task (programs' and tools' panics are caught).
                Err(error) => std::panic::resume_unwind(error.into_panic()),
            }
        }
        results.into_iter().flatten().collect()
    }

    /// Runs the stages of the program for `task`, driving the run core as an agent run does:
    /// each stage's outcome is judged by the rules of the run it was compiled from, with no
    /// second chance (a stage that fails ends the run as a failed turn ends a single-shot
    /// run).
    async fn execute(&self, task: Task) -> Step {
        let started = Instant::now();
        let span = tracing::info_span!("compiled_run", stages = self.file.programs.len());
        let rules = Rules {
            signature: self.signature.as_ref(),
            float_precision: self.file.float_precision,
            max_kept_bytes: self.file.max_kept_bytes,
            last_value_is_answer: self.file.last_value_is_answer,
        };
        let source = Source::Stages {
            programs: &self.file.programs,
            errors: self
                .file
                .last_errors
                .iter()
                .map(|(number, e)| (*number, error_value(e.turn, &e.kind, &e.message)))
                .collect(),
        };
        let runtime = runtime_for(&self.limits, &task);
        let mut core = RunCore::new(task, Start::new(), Instant::now(), runtime, rules, source);
        let live = LiveTools {
            tools: &self.tools,
            timeout: self.limits.tool_timeout,
            parent: span.clone(),
        };
        let mut event = Event::Next;
        loop {
            event = match span.in_scope(|| core.advance(event, Instant::now())) {
                Action::CallTools { calls, .. } => Event::ToolsAnswered {
                    answers: live
                        .answer(
                            calls
                                .into_iter()
                                .filter(PlannedCall::is_made)
                                .map(|call| call.request)
                                .collect(),
                        )
                        .await,
                    spent: Usage::default(),
                },
                Action::Recorded => Event::Next,
                Action::Finished => break,
                action @ (Action::TakeTurn
                | Action::Rendered { .. }
                | Action::ApplyHistory(_)
                | Action::Ask(_)) => {
                    unreachable!("a compiled run asks no model: {action:?}")
                }
            };
        }
        core.into_step(started.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_a_program_names_are_its_tool_symbols() {
        let named = tools_named(
            "; tool/in-a-comment is not called\n\
             (def users (pmap tool/get-user ids))\n\
             (my-tool/get-user 1)\n\
             (println \"tool/in-a-string\")\n\
             #(tool/in-a-fn %) {:k @(tool/deref-me)} ^{:m tool/in-meta} [1]",
        );
        assert_eq!(
            named.into_iter().collect::<Vec<_>>(),
            ["deref-me", "get-user", "in-a-fn", "in-meta"]
        );
    }
}

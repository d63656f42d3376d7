//! The agent loop: render the history, ask the model, run its program, record the turn, repeat.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_compression::{
    CachePoint, Compression, CompressionStats, PromptRequest, RenderOptions, Uncompressed,
    cacheable_prefix_len,
};
use ptc_lisp::{Compact, print_str};
use ptc_lisp::{ErrorKind, Outcome, RunOutcome, Runtime, UserNamespace, Value};
use ptc_turn::{
    FailureKind, Message, Role, Step, StepOutcome, Task, TokenUsage, Turn, TurnError, Turns, Usage,
};
use serde::Serialize;
use tracing::Instrument;
use tracing::field::Empty;

use crate::agent::{
    Agent, Inner, Settings, clash_names, data_from_serialize, expand_mission, name_clashes,
};
use crate::chain;
use crate::extract::extract_program;
use crate::float_precision::round_floats;
use crate::history::History;
use crate::kept;
use crate::llm::{Llm, LlmError, LlmRequest, LlmResponse, RetryPolicy};
use crate::llm_tool::{Caller, LlmToolCall};
use crate::program::{LiveTools, awaited_tools, run_program};
use crate::resume;
use crate::signature::Mismatch;
use crate::store::{RunStore, StoreError};
use crate::summarizer::LlmSummarizer;
use crate::telemetry::{HumanDuration, record_tokens};
use crate::tree::Tree;
use crate::turn_history::history_of;

/// Told about a run as it happens, e.g. to show each turn live. Every method does nothing
/// unless implemented.
pub trait RunObserver: Send + Sync {
    /// What the compression strategy did when it rendered the history for turn `turn`, before
    /// any history budget trimmed it. The stats are not kept with the turn: they are derived,
    /// and rendering the recorded turns again gives them (`ptc render --stats`).
    fn on_history_rendered(&self, turn: u32, stats: &CompressionStats) {
        let _ = (turn, stats);
    }

    /// The messages about to be sent for turn `turn` (system message first), exactly as sent.
    fn on_request(&self, turn: u32, messages: &[Message]) {
        let _ = (turn, messages);
    }

    /// A turn that has just been recorded.
    fn on_turn(&self, turn: &Turn) {
        let _ = turn;
    }

    /// A request an [`LlmTool`](crate::LlmTool) made for the program of turn `turn`, told
    /// when the tool calls it was among have been answered (before the turn is recorded).
    fn on_tool_request(&self, turn: u32, call: &LlmToolCall) {
        let _ = (turn, call);
    }
}

/// A future whose completion asks a run to stop.
type StopSignal<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Options of one run: input data on top of the agent's, an observer, a store that keeps
/// each turn as it completes, and a signal that stops the run.
#[derive(Default)]
#[must_use]
pub struct RunOptions<'a> {
    data: BTreeMap<String, Value>,
    data_error: Option<String>,
    observer: Option<&'a dyn RunObserver>,
    store: Option<(&'a dyn RunStore, String)>,
    stop: Option<StopSignal<'a>>,
    previous: Option<&'a Step>,
    llm: Option<RunLlm>,
}

/// The model a run asks instead of its agent's.
enum RunLlm {
    Given(Arc<dyn Llm>),
    Named(String),
}

impl<'a> RunOptions<'a> {
    /// Options that add nothing to the agent's own.
    pub fn new() -> RunOptions<'a> {
        RunOptions::default()
    }

    /// Input data for this run (anything serializing to a JSON object), added to the agent's
    /// own; keys given here win.
    pub fn with_data<D: Serialize + ?Sized>(mut self, data: &D) -> RunOptions<'a> {
        match data_from_serialize(data) {
            Ok(entries) => self.data.extend(entries),
            Err(message) => {
                self.data_error.get_or_insert(message);
            }
        }
        self
    }

    /// One input value for this run, as `data/<name>`.
    pub fn with_data_value(mut self, name: impl Into<String>, value: Value) -> RunOptions<'a> {
        self.data.insert(name.into(), value);
        self
    }

    /// Chains this run onto `step`, a finished run of another agent: the map it returned
    /// becomes this run's input data (one `data/` value per key, below data given here), and
    /// its field descriptions describe those inputs (this agent's own context descriptions
    /// win). If `step` failed, this run fails at once with `chained_failure` and the previous
    /// failure in its reason, without asking the model. A value that is not a map
    /// ([`RunError::ChainNotMap`]) or lacks what this agent's signature needs
    /// ([`RunError::ChainMismatch`]) stops the run before it starts.
    pub fn with_previous(mut self, step: &'a Step) -> RunOptions<'a> {
        self.previous = Some(step);
        self
    }

    /// Ask `llm` in this run instead of the agent's model.
    pub fn with_llm(self, llm: impl Llm + 'static) -> RunOptions<'a> {
        self.with_llm_arc(Arc::new(llm))
    }

    /// Ask the shared `llm` in this run instead of the agent's model.
    pub fn with_llm_arc(mut self, llm: Arc<dyn Llm>) -> RunOptions<'a> {
        self.llm = Some(RunLlm::Given(llm));
        self
    }

    /// Ask the model of the agent's registry called `name` in this run (a
    /// [`RunError::UnknownLlm`] if there is none).
    pub fn with_llm_named(mut self, name: impl Into<String>) -> RunOptions<'a> {
        self.llm = Some(RunLlm::Named(name.into()));
        self
    }

    /// Tell `observer` about each request and turn.
    pub fn with_observer(mut self, observer: &'a dyn RunObserver) -> RunOptions<'a> {
        self.observer = Some(observer);
        self
    }

    /// Checkpoint the run in `store` under `id`: the task before the first request, each turn
    /// as it completes, the outcome at the end. [`Agent::resume`] continues it from there.
    pub fn with_store(mut self, store: &'a dyn RunStore, id: impl Into<String>) -> RunOptions<'a> {
        self.store = Some((store, id.into()));
        self
    }

    /// Stop the run when `signal` completes (a Ctrl-C handler, a cancellation token, a
    /// service shutting down). The turn in progress is cut off; the run ends `interrupted`
    /// with the turns completed so far, and what the cut-off turn spent is counted. With a
    /// store, the run is not marked finished there, so [`Agent::resume`] continues it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use ptc_agent::{Agent, RunOptions, llm::ScriptedLlm};
    /// use ptc_turn::{FailureKind, StepOutcome};
    ///
    /// let agent = Agent::builder("Count to three")
    ///     .llm(ScriptedLlm::new(["```clojure\n(println 1)\n```"]))
    ///     .build()
    ///     .unwrap();
    /// let step = agent
    ///     .run_with(RunOptions::new().with_stop_signal(std::future::ready(())))
    ///     .await
    ///     .unwrap();
    /// assert!(matches!(step.outcome, StepOutcome::Failed { kind: FailureKind::Interrupted, .. }));
    /// assert!(step.turns.is_empty());
    /// # }
    /// ```
    pub fn with_stop_signal(
        mut self,
        signal: impl Future<Output = ()> + Send + 'a,
    ) -> RunOptions<'a> {
        self.stop = Some(Box::pin(signal));
        self
    }
}

/// Why a run could not start. Once a run starts, everything (model failures included) is
/// reported in its [`Step`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// The run's input data could not be turned into `data/` values.
    #[error("invalid input data: {0}")]
    Data(String),
    /// The input data does not match the signature's parameters.
    #[error("the input data does not match the signature's parameters: {}", .0.iter().map(Mismatch::to_string).collect::<Vec<_>>().join("; "))]
    Input(Vec<Mismatch>),
    /// Placeholders of the mission with no data.
    #[error("the mission uses {} but the input data has no such key; pass it with RunOptions::with_data", .0.iter().map(|n| format!("{{{{{n}}}}}")).collect::<Vec<_>>().join(", "))]
    MissingPlaceholders(Vec<String>),
    /// The history policy's token budget cannot hold the system prompt and the mission, which
    /// are always sent.
    #[error(
        "the history policy's max_tokens ({max_tokens}) cannot hold the system prompt (about \
         {system_tokens} tokens) and the mission message (about {mission_tokens} tokens), which \
         are always sent; raise max_tokens to at least {}",
        .system_tokens + .mission_tokens
    )]
    HistoryBudget {
        /// The policy's token budget.
        max_tokens: usize,
        /// The system prompt's estimated tokens.
        system_tokens: usize,
        /// The mission message's estimated tokens.
        mission_tokens: usize,
    },
    /// The step this run was chained onto returned something other than a map, so it cannot
    /// become this run's `data/`.
    #[error(
        "chain mismatch: the previous step returned {returned}, but only a map can become the \
         next run's input (each key a data/ value); make the previous agent return a map"
    )]
    ChainNotMap {
        /// The previous step's return value, printed.
        returned: String,
    },
    /// The map returned by the step this run was chained onto lacks inputs this agent's
    /// signature needs, or has them with other types.
    #[error(
        "chain mismatch: the previous step returned {} but this agent's signature needs: {}",
        if .provided.is_empty() { "an empty map".to_string() } else { .provided.iter().map(|n| format!("data/{n}")).collect::<Vec<_>>().join(", ") },
        .mismatches.iter().map(Mismatch::to_string).collect::<Vec<_>>().join("; ")
    )]
    ChainMismatch {
        /// Each input the signature needs that is missing or has another type.
        mismatches: Vec<Mismatch>,
        /// The keys the previous step's map has.
        provided: Vec<String>,
    },
    /// Input given for this run has the name of one of the agent's tools.
    #[error(
        "{} both a tool and an input of this run; rename the input",
        clash_names(.0)
    )]
    NameClash(Vec<String>),
    /// `RunOptions::with_llm_named` names no model of the agent's registry.
    #[error("{0}")]
    UnknownLlm(String),
    /// Not called from within a tokio runtime.
    #[error("agents run on tokio: call run() from within a tokio runtime (e.g. #[tokio::main])")]
    NoRuntime,
    /// The run store could not record the start of the run, or read the run to resume.
    #[error("the run store: {0}")]
    Store(#[from] StoreError),
    /// The run to resume cannot be continued by this agent.
    #[error("cannot resume run `{id}`: {reason}")]
    Resume {
        /// The id of the run to resume.
        id: String,
        /// Why this agent cannot continue it.
        reason: String,
    },
}

/// What the model is told when its reply holds no program.
pub const NO_PROGRAM: &str = "Your reply has no program, so nothing ran. Reply with PTC-Lisp \
                              code in a ```clojure block, for example:\n```clojure\n(return \
                              {:answer 42})\n```";

/// The error of a turn whose reply was cut off by the reply token limit before it held a
/// complete program (`detail` says what was wrong with what it held, if anything).
fn cut_off_error(max_tokens: u32, detail: Option<&str>) -> TurnError {
    let what = match detail {
        Some(detail) => format!(" (the program was incomplete: {detail})"),
        None => String::new(),
    };
    TurnError::new(
        "reply_cut_off",
        format!(
            "Your reply was cut off at the limit of {max_tokens} tokens before its program was \
             complete{what}, so nothing ran. Write a shorter program, with little or no text \
             around it."
        ),
    )
}

impl Agent {
    /// Runs the agent on its own data. See [`Agent::run_with`].
    pub async fn run(&self) -> Result<Step, RunError> {
        self.run_with(RunOptions::new()).await
    }

    /// Runs the agent on what `step` returned. See [`RunOptions::with_previous`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use ptc_agent::{Agent, ScriptedLlm};
    ///
    /// let find = Agent::builder("Find the open tickets")
    ///     .llm(ScriptedLlm::new(["(return {:ids [3 5 8]})"]))
    ///     .signature("{ids [:int]}")
    ///     .field_descriptions([("ids", "Ids of the open tickets, oldest first")])
    ///     .build()
    ///     .unwrap();
    /// let count = Agent::builder("Count the tickets")
    ///     .llm(ScriptedLlm::new(["(return (count data/ids))"]))
    ///     .signature("(ids [:int]) -> :int")
    ///     .build()
    ///     .unwrap();
    /// let found = find.run().await.unwrap();
    /// let counted = count.run_after(&found).await.unwrap();
    /// assert_eq!(counted.value(), Some(&ptc_lisp::Value::Int(3)));
    /// assert_eq!(
    ///     counted.task.data_descriptions["ids"],
    ///     "Ids of the open tickets, oldest first"
    /// );
    /// # });
    /// ```
    pub async fn run_after(&self, step: &Step) -> Result<Step, RunError> {
        self.run_with(RunOptions::new().with_previous(step)).await
    }

    /// Runs the agent until a program returns or fails, the turns run out, the deadline
    /// passes or the stop signal fires, and returns the [`Step`] with every turn. Model
    /// failures end the run with a failed step (`llm_error`); only invalid input (or a store
    /// that cannot record the start) stops a run before it starts.
    ///
    /// Must be called within a tokio runtime (tool calls are awaited and timed on it).
    pub async fn run_with(&self, options: RunOptions<'_>) -> Result<Step, RunError> {
        if let Some(upstream) = options.previous {
            let mut data = self.inner.data.clone();
            data.extend(options.data.clone());
            let mission = expand_mission(&self.inner.mission, &data)
                .unwrap_or_else(|_| self.inner.mission.clone());
            if let Some(step) =
                chain::failed_run(upstream, self.task(mission, data, BTreeMap::new()))
            {
                return Ok(step);
            }
        }
        let task = self.task_for(&options)?;
        if let Some((store, id)) = &options.store {
            store.start(id, &task).await?;
        }
        let start = Start {
            turns: Turns::new(),
            memory: UserNamespace::new(),
        };
        self.drive(task, start, options).await
    }

    /// Continues run `id` of `store` from its last completed turn: the turns recorded there
    /// are kept, the definitions they made are restored, and the model is asked for the next
    /// turn. New turns are checkpointed in the same store. A run that had already ended is
    /// returned as it was, without a request.
    ///
    /// The agent and `options` must give the run what it was started with: the same mission,
    /// tools, data, signature and turn budget (anything else is a [`RunError::Resume`]).
    /// Definitions are restored by running the programs of the successful turns again, with
    /// every tool call answered from the record instead of calling the tool, so no side
    /// effect happens twice. The deadline counts from the resume.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use ptc_agent::store::MemoryStore;
    /// use ptc_agent::{Agent, RunOptions, ScriptedLlm};
    ///
    /// let store = MemoryStore::new();
    /// let agent = |replies: &[&str]| {
    ///     Agent::builder("Add up").llm(ScriptedLlm::new(replies.to_vec())).build().unwrap()
    /// };
    /// // The first process made one turn, then its model failed.
    /// let first = agent(&["(def x 40)"]);
    /// let step = first.run_with(RunOptions::new().with_store(&store, "r1")).await.unwrap();
    /// assert!(!step.is_success());
    /// # // An interrupted run has no end record; forget this one's to resume it.
    /// # let mut checkpoint = ptc_agent::store::RunStore::load(&store, "r1").await.unwrap().unwrap();
    /// # checkpoint.end = None;
    /// # let store = MemoryStore::new();
    /// # ptc_agent::store::RunStore::start(&store, "r1", &checkpoint.task).await.unwrap();
    /// # ptc_agent::store::RunStore::append(&store, "r1", &checkpoint.turns[0]).await.unwrap();
    /// // Another process picks it up after turn 1; `x` is defined again.
    /// let step = agent(&["(return (+ x 2))"]).resume(&store, "r1", RunOptions::new()).await.unwrap();
    /// assert_eq!(step.value(), Some(&ptc_lisp::Value::Int(42)));
    /// assert_eq!(step.turns.len(), 2);
    /// # });
    /// ```
    pub async fn resume(
        &self,
        store: &dyn RunStore,
        id: &str,
        options: RunOptions<'_>,
    ) -> Result<Step, RunError> {
        let checkpoint = store.load(id).await?.ok_or_else(|| RunError::Resume {
            id: id.to_string(),
            reason: "the store has no such run".into(),
        })?;
        if let Some(step) = checkpoint.step() {
            return Ok(step);
        }
        let options = options.with_store(store, id);
        let task = self.task_for(&options)?;
        if let Some(reason) = resume::task_difference(&checkpoint.task, &task) {
            return Err(RunError::Resume {
                id: id.to_string(),
                reason,
            });
        }
        let memory = resume::restore_namespace(&self.inner, &task, &checkpoint.turns)
            .await
            .map_err(|reason| RunError::Resume {
                id: id.to_string(),
                reason,
            })?;
        if let Some(last) = checkpoint.turns.last() {
            tracing::info!(
                run = id,
                turns = checkpoint.turns.len(),
                "resuming run {id} after turn {}",
                last.number()
            );
        }
        let start = Start {
            turns: checkpoint.turns,
            memory,
        };
        self.drive(checkpoint.task, start, options).await
    }

    /// The task a run with `options` is given.
    pub(crate) fn task_for(&self, options: &RunOptions<'_>) -> Result<Task, RunError> {
        let inner = &self.inner;
        if let Some(message) = &options.data_error {
            return Err(RunError::Data(message.clone()));
        }
        let mut data = inner.data.clone();
        let mut descriptions = BTreeMap::new();
        let mut provided: Option<Vec<String>> = None;
        if let Some(step) = options.previous
            && let Some(value) = step.value()
        {
            let upstream = chain::upstream_input(value, step)?;
            provided = Some(upstream.data.iter().map(|(name, _)| name.clone()).collect());
            data.extend(upstream.data);
            descriptions.extend(upstream.descriptions);
        }
        data.extend(options.data.clone());
        let clashes = name_clashes(&inner.specs, data.keys());
        if !clashes.is_empty() {
            return Err(RunError::NameClash(clashes));
        }
        descriptions.extend(inner.context_descriptions.clone());
        descriptions.retain(|name, _| data.contains_key(name));
        if let Some(signature) = &inner.signature {
            signature.validate_input(|name| data.get(name)).map_err(
                |mismatches| match provided {
                    Some(provided) => RunError::ChainMismatch {
                        mismatches,
                        provided,
                    },
                    None => RunError::Input(mismatches),
                },
            )?;
        }
        let mission =
            expand_mission(&inner.mission, &data).map_err(RunError::MissingPlaceholders)?;
        Ok(self.task(mission, data, descriptions))
    }

    /// The task of a run of this agent with this mission and input.
    fn task(
        &self,
        mission: String,
        data: BTreeMap<String, Value>,
        data_descriptions: BTreeMap<String, String>,
    ) -> Task {
        let inner = &self.inner;
        Task {
            mission,
            system_prompt: inner.system_prompt.text.clone(),
            tools: inner.specs.clone(),
            data,
            data_descriptions,
            signature: inner.signature.as_ref().map(|s| s.source().to_string()),
            field_descriptions: inner.field_descriptions.clone(),
            max_turns: inner.settings.max_turns,
        }
    }

    /// Runs the loop from `start` until the run ends.
    async fn drive(
        &self,
        task: Task,
        start: Start,
        mut options: RunOptions<'_>,
    ) -> Result<Step, RunError> {
        let inner = &self.inner;
        let stop = options.stop.take();
        // Tool calls are awaited, and timed, on the caller's runtime.
        tokio::runtime::Handle::try_current().map_err(|_| RunError::NoRuntime)?;
        let llm: Arc<dyn Llm> = match &options.llm {
            None => inner.llm.clone(),
            Some(RunLlm::Given(llm)) => llm.clone(),
            Some(RunLlm::Named(name)) => inner
                .settings
                .registry
                .resolve(name)
                .map_err(RunError::UnknownLlm)?,
        };
        let span = tracing::info_span!(
            "agent_run",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.provider.name = %llm.provider_name(),
            gen_ai.request.model = %llm.model_name(),
            mission = %preview(&task.mission, 80),
            llm = %llm.describe(),
            max_turns = task.max_turns,
            compression = %inner.settings.compression_text(),
            tools = task.tools.len(),
            resumed_after = start.turns.len(),
            outcome = Empty,
            failure = Empty,
            turns = Empty,
            llm_requests = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.usage.cache_read.input_tokens = Empty,
            gen_ai.usage.cache_creation.input_tokens = Empty,
            duration_ms = Empty,
        );
        let tree = Tree::for_run(&inner.settings, Instant::now());
        if let Some(reason) = tree.depth_exceeded() {
            return Ok(Step {
                outcome: StepOutcome::Failed {
                    kind: FailureKind::MaxDepthExceeded,
                    reason,
                    value: None,
                    llm_errors: Vec::new(),
                },
                task,
                turns: start.turns,
                usage: Usage::default(),
            });
        }
        let store = options
            .store
            .as_ref()
            .map(|(store, id)| (*store, id.as_str()));
        let run = Loop::new(inner, llm, task, options.observer, store, start, tree)?;
        let step = run.run(stop).instrument(span.clone()).await;
        record_step(&span, &step);
        let interrupted = matches!(
            step.outcome,
            StepOutcome::Failed {
                kind: FailureKind::Interrupted,
                ..
            }
        );
        if let Some((store, id)) = &options.store
            && !interrupted
            && let Err(error) = store.finish(id, &step.outcome, &step.usage).await
        {
            tracing::error!(run = %id, %error, "the end of the run could not be checkpointed");
        }
        Ok(step)
    }
}

fn record_step(span: &tracing::Span, step: &Step) {
    match &step.outcome {
        StepOutcome::Returned { .. } => span.record("outcome", "returned"),
        StepOutcome::Failed { kind, .. } => {
            span.record("outcome", "failed");
            span.record("failure", kind.as_str())
        }
    };
    span.record("turns", step.turns.len());
    span.record("llm_requests", step.usage.llm_requests);
    record_tokens(span, &step.usage.tokens);
    span.record("duration_ms", step.usage.duration_us / 1000);
}

/// The first `max` characters of a text on one line, for span fields.
fn preview(text: &str, max: usize) -> String {
    let line: String = text
        .chars()
        .map(|c| if c == '\n' { ' ' } else { c })
        .take(max)
        .collect();
    if text.chars().count() > max {
        format!("{line}...")
    } else {
        line
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// Where a run starts.
struct Start {
    /// The turns already made: none for a new run, the recorded ones for a resumed run.
    turns: Turns,
    /// The namespace after `turns`.
    memory: UserNamespace,
}

/// What to do after a turn.
enum Next {
    Continue,
    Done(StepOutcome),
}

/// How a turn's program ended, as far as the run is concerned.
enum Ending {
    /// Nothing that ends the run (a value, or an error to recover from).
    Continue,
    /// A valid `(return ...)` (or, single-shot, a valid last value).
    Returned,
    /// `(fail reason)`.
    Failed(Value),
}

/// How the wait for a turn ended.
enum TurnEnd {
    Finished(Next),
    DeadlinePassed,
    Stopped,
}

/// One run in progress.
struct Loop<'a> {
    agent: &'a Inner,
    /// The model this run asks.
    llm: Arc<dyn Llm>,
    task: Task,
    observer: Option<&'a dyn RunObserver>,
    store: Option<(&'a dyn RunStore, &'a str)>,
    /// Data, limits and the agent's tools (answered by the loop while the program waits).
    runtime: Runtime,
    strategy: Box<dyn Compression>,
    single_shot: bool,
    history: Option<History>,
    turns: Turns,
    /// How many of `turns` were restored from a checkpoint.
    restored: usize,
    /// The namespace after the last successful turn.
    memory: UserNamespace,
    /// The usage of the turn in progress, kept here so that a turn cut off by the deadline
    /// still counts what it spent.
    pending: Usage,
    /// Whether a model request of the turn in progress is waiting for its answer.
    awaiting_model: bool,
    /// Requests that produced no turn (a model failure, or a turn cut off by the deadline).
    unattached: Usage,
    /// The limits this run shares with the runs above and below it.
    tree: Tree,
    /// What the LLM tools its programs call ask, and where they report their requests.
    caller: Caller,
}

impl<'a> Loop<'a> {
    #[allow(clippy::too_many_arguments)]
    fn new(
        agent: &'a Inner,
        llm: Arc<dyn Llm>,
        task: Task,
        observer: Option<&'a dyn RunObserver>,
        store: Option<(&'a dyn RunStore, &'a str)>,
        start: Start,
        tree: Tree,
    ) -> Result<Loop<'a>, RunError> {
        let Start { turns, memory } = start;
        let settings = &agent.settings;
        let single_shot = task.max_turns <= 1;
        // SS-001: a single-shot run is never compressed.
        let strategy: Box<dyn Compression> = if single_shot {
            Box::new(Uncompressed)
        } else {
            settings.strategy(llm.pricing())
        };
        let history = match settings.history {
            Some(policy) => {
                let opts = RenderOptions::from_task(&task);
                let first = Uncompressed.to_messages(&[], &[], &opts).messages;
                let system = first
                    .first()
                    .cloned()
                    .unwrap_or_else(|| Message::system(""));
                let mission = first.get(1).cloned().unwrap_or_else(|| Message::user(""));
                let llm = llm.clone();
                Some(History::new(
                    policy,
                    &mission,
                    &system,
                    LlmSummarizer::new(llm).with_max_tokens(settings.max_tokens),
                )?)
            }
            _ => None,
        };
        let runtime =
            resume::runtime_for(&settings.limits, &task).with_tools(awaited_tools(&agent.specs));
        let caller = Caller::new(
            llm.clone(),
            settings.registry.clone(),
            settings.retry.clone(),
        );
        Ok(Loop {
            agent,
            llm,
            task,
            observer,
            store,
            runtime,
            strategy,
            single_shot,
            history,
            restored: turns.len(),
            turns,
            memory,
            pending: Usage::default(),
            awaiting_model: false,
            unattached: Usage::default(),
            tree,
            caller,
        })
    }

    async fn run(mut self, mut stop: Option<StopSignal<'_>>) -> Step {
        let started = Instant::now();
        let deadline = self.tree.deadline;
        let outcome = loop {
            let number = self.turns.next_number();
            if number > self.task.max_turns {
                break StepOutcome::Failed {
                    kind: FailureKind::MaxTurnsExceeded,
                    reason: format!(
                        "no (return ...) or (fail ...) after {} turn{}",
                        self.task.max_turns,
                        if self.task.max_turns == 1 { "" } else { "s" }
                    ),
                    value: None,
                    llm_errors: Vec::new(),
                };
            }
            if let Err(reason) = self.tree.take_turn() {
                break StepOutcome::Failed {
                    kind: FailureKind::TurnBudgetExhausted,
                    reason,
                    value: None,
                    llm_errors: Vec::new(),
                };
            }
            let span = tracing::info_span!(
                "agent_turn",
                turn = number,
                max_turns = self.task.max_turns,
                outcome = Empty,
                error_kind = Empty,
                program_chars = Empty,
                prints = Empty,
                tool_calls = Empty,
                gen_ai.usage.input_tokens = Empty,
                gen_ai.usage.output_tokens = Empty,
                gen_ai.usage.cache_read.input_tokens = Empty,
                gen_ai.usage.cache_creation.input_tokens = Empty,
                duration_ms = Empty,
            );
            let turn = self.turn(number, span.clone()).instrument(span);
            let passes = async {
                match deadline {
                    Some((at, _)) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending().await,
                }
            };
            let stopped = async {
                match stop.as_mut() {
                    Some(signal) => signal.await,
                    None => std::future::pending().await,
                }
            };
            // A passed deadline wins over a turn that ends in the same instant: when a
            // sub-agent's run ends at the deadline it shares with this one, so does this run.
            let ended = tokio::select! {
                biased;
                () = stopped => TurnEnd::Stopped,
                () = passes => TurnEnd::DeadlinePassed,
                next = turn => TurnEnd::Finished(next),
            };
            let next = match ended {
                TurnEnd::Finished(next) => next,
                TurnEnd::DeadlinePassed => break self.deadline_passed(number, deadline),
                TurnEnd::Stopped => break self.interrupted(number),
            };
            self.checkpoint_last(number).await;
            match next {
                Next::Continue => {}
                Next::Done(outcome) => break outcome,
            }
        };
        let mut usage = Usage::sum(self.turns.iter().map(Turn::usage));
        let earlier: u64 = self.turns[..self.restored]
            .iter()
            .map(|t| t.usage().duration_us)
            .sum();
        usage += std::mem::take(&mut self.unattached);
        usage.duration_us = earlier.saturating_add(micros(started.elapsed()));
        Step {
            outcome,
            task: self.task,
            turns: self.turns,
            usage,
        }
    }

    /// What a turn cut off before it was recorded spent is kept (a request still waiting
    /// counts as sent); the turn itself is not recorded.
    fn cut_off(&mut self) {
        let mut spent = std::mem::take(&mut self.pending);
        spent += self.caller.take_spent();
        if self.awaiting_model {
            spent.llm_requests = spent.llm_requests.saturating_add(1);
        }
        spent.duration_us = 0;
        self.unattached += spent;
    }

    /// The end of a run whose stop signal fired during turn `number`.
    fn interrupted(&mut self, number: u32) -> StepOutcome {
        self.cut_off();
        tracing::info!(turn = number, "the run was stopped during turn {number}");
        StepOutcome::Failed {
            kind: FailureKind::Interrupted,
            reason: format!("the run was stopped during turn {number}, which was cut off"),
            value: None,
            llm_errors: Vec::new(),
        }
    }

    /// The end of a run whose deadline (its own, or that of the tree of agents it runs in)
    /// passed during turn `number`.
    fn deadline_passed(
        &mut self,
        number: u32,
        deadline: Option<(Instant, Duration)>,
    ) -> StepOutcome {
        let limit = deadline.map_or(Duration::ZERO, |(_, limit)| limit);
        self.cut_off();
        tracing::warn!(
            turn = number,
            deadline_ms = micros(limit) / 1000,
            "the run's deadline of {} passed during turn {number}",
            HumanDuration(limit)
        );
        StepOutcome::Failed {
            kind: FailureKind::Timeout,
            reason: format!(
                "the run did not finish within its deadline of {}; turn {number} was cut off",
                HumanDuration(limit)
            ),
            value: None,
            llm_errors: Vec::new(),
        }
    }

    /// Hands turn `number` to the store, if it was recorded and there is a store.
    async fn checkpoint_last(&self, number: u32) {
        let Some((store, id)) = self.store else {
            return;
        };
        let Some(turn) = self.turns.last().filter(|t| t.number() == number) else {
            return;
        };
        if let Err(error) = store.append(id, turn).await {
            tracing::error!(
                run = id,
                turn = number,
                %error,
                "turn {number} could not be checkpointed; the run goes on, but cannot resume \
                 after it"
            );
        }
    }

    async fn turn(&mut self, number: u32, span: tracing::Span) -> Next {
        let started = Instant::now();
        let settings = &self.agent.settings;
        let opts = RenderOptions::from_task(&self.task).with_limits(settings.render_limits());
        let definitions = self.memory.definitions();
        let rendered = self.strategy.to_messages(&self.turns, &definitions, &opts);
        if let Some(observer) = self.observer {
            observer.on_history_rendered(number, &rendered.stats);
        }
        self.pending = Usage::default();
        let (messages, points) = match &mut self.history {
            Some(history) => {
                let applied = history
                    .apply(rendered.messages.clone(), &mut self.pending)
                    .await;
                if applied == rendered.messages {
                    (applied, rendered.cache_points)
                } else {
                    // Trimmed or summarized: only the stable prefix is known to stay.
                    let points = prefix_point(&applied, &opts).into_iter().collect();
                    (applied, points)
                }
            }
            None => (rendered.messages, rendered.cache_points),
        };
        let request = request_for(&messages, &points, settings, number, opts.tools);
        if let Some(observer) = self.observer {
            observer.on_request(number, &messages);
        }
        self.awaiting_model = true;
        let response = call_llm(
            &*self.llm,
            &self.agent.settings.retry,
            number,
            &request,
            &mut self.pending,
        )
        .await;
        self.awaiting_model = false;
        let response = match response {
            Ok(response) => response,
            Err(error) => {
                span.record("outcome", "llm_error");
                let mut usage = std::mem::take(&mut self.pending);
                usage.duration_us = micros(started.elapsed());
                self.unattached += usage;
                return Next::Done(StepOutcome::Failed {
                    kind: FailureKind::LlmError,
                    reason: error.to_string(),
                    value: None,
                    llm_errors: error.each_attempt().iter().map(|e| e.to_string()).collect(),
                });
            }
        };
        self.pending.tokens += response.usage;

        let cut_off = response.is_cut_off();
        let Some(program) = extract_program(&response.content) else {
            let error = if cut_off {
                cut_off_error(settings.max_tokens, None)
            } else {
                TurnError::new("no_program", NO_PROGRAM)
            };
            let turn = Turn::failure(number, "", error);
            return self.finish_turn(
                turn,
                None,
                Ending::Continue,
                response,
                messages,
                started,
                &span,
            );
        };
        span.record("program_chars", program.chars().count());
        let eval_started = Instant::now();
        let out = self.evaluate(number, &program, &span).await;
        self.pending.eval_duration_us = micros(eval_started.elapsed());
        // What the program's LLM tools asked is part of the turn.
        self.pending += self.caller.take_spent();
        let out = match out {
            Ok(out) => out,
            Err(error) => {
                let turn = Turn::failure(number, program, error);
                return self.finish_turn(
                    turn,
                    None,
                    Ending::Continue,
                    response,
                    messages,
                    started,
                    &span,
                );
            }
        };
        span.record("prints", out.prints.len());
        span.record("tool_calls", out.tool_calls.len());
        let RunOutcome {
            outcome,
            prints,
            tool_calls,
            memory,
            ..
        } = out;
        let (turn, kept, ending) = match outcome {
            Outcome::Returned(value) => self.returned(number, program, value, memory),
            // Single-shot: the last form's value is the answer.
            Outcome::Value(value) if self.single_shot => {
                self.returned(number, program, value, memory)
            }
            Outcome::Value(value) => {
                match kept::check(&memory, self.agent.settings.max_kept_bytes) {
                    Ok(()) => (
                        Turn::success(number, program, value),
                        Some(memory),
                        Ending::Continue,
                    ),
                    Err(error) => (
                        Turn::failure(number, program, error),
                        None,
                        Ending::Continue,
                    ),
                }
            }
            Outcome::Failed(reason) => (
                Turn::failure(
                    number,
                    program,
                    TurnError::new(
                        "failed",
                        format!("the program called (fail ...): {}", reason_text(&reason)),
                    ),
                ),
                None,
                Ending::Failed(reason),
            ),
            // A cut-off reply that does not parse was most likely cut inside the program.
            Outcome::Error(error) if cut_off && error.kind == ErrorKind::Parse => (
                Turn::failure(
                    number,
                    program,
                    cut_off_error(settings.max_tokens, Some(&error.to_string())),
                ),
                None,
                Ending::Continue,
            ),
            Outcome::Error(error) => (
                Turn::failure(number, program, &error),
                None,
                Ending::Continue,
            ),
        };
        let turn = turn.with_prints(prints).with_tool_calls(tool_calls);
        self.finish_turn(turn, kept, ending, response, messages, started, &span)
    }

    /// Records the turn, keeps its namespace if it succeeded, and decides what comes next.
    #[allow(clippy::too_many_arguments)]
    fn finish_turn(
        &mut self,
        turn: Turn,
        kept: Option<UserNamespace>,
        ending: Ending,
        response: LlmResponse,
        messages: Vec<Message>,
        started: Instant,
        span: &tracing::Span,
    ) -> Next {
        if let Some(memory) = kept {
            self.memory = memory;
        }
        let mut usage = std::mem::take(&mut self.pending);
        usage.duration_us = micros(started.elapsed());
        span.record("duration_ms", usage.duration_us / 1000);
        record_tokens(span, &usage.tokens);
        log_turn(&turn, &usage, self.task.max_turns);
        let mut turn = turn
            .with_memory(self.memory.definitions())
            .with_raw_response(response.content)
            .with_messages(messages)
            .with_usage(usage);
        if let Some(stop_reason) = response.stop_reason {
            turn = turn.with_stop_reason(stop_reason);
        }
        let next = self.decide(&turn, ending);
        match &turn.error() {
            None => span.record("outcome", "ok"),
            Some(error) => {
                span.record("outcome", "error");
                span.record("error_kind", error.kind.as_str())
            }
        };
        let recorded = match self.turns.push(turn) {
            Ok(turn) => turn,
            // Numbers come from `next_number`, so a push cannot be out of order.
            Err(error) => unreachable!("{error}"),
        };
        if let Some(observer) = self.observer {
            observer.on_turn(recorded);
        }
        next
    }

    /// How the run goes on after `turn`.
    fn decide(&self, turn: &Turn, ending: Ending) -> Next {
        match (ending, turn.error()) {
            (Ending::Returned, _) => Next::Done(StepOutcome::Returned {
                value: turn.value().cloned().unwrap_or_default(),
            }),
            (Ending::Failed(reason), _) => Next::Done(StepOutcome::Failed {
                kind: FailureKind::Failed,
                reason: reason_text(&reason),
                value: Some(reason),
                llm_errors: Vec::new(),
            }),
            // Single-shot: no second chance.
            (Ending::Continue, Some(error)) if self.single_shot => {
                Next::Done(StepOutcome::Failed {
                    kind: if error.kind == "signature_mismatch" {
                        FailureKind::SignatureMismatch
                    } else {
                        FailureKind::ProgramError
                    },
                    reason: error.to_string(),
                    value: None,
                    llm_errors: Vec::new(),
                })
            }
            (Ending::Continue, _) => Next::Continue,
        }
    }

    /// A turn that returned `value`: the answer if it matches the signature, else a failed
    /// turn whose feedback shows the expected shape and the value.
    fn returned(
        &self,
        number: u32,
        program: String,
        value: Value,
        memory: UserNamespace,
    ) -> (Turn, Option<UserNamespace>, Ending) {
        match self.check_return(&value) {
            Ok(()) => (
                Turn::success(
                    number,
                    program,
                    match self.agent.settings.float_precision {
                        Some(digits) => round_floats(&value, digits),
                        None => value,
                    },
                ),
                Some(memory),
                Ending::Returned,
            ),
            Err(error) => (
                Turn::failure(number, program, error),
                None,
                Ending::Continue,
            ),
        }
    }

    fn check_return(&self, value: &Value) -> Result<(), TurnError> {
        let Some(signature) = &self.agent.signature else {
            return Ok(());
        };
        signature.validate(value).map_err(|mismatches| {
            let redacted = signature.redact(value);
            let shown = ptc_turn::preview(&redacted, Compact::new(10, 200).with_firewall_hidden());
            let mut message = format!(
                "the returned value does not match the expected output.\nExpected: {}\nReturned: \
                 {shown}",
                signature.output()
            );
            for mismatch in &mismatches {
                message.push_str("\n- ");
                message.push_str(&mismatch.to_string());
            }
            message.push_str("\nFix the value and call (return ...) again.");
            TurnError::new("signature_mismatch", message)
        })
    }

    /// Runs the program of turn `number`, reading the values of earlier turns as `*1 *2 *3
    /// *e`; its tool calls are awaited on the runtime, in `span`, within this run's tree of
    /// agents, and the requests of its LLM tools are shown to the observer after each batch.
    async fn evaluate(
        &self,
        number: u32,
        program: &str,
        span: &tracing::Span,
    ) -> Result<RunOutcome, TurnError> {
        let live = LiveTools {
            tools: &self.agent.tools,
            timeout: self.runtime.limits().tool_timeout,
            parent: span.clone(),
        };
        let runtime = self.runtime.clone().with_history(history_of(&self.turns));
        run_program(&runtime, program, &self.memory, span, |requests| {
            let batch = self
                .tree
                .calling(self.caller.calling(number, live.answer(requests)));
            async move {
                let answers = batch.await;
                let calls = self.caller.take_unseen();
                if let Some(observer) = self.observer {
                    for call in &calls {
                        observer.on_tool_request(number, call);
                    }
                }
                answers
            }
        })
        .await
        .map_err(|panic| {
            TurnError::new(
                "internal",
                format!(
                    "the program could not be run ({panic}); this is a fault of the host, not \
                     of the program: send it again"
                ),
            )
        })
    }
}

/// Sends `request` for turn `turn`, retrying transient failures as `policy` says, and adds
/// the requests and their time to `usage`.
pub(crate) async fn call_llm(
    llm: &dyn Llm,
    policy: &RetryPolicy,
    turn: u32,
    request: &LlmRequest,
    usage: &mut Usage,
) -> Result<LlmResponse, LlmError> {
    let prompt_chars: usize = request.system.chars().count()
        + request
            .messages
            .iter()
            .map(|m| m.content.chars().count())
            .sum::<usize>();
    let mut attempt: u32 = 0;
    let mut failed: Vec<LlmError> = Vec::new();
    loop {
        attempt = attempt.saturating_add(1);
        let span = tracing::info_span!(
            "llm_request",
            gen_ai.operation.name = "chat",
            gen_ai.provider.name = %llm.provider_name(),
            gen_ai.request.model = %llm.model_name(),
            gen_ai.request.max_tokens = request.max_tokens,
            gen_ai.request.temperature = request.temperature,
            gen_ai.response.model = Empty,
            gen_ai.response.finish_reasons = Empty,
            turn,
            attempt,
            llm = %llm.describe(),
            messages = request.messages.len() + 1,
            prompt_chars,
            cacheable_prefix = request.cache_breakpoints.first().map_or(0, |b| b.byte_offset),
            outcome = Empty,
            error = Empty,
            error.type = Empty,
            gen_ai.usage.input_tokens = Empty,
            gen_ai.usage.output_tokens = Empty,
            gen_ai.usage.cache_read.input_tokens = Empty,
            gen_ai.usage.cache_creation.input_tokens = Empty,
            duration_ms = Empty,
        );
        let started = Instant::now();
        let result = llm.complete(request).instrument(span.clone()).await;
        let elapsed = started.elapsed();
        // Every request the provider sent, its own retries included.
        let requests = match &result {
            Ok(response) => response.attempts.max(1),
            Err(error) => error.attempts(),
        };
        usage.llm_requests = usage.llm_requests.saturating_add(requests);
        usage.llm_duration_us = usage.llm_duration_us.saturating_add(micros(elapsed));
        span.record("duration_ms", micros(elapsed) / 1000);
        let error = match result {
            Ok(response) => {
                span.record("outcome", "ok");
                if let Some(model) = &response.model {
                    span.record("gen_ai.response.model", model.as_str());
                }
                if let Some(reason) = &response.stop_reason {
                    span.record("gen_ai.response.finish_reasons", reason.as_str());
                }
                record_tokens(&span, &response.usage);
                return Ok(response);
            }
            Err(error) => error,
        };
        span.record("outcome", "error");
        span.record("error", error.to_string().as_str());
        span.record("error.type", error.root().kind());
        let retries_done = attempt - 1;
        if !error.is_transient() || retries_done >= policy.max_retries {
            failed.push(error);
            return Err(LlmError::after_attempts(failed));
        }
        let retry_after = match error.root() {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        };
        let wait = policy.delay(attempt, retry_after);
        tracing::warn!(
            turn,
            attempt,
            wait_ms = micros(wait) / 1000,
            %error,
            "turn {turn}: model call {attempt} of {} failed: {error}; retrying in {}",
            policy.max_retries.saturating_add(1),
            HumanDuration(wait)
        );
        failed.push(error);
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

/// Token counts in words: `950 tokens in, 25 out`, with the prompt cache's share when there
/// is one (`950 tokens in (+700 read from the prompt cache), 25 out`).
pub fn tokens_text(tokens: &TokenUsage) -> String {
    let mut cache = Vec::new();
    if tokens.cache_read_tokens > 0 {
        cache.push(format!("{} read from", tokens.cache_read_tokens));
    }
    if tokens.cache_write_tokens > 0 {
        cache.push(format!("{} written to", tokens.cache_write_tokens));
    }
    let cache = if cache.is_empty() {
        String::new()
    } else {
        format!(" (+{} the prompt cache)", cache.join(" and "))
    };
    format!(
        "{} tokens in{cache}, {} out",
        tokens.input_tokens, tokens.output_tokens
    )
}

/// The line each turn logs: its outcome, tokens and time.
fn log_turn(turn: &Turn, usage: &Usage, max_turns: u32) {
    let number = turn.number();
    let outcome = match turn.error() {
        None => "ok".to_string(),
        Some(error) => format!("error[{}]", error.kind),
    };
    tracing::info!(
        turn = number,
        max_turns,
        outcome = %outcome,
        gen_ai.usage.input_tokens = usage.tokens.prompt_tokens(),
        gen_ai.usage.output_tokens = usage.tokens.output_tokens,
        llm_requests = usage.llm_requests,
        duration_ms = usage.duration_us / 1000,
        "turn {number} of {max_turns}: {outcome}; {}; {} (model {}, program {})",
        tokens_text(&usage.tokens),
        HumanDuration(Duration::from_micros(usage.duration_us)),
        HumanDuration(Duration::from_micros(usage.llm_duration_us)),
        HumanDuration(Duration::from_micros(usage.eval_duration_us)),
    );
}

/// The model request for rendered `messages` (system message first) and their cache `points`:
/// leading system messages become the system prompt, and the points mark the stable parts for
/// providers with explicit prompt caching. The request says its turn and the tools' names.
pub(crate) fn request_for(
    messages: &[Message],
    points: &[CachePoint],
    settings: &Settings,
    turn: u32,
    tools: &[ptc_lisp::ToolSpec],
) -> LlmRequest {
    let mut request = LlmRequest::from_prompt(PromptRequest::from_rendered(messages, points))
        .with_max_tokens(settings.max_tokens);
    if let Some(temperature) = settings.temperature {
        request = request.with_temperature(temperature);
    }
    let tool_names = tools.iter().map(|t| t.name.clone()).collect();
    request
        .with_sampling(settings.sampling.clone())
        .with_turn(turn, tool_names)
}

/// The end of the stable `tool/` and `data/` prefix of the first user message of `messages`.
fn prefix_point(messages: &[Message], opts: &RenderOptions<'_>) -> Option<CachePoint> {
    let index = messages.iter().position(|m| m.role != Role::System)?;
    let first = messages.get(index).filter(|m| m.role == Role::User)?;
    cacheable_prefix_len(&first.content, opts)
        .filter(|&len| len > 0)
        .map(|len| CachePoint::new(index, len))
}

/// A `(fail ...)` reason as text: a string as it is, anything else printed.
fn reason_text(reason: &Value) -> String {
    match reason {
        Value::Str(s) => s.to_string(),
        other => print_str(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn previews_are_one_line_and_cut() {
        assert_eq!(preview("a\nb", 10), "a b");
        assert_eq!(preview("abcdef", 3), "abc...");
    }
}

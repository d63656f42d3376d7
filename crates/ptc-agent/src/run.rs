//! The agent loop: render the history, ask the model, run its program, record the turn, repeat.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_compression::history::{
    HistoryError, HistoryManager, HistoryPolicy, SummaryState, TRIM_NOTICE,
};
use ptc_compression::{Compression, RenderOptions, Uncompressed, cacheable_prefix_len};
use ptc_lisp::format::{print_str, to_clojure};
use ptc_lisp::{ErrorKind, Outcome, RunOutcome, Runtime, Tools, UserNamespace, Value};
use ptc_turn::{
    FailureKind, Message, Role, Step, StepOutcome, Task, Turn, TurnError, Turns, Usage,
};
use serde::Serialize;
use tracing::Instrument;
use tracing::field::Empty;

use crate::agent::{Agent, Inner, data_from_serialize, expand_mission};
use crate::extract::extract_program;
use crate::llm::{LlmError, LlmRequest, LlmResponse};
use crate::signature::Mismatch;
use crate::summarizer::LlmSummarizer;
use crate::tool::BlockingTool;

/// Told about a run as it happens, e.g. to show each turn live. Both methods do nothing unless
/// implemented.
pub trait RunObserver: Send + Sync {
    /// The messages about to be sent for turn `turn` (system message first), exactly as sent.
    fn on_request(&self, turn: u32, messages: &[Message]) {
        let _ = (turn, messages);
    }

    /// A turn that has just been recorded.
    fn on_turn(&self, turn: &Turn) {
        let _ = turn;
    }
}

/// Options of one run: input data on top of the agent's, and an observer.
#[derive(Default)]
#[must_use]
pub struct RunOptions<'a> {
    data: BTreeMap<String, Value>,
    data_error: Option<String>,
    observer: Option<&'a dyn RunObserver>,
}

impl<'a> RunOptions<'a> {
    pub fn new() -> RunOptions<'a> {
        RunOptions::default()
    }

    /// Input data for this run (anything serializing to a JSON object), added to the agent's
    /// own; keys given here win.
    pub fn data<D: Serialize + ?Sized>(mut self, data: &D) -> RunOptions<'a> {
        match data_from_serialize(data) {
            Ok(entries) => self.data.extend(entries),
            Err(message) => {
                self.data_error.get_or_insert(message);
            }
        }
        self
    }

    /// One input value for this run, as `data/<name>`.
    pub fn data_value(mut self, name: impl Into<String>, value: Value) -> RunOptions<'a> {
        self.data.insert(name.into(), value);
        self
    }

    /// Tell `observer` about each request and turn.
    pub fn observer(mut self, observer: &'a dyn RunObserver) -> RunOptions<'a> {
        self.observer = Some(observer);
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
    #[error("the mission uses {} but the input data has no such key; pass it with RunOptions::data", .0.iter().map(|n| format!("{{{{{n}}}}}")).collect::<Vec<_>>().join(", "))]
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
        max_tokens: usize,
        system_tokens: usize,
        mission_tokens: usize,
    },
    /// Not called from within a tokio runtime.
    #[error("agents run on tokio: call run() from within a tokio runtime (e.g. #[tokio::main])")]
    NoRuntime,
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

    /// Runs the agent until a program returns or fails or the turns run out, and returns the
    /// [`Step`] with every turn. Model failures end the run with a failed step
    /// (`llm_error`); only invalid input stops a run before it starts.
    ///
    /// Must be called within a tokio runtime (programs run on its blocking threads).
    pub async fn run_with(&self, options: RunOptions<'_>) -> Result<Step, RunError> {
        let inner = &self.inner;
        if let Some(message) = options.data_error {
            return Err(RunError::Data(message));
        }
        let mut data = inner.data.clone();
        data.extend(options.data);
        if let Some(signature) = &inner.signature {
            signature
                .validate_input(|name| data.get(name))
                .map_err(RunError::Input)?;
        }
        let mission =
            expand_mission(&inner.mission, &data).map_err(RunError::MissingPlaceholders)?;
        let handle = tokio::runtime::Handle::try_current().map_err(|_| RunError::NoRuntime)?;
        let task = Task {
            mission,
            system_prompt: inner.system_prompt.text.clone(),
            tools: inner.specs.clone(),
            data,
            max_turns: inner.settings.max_turns,
        };
        let llm = &inner.llm;
        let span = tracing::info_span!(
            "agent_run",
            mission = %preview(&task.mission, 80),
            llm = %llm.describe(),
            max_turns = task.max_turns,
            compression = %inner.settings.compression,
            tools = task.tools.len(),
            outcome = Empty,
            failure = Empty,
            turns = Empty,
            llm_requests = Empty,
            input_tokens = Empty,
            output_tokens = Empty,
            cache_read_tokens = Empty,
            cache_write_tokens = Empty,
            duration_ms = Empty,
        );
        let run = Loop::new(inner, task, handle, options.observer)?;
        let step = run.run().instrument(span.clone()).await;
        record_step(&span, &step);
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
    span.record("input_tokens", step.usage.tokens.input_tokens);
    span.record("output_tokens", step.usage.tokens.output_tokens);
    span.record("cache_read_tokens", step.usage.tokens.cache_read_tokens);
    span.record("cache_write_tokens", step.usage.tokens.cache_write_tokens);
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

/// The history policy of a run, with the state it keeps across turns. It applies to whatever
/// the run renders: the full history, or a compression strategy's messages.
struct History {
    policy: HistoryPolicy,
    /// Holds the tokenizer (and its cache) for every turn's manager.
    manager: HistoryManager,
    state: SummaryState,
    summarizer: LlmSummarizer,
}

impl History {
    /// Checks that the budget holds the system prompt and the mission message, which are
    /// always sent (MSG-007).
    fn new(
        policy: HistoryPolicy,
        mission: &Message,
        system: &Message,
        summarizer: LlmSummarizer,
    ) -> Result<History, RunError> {
        let manager = HistoryManager::new(policy);
        let mission_tokens = manager.tokenizer().count_message(mission);
        if let Err(HistoryError::InvalidTokenLimit {
            system_prompt_tokens,
            ..
        }) = manager
            .with_policy(pinned(policy, mission_tokens))
            .validate(std::slice::from_ref(system))
        {
            return Err(RunError::HistoryBudget {
                max_tokens: policy.max_tokens.unwrap_or_default(),
                system_tokens: system_prompt_tokens,
                mission_tokens,
            });
        }
        Ok(History {
            policy,
            manager,
            state: SummaryState::new(),
            summarizer,
        })
    }

    /// The messages to send: `messages` (system message first, then the first user message:
    /// the mission, or a compression strategy's summary that starts with it) within the
    /// policy. The summary step sees every message (its strategies keep the first user
    /// message); the limits apply to the others, with the budget left after the first user
    /// message, which is then put back in its place.
    async fn apply(&mut self, messages: Vec<Message>, usage: &mut Usage) -> Vec<Message> {
        let system_count = messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        let mission = messages
            .get(system_count)
            .filter(|m| m.role == Role::User)
            .cloned();
        let summarizing = self.manager.with_policy(HistoryPolicy {
            max_tokens: None,
            max_messages: None,
            ..self.policy
        });
        let summarized = match summarizing
            .apply(&messages, &mut self.state, &self.summarizer)
            .await
        {
            Ok(summarized) => summarized,
            Err(error) => {
                tracing::warn!(%error, "the history summary failed; trimming without it");
                messages
            }
        };
        *usage += self.summarizer.take_usage();
        let Some(mission) = mission else {
            return self
                .manager
                .with_policy(self.policy)
                .apply_limits(&summarized)
                .unwrap_or(summarized);
        };
        let mut rest = summarized;
        if rest.get(system_count) == Some(&mission) {
            rest.remove(system_count);
        }
        let mission_tokens = self.manager.tokenizer().count_message(&mission);
        let limited = self
            .manager
            .with_policy(pinned(self.policy, mission_tokens))
            .apply_limits(&rest)
            .unwrap_or_else(|error| {
                // A budget too small for the system prompt and the first user message, which a
                // compression strategy's summary can outgrow: send only those.
                tracing::warn!(%error, "the history budget holds no more than the first messages");
                rest[..system_count.min(rest.len())].to_vec()
            });
        keep_mission(limited, &mission)
    }
}

/// The limits of `policy` for the messages other than the mission message (`mission_tokens`),
/// which [`keep_mission`] puts back.
fn pinned(policy: HistoryPolicy, mission_tokens: usize) -> HistoryPolicy {
    let mut pinned = policy;
    pinned.summarize = None;
    pinned.max_tokens = policy
        .max_tokens
        .map(|max| max.saturating_sub(mission_tokens));
    pinned.max_messages = policy.max_messages.map(|max| max.saturating_sub(1).max(1));
    pinned
}

/// `messages` with `mission` after the system messages, if a trim dropped it; a trim notice
/// that took its place is folded into it.
fn keep_mission(mut messages: Vec<Message>, mission: &Message) -> Vec<Message> {
    if messages.iter().any(|m| m == mission) {
        return messages;
    }
    let at = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let mut mission = mission.clone();
    if messages
        .get(at)
        .is_some_and(|m| m.role == Role::User && m.content == TRIM_NOTICE)
    {
        let notice = messages.remove(at);
        mission.content.push_str("\n\n");
        mission.content.push_str(&notice.content);
    }
    messages.insert(at, mission);
    messages
}

/// One run in progress.
struct Loop<'a> {
    agent: &'a Inner,
    task: Task,
    handle: tokio::runtime::Handle,
    observer: Option<&'a dyn RunObserver>,
    /// Data and limits; each turn adds the tools (whose spans belong to the turn).
    runtime: Runtime,
    strategy: Box<dyn Compression>,
    single_shot: bool,
    history: Option<History>,
    turns: Turns,
    /// The namespace after the last successful turn.
    memory: UserNamespace,
    /// Requests that produced no turn (a model failure that ended the run).
    unattached: Usage,
    /// Dropped with the run: tool calls still in flight then stop waiting (functions defined
    /// in one turn keep the tools of that turn, so this must outlive every turn).
    _run_alive: tokio::sync::watch::Sender<()>,
    run_ended: tokio::sync::watch::Receiver<()>,
}

impl<'a> Loop<'a> {
    fn new(
        agent: &'a Inner,
        task: Task,
        handle: tokio::runtime::Handle,
        observer: Option<&'a dyn RunObserver>,
    ) -> Result<Loop<'a>, RunError> {
        let settings = &agent.settings;
        let single_shot = task.max_turns <= 1;
        // SS-001: a single-shot run is never compressed.
        let compressed = settings.compression.is_enabled() && !single_shot;
        let strategy: Box<dyn Compression> = if compressed {
            settings.compression.build()
        } else {
            Box::new(Uncompressed)
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
                let llm = agent.llm.clone();
                Some(History::new(
                    policy,
                    &mission,
                    &system,
                    LlmSummarizer::new(llm).with_max_tokens(settings.max_tokens),
                )?)
            }
            _ => None,
        };
        let mut runtime = Runtime::new().with_limits(settings.limits.clone());
        for (name, value) in &task.data {
            runtime = runtime.with_data(name.clone(), value.clone());
        }
        let (run_alive, run_ended) = tokio::sync::watch::channel(());
        Ok(Loop {
            _run_alive: run_alive,
            run_ended,
            agent,
            task,
            handle,
            observer,
            runtime,
            strategy,
            single_shot,
            history,
            turns: Turns::new(),
            memory: UserNamespace::new(),
            unattached: Usage::default(),
        })
    }

    async fn run(mut self) -> Step {
        let started = Instant::now();
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
            let span = tracing::info_span!(
                "agent_turn",
                turn = number,
                max_turns = self.task.max_turns,
                outcome = Empty,
                error_kind = Empty,
                program_chars = Empty,
                prints = Empty,
                tool_calls = Empty,
                input_tokens = Empty,
                output_tokens = Empty,
                duration_ms = Empty,
            );
            match self.turn(number, span.clone()).instrument(span).await {
                Next::Continue => {}
                Next::Done(outcome) => break outcome,
            }
        };
        let mut usage = Usage::sum(self.turns.iter().map(Turn::usage));
        usage += std::mem::take(&mut self.unattached);
        usage.duration_us = micros(started.elapsed());
        Step {
            outcome,
            task: self.task,
            turns: self.turns,
            usage,
        }
    }

    async fn turn(&mut self, number: u32, span: tracing::Span) -> Next {
        let started = Instant::now();
        let settings = &self.agent.settings;
        let opts = RenderOptions::from_task(&self.task).with_limits(settings.compression.limits());
        let definitions = self.memory.definitions();
        let rendered = self.strategy.to_messages(&self.turns, &definitions, &opts);
        let mut usage = Usage {
            compression: Some(rendered.stats),
            ..Usage::default()
        };
        let messages = match &mut self.history {
            Some(history) => history.apply(rendered.messages, &mut usage).await,
            None => rendered.messages,
        };
        let request = request_for(&messages, &opts, settings.max_tokens, settings.temperature);
        if let Some(observer) = self.observer {
            observer.on_request(number, &messages);
        }
        let response = match self.call_llm(number, &request, &mut usage).await {
            Ok(response) => response,
            Err(error) => {
                span.record("outcome", "llm_error");
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
        usage.tokens += response.usage;
        span.record("input_tokens", response.usage.input_tokens);
        span.record("output_tokens", response.usage.output_tokens);

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
                usage,
                started,
                &span,
            );
        };
        span.record("program_chars", program.chars().count());
        let eval_started = Instant::now();
        let out = self.evaluate(program.clone(), span.clone()).await;
        usage.eval_duration_us = micros(eval_started.elapsed());
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
                    usage,
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
            Outcome::Value(value) => (
                Turn::success(number, program, value),
                Some(memory),
                Ending::Continue,
            ),
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
        self.finish_turn(
            turn, kept, ending, response, messages, usage, started, &span,
        )
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
        mut usage: Usage,
        started: Instant,
        span: &tracing::Span,
    ) -> Next {
        if let Some(memory) = kept {
            self.memory = memory;
        }
        usage.duration_us = micros(started.elapsed());
        span.record("duration_ms", usage.duration_us / 1000);
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
                Turn::success(number, program, value),
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
            let (shown, _) = to_clojure(&signature.redact(value), Some(10), Some(200));
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

    async fn evaluate(
        &self,
        program: String,
        span: tracing::Span,
    ) -> Result<RunOutcome, TurnError> {
        let mut tools = Tools::new();
        for (tool, spec) in self.agent.tools.iter().zip(&self.agent.specs) {
            tools.insert_arc(
                spec.clone(),
                Arc::new(BlockingTool {
                    tool: tool.clone(),
                    handle: self.handle.clone(),
                    parent: span.clone(),
                    run_ended: Some(self.run_ended.clone()),
                }),
            );
        }
        let runtime = self.runtime.clone().with_tools(tools);
        let memory = self.memory.clone();
        tokio::task::spawn_blocking(move || span.in_scope(|| runtime.run_str(&program, &memory)))
            .await
            .map_err(|e| {
                TurnError::new(
                    "internal",
                    format!(
                        "the program could not be run ({e}); this is a fault of the host, not of \
                         the program: send it again"
                    ),
                )
            })
    }

    /// Sends `request`, retrying transient failures as the agent's retry policy says.
    async fn call_llm(
        &self,
        turn: u32,
        request: &LlmRequest,
        usage: &mut Usage,
    ) -> Result<LlmResponse, LlmError> {
        let settings = &self.agent.settings;
        let llm = &self.agent.llm;
        let policy = &settings.retry;
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
                turn,
                attempt,
                llm = %llm.describe(),
                messages = request.messages.len() + 1,
                prompt_chars,
                cacheable_prefix = request.cache_breakpoint.map_or(0, |b| b.byte_offset),
                outcome = Empty,
                error = Empty,
                input_tokens = Empty,
                output_tokens = Empty,
                cache_read_tokens = Empty,
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
                    span.record("input_tokens", response.usage.input_tokens);
                    span.record("output_tokens", response.usage.output_tokens);
                    span.record("cache_read_tokens", response.usage.cache_read_tokens);
                    return Ok(response);
                }
                Err(error) => error,
            };
            span.record("outcome", "error");
            span.record("error", error.to_string().as_str());
            let retries_done = attempt - 1;
            let give_up = !error.is_transient() || retries_done >= policy.max_retries;
            let retry_after = match error.root() {
                LlmError::RateLimited { retry_after, .. } => *retry_after,
                _ => None,
            };
            if give_up {
                failed.push(error);
                return Err(LlmError::after_attempts(failed));
            }
            let wait = policy.delay(attempt, retry_after);
            tracing::warn!(turn, attempt, wait_ms = micros(wait) / 1000, %error, "retrying the model call");
            failed.push(error);
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
        }
    }
}

/// The model request for rendered `messages` (system message first): leading system messages
/// become the system prompt, and the cacheable prefix of the first user message (mission,
/// `tool/`, `data/`) is marked.
fn request_for(
    messages: &[Message],
    opts: &RenderOptions<'_>,
    max_tokens: u32,
    temperature: Option<f32>,
) -> LlmRequest {
    let system_count = messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let system = messages[..system_count]
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    let rest = messages[system_count..].to_vec();
    let breakpoint = rest
        .first()
        .filter(|m| m.role == Role::User)
        .and_then(|m| cacheable_prefix_len(&m.content, opts))
        .filter(|&len| len > 0);
    let mut request = LlmRequest::new(system, rest);
    if let Some(len) = breakpoint {
        request = request.with_cache_breakpoint(0, len);
    }
    request = request.with_max_tokens(max_tokens);
    if let Some(temperature) = temperature {
        request = request.with_temperature(temperature);
    }
    request
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
    fn a_dropped_mission_comes_back_with_the_trim_notice_folded_in() {
        let mission = Message::user("Do it");
        let trimmed = vec![
            Message::system("sys"),
            Message::user(TRIM_NOTICE),
            Message::assistant("(x)"),
        ];
        assert_eq!(
            keep_mission(trimmed, &mission),
            vec![
                Message::system("sys"),
                Message::user(format!("Do it\n\n{TRIM_NOTICE}")),
                Message::assistant("(x)"),
            ]
        );
        let kept = vec![Message::system("sys"), mission.clone()];
        assert_eq!(keep_mission(kept.clone(), &mission), kept);
    }

    #[test]
    fn previews_are_one_line_and_cut() {
        assert_eq!(preview("a\nb", 10), "a b");
        assert_eq!(preview("abcdef", 3), "abc...");
    }
}

//! The run core: every decision of a run, and no I/O.
//!
//! A [`RunCore`] owns what a run knows (its task, its turns, the namespace of its last
//! successful turn, its compression strategy, the usage of the turn in progress) and answers
//! each [`Event`] with the next [`Action`]: render the history, ask the model this request,
//! answer these tool calls, this turn is recorded, the run is over. It awaits nothing, sends
//! nothing and keeps nothing: a driver carries the actions out under the run's deadline, stop
//! signal, store and observer (`run/driver.rs` for agent runs, `compile/` for compiled
//! agents), and [`Agent::preview_prompt`](crate::Agent::preview_prompt) takes the first
//! request from it without sending it. Whatever a run decides — which turn comes next, what a
//! reply and a program's outcome make of a turn, when the run ends and how — is decided here
//! once.
//!
//! A program runs inside the core as a suspendable run of the sandbox: it evaluates until it
//! calls tools, and the core hands their requests out as [`Action::CallTools`]; the answers
//! come back as [`Event::ToolsAnswered`] and the program resumes.

mod request;
mod restore;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ptc_compression::{
    CachePoint, Compression, CompressionStats, PricingKind, RenderOptions, Uncompressed,
};
use ptc_lisp::{
    ErrorKind, Outcome, Progress, RunOutcome, Runtime, SuspendedRun, ToolAnswer, ToolRequest,
    UserNamespace, Value,
};
use ptc_turn::{
    FailureKind, Message, Role, Step, StepOutcome, Task, Turn, TurnError, Turns, Usage,
};
use tracing::Level;
use tracing::field::Empty;

use crate::agent::{Inner, Settings};
use crate::error::{NO_PROGRAM, cut_off_error};
use crate::extract::extract_program;
use crate::llm::{LlmError, LlmRequest, LlmResponse};
use crate::outcome::{Ending, Rules, run_outcome};
use crate::program::evaluating;
use crate::telemetry::{
    CONTENT_TARGET, HumanDuration, bounded, micros, record_tokens, tokens_text,
};
use crate::tree::Tree;
use crate::turn_history::{history_of, with_error};

pub(crate) use request::{prefix_point, request_for};
pub(crate) use restore::{restore_namespace, runtime_for};

/// What the driver does next.
#[derive(Debug)]
pub(crate) enum Action {
    /// The history of turn `turn` was rendered with these stats (to show an observer);
    /// answer with [`Event::Next`].
    Rendered { turn: u32, stats: CompressionStats },
    /// Apply the run's history policy to these messages (which may ask a model for a
    /// summary); answer with [`Event::HistoryApplied`].
    ApplyHistory(Vec<Message>),
    /// Send this request to the model (its messages are [`RunCore::messages`]); answer with
    /// [`Event::Replied`].
    Ask(Box<LlmRequest>),
    /// The program of turn `turn` waits for these tool calls (one, or all the items of a
    /// `pmap`); answer with [`Event::ToolsAnswered`], the answers in the order of the
    /// requests.
    CallTools {
        turn: u32,
        requests: Vec<ToolRequest>,
    },
    /// A turn is recorded (it is [`RunCore::last_turn`]): checkpoint it, show it; then answer
    /// with [`Event::Next`].
    Recorded,
    /// The run is over: [`RunCore::into_step`] gives its step.
    Finished,
}

/// What happened, for the core to decide on.
#[derive(Debug)]
pub(crate) enum Event {
    /// Go on: to start a run, after [`Action::Rendered`] and after [`Action::Recorded`].
    Next,
    /// The messages within the history policy, and what asking for a summary spent.
    HistoryApplied {
        messages: Vec<Message>,
        spent: Usage,
    },
    /// The model's answer to [`Action::Ask`], and the requests and time it took.
    Replied {
        result: Result<LlmResponse, LlmError>,
        spent: Usage,
    },
    /// The answers to [`Action::CallTools`], and what the models the tools asked spent.
    ToolsAnswered {
        answers: Vec<ToolAnswer>,
        spent: Usage,
    },
}

/// Why a run was cut off in the middle of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Its deadline (or its tree's) of this length passed.
    Deadline(Duration),
    /// Its stop signal fired.
    Stopped,
}

/// Where the programs of a run come from.
pub(crate) enum Source<'a> {
    /// A model asked turn after turn: an agent run.
    Model {
        settings: &'a Settings,
        strategy: Box<dyn Compression>,
        /// The tree of agents whose turn budget each turn takes from.
        tree: Tree,
    },
    /// Programs given in advance, one per turn, with no second chance: a compiled agent.
    Stages {
        programs: &'a [String],
        /// The `*e` each stage saw when it was written, by turn (nil when missing).
        errors: BTreeMap<u32, Value>,
    },
}

/// Where a run starts: no turns for a new run, the recorded ones (and the namespace they
/// left) for a resumed one.
pub(crate) struct Start {
    pub turns: Turns,
    pub memory: UserNamespace,
    /// Whether the run is resumed from a checkpoint.
    pub resumed: bool,
    /// How the last of `turns` ended.
    pub last_ending: Ending,
}

impl Start {
    /// A new run.
    pub(crate) fn new() -> Start {
        Start {
            turns: Turns::new(),
            memory: UserNamespace::new(),
            resumed: false,
            last_ending: Ending::Continue,
        }
    }
}

/// Where the core is between two events.
enum Phase {
    /// Waiting for [`Event::Next`] to start the next turn (or end the run).
    BeforeTurn,
    /// The history was rendered; waiting for [`Event::Next`].
    Rendered,
    /// Waiting for [`Event::HistoryApplied`].
    ApplyingHistory,
    /// Waiting for [`Event::Replied`].
    Asking,
    /// The program waits for [`Event::ToolsAnswered`].
    Evaluating(Box<SuspendedRun>),
    /// A turn was recorded; waiting for [`Event::Next`].
    Recorded,
    /// The run is over.
    Finished,
}

/// The turn in progress.
struct TurnInProgress {
    number: u32,
    started: Instant,
    span: tracing::Span,
    /// The messages as rendered, and their cache points.
    rendered: Vec<Message>,
    points: Vec<CachePoint>,
    /// The messages sent to the model.
    sent: Vec<Message>,
    response: Option<LlmResponse>,
    program: String,
    evaluation_started: Option<Instant>,
}

/// One run's decisions. See the [module documentation](self).
pub(crate) struct RunCore<'a> {
    task: Task,
    turns: Turns,
    /// How many of `turns` were restored from a checkpoint.
    restored: usize,
    /// The namespace after the last successful turn.
    memory: UserNamespace,
    /// Data, limits and the awaited tools every program runs with.
    runtime: Runtime,
    rules: Rules<'a>,
    /// Whether a failed turn lets the run go on.
    second_chance: bool,
    /// Whether the driver applies a history policy before each request.
    history_policy: bool,
    source: Source<'a>,
    phase: Phase,
    turn: Option<TurnInProgress>,
    /// The usage of the turn in progress (a turn cut off still counts what it spent).
    pending: Usage,
    /// Requests that produced no turn: a model failure, or a turn cut off.
    unattached: Usage,
    outcome: Option<StepOutcome>,
    /// What the next request tells the model besides its history, once.
    notice: Option<String>,
}

impl<'a> RunCore<'a> {
    /// The core of a run of `task` from `start`, its programs from `source`, its sandbox set
    /// by `runtime` and its outcomes judged by `rules`.
    pub(crate) fn new(
        task: Task,
        start: Start,
        runtime: Runtime,
        rules: Rules<'a>,
        source: Source<'a>,
    ) -> RunCore<'a> {
        let (second_chance, history_policy) = match &source {
            Source::Model { settings, .. } => (task.max_turns > 1, settings.history.is_some()),
            Source::Stages { .. } => (false, false),
        };
        // A run whose last turn returned or failed has ended, though its end may not have been
        // recorded: it asks nothing more.
        let outcome = start.turns.last().and_then(|last| {
            let ending = if rules.last_value_is_answer && last.is_success() {
                Ending::Returned
            } else {
                start.last_ending
            };
            run_outcome(last, ending, second_chance)
        });
        RunCore {
            task,
            restored: start.turns.len(),
            turns: start.turns,
            memory: start.memory,
            runtime,
            rules,
            second_chance,
            history_policy,
            source,
            phase: Phase::BeforeTurn,
            turn: None,
            pending: Usage::default(),
            unattached: Usage::default(),
            outcome,
            notice: None,
        }
    }

    /// The core of a run of `agent` on `task` from `start`, asking a model priced as
    /// `pricing`, its turns taken from the budget of `tree`.
    pub(crate) fn for_agent(
        agent: &'a Inner,
        task: Task,
        start: Start,
        pricing: Option<PricingKind>,
        tree: Tree,
    ) -> RunCore<'a> {
        let settings = &agent.settings;
        // SS-001: a single-shot run is never compressed.
        let strategy: Box<dyn Compression> = if task.max_turns <= 1 {
            Box::new(Uncompressed)
        } else {
            settings.strategy(pricing)
        };
        let runtime = runtime_for(&settings.limits, &task);
        let rules = agent.rules(&task);
        let source = Source::Model {
            settings,
            strategy,
            tree,
        };
        RunCore::new(task, start, runtime, rules, source)
    }

    /// The next action after `event`.
    pub(crate) fn advance(&mut self, event: Event) -> Action {
        let phase = std::mem::replace(&mut self.phase, Phase::Finished);
        match (phase, event) {
            (Phase::BeforeTurn | Phase::Recorded, Event::Next) => match &self.outcome {
                Some(_) => Action::Finished,
                None => self.start_turn(),
            },
            (Phase::Rendered, Event::Next) => {
                let history_policy = self.history_policy;
                let turn = self.turn_mut();
                if history_policy {
                    let messages = turn.rendered.clone();
                    self.phase = Phase::ApplyingHistory;
                    Action::ApplyHistory(messages)
                } else {
                    turn.sent = std::mem::take(&mut turn.rendered);
                    self.ask()
                }
            }
            (Phase::ApplyingHistory, Event::HistoryApplied { messages, spent }) => {
                self.pending += spent;
                let opts = RenderOptions::from_task(&self.task);
                let Some(turn) = self.turn.as_mut() else {
                    unreachable!("a history is applied within a turn");
                };
                if messages != turn.rendered {
                    // Trimmed or summarized: only the stable prefix is known to stay.
                    turn.points = prefix_point(&messages, &opts).into_iter().collect();
                }
                turn.sent = messages;
                self.ask()
            }
            (Phase::Asking, Event::Replied { result, spent }) => {
                self.pending += spent;
                match result {
                    Ok(response) => self.replied(response),
                    Err(error) => self.model_failed(&error),
                }
            }
            (Phase::Evaluating(run), Event::ToolsAnswered { answers, spent }) => {
                self.pending += spent;
                let span = self.turn_mut().span.clone();
                let progress = evaluating(&span, || run.resume(answers));
                self.evaluated(progress)
            }
            (Phase::Finished, _) => Action::Finished,
            (phase, event) => unreachable!(
                "the run core got {event:?} while {}; the driver answers each action with \
                 its event",
                phase.waiting_for()
            ),
        }
    }

    /// Ends the run in the middle of its turn: what the turn spent is kept (a request still
    /// waiting for its answer counts as sent, and `spent` is what its tools' models spent),
    /// the turn itself is not recorded.
    pub(crate) fn cut_off(&mut self, cut: Cut, spent: Usage) {
        let mut spent = {
            let mut all = std::mem::take(&mut self.pending);
            all += spent;
            all
        };
        if matches!(self.phase, Phase::Asking) {
            spent.llm_requests = spent.llm_requests.saturating_add(1);
        }
        spent.duration_us = 0;
        self.unattached += spent;
        let number = self.turn_number();
        self.phase = Phase::Finished;
        self.outcome = Some(match cut {
            Cut::Stopped => {
                tracing::info!(turn = number, "the run was stopped during turn {number}");
                failed(
                    FailureKind::Interrupted,
                    format!("the run was stopped during turn {number}, which was cut off"),
                )
            }
            Cut::Deadline(limit) => {
                tracing::warn!(
                    turn = number,
                    deadline_ms = micros(limit) / 1000,
                    "the run's deadline of {} passed during turn {number}",
                    HumanDuration(limit)
                );
                failed(
                    FailureKind::Timeout,
                    format!(
                        "the run did not finish within its deadline of {}; turn {number} was \
                         cut off",
                        HumanDuration(limit)
                    ),
                )
            }
        });
    }

    /// Has the next request tell the model `notice` (after its last user message), once.
    pub(crate) fn tell_model(&mut self, notice: String) {
        self.notice = Some(notice);
    }

    /// The number of the turn in progress (or of the next one).
    pub(crate) fn turn_number(&self) -> u32 {
        self.turn
            .as_ref()
            .map_or_else(|| self.turns.next_number(), |t| t.number)
    }

    /// The span of the turn in progress (the current span when there is none).
    pub(crate) fn turn_span(&self) -> tracing::Span {
        self.turn
            .as_ref()
            .map_or_else(tracing::Span::current, |t| t.span.clone())
    }

    /// The messages of the request of [`Action::Ask`].
    pub(crate) fn messages(&self) -> &[Message] {
        self.turn.as_ref().map_or(&[], |t| &t.sent)
    }

    /// The turn of [`Action::Recorded`].
    pub(crate) fn last_turn(&self) -> Option<&Turn> {
        self.turns.last()
    }

    /// The step of the run, which took `elapsed` since it started (or resumed): every turn,
    /// and the usage of every request, recorded in a turn or not.
    pub(crate) fn into_step(self, elapsed: Duration) -> Step {
        let mut usage = Usage::sum(self.turns.iter().map(Turn::usage));
        let earlier: u64 = self.turns[..self.restored]
            .iter()
            .map(|t| t.usage().duration_us)
            .sum();
        usage += self.unattached;
        usage.duration_us = earlier.saturating_add(micros(elapsed));
        Step {
            outcome: self.outcome.unwrap_or_else(ended_without_return),
            task: self.task,
            turns: self.turns,
            usage,
        }
    }

    fn turn_mut(&mut self) -> &mut TurnInProgress {
        match self.turn.as_mut() {
            Some(turn) => turn,
            None => unreachable!("a turn is in progress"),
        }
    }

    /// Starts the next turn, or ends the run if no turn may start.
    fn start_turn(&mut self) -> Action {
        let number = self.turns.next_number();
        self.pending = Usage::default();
        match &mut self.source {
            Source::Stages { programs, .. } => {
                let Some(program) = programs.get(self.turns.len()).cloned() else {
                    return self.finish(ended_without_return());
                };
                self.turn = Some(TurnInProgress::new(number, tracing::Span::current()));
                self.evaluate(program)
            }
            Source::Model {
                settings,
                strategy,
                tree,
            } => {
                let max_turns = self.task.max_turns;
                if number > max_turns {
                    return self.finish(failed(
                        FailureKind::MaxTurnsExceeded,
                        format!(
                            "no (return ...) or (fail ...) after {max_turns} turn{}",
                            if max_turns == 1 { "" } else { "s" }
                        ),
                    ));
                }
                if let Err(reason) = tree.take_turn() {
                    return self.finish(failed(FailureKind::TurnBudgetExhausted, reason));
                }
                let opts =
                    RenderOptions::from_task(&self.task).with_limits(settings.render_limits());
                let rendered = strategy.to_messages(&self.turns, &self.memory.definitions(), &opts);
                let mut turn = TurnInProgress::new(number, turn_span(number, max_turns));
                turn.rendered = rendered.messages;
                if let Some(notice) = self.notice.take() {
                    with_notice(&mut turn.rendered, notice);
                }
                turn.points = rendered.cache_points;
                self.turn = Some(turn);
                self.phase = Phase::Rendered;
                Action::Rendered {
                    turn: number,
                    stats: rendered.stats,
                }
            }
        }
    }

    /// The request of the turn in progress.
    fn ask(&mut self) -> Action {
        let Source::Model { settings, .. } = &self.source else {
            unreachable!("only a model is asked");
        };
        let turn = match self.turn.as_ref() {
            Some(turn) => turn,
            None => unreachable!("a request is made within a turn"),
        };
        let request = request_for(
            &turn.sent,
            &turn.points,
            settings,
            turn.number,
            &self.task.tools,
        );
        self.phase = Phase::Asking;
        Action::Ask(Box::new(request))
    }

    /// A reply: its program runs, or the turn fails for want of one.
    fn replied(&mut self, response: LlmResponse) -> Action {
        // A program handed over as a tool call is recorded as a fenced one.
        let response = crate::reply_form::as_recorded(response);
        self.pending.tokens += response.usage;
        let cut_off = response.is_cut_off();
        let program = extract_program(&response.content);
        self.turn_mut().response = Some(response);
        match program {
            Some(program) => self.evaluate(program),
            None => {
                let error = if cut_off {
                    cut_off_error(self.max_tokens(), None)
                } else {
                    TurnError::new("no_program", NO_PROGRAM)
                };
                let turn = Turn::failure(self.turn_number(), "", error);
                self.record(turn, None, Ending::Continue)
            }
        }
    }

    /// The model could not answer: the run ends, and what the requests spent is kept.
    fn model_failed(&mut self, error: &LlmError) -> Action {
        let turn = self.turn_mut();
        turn.span.record("outcome", "llm_error");
        let elapsed = turn.started.elapsed();
        let mut usage = std::mem::take(&mut self.pending);
        usage.duration_us = micros(elapsed);
        self.unattached += usage;
        self.finish(StepOutcome::Failed {
            kind: FailureKind::LlmError,
            reason: error.to_string(),
            value: None,
            llm_errors: error.each_attempt().iter().map(|e| e.to_string()).collect(),
        })
    }

    /// Starts `program`, reading the values of earlier turns as `*1 *2 *3 *e`.
    fn evaluate(&mut self, program: String) -> Action {
        let history = match &self.source {
            Source::Model { .. } => history_of(&self.turns),
            Source::Stages { errors, .. } => {
                // Every stage before this one succeeded (a failed one ends the run), so
                // `*e` is the error the run it was compiled from had seen.
                let error = errors
                    .get(&self.turn_number())
                    .cloned()
                    .unwrap_or(Value::Nil);
                with_error(&self.turns, error)
            }
        };
        let runtime = self.runtime.clone().with_history(history);
        let memory = &self.memory;
        let turn = match self.turn.as_mut() {
            Some(turn) => turn,
            None => unreachable!("a program runs within a turn"),
        };
        turn.span.record("program_chars", program.chars().count());
        turn.evaluation_started = Some(Instant::now());
        let progress = evaluating(&turn.span, || runtime.start(&program, memory));
        turn.program = program;
        self.evaluated(progress)
    }

    /// The program suspended at tool calls, or ended (or the interpreter panicked).
    fn evaluated(&mut self, progress: Result<Progress, String>) -> Action {
        let out = match progress {
            Ok(Progress::Suspended(run)) => {
                let requests = run.requests().to_vec();
                self.phase = Phase::Evaluating(Box::new(run));
                return Action::CallTools {
                    turn: self.turn_number(),
                    requests,
                };
            }
            Ok(Progress::Finished(out)) => Ok(out),
            Err(panic) => Err(panic),
        };
        let stages = matches!(self.source, Source::Stages { .. });
        let max_tokens = self.max_tokens();
        let turn = self.turn_mut();
        let started = turn.evaluation_started.unwrap_or(turn.started);
        let number = turn.number;
        let program = std::mem::take(&mut turn.program);
        let cut_off = turn.response.as_ref().is_some_and(LlmResponse::is_cut_off);
        self.pending.eval_duration_us = micros(started.elapsed());
        let out = match out {
            Ok(out) => out,
            Err(panic) => {
                let message = if stages {
                    format!("the program could not be run ({panic})")
                } else {
                    format!(
                        "the program could not be run ({panic}); this is a fault of the host, \
                         not of the program: send it again"
                    )
                };
                let turn = Turn::failure(number, program, TurnError::new("internal", message));
                return self.record(turn, None, Ending::Continue);
            }
        };
        let span = &self.turn_mut().span;
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
            // A cut-off reply that does not parse was most likely cut inside the program.
            Outcome::Error(error) if cut_off && error.kind == ErrorKind::Parse => (
                Turn::failure(
                    number,
                    program,
                    cut_off_error(max_tokens, Some(&error.to_string())),
                ),
                None,
                Ending::Continue,
            ),
            outcome => {
                let judged = self.rules.judge(number, program, outcome, memory);
                (judged.turn, judged.kept, judged.ending)
            }
        };
        self.record(
            turn.with_prints(prints).with_tool_calls(tool_calls),
            kept,
            ending,
        )
    }

    /// Records `turn`, keeps its namespace if it succeeded, and decides what comes next.
    fn record(&mut self, turn: Turn, kept: Option<UserNamespace>, ending: Ending) -> Action {
        if let Some(memory) = kept {
            self.memory = memory;
        }
        let Some(progress) = self.turn.take() else {
            unreachable!("a turn is recorded once");
        };
        let mut usage = std::mem::take(&mut self.pending);
        usage.duration_us = micros(progress.started.elapsed());
        let mut turn = turn.with_memory(self.memory.definitions());
        let last_stage = match &self.source {
            Source::Model { .. } => {
                let span = &progress.span;
                span.record("duration_ms", usage.duration_us / 1000);
                record_tokens(span, &usage.tokens);
                span.in_scope(|| {
                    log_turn(&turn, &usage, self.task.max_turns);
                    content_events(&turn);
                });
                match turn.error() {
                    None => span.record("outcome", "ok"),
                    Some(error) => {
                        span.record("outcome", "error");
                        span.record("error_kind", error.kind.as_str())
                    }
                };
                if let Some(response) = progress.response {
                    turn = turn.with_raw_response(response.content);
                    if let Some(stop_reason) = response.stop_reason {
                        turn = turn.with_stop_reason(stop_reason);
                    }
                }
                turn = turn.with_messages(progress.sent);
                false
            }
            Source::Stages { programs, .. } => {
                usage.eval_duration_us = usage.duration_us;
                programs.len() == self.turns.len() + 1
            }
        };
        let turn = turn.with_usage(usage);
        self.outcome = run_outcome(&turn, ending, self.second_chance)
            .or_else(|| last_stage.then(ended_without_return));
        if let Err(error) = self.turns.push(turn) {
            // Numbers come from `next_number`, so a push cannot be out of order.
            unreachable!("{error}");
        }
        self.phase = Phase::Recorded;
        Action::Recorded
    }

    /// Ends the run with `outcome` before a turn starts, or after a model failure.
    fn finish(&mut self, outcome: StepOutcome) -> Action {
        self.turn = None;
        self.outcome = Some(outcome);
        self.phase = Phase::Finished;
        Action::Finished
    }

    fn max_tokens(&self) -> u32 {
        match &self.source {
            Source::Model { settings, .. } => settings.max_tokens,
            Source::Stages { .. } => 0,
        }
    }
}

impl TurnInProgress {
    fn new(number: u32, span: tracing::Span) -> TurnInProgress {
        TurnInProgress {
            number,
            started: Instant::now(),
            span,
            rendered: Vec::new(),
            points: Vec::new(),
            sent: Vec::new(),
            response: None,
            program: String::new(),
            evaluation_started: None,
        }
    }
}

impl Phase {
    fn waiting_for(&self) -> &'static str {
        match self {
            Phase::BeforeTurn | Phase::Rendered | Phase::Recorded => "waiting for Next",
            Phase::ApplyingHistory => "waiting for HistoryApplied",
            Phase::Asking => "waiting for Replied",
            Phase::Evaluating(_) => "waiting for ToolsAnswered",
            Phase::Finished => "finished",
        }
    }
}

/// The span of an agent's turn `number`; its fields are recorded as the turn goes.
fn turn_span(number: u32, max_turns: u32) -> tracing::Span {
    tracing::info_span!(
        "agent_turn",
        turn = number,
        max_turns,
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

/// The turn's program and its output (what it printed, then its value or error) as events of
/// its span, each cut to `CONTENT_LIMIT` characters: what an OpenTelemetry backend shows of it.
fn content_events(turn: &Turn) {
    if !tracing::enabled!(target: CONTENT_TARGET, Level::TRACE) {
        return;
    }
    let program = bounded(turn.program());
    tracing::event!(target: CONTENT_TARGET, Level::TRACE, ptc.program = %program, "program");
    // Prints keep their own line ends; the value or error follows on a line of its own.
    let mut output = turn.prints().concat();
    let last = match (turn.error(), turn.value()) {
        (Some(error), _) => Some(format!("error[{}]: {}", error.kind, error.message)),
        (None, Some(value)) => Some(value.to_string()),
        (None, None) => None,
    };
    if let Some(last) = last {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(&last);
    }
    let output = bounded(&output);
    tracing::event!(target: CONTENT_TARGET, Level::TRACE, ptc.output = %output, "output");
}

/// The end of a compiled run whose last stage did not return.
/// `messages` with `notice` added to the last user message (or as one, after an assistant's).
fn with_notice(messages: &mut Vec<Message>, notice: String) {
    match messages.last_mut() {
        Some(last) if last.role == Role::User => {
            last.content.push_str("\n\n");
            last.content.push_str(&notice);
        }
        _ => messages.push(Message::user(notice)),
    }
}

fn ended_without_return() -> StepOutcome {
    failed(
        FailureKind::ProgramError,
        "the program ended without (return ...)".into(),
    )
}

fn failed(kind: FailureKind, reason: String) -> StepOutcome {
    StepOutcome::Failed {
        kind,
        reason,
        value: None,
        llm_errors: Vec::new(),
    }
}

#[cfg(test)]
mod tests;

//! The run core: every decision of a run, and no I/O.
//!
//! A [`RunCore`] owns what a run knows (its task, its turns, the namespace of its last
//! successful turn, its compression strategy, the usage of the turn in progress) and answers
//! each [`Event`] with the next [`Action`]: render the history, ask the model this request,
//! answer these tool calls, this turn is recorded, the run is over. It awaits nothing, sends
//! nothing and keeps nothing: a driver carries the actions out under the run's deadline, stop
//! signal, store and observer (the async driver of `ptc-agent` for agent runs and its compiled
//! agents), and a prompt preview takes the first request from it without sending it. Whatever a run decides — which turn comes next, what a
//! reply and a program's outcome make of a turn, when the run ends and how — is decided here
//! once.
//!
//! A program runs inside the core as a suspendable run of the sandbox: it evaluates until it
//! calls tools, and the core hands their requests out as [`Action::CallTools`]; the answers
//! come back as [`Event::ToolsAnswered`] and the program resumes.

mod events;
mod intents;
mod opening;
mod request;
mod restore;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ptc_compression::{CachePoint, Compression, RenderLimits, RenderOptions, prefix_point};
use ptc_lisp::{
    ErrorKind, Outcome, Progress, RunOutcome, Runtime, SuspendedRun, ToolAnswer, UserNamespace,
    Value,
};
use ptc_turn::{
    ErrorKind as TurnErrorKind, FailureKind, Message, Role, Step, StepOutcome, Task, Turn,
    TurnError, Turns, Usage,
};

use crate::extract::extract_program;
use crate::feedback::{NO_PROGRAM, cut_off_error, resumed_calls_notice};
use crate::in_words::{HumanDuration, micros};
use crate::model::{LlmError, LlmResponse};
use crate::outcome::{Ending, Rules, run_outcome};
use crate::recent_values::{recent_values_of, with_error};
use crate::sandbox::{EvaluationTime, Stretch, stretch};
use crate::settings::RunSettings;

use intents::{Intents, unkeyed};
use opening::failed;

pub use events::{Action, Event};
pub use intents::{CallPlan, PlannedCall, RecordedIntents};
pub use opening::{chained_failure, depth_exceeded, resumed_goes_on, was_interrupted};
pub use request::request_for;
pub use restore::{Restored, restore_namespace};

/// Where the programs of a run come from.
pub enum Source<'a> {
    /// A model asked turn after turn: an agent run.
    Model(ModelTurns<'a>),
    /// Programs given in advance, one per turn, with no second chance: a compiled agent.
    Stages {
        /// The programs, the first turn's first.
        programs: &'a [String],
        /// The `*e` each stage saw when it was written, by turn (nil when missing).
        errors: BTreeMap<u32, Value>,
    },
}

/// How a model is asked for the programs of a run, turn after turn.
pub struct ModelTurns<'a> {
    /// The reply limit, sampling and reply form of every request.
    pub settings: &'a RunSettings,
    /// How the turns so far are rendered as the next request's messages.
    pub strategy: Box<dyn Compression>,
    /// The size limits of the rendering.
    pub render_limits: RenderLimits,
    /// Whether the driver applies a history policy to each request's messages
    /// ([`Action::ApplyHistory`]).
    pub history_policy: bool,
    /// The turns the run shares with its tree of runs (its own sub-agents', its caller's), if
    /// they have a budget: each turn is taken from it first ([`Action::TakeTurn`]).
    pub shared_turn_budget: Option<u32>,
}

/// Where a run starts: no turns for a new run, the recorded ones (and the namespace they
/// left) for a resumed one.
pub struct Start {
    /// The turns recorded so far.
    pub turns: Turns,
    /// The namespace the turns left.
    pub memory: UserNamespace,
    /// Whether the run is resumed from a checkpoint.
    pub resumed: bool,
    /// How the last of `turns` ended.
    pub last_ending: Ending,
    /// What the run's intent log held when it started, when the run keeps one: its tool
    /// calls are then made under idempotency keys, and a resumed run's unfinished turn runs
    /// its recorded reply again (or its first request tells the model of the calls the turn
    /// had made) and takes the answers of its completed calls from the log.
    pub intents: Option<RecordedIntents>,
}

impl Start {
    /// A new run.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Start {
        Start {
            turns: Turns::new(),
            memory: UserNamespace::new(),
            resumed: false,
            last_ending: Ending::Continue,
            intents: None,
        }
    }
}

/// Where the core is between two events.
enum Phase {
    /// Waiting for [`Event::Next`] to start the next turn (or end the run).
    BeforeTurn,
    /// Waiting for [`Event::TurnTaken`].
    TakingTurn,
    /// The history was rendered; waiting for [`Event::Next`].
    Rendered,
    /// Waiting for [`Event::HistoryApplied`].
    ApplyingHistory,
    /// Waiting for [`Event::Replied`].
    Asking,
    /// The program waits for [`Event::ToolsAnswered`]; the answers the intent log gave, in
    /// the places of their calls.
    Evaluating(Box<SuspendedRun>, Vec<Option<ToolAnswer>>),
    /// A turn was recorded; waiting for [`Event::Next`].
    Recorded,
    /// The run is over.
    Finished,
}

/// The turn in progress.
struct TurnInProgress {
    number: u32,
    started: Instant,
    /// The messages as rendered, and their cache points.
    rendered: Vec<Message>,
    points: Vec<CachePoint>,
    /// The messages sent to the model.
    sent: Vec<Message>,
    response: Option<LlmResponse>,
    program: String,
    /// The time of the program's evaluation, once it started.
    evaluation: Option<EvaluationTime>,
}

/// One run's decisions: see the [crate documentation](crate).
pub struct RunCore<'a> {
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
    /// The numbering of the run's tool calls, when it keeps an intent log.
    intents: Option<Intents>,
    /// The reply recorded for the unfinished turn of a resumed run, and the turn's number:
    /// the turn takes it instead of asking the model again.
    replay: Option<(u32, LlmResponse)>,
    /// When the run must be done, and the limit that set it.
    deadline: Option<(Instant, Duration)>,
    /// The time of the event being decided on.
    now: Instant,
}

impl<'a> RunCore<'a> {
    /// The core of a run of `task` from `start` at `start_time`, its programs from `source`,
    /// its sandbox set by `runtime` and its outcomes judged by `rules`.
    pub fn new(
        task: Task,
        start: Start,
        start_time: Instant,
        runtime: Runtime,
        rules: Rules<'a>,
        source: Source<'a>,
    ) -> RunCore<'a> {
        let (second_chance, history_policy) = match &source {
            Source::Model(model) => (task.max_turns > 1, model.history_policy),
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
        let next = start.turns.next_number();
        let (intents, replay, notice) = match start.intents {
            None => (None, None, None),
            Some(log) => {
                // A turn that runs its recorded reply again makes the same calls, answered
                // from the log: the model, not asked, needs no note of them.
                let notice = match (&log.reply, start.resumed) {
                    (None, true) => resumed_calls_notice(next, &log.calls),
                    _ => None,
                };
                let replay = log
                    .reply
                    .filter(|_| start.resumed)
                    .map(|reply| (next, reply));
                (Some(Intents::new(log.run_id, log.calls)), replay, notice)
            }
        };
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
            notice,
            intents,
            replay,
            deadline: None,
            now: start_time,
        }
    }

    /// The same core, its run due at `at` (a deadline of `limit`): the driver answers its
    /// action in progress with [`Event::DeadlinePassed`] once `at` passes.
    pub fn with_deadline(mut self, at: Instant, limit: Duration) -> RunCore<'a> {
        self.deadline = Some((at, limit));
        self
    }

    /// The same core, its run at `depth` below the top run of its tree, where runs may go
    /// `max_depth` levels deep: a run deeper than that does not start (it ends
    /// `max_depth_exceeded` at its first event, asking nothing).
    pub fn with_depth(mut self, depth: u32, max_depth: u32) -> RunCore<'a> {
        if self.outcome.is_none() {
            self.outcome = depth_exceeded(depth, max_depth);
        }
        self
    }

    /// When the run must be done, if it has a deadline.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline.map(|(at, _)| at)
    }

    /// The next action after `event`, which happened at `now`.
    ///
    /// Any action may be answered with [`Event::Stopped`] or [`Event::DeadlinePassed`]; after
    /// [`Action::Finished`] every event gives `Finished` again.
    ///
    /// # Panics
    ///
    /// When `event` answers no action the core asked (say, [`Event::ToolsAnswered`] while it
    /// waits for a model's reply): a bug of the driver, which answers each action with its own
    /// event. The panic names the event and what the core waited for.
    pub fn advance(&mut self, event: Event, now: Instant) -> Action {
        self.now = now;
        let phase = std::mem::replace(&mut self.phase, Phase::Finished);
        match (phase, event) {
            (Phase::Finished, _) => Action::Finished,
            (phase, Event::Stopped { spent }) => {
                self.cut_off(&phase, spent, false);
                Action::Finished
            }
            (phase, Event::DeadlinePassed { spent }) => {
                self.cut_off(&phase, spent, true);
                Action::Finished
            }
            (Phase::BeforeTurn | Phase::Recorded, Event::Next) => match &self.outcome {
                Some(_) => Action::Finished,
                None => self.take_turn(),
            },
            (Phase::TakingTurn, Event::TurnTaken { granted }) => self.turn_taken(granted),
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
            (Phase::Evaluating(run, from_log), Event::ToolsAnswered { answers, spent }) => {
                self.pending += spent;
                let mut made = answers.into_iter();
                let mut answers: Vec<ToolAnswer> = from_log
                    .into_iter()
                    .filter_map(|answer| answer.or_else(|| made.next()))
                    .collect();
                answers.extend(made);
                let stretch = stretch(|| run.resume(answers));
                self.evaluated(stretch)
            }
            (phase, event) => unreachable!(
                "the run core got {event:?} while {}; the driver answers each action with \
                 its event",
                phase.waiting_for()
            ),
        }
    }

    /// Ends the run in the middle of its turn, found in `phase`: what the turn spent is kept
    /// (a request still waiting for its answer counts as sent, and `spent` is what its tools'
    /// models spent), the turn itself is not recorded.
    fn cut_off(&mut self, phase: &Phase, spent: Usage, deadline: bool) {
        let mut spent = {
            let mut all = std::mem::take(&mut self.pending);
            all += spent;
            all
        };
        if matches!(phase, Phase::Asking) {
            spent.llm_requests = spent.llm_requests.saturating_add(1);
        }
        spent.duration_us = 0;
        self.unattached += spent;
        let number = self.turn_number();
        self.turn = None;
        self.phase = Phase::Finished;
        self.outcome = Some(if deadline {
            let limit = self.deadline.map_or(Duration::ZERO, |(_, limit)| limit);
            failed(
                FailureKind::Timeout,
                format!(
                    "the run did not finish within its deadline of {}; turn {number} was cut off",
                    HumanDuration(limit)
                ),
            )
        } else {
            failed(
                FailureKind::Interrupted,
                format!("the run was stopped during turn {number}, which was cut off"),
            )
        });
    }

    /// The number of the turn in progress (or of the next one).
    pub fn turn_number(&self) -> u32 {
        self.turn
            .as_ref()
            .map_or_else(|| self.turns.next_number(), |t| t.number)
    }

    /// The most turns the run may take.
    pub fn max_turns(&self) -> u32 {
        self.task.max_turns
    }

    /// The messages of the request of [`Action::Ask`].
    pub fn messages(&self) -> &[Message] {
        self.turn.as_ref().map_or(&[], |t| &t.sent)
    }

    /// The turn of [`Action::Recorded`].
    pub fn last_turn(&self) -> Option<&Turn> {
        self.turns.last()
    }

    /// The step of the run, which took `elapsed` since it started (or resumed): every turn,
    /// and the usage of every request, recorded in a turn or not.
    pub fn into_step(self, elapsed: Duration) -> Step {
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

    /// Asks for a turn of the shared budget when there is one, else starts the next turn.
    fn take_turn(&mut self) -> Action {
        let number = self.turns.next_number();
        if let Source::Model(model) = &self.source
            && model.shared_turn_budget.is_some()
            && number <= self.task.max_turns
        {
            self.phase = Phase::TakingTurn;
            return Action::TakeTurn;
        }
        self.start_turn()
    }

    /// Starts the next turn if the shared budget had one left, else ends the run.
    fn turn_taken(&mut self, granted: bool) -> Action {
        if granted {
            return self.start_turn();
        }
        let total = match &self.source {
            Source::Model(model) => model.shared_turn_budget.unwrap_or(0),
            Source::Stages { .. } => 0,
        };
        self.finish(failed(
            FailureKind::TurnBudgetExhausted,
            format!(
                "the turn budget of {total} turn{} shared by this run and its sub-agents is used \
                 up",
                if total == 1 { "" } else { "s" }
            ),
        ))
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
                self.turn = Some(TurnInProgress::new(number, self.now));
                self.evaluate(program)
            }
            Source::Model(model) => {
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
                let opts = RenderOptions::from_task(&self.task).with_limits(model.render_limits);
                let rendered =
                    model
                        .strategy
                        .to_messages(&self.turns, &self.memory.definitions(), &opts);
                let mut turn = TurnInProgress::new(number, self.now);
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

    /// The request of the turn in progress, or the reply recorded for it before the run
    /// stopped.
    fn ask(&mut self) -> Action {
        let number = self.turn_number();
        if let Some((turn, reply)) = self.replay.take()
            && turn == number
        {
            // The request was made (and billed) before the run stopped, not now.
            return self.replied(reply);
        }
        let Source::Model(model) = &self.source else {
            unreachable!("only a model is asked");
        };
        let settings = model.settings;
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
                    TurnError::new(TurnErrorKind::NO_PROGRAM, NO_PROGRAM)
                };
                let turn = Turn::failure(self.turn_number(), "", error);
                self.record(turn, None, Ending::Continue)
            }
        }
    }

    /// The model could not answer: the run ends, and what the requests spent is kept.
    fn model_failed(&mut self, error: &LlmError) -> Action {
        let now = self.now;
        let elapsed = now.saturating_duration_since(self.turn_mut().started);
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
        let recent = match &self.source {
            Source::Model(_) => recent_values_of(&self.turns),
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
        let runtime = self.runtime.clone().with_recent_values(recent);
        let memory = &self.memory;
        let turn = match self.turn.as_mut() {
            Some(turn) => turn,
            None => unreachable!("a program runs within a turn"),
        };
        turn.evaluation = Some(EvaluationTime::starting(self.now));
        let stretch = stretch(|| runtime.start(&program, memory));
        turn.program = program;
        self.evaluated(stretch)
    }

    /// The program suspended at tool calls, or ended (or the interpreter panicked).
    fn evaluated(&mut self, Stretch { progress, took }: Stretch) -> Action {
        let now = self.now;
        let evaluation = self
            .turn_mut()
            .evaluation
            .get_or_insert(EvaluationTime::starting(now));
        evaluation.ran(took);
        let evaluated = evaluation.at_end(now);
        let out = match progress {
            Ok(Progress::Suspended(run)) => {
                let turn = self.turn_number();
                let requests = run.requests().to_vec();
                let calls = match &mut self.intents {
                    Some(intents) => intents.plan(turn, requests),
                    None => unkeyed(requests),
                };
                let from_log = calls
                    .iter()
                    .map(|call| match &call.plan {
                        CallPlan::Answered(answer) => Some(answer.clone()),
                        CallPlan::Make => None,
                    })
                    .collect();
                self.phase = Phase::Evaluating(Box::new(run), from_log);
                return Action::CallTools { turn, calls };
            }
            Ok(Progress::Finished(out)) => Ok(out),
            Err(panic) => Err(panic),
        };
        let stages = matches!(self.source, Source::Stages { .. });
        let max_tokens = self.max_tokens();
        let turn = self.turn_mut();
        let number = turn.number;
        let program = std::mem::take(&mut turn.program);
        let cut_off = turn.response.as_ref().is_some_and(LlmResponse::is_cut_off);
        self.pending.eval_duration_us = micros(evaluated);
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
                let turn = Turn::failure(
                    number,
                    program,
                    TurnError::new(TurnErrorKind::INTERNAL, message),
                );
                return self.record(turn, None, Ending::Continue);
            }
        };
        let RunOutcome {
            outcome,
            prints,
            tool_calls,
            namespace: memory,
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
        usage.duration_us = micros(
            self.now.saturating_duration_since(progress.started)
                + progress
                    .evaluation
                    .map_or(Duration::ZERO, |e| e.after_event()),
        );
        let mut turn = turn.with_memory(self.memory.definitions());
        let last_stage = match &self.source {
            Source::Model(_) => {
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
            Source::Model(model) => model.settings.max_tokens,
            Source::Stages { .. } => 0,
        }
    }
}

impl TurnInProgress {
    fn new(number: u32, started: Instant) -> TurnInProgress {
        TurnInProgress {
            number,
            started,
            rendered: Vec::new(),
            points: Vec::new(),
            sent: Vec::new(),
            response: None,
            program: String::new(),
            evaluation: None,
        }
    }
}

impl Phase {
    fn waiting_for(&self) -> &'static str {
        match self {
            Phase::BeforeTurn | Phase::Rendered | Phase::Recorded => "waiting for Next",
            Phase::TakingTurn => "waiting for TurnTaken",
            Phase::ApplyingHistory => "waiting for HistoryApplied",
            Phase::Asking => "waiting for Replied",
            Phase::Evaluating(..) => "waiting for ToolsAnswered",
            Phase::Finished => "finished",
        }
    }
}

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

/// The end of a compiled run whose last stage did not return.
fn ended_without_return() -> StepOutcome {
    failed(
        FailureKind::ProgramError,
        "the program ended without (return ...)".into(),
    )
}

#[cfg(test)]
mod tests;

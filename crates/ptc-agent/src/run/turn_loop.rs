//! The loop of one run: render the history, ask the model, run its program, record the turn.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_compression::{Compression, RenderOptions, Uncompressed};
use ptc_lisp::{ErrorKind, Outcome, RunOutcome, Runtime, UserNamespace};
use ptc_turn::{FailureKind, Message, Step, StepOutcome, Task, Turn, TurnError, Turns, Usage};
use tracing::Instrument;
use tracing::field::Empty;

use crate::agent::Inner;
use crate::caller::Caller;
use crate::extract::extract_program;
use crate::history::History;
use crate::llm::{Llm, LlmResponse};
use crate::outcome::{Ending, Rules, run_outcome};
use crate::program::{LiveTools, awaited_tools, run_program};
use crate::resume;
use crate::store::RunStore;
use crate::summarizer::LlmSummarizer;
use crate::telemetry::{HumanDuration, record_tokens};
use crate::tree::Tree;
use crate::turn_history::history_of;

use super::micros;
use super::model_call::{call_llm, log_turn, prefix_point, request_for};
use super::options::{RunObserver, StopSignal};
use crate::error::{NO_PROGRAM, RunError, cut_off_error};

/// Where a run starts.
pub(super) struct Start {
    /// The turns already made: none for a new run, the recorded ones for a resumed run.
    pub(super) turns: Turns,
    /// The namespace after `turns`.
    pub(super) memory: UserNamespace,
}

/// What to do after a turn.
enum Next {
    Continue,
    Done(StepOutcome),
}

/// How the wait for a turn ended.
enum TurnEnd {
    Finished(Next),
    DeadlinePassed,
    Stopped,
}

/// One run in progress.
pub(super) struct Loop<'a> {
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
    pub(super) fn new(
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
            tree.clone(),
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

    pub(super) async fn run(mut self, mut stop: Option<StopSignal<'_>>) -> Step {
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
            outcome => {
                let judged = self.rules().judge(number, program, outcome, memory);
                (judged.turn, judged.kept, judged.ending)
            }
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
        match run_outcome(turn, ending, !self.single_shot) {
            Some(outcome) => Next::Done(outcome),
            None => Next::Continue,
        }
    }

    /// What this run makes of its programs' outcomes.
    fn rules(&self) -> Rules<'a> {
        let agent: &'a Inner = self.agent;
        Rules {
            signature: agent.signature.as_ref(),
            float_precision: agent.settings.float_precision,
            max_kept_bytes: Some(agent.settings.max_kept_bytes),
            last_value_is_answer: self.single_shot,
        }
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
            let batch = self.caller.calling(number, live.answer(requests));
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

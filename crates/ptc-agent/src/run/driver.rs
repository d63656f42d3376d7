//! The driver of an agent run: it carries out what the run core decides — the history
//! policy's summaries, the model requests with their retries, the tool calls, the checkpoints
//! and the observer's hooks — under the run's deadline and stop signal.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_compression::{Compression, RenderOptions, Uncompressed};
use ptc_turn::{Message, Step, Task, Usage};
use tracing::Instrument;

use crate::agent::Inner;
use crate::caller::Caller;
use crate::error::RunError;
use crate::history_budget::HistoryBudget;
use crate::live_tools::LiveTools;
use crate::llm::Llm;
use crate::llm_summarizer::LlmSummarizer;
use crate::store::StoredRun;
use crate::telemetry::{log_deadline_passed, log_stopped, record_turn, turn_span};
use crate::tree::Tree;
use ptc_run::{Action, Event, PlannedCall, RunCore, Start};

use super::checkpoint_turn_of;
use super::intents::RunIntents;
use super::model_call::call_llm;
use super::options::{RunObserver, StopSignal};

/// How the wait for a turn ended.
enum TurnEnd {
    /// A turn was recorded; the run goes on.
    Recorded,
    /// The run is over.
    Finished,
    DeadlinePassed,
    Stopped,
}

/// One run in progress: its core and what carries out its actions.
pub(super) struct Driver<'a> {
    core: RunCore<'a>,
    agent: &'a Inner,
    /// The model this run asks.
    llm: Arc<dyn Llm>,
    observer: Option<&'a dyn RunObserver>,
    store: Option<StoredRun<'a>>,
    history: Option<HistoryBudget>,
    /// The span of the turn in progress, made when the core starts a turn.
    turn_span: Option<tracing::Span>,
    /// What the LLM tools its programs call ask, and where they report their requests.
    caller: Caller,
    /// The tree of runs whose turn budget each turn is taken from.
    tree: Tree,
    /// The store's intent log, when it keeps one: each tool call is recorded there first.
    intents: Option<RunIntents<'a>>,
}

impl<'a> Driver<'a> {
    /// The driver of a run of `agent` asking `llm`, from `start`, in `tree`. When the store
    /// keeps an intent log, what it holds for a resumed run is read first and given to the
    /// core, which plans the run's calls from it.
    pub(super) async fn new(
        agent: &'a Inner,
        llm: Arc<dyn Llm>,
        task: Task,
        observer: Option<&'a dyn RunObserver>,
        store: Option<StoredRun<'a>>,
        mut start: Start,
        tree: Tree,
    ) -> Result<Driver<'a>, RunError> {
        let settings = &agent.settings;
        let history = match settings.history {
            Some(policy) => {
                let opts = RenderOptions::from_task(&task);
                let first = Uncompressed.to_messages(&[], &[], &opts).messages;
                let system = first
                    .first()
                    .cloned()
                    .unwrap_or_else(|| Message::system(""));
                let mission = first.get(1).cloned().unwrap_or_else(|| Message::user(""));
                Some(HistoryBudget::new(
                    policy,
                    &mission,
                    &system,
                    LlmSummarizer::new(llm.clone()).with_max_tokens(settings.run.max_tokens),
                )?)
            }
            None => None,
        };
        let caller = Caller::new(
            llm.clone(),
            settings.registry.clone(),
            settings.retry.clone(),
            tree.clone(),
        );
        let intents = store.and_then(RunIntents::of);
        if let Some(intents) = &intents {
            let resumed_at = start.resumed.then(|| start.turns.next_number());
            start.intents = Some(intents.load(resumed_at).await);
        }
        let mut core = agent.run_core(
            task,
            start,
            Instant::now(),
            llm.pricing(),
            tree.turn_budget(),
        );
        if let Some((at, limit)) = tree.deadline {
            core = core.with_deadline(at, limit);
        }
        core = core.with_depth(tree.depth, tree.max_depth);
        Ok(Driver {
            core,
            agent,
            llm,
            observer,
            store,
            history,
            turn_span: None,
            caller,
            tree,
            intents,
        })
    }

    /// Drives the core until the run ends; `started` is when the run started (or resumed).
    pub(super) async fn run(mut self, started: Instant, mut stop: Option<StopSignal<'_>>) -> Step {
        let deadline = self.core.deadline();
        loop {
            let passes = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
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
                end = self.next_turn() => end,
            };
            let spent = self.caller.take_spent();
            let number = self.core.turn_number();
            let event = match ended {
                TurnEnd::Recorded => {
                    self.recorded().await;
                    continue;
                }
                TurnEnd::Finished => break,
                TurnEnd::DeadlinePassed => {
                    log_deadline_passed(number, self.agent_deadline());
                    Event::DeadlinePassed { spent }
                }
                TurnEnd::Stopped => {
                    log_stopped(number);
                    Event::Stopped { spent }
                }
            };
            self.advance(event);
            break;
        }
        self.core.into_step(started.elapsed())
    }

    /// The limit that set the run's deadline.
    fn agent_deadline(&self) -> Duration {
        self.tree
            .deadline
            .map_or(Duration::ZERO, |(_, limit)| limit)
    }

    /// The core's next action after `event`, decided now, in the span of the turn in progress
    /// (so that what the program logs goes under its turn).
    fn advance(&mut self, event: Event) -> Action {
        let span = self
            .turn_span
            .clone()
            .unwrap_or_else(tracing::Span::current);
        let action = span.in_scope(|| self.core.advance(event, Instant::now()));
        match &action {
            Action::Rendered { turn, .. } => {
                self.turn_span = Some(turn_span(*turn, self.core.max_turns()));
            }
            Action::Recorded => {
                if let (Some(span), Some(turn)) = (self.turn_span.take(), self.core.last_turn()) {
                    record_turn(&span, turn, self.core.max_turns());
                }
            }
            Action::Finished => self.turn_span = None,
            _ => {}
        }
        action
    }

    /// The span of the turn in progress (the current span when there is none).
    fn span(&self) -> tracing::Span {
        self.turn_span
            .clone()
            .unwrap_or_else(tracing::Span::current)
    }

    /// Carries out the core's actions until a turn is recorded or the run is over.
    async fn next_turn(&mut self) -> TurnEnd {
        let mut event = Event::Next;
        loop {
            event = match self.advance(event) {
                Action::TakeTurn => Event::TurnTaken {
                    granted: self.tree.take_turn(),
                },
                Action::Rendered { turn, stats } => {
                    if let Some(observer) = self.observer {
                        observer.on_history_rendered(turn, &stats);
                    }
                    Event::Next
                }
                Action::ApplyHistory(messages) => {
                    let mut spent = Usage::default();
                    let span = self.span();
                    let messages = match &mut self.history {
                        Some(history) => history.apply(messages, &mut spent).instrument(span).await,
                        None => messages,
                    };
                    Event::HistoryApplied { messages, spent }
                }
                Action::Ask(request) => {
                    let number = self.core.turn_number();
                    if let Some(observer) = self.observer {
                        observer.on_request(number, self.core.messages());
                    }
                    let mut spent = Usage::default();
                    let retry = &self.agent.settings.retry;
                    let result = call_llm(&*self.llm, retry, number, &request, &mut spent)
                        .instrument(self.span())
                        .await;
                    match (&result, &self.intents) {
                        (Ok(reply), Some(intents)) => intents.keep_reply(number, reply).await,
                        (Ok(_), None) => {}
                        (Err(_), _) => {
                            self.span().record("outcome", "llm_error");
                        }
                    }
                    Event::Replied { result, spent }
                }
                Action::CallTools { turn, calls } => {
                    let live = LiveTools {
                        tools: &self.agent.tools,
                        timeout: self.agent.settings.run.limits.tool_timeout,
                        parent: self.span(),
                    };
                    let answers = match &self.intents {
                        Some(intents) => {
                            let answering = intents.make(calls, &live);
                            self.caller.calling(turn, answering).await
                        }
                        None => {
                            let made = calls
                                .into_iter()
                                .filter(PlannedCall::is_made)
                                .map(|call| (call.request, call.key))
                                .collect();
                            self.caller.calling(turn, live.answer_keyed(made)).await
                        }
                    };
                    let calls = self.caller.take_unseen();
                    if let Some(observer) = self.observer {
                        for call in &calls {
                            observer.on_tool_request(turn, call);
                        }
                    }
                    Event::ToolsAnswered {
                        answers,
                        spent: self.caller.take_spent(),
                    }
                }
                Action::Recorded => return TurnEnd::Recorded,
                Action::Finished => return TurnEnd::Finished,
            };
        }
    }

    /// Shows the turn just recorded to the observer and hands it to the store, if there is
    /// one.
    async fn recorded(&self) {
        let Some(turn) = self.core.last_turn() else {
            return;
        };
        if let Some(observer) = self.observer {
            observer.on_turn(turn);
        }
        if let Some(run) = self.store {
            checkpoint_turn_of(run, turn).await;
        }
    }
}

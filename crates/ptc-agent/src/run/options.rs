//! What one run is given besides the agent: input data, an observer, a store, a stop signal.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ptc_compression::CompressionStats;
use ptc_lisp::Value;
use ptc_turn::{Message, Step, TraceMode, Turn};
use serde::Serialize;

use crate::agent::data_from_serialize;
use crate::caller::LlmToolCall;
use crate::llm::Llm;
use crate::store::{HeldLease, RunStore};

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
pub(super) type StopSignal<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Options of one run: input data on top of the agent's, an observer, a store that keeps
/// each turn as it completes, and a signal that stops the run.
#[derive(Default)]
#[must_use]
pub struct RunOptions<'a> {
    pub(super) data: BTreeMap<String, Value>,
    pub(super) data_error: Option<String>,
    pub(super) observer: Option<&'a dyn RunObserver>,
    pub(super) store: Option<(&'a dyn RunStore, String)>,
    /// The lease the run is written under, when a worker of a fleet works it.
    pub(super) lease: Option<&'a HeldLease>,
    pub(super) stop: Option<StopSignal<'a>>,
    pub(super) previous: Option<&'a Step>,
    pub(super) llm: Option<RunLlm>,
    pub(super) trace: TraceMode,
}

/// The model a run asks instead of its agent's.
pub(super) enum RunLlm {
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
    /// ([`RunError::ChainNotMap`](super::RunError::ChainNotMap)) or lacks what this agent's signature needs
    /// ([`RunError::ChainMismatch`](super::RunError::ChainMismatch)) stops the run before it starts.
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
    /// [`RunError::UnknownLlm`](crate::RunError::UnknownLlm) if there is none).
    pub fn with_llm_named(mut self, name: impl Into<String>) -> RunOptions<'a> {
        self.llm = Some(RunLlm::Named(name.into()));
        self
    }

    /// Which finished steps keep their turns: every one (the default), none, or only a step
    /// that failed ([`TraceMode`]). The outcome, task and usage are always there, and a
    /// store still records every turn. Take what is derived from the turns
    /// ([`Agent::run_usage`](crate::Agent::run_usage)) from a run that keeps them.
    pub fn with_trace(mut self, trace: TraceMode) -> RunOptions<'a> {
        self.trace = trace;
        self
    }

    /// Tell `observer` about each request and turn.
    pub fn with_observer(mut self, observer: &'a dyn RunObserver) -> RunOptions<'a> {
        self.observer = Some(observer);
        self
    }

    /// Checkpoint the run in `store` under `id`: the task before the first request, each turn
    /// as it completes, the outcome at the end. [`Agent::resume`](crate::Agent::resume) continues it from there.
    pub fn with_store(mut self, store: &'a dyn RunStore, id: impl Into<String>) -> RunOptions<'a> {
        self.store = Some((store, id.into()));
        self
    }

    /// Write the run under `lease`, which a worker holds on it: every write of the store the
    /// run is resumed from takes the lease, and one that cannot be made stops the run.
    pub(crate) fn with_lease(mut self, lease: &'a HeldLease) -> RunOptions<'a> {
        self.lease = Some(lease);
        self
    }

    /// Stop the run when `signal` completes (a Ctrl-C handler, a cancellation token, a
    /// service shutting down). The turn in progress is cut off; the run ends `interrupted`
    /// with the turns completed so far, and what the cut-off turn spent is counted. With a
    /// store, the run is not marked finished there, so [`Agent::resume`](crate::Agent::resume) continues it.
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

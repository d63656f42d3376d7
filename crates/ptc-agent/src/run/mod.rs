//! Running an agent: the entry points (`run`, `run_with`, resuming), the options of a run, and
//! the driver that carries out the run core's actions (the model calls, the tool calls, the
//! checkpoints).

mod actions;
mod checkpoint;
mod driver;
mod intents;
mod model_call;
mod options;

pub use crate::error::RunError;
pub use checkpoint::{checkpoint_end, checkpoint_turn};
pub(crate) use checkpoint::{checkpoint_end_of, checkpoint_turn_of};
pub(crate) use model_call::call_llm;
pub use options::{RunObserver, RunOptions};

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use ptc_lisp::Value;
use ptc_turn::{Step, StepOutcome, Task};
use tracing::Instrument;
use tracing::field::Empty;

use crate::agent::{Agent, expand_mission, name_clashes};
use crate::caller::calling_tree;
use crate::chain;
use crate::llm::Llm;
use crate::store::{RunStore, StoredRun};
use crate::task_difference::task_difference;
use crate::telemetry::record_tokens;
use crate::tree::Tree;
use ptc_run::{Start, restore_namespace, runtime_for};

use driver::Driver;

/// Where a resumed run stands ([`Agent::resumption`]).
pub enum Resumption {
    /// The run had ended (it returned, failed or used up its turns): its step, as recorded.
    Ended(Step),
    /// The run goes on: its recorded task, and where it starts.
    GoesOn {
        /// The task the run was started with.
        task: Task,
        /// Its recorded turns and the namespace they left.
        start: Start,
    },
}
use options::RunLlm;

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
            StoredRun::new(*store, id, options.lease)
                .start(&task)
                .await?;
        }
        self.drive(task, Start::new(), options).await
    }

    /// Continues run `id` of `store` from its last completed turn: the turns recorded there
    /// are kept, the definitions they made are restored, and the model is asked for the next
    /// turn. New turns are checkpointed in the same store.
    ///
    /// A run that ended on an outage, a model error (`llm_error`), its deadline (`timeout`) or
    /// a stop (`interrupted`), goes on the same way: the store takes its end back
    /// ([`RunStore::reopen`]) and the run continues after its last turn. A run that ended any
    /// other way (it returned, failed, or used up its turns) is returned as it was, without a
    /// request.
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
    /// // The first process made one turn, then its model failed (`llm_error`).
    /// let first = agent(&["(def x 40)"]);
    /// let step = first.run_with(RunOptions::new().with_store(&store, "r1")).await.unwrap();
    /// assert!(!step.is_success());
    /// // Another process (or the same one, later) goes on after turn 1; `x` is defined again.
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
        let run = StoredRun::new(store, id, options.lease);
        match self.resumption_of(run, &options).await? {
            Resumption::Ended(step) => Ok(options.trace.apply(step)),
            Resumption::GoesOn { task, start } => {
                self.drive(task, start, options.with_store(store, id)).await
            }
        }
    }

    /// Where run `id` of `store` stands when resumed with `options`, as [`Agent::resume`]
    /// decides it: ended (it returned, failed or used up its turns), or going on with its
    /// recorded task from its recorded turns and the definitions they made (restored by
    /// running their programs again against the recorded tool answers). A run that ended on
    /// an outage is taken back by the store ([`RunStore::reopen`]) before it goes on. For a
    /// driver of its own ([`Agent::run_core`]); the same errors as [`Agent::resume`].
    pub fn resumption<'s>(
        &'s self,
        store: &'s dyn RunStore,
        id: &'s str,
        options: &RunOptions<'_>,
    ) -> impl Future<Output = Result<Resumption, RunError>> + Send + 's {
        self.resumption_of(StoredRun::new(store, id, None), options)
    }

    /// [`Agent::resumption`] of `run`, read and reopened through the run's one write path
    /// (with the lease its worker holds, if any).
    pub(crate) fn resumption_of<'s>(
        &'s self,
        run: StoredRun<'s>,
        options: &RunOptions<'_>,
    ) -> impl Future<Output = Result<Resumption, RunError>> + Send + 's {
        // Made before the first wait (the options are not `Sync`), refused only if the run
        // goes on.
        let task = self.task_for(options);
        async move {
            let id = run.id();
            let checkpoint = run.load().await?.ok_or_else(|| RunError::Resume {
                id: id.to_string(),
                reason: "the store has no such run".into(),
            })?;
            if !checkpoint.goes_on()
                && let Some(step) = checkpoint.step()
            {
                return Ok(Resumption::Ended(step));
            }
            let task = task?;
            if let Some(reason) = task_difference(&checkpoint.task, &task) {
                return Err(RunError::Resume {
                    id: id.to_string(),
                    reason,
                });
            }
            // The task's tools are the agent's (checked above).
            let runtime = runtime_for(&self.inner.settings.run.limits, &task);
            let restored = restore_namespace(&runtime, &checkpoint.turns).map_err(|reason| {
                RunError::Resume {
                    id: id.to_string(),
                    reason,
                }
            })?;
            if let Some(last) = checkpoint.turns.last() {
                tracing::info!(
                    run = id,
                    turns = checkpoint.turns.len(),
                    "resuming run {id} after turn {}",
                    last.number()
                );
            }
            if checkpoint.end.is_some() {
                run.reopen().await?;
                tracing::info!(run = id, "run {id} ended on an outage; it goes on");
            }
            let start = Start {
                turns: checkpoint.turns,
                memory: restored.memory,
                resumed: true,
                last_ending: restored.last_ending,
                intents: None,
            };
            Ok(Resumption::GoesOn {
                task: checkpoint.task,
                start,
            })
        }
    }

    /// The task a run with `options` is given: the agent's data with the run's on top (and a
    /// previous step's value), the mission's placeholders filled, the input checked against
    /// the signature. For a driver of its own ([`Agent::run_core`]).
    pub fn task_for(&self, options: &RunOptions<'_>) -> Result<Task, RunError> {
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

    /// Drives the run's core from `start` until the run ends.
    async fn drive(
        &self,
        task: Task,
        start: Start,
        mut options: RunOptions<'_>,
    ) -> Result<Step, RunError> {
        let inner = &self.inner;
        let stop = options.stop.take();
        let trace = options.trace;
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
            otel.name = "invoke_agent",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.provider.name = %llm.provider_name(),
            gen_ai.request.model = %llm.model_name(),
            mission = %one_line(&task.mission, 80),
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
        // A run too deep below its top run is refused by its core, before its first turn.
        let tree = Tree::for_run(&inner.settings, Instant::now(), calling_tree());
        let store = options
            .store
            .as_ref()
            .map(|(store, id)| StoredRun::new(*store, id, options.lease));
        let started = Instant::now();
        let run = Driver::new(inner, llm, task, options.observer, store, start, tree)
            .instrument(span.clone())
            .await?;
        let step = run.run(started, stop).instrument(span.clone()).await;
        record_step(&span, &step);
        if let Some(run) = store {
            checkpoint_end_of(run, &step).await;
        }
        Ok(trace.apply(step))
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
fn one_line(text: &str, max: usize) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn previews_are_one_line_and_cut() {
        assert_eq!(one_line("a\nb", 10), "a b");
        assert_eq!(one_line("abcdef", 3), "abc...");
    }
}

//! What a run used beyond tokens and time: the system prompt's size, what the run kept between
//! turns at its end, and what compression did to its last request. All of it is derived from
//! the step (its task and turns) and the agent's compression, so nothing more is stored.

use ptc_compression::{CompressionStats, HeuristicTokenizer, RenderOptions, Tokenizer};
use ptc_turn::{Step, Usage};
use serde::Serialize;

use crate::agent::Agent;

/// The most bytes [`RunUsage::memory_kept_bytes`] walks: past it, the size is reported as this.
const KEPT_WALK_LIMIT: usize = 1 << 30;

/// What a run used: the step's [`Usage`] (tokens, requests, time) with the system prompt's size,
/// the memory kept and the compression statistics of its last request.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ptc_agent::{Agent, ScriptedLlm};
///
/// let agent = Agent::builder("Add up")
///     .llm(ScriptedLlm::new(["(def xs [1 2 3])", "(return (reduce + xs))"]))
///     .build()
///     .unwrap();
/// let step = agent.run().await.unwrap();
/// let usage = agent.run_usage(&step);
/// assert_eq!(usage.system_prompt_chars, agent.system_prompt().chars);
/// assert_eq!(usage.memory_kept_bytes, Some(64));
/// assert_eq!(usage.definitions_kept, Some(1));
/// assert_eq!(usage.compression.map(|c| c.turns), Some(1));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunUsage {
    /// Tokens, requests and time, as the step counted them.
    #[serde(skip)]
    pub usage: Usage,
    /// The system prompt's length in characters.
    pub system_prompt_chars: usize,
    /// The system prompt's estimated length in tokens (about four characters a token), sent
    /// with every request.
    pub system_prompt_tokens: usize,
    /// The estimated bytes of the definitions the run kept after its last turn, counted as
    /// the `max_kept_bytes` limit counts them; `None` when the step keeps no turns.
    pub memory_kept_bytes: Option<u64>,
    /// How many definitions the run kept after its last turn; `None` when the step keeps no
    /// turns.
    pub definitions_kept: Option<usize>,
    /// What the agent's compression did to the last request: the history of every turn
    /// before the last, rendered again; `None` when the step keeps no turns.
    pub compression: Option<CompressionStats>,
}

impl Agent {
    /// What `step`, a run of this agent, used ([`RunUsage`]). The memory kept and the
    /// compression statistics come from the step's turns: a step whose turns were left out
    /// ([`RunOptions::with_trace`](crate::RunOptions::with_trace)) has neither.
    pub fn run_usage(&self, step: &Step) -> RunUsage {
        let system = &step.task.system_prompt;
        let turns = step.turns.as_slice();
        let last = turns.last();
        let (compression, memory_kept_bytes, definitions_kept) = match last {
            None => (None, None, None),
            Some(last) => {
                let before = &turns[..turns.len() - 1];
                let definitions = before
                    .last()
                    .map(|t| t.memory().to_vec())
                    .unwrap_or_default();
                let opts = RenderOptions::from_task(&step.task)
                    .with_limits(self.inner.settings.render_limits());
                let strategy = self.inner.settings.strategy(self.pricing());
                let rendered = strategy.to_messages(before, &definitions, &opts);
                let kept: usize = last
                    .memory()
                    .iter()
                    .map(|d| d.estimated_size(KEPT_WALK_LIMIT))
                    .fold(0, usize::saturating_add);
                (
                    Some(rendered.stats),
                    Some(kept.min(KEPT_WALK_LIMIT) as u64),
                    Some(last.memory().len()),
                )
            }
        };
        RunUsage {
            usage: step.usage.clone(),
            system_prompt_chars: system.chars().count(),
            system_prompt_tokens: HeuristicTokenizer.count_text(system),
            memory_kept_bytes,
            definitions_kept,
            compression,
        }
    }
}

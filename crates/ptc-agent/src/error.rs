//! Why a run could not start.

use crate::agent::clash_names;
use crate::store::StoreError;
use ptc_run::signature::Mismatch;

/// Why a run could not start. Once a run starts, everything (model failures included) is
/// reported in its [`Step`](ptc_turn::Step).
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

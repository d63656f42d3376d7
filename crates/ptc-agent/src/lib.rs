//! The PTC agent loop: ask the model for a program, run it in the sandbox, record the turn,
//! render the history, repeat until the program returns or fails.
//!
//! Each turn of [`Agent::run`]:
//!
//! 1. renders the messages for the model from the turns so far: through the compression
//!    strategy when compression is on, otherwise the full history (optionally kept within a
//!    [`HistoryPolicy`](ptc_compression::history::HistoryPolicy));
//! 2. asks the model, marking the stable prefix (system prompt, mission, `tool/` and `data/`)
//!    for prompt caching;
//! 3. takes the program out of the reply ([`extract_program`]); a reply without one is a
//!    failed turn whose feedback says so;
//! 4. runs it with the namespace of the previous successful turn; the program suspends at
//!    tool calls while the loop awaits them (no thread waits);
//! 5. appends an immutable [`Turn`](ptc_turn::Turn) with the program, prints, tool calls,
//!    namespace, raw reply, messages sent and usage.
//!
//! `(return v)` ends the run with `v` (checked against the [`Signature`] if there is one; a
//! mismatch is a failed turn showing the expected shape), `(fail reason)` ends it failed, and
//! running out of turns ends it with `max_turns_exceeded`. A failed turn's definitions are
//! discarded. With `max_turns` 1 the run is single-shot: one program whose last value is the
//! answer, never compressed.

#![deny(missing_docs)]

// The modules, in layer order: each may use only the modules declared above it (`cargo xtask
// layers`, part of `cargo xtask ci`, checks it). Each has a comment line of its own, so that
// formatting keeps the order.

// Compression strategies written outside `ptc-compression`.
mod custom_strategy;
// The cap on the system prompt's size.
mod prompt_limit;
// How a system prompt differs from the generated one.
mod prompt_custom;
// The system prompt.
mod prompt;
// What spans and events are made of.
mod telemetry;
// Host tools.
mod tool;
// Messages as the providers' JSON.
pub mod wire;
// Models: the trait, the providers, retries, recording and replaying.
pub mod llm;
// Runs exported as OpenTelemetry traces over OTLP.
#[cfg(feature = "otlp")]
pub mod otlp;
// Durable runs: where turns are kept.
pub mod store;
// Models by name.
mod registry;
// `Agent` and its builder.
mod agent;
// Limits of a tree of agents.
mod tree;
// Why a run could not start, and the turn errors the loop words.
mod error;
// The calling-run context: the run whose program made the tool call being awaited.
mod caller;
// The agent's tools answering a suspended program's calls, without holding a thread.
mod live_tools;
// A step handed to the next agent as its input.
mod chain;
// Whether an agent can continue a stored run: what differs in its task.
mod task_difference;
// History summaries written by a model.
mod llm_summarizer;
// The history policy of a run, with what it keeps across turns.
mod history_budget;
// Running an agent: its entry points, its options and the driver of its core.
mod run;
// What a run used beyond tokens: the system prompt, the memory kept, compression.
mod run_usage;
// Compiled agents.
mod compile;
// LLM tools.
mod llm_tool;
// The first request, built without sending it.
mod preview;
// Agents as tools of other agents.
mod subagent;
// Workers of a fleet: runs claimed under leases and worked to their end.
mod worker;

pub use agent::{Agent, AgentBuilder, BuildError, expand_mission};
pub use caller::{LlmToolCall, current_idempotency_key};
pub use compile::{
    COMPILED_FORMAT, Case, CaseOutcome, CompileError, CompileMetadata, CompiledAgent, ExecError,
    LoadError, ValidationReport,
};
pub use live_tools::tool_timed_out;
pub use llm::{
    Anthropic, CacheBreakpoint, FileLlm, FnLlm, FunctionTool, HumanLlm, Llm, LlmError, LlmRequest,
    LlmResponse, OpenAiCompatible, ProviderOptions, RecordingLlm, ReplayLlm, ResponseFormat,
    RetryPolicy, Sampling, ScriptedLlm, TokenUsage, ToolChoice, llm_fn, parse_llm_spec,
    parse_llm_spec_with,
};
pub use llm_summarizer::LlmSummarizer;
pub use llm_tool::{LlmTool, LlmToolError};
pub use preview::PromptPreview;
pub use prompt::{SystemPrompt, default_language_reference, default_reply_format};
pub use prompt_limit::PromptLimit;
/// Signatures: the shapes of inputs and of the returned value (the run crate's).
pub use ptc_run::signature;
pub use ptc_run::{
    HumanDuration, NO_PROGRAM, RUN_PROGRAM, ReplyForm, extract_program, normalize_program,
    tokens_text,
};
pub use registry::LlmRegistry;
pub use run::{Resumption, RunError, RunObserver, RunOptions, checkpoint_end, checkpoint_turn};
pub use run_usage::RunUsage;
pub use signature::{Field, Mismatch, Signature, SignatureError, Type};
pub use subagent::AgentTool;
pub use telemetry::{log_deadline_passed, log_stopped, record_turn, turn_span};
pub use tool::{
    AsyncTool, FnTool, SyncToolAdapter, ToolError, async_tool, sandbox_tools, tool_fn, value_tool,
};
pub use worker::{AgentFor, Worked, Worker, WorkerReport};

/// The README's examples (the language alone, and an agent), compiled and run as doc tests so
/// the README stays true.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

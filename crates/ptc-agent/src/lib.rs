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

mod agent;
mod chain;
mod compile;
mod custom_strategy;
mod extract;
mod float_precision;
mod history;
mod kept;
pub mod llm;
mod llm_tool;
mod normalize;
mod outcome;
mod preview;
mod program;
mod prompt;
mod prompt_custom;
mod registry;
mod resume;
mod run;
pub mod signature;
pub mod store;
mod subagent;
mod summarizer;
mod telemetry;
mod tool;
mod tree;
mod turn_history;
pub mod wire;

pub use agent::{Agent, AgentBuilder, BuildError, expand_mission};
pub use compile::{
    COMPILED_FORMAT, Case, CaseOutcome, CompileError, CompileMetadata, CompiledAgent, ExecError,
    LoadError, ValidationReport,
};
pub use extract::extract_program;
pub use llm::{
    Anthropic, CacheBreakpoint, FnLlm, Llm, LlmError, LlmRequest, LlmResponse, OpenAiCompatible,
    ProviderOptions, RecordingLlm, ReplayLlm, ResponseFormat, RetryPolicy, Sampling, ScriptedLlm,
    TokenUsage, llm_fn, parse_llm_spec, parse_llm_spec_with,
};
pub use llm_tool::{LlmTool, LlmToolCall, LlmToolError};
pub use normalize::normalize_program;
pub use preview::PromptPreview;
pub use prompt::{SystemPrompt, default_language_reference, default_reply_format};
pub use registry::LlmRegistry;
pub use run::{NO_PROGRAM, RunError, RunObserver, RunOptions, tokens_text};
pub use signature::{Mismatch, Signature, SignatureError};
pub use subagent::AgentTool;
pub use summarizer::LlmSummarizer;
pub use telemetry::HumanDuration;
pub use tool::{
    AsyncTool, FnTool, SyncToolAdapter, ToolError, async_tool, sandbox_tools, tool_fn, value_tool,
};

/// The README's examples (the language alone, and an agent), compiled and run as doc tests so
/// the README stays true.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

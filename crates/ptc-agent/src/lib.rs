//! The PTC agent loop: ask the model for a program, run it in the sandbox, record the turn,
//! render the history, repeat until the program returns or fails.

pub mod llm;

pub use llm::{
    Anthropic, CacheBreakpoint, Llm, LlmError, LlmRequest, LlmResponse, OpenAiCompatible,
    ReplayLlm, RetryPolicy, ScriptedLlm, TokenUsage, parse_llm_spec,
};

//! A model call as data: the request a run sends, the reply it reads, and why a call failed.
//! Whoever sends the request (an HTTP provider, a script, a person) lives outside this crate.

mod error;
mod function;
mod reply;
mod request;
mod sampling;

pub use error::{LlmError, is_transient_status};
pub use function::{FunctionTool, ToolChoice, tools_prompt_text};
pub use reply::LlmResponse;
pub use request::{CacheBreakpoint, DEFAULT_MAX_TOKENS, LlmRequest};
pub use sampling::{ResponseFormat, Sampling};

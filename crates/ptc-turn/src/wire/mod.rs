//! Converters between [`Message`](crate::Message) and the chat-message JSON of the two provider
//! families the agent speaks: the OpenAI Chat Completions format ([`openai`]), which most
//! self-hosted servers copy, and the Anthropic Messages format ([`anthropic`]).
//!
//! Both directions are lossless for a message's role, content, tool calls (id, name, arguments)
//! and tool-call id, so a history can be sent, logged as provider JSON and read back unchanged.
//! [`Message::timestamp_ms`](crate::Message::timestamp_ms) is the one exception: neither wire
//! format has a place for it, so it is dropped on the way out and `None` on the way back.
//!
//! This module only builds and reads `serde_json::Value`s; sending them is the job of the agent
//! crate's LLM providers.

pub mod anthropic;
pub mod openai;

use std::fmt;

/// Why a provider message could not be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// A value that must be a JSON object was something else.
    NotAnObject {
        /// Where the value was, e.g. `messages[3]`.
        at: String,
    },
    /// A required field is absent.
    MissingField { at: String, field: &'static str },
    /// A field holds the wrong kind of JSON value.
    InvalidField {
        at: String,
        field: &'static str,
        expected: &'static str,
    },
    /// A role name the format does not define.
    UnknownRole { at: String, role: String },
    /// A system message after the conversation started, which the Anthropic format cannot carry:
    /// its system prompt is a separate field in front of all messages.
    SystemMessageInConversation { index: usize },
    /// A tool-result message without the id of the call it answers, which Anthropic requires.
    MissingToolCallId { index: usize },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::NotAnObject { at } => write!(f, "{at}: expected a JSON object"),
            WireError::MissingField { at, field } => {
                write!(f, "{at}: the required field `{field}` is missing")
            }
            WireError::InvalidField {
                at,
                field,
                expected,
            } => write!(f, "{at}: the field `{field}` must be {expected}"),
            WireError::UnknownRole { at, role } => write!(f, "{at}: unknown role `{role}`"),
            WireError::SystemMessageInConversation { index } => write!(
                f,
                "message {index} is a system message after the conversation started; the \
                 Anthropic format only has a system prompt in front of all messages, so move its \
                 text into the system prompt"
            ),
            WireError::MissingToolCallId { index } => write!(
                f,
                "message {index} is a tool result without a tool_call_id; set it to the id of \
                 the tool call it answers"
            ),
        }
    }
}

impl std::error::Error for WireError {}

/// The string-valued field `field` of `obj`, if present and a string.
fn str_field<'a>(
    obj: &'a serde_json::Map<String, serde_json::Value>,
    at: &str,
    field: &'static str,
) -> Result<&'a str, WireError> {
    match obj.get(field) {
        None => Err(WireError::MissingField {
            at: at.to_string(),
            field,
        }),
        Some(serde_json::Value::String(s)) => Ok(s),
        Some(_) => Err(WireError::InvalidField {
            at: at.to_string(),
            field,
            expected: "a string",
        }),
    }
}

fn as_object<'a>(
    value: &'a serde_json::Value,
    at: &str,
) -> Result<&'a serde_json::Map<String, serde_json::Value>, WireError> {
    value
        .as_object()
        .ok_or_else(|| WireError::NotAnObject { at: at.to_string() })
}

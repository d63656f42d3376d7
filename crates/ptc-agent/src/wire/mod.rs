//! Converters between [`Message`](ptc_turn::Message) and the chat-message JSON of the two provider
//! families the agent speaks: the OpenAI Chat Completions format ([`openai`]), which most
//! self-hosted servers copy, and the Anthropic Messages format ([`anthropic`]).
//!
//! Both directions are lossless for a message's role, content, tool calls (id, name, arguments),
//! tool-call id and timestamp, so a history can be sent, logged as provider JSON and read back
//! unchanged. Each format has two writers:
//!
//! * the request form (`openai::messages_to_json`, `anthropic::to_anthropic`): only the
//!   provider's own fields, because both APIs reject fields they do not know. Neither has a
//!   place for [`Message::timestamp_ms`](ptc_turn::Message::timestamp_ms), so it is left out;
//! * the stamped form (`openai::messages_to_json_stamped`, `anthropic::to_anthropic_stamped`):
//!   the same JSON plus a `"timestamp_ms"` field ([`TIMESTAMP_FIELD`]) wherever a message with a
//!   timestamp is written, for storing and logging histories.
//!
//! The readers accept both, so the stamped form reads back exactly, and the request form
//! exactly but for the timestamps.
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
    MissingField {
        /// Where the object was, e.g. `messages[3]`.
        at: String,
        /// The name of the missing field.
        field: &'static str,
    },
    /// A field holds the wrong kind of JSON value.
    InvalidField {
        /// Where the object was, e.g. `messages[3]`.
        at: String,
        /// The name of the field.
        field: &'static str,
        /// What the field must hold, e.g. `a string`.
        expected: &'static str,
    },
    /// A role name the format does not define.
    UnknownRole {
        /// Where the message was, e.g. `messages[3]`.
        at: String,
        /// The role as written.
        role: String,
    },
    /// A tool-result message without the id of the call it answers, which Anthropic requires.
    MissingToolCallId {
        /// The message's position in the list, from 0.
        index: usize,
    },
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
            WireError::MissingToolCallId { index } => write!(
                f,
                "message {index} is a tool result without a tool_call_id; set it to the id of \
                 the tool call it answers"
            ),
        }
    }
}

impl std::error::Error for WireError {}

/// The field the stamped forms write a message's timestamp in: milliseconds since the Unix
/// epoch, as a JSON integer.
pub const TIMESTAMP_FIELD: &str = "timestamp_ms";

/// The timestamp of a message object or block, if it has one.
fn timestamp_field(
    obj: &serde_json::Map<String, serde_json::Value>,
    at: &str,
) -> Result<Option<i64>, WireError> {
    match obj.get(TIMESTAMP_FIELD) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value) => value
            .as_i64()
            .map(Some)
            .ok_or_else(|| WireError::InvalidField {
                at: at.to_string(),
                field: TIMESTAMP_FIELD,
                expected: "an integer (milliseconds since the Unix epoch)",
            }),
    }
}

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

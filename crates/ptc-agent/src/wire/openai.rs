//! The OpenAI Chat Completions message format, also spoken by Ollama, vLLM, llama.cpp's server
//! and OpenRouter.
//!
//! | [`Message`] | wire |
//! |---|---|
//! | system / user | `{"role": "system" \| "user", "content": "..."}` |
//! | assistant | `{"role": "assistant", "content": "..."}`, plus `"tool_calls": [{"id", "type": "function", "function": {"name", "arguments": "<JSON text>"}}]` when it calls tools; `content` is `null` when it only calls tools |
//! | tool | `{"role": "tool", "tool_call_id": "...", "content": "..."}` |
//!
//! Tool calls are only carried on assistant messages and `tool_call_id` only on tool messages:
//! the format has no place for them on other roles.
//!
//! The format has no field for [`Message::timestamp_ms`] either, and the API refuses fields it
//! does not know. [`message_to_json`] writes what a request may hold (no timestamp);
//! [`message_to_json_stamped`] adds `"timestamp_ms"` for histories that are stored or logged,
//! and [`message_from_json`] reads it back, so that form is lossless.
//!
//! ```
//! use ptc_agent::wire::openai;
//! use ptc_turn::Message;
//!
//! let json = openai::message_to_json(&Message::user("hi"));
//! assert_eq!(json, serde_json::json!({"role": "user", "content": "hi"}));
//! assert_eq!(openai::message_from_json(&json).unwrap(), Message::user("hi"));
//! ```

use serde_json::{Map, Value, json};

use super::{TIMESTAMP_FIELD, WireError, as_object, str_field, timestamp_field};
use ptc_turn::{Message, MessageToolCall, Role};

/// One message in the Chat Completions format, as a request may hold it: without the
/// timestamp (see [`message_to_json_stamped`]).
pub fn message_to_json(message: &Message) -> Value {
    let mut obj = Map::new();
    obj.insert("role".into(), Value::from(message.role.as_str()));
    let only_calls = message.role == Role::Assistant
        && message.content.is_empty()
        && !message.tool_calls.is_empty();
    obj.insert(
        "content".into(),
        if only_calls {
            Value::Null
        } else {
            Value::from(message.content.as_str())
        },
    );
    if message.role == Role::Assistant && !message.tool_calls.is_empty() {
        let calls = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        // The format carries arguments as JSON text, not as a JSON value.
                        "arguments": call.arguments.to_string(),
                    }
                })
            })
            .collect();
        obj.insert("tool_calls".into(), Value::Array(calls));
    }
    if message.role == Role::Tool
        && let Some(id) = &message.tool_call_id
    {
        obj.insert("tool_call_id".into(), Value::from(id.as_str()));
    }
    Value::Object(obj)
}

/// Every message in order, in the Chat Completions format, as a request may hold them.
pub fn messages_to_json(messages: &[Message]) -> Vec<Value> {
    messages.iter().map(message_to_json).collect()
}

/// One message in the Chat Completions format plus its timestamp, when it has one, as
/// `"timestamp_ms"`: every field of the message, for storing or logging a history. Not for
/// requests: the API rejects the extra field.
///
/// ```
/// use ptc_agent::wire::openai;
/// use ptc_turn::Message;
///
/// let stamped = Message::user("hi").with_timestamp_ms(1_700_000_000_000);
/// let json = openai::message_to_json_stamped(&stamped);
/// assert_eq!(
///     json,
///     serde_json::json!({"role": "user", "content": "hi", "timestamp_ms": 1_700_000_000_000i64})
/// );
/// assert_eq!(openai::message_from_json(&json).unwrap(), stamped);
/// ```
pub fn message_to_json_stamped(message: &Message) -> Value {
    let mut json = message_to_json(message);
    if let (Some(timestamp), Value::Object(obj)) = (message.timestamp_ms, &mut json) {
        obj.insert(TIMESTAMP_FIELD.into(), Value::from(timestamp));
    }
    json
}

/// Every message in order, with timestamps: see [`message_to_json_stamped`].
pub fn messages_to_json_stamped(messages: &[Message]) -> Vec<Value> {
    messages.iter().map(message_to_json_stamped).collect()
}

/// Reads one Chat Completions message (a request message or a response's `choices[i].message`).
///
/// Accepts what servers send in practice beyond what [`message_to_json`] writes: the role
/// `developer` (read as system), `content` as an array of parts (the text parts are joined,
/// other parts such as images are skipped), `arguments` as a JSON object instead of JSON text,
/// and empty `arguments` text (read as `{}`). Arguments text that is not valid JSON is kept as
/// a JSON string so nothing the model wrote is lost. A `"timestamp_ms"` (as
/// [`message_to_json_stamped`] writes it) becomes the message's timestamp.
pub fn message_from_json(value: &Value) -> Result<Message, WireError> {
    message_from_json_at(value, "message")
}

/// Reads a list of Chat Completions messages.
pub fn messages_from_json(values: &[Value]) -> Result<Vec<Message>, WireError> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| message_from_json_at(v, &format!("messages[{i}]")))
        .collect()
}

fn message_from_json_at(value: &Value, at: &str) -> Result<Message, WireError> {
    let obj = as_object(value, at)?;
    let role = match str_field(obj, at, "role")? {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => {
            return Err(WireError::UnknownRole {
                at: at.to_string(),
                role: other.to_string(),
            });
        }
    };
    let content = content_text(obj.get("content"), at)?;
    let tool_calls = match obj.get("tool_calls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(calls)) => calls
            .iter()
            .enumerate()
            .map(|(i, call)| tool_call_from_json(call, &format!("{at}.tool_calls[{i}]")))
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(WireError::InvalidField {
                at: at.to_string(),
                field: "tool_calls",
                expected: "an array",
            });
        }
    };
    let tool_call_id = match obj.get("tool_call_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.clone()),
        Some(_) => {
            return Err(WireError::InvalidField {
                at: at.to_string(),
                field: "tool_call_id",
                expected: "a string",
            });
        }
    };
    Ok(Message {
        role,
        content,
        tool_calls,
        tool_call_id,
        timestamp_ms: timestamp_field(obj, at)?,
    })
}

fn content_text(content: Option<&Value>, at: &str) -> Result<String, WireError> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => Ok(parts
            .iter()
            .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect()),
        Some(_) => Err(WireError::InvalidField {
            at: at.to_string(),
            field: "content",
            expected: "a string, null or an array of content parts",
        }),
    }
}

fn tool_call_from_json(value: &Value, at: &str) -> Result<MessageToolCall, WireError> {
    let obj = as_object(value, at)?;
    let id = str_field(obj, at, "id")?.to_string();
    let function_at = format!("{at}.function");
    let function = as_object(
        obj.get("function").ok_or_else(|| WireError::MissingField {
            at: at.to_string(),
            field: "function",
        })?,
        &function_at,
    )?;
    let name = str_field(function, &function_at, "name")?.to_string();
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        Some(other) => other.clone(),
    };
    Ok(MessageToolCall {
        id,
        name,
        arguments,
    })
}

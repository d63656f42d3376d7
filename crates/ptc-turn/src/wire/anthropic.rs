//! The Anthropic Messages format.
//!
//! | [`Message`] | wire |
//! |---|---|
//! | system (leading) | one text block of the request's separate `system` field |
//! | user | `{"role": "user", "content": "..."}` |
//! | assistant | `{"role": "assistant", "content": "..."}`; with tool calls, `content` is a list: a `text` block (when the text is not empty) then one `{"type": "tool_use", "id", "name", "input"}` block per call |
//! | tool | a `{"type": "tool_result", "tool_use_id", "content"}` block in a user message; consecutive tool results share one user message, as the API requires all results answering one assistant turn to arrive together |
//!
//! The format has no system role inside the conversation, so only system messages before the
//! first other message can be converted ([`WireError::SystemMessageInConversation`] otherwise).
//! Tool calls are only carried on assistant messages and `tool_call_id` only on tool messages.
//!
//! ```
//! use ptc_turn::wire::anthropic;
//! use ptc_turn::Message;
//!
//! let history = vec![Message::system("Be brief."), Message::user("hi")];
//! let conversation = anthropic::to_anthropic(&history).unwrap();
//! assert_eq!(conversation.system, vec!["Be brief.".to_string()]);
//! assert_eq!(
//!     conversation.messages,
//!     vec![serde_json::json!({"role": "user", "content": "hi"})]
//! );
//! let system = anthropic::system_to_json(&conversation.system);
//! let back = anthropic::from_anthropic(Some(&system), &conversation.messages).unwrap();
//! assert_eq!(back, history);
//! ```

use serde_json::{Map, Value, json};

use super::{WireError, as_object, str_field};
use crate::{Message, MessageToolCall, Role};

/// A message list split the way the Messages API wants it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnthropicConversation {
    /// The texts of the leading system messages, in order; see [`system_to_json`].
    pub system: Vec<String>,
    /// The `messages` array of the request.
    pub messages: Vec<Value>,
    /// For each input message, the index in [`messages`](Self::messages) of the wire message
    /// that holds it; `None` for system messages. Lets a caller find where one of its messages
    /// went after tool results were merged, e.g. to mark a cache breakpoint.
    pub positions: Vec<Option<usize>>,
}

/// Splits `messages` into the system texts and the `messages` array of the Messages API.
pub fn to_anthropic(messages: &[Message]) -> Result<AnthropicConversation, WireError> {
    let mut out = AnthropicConversation::default();
    // Whether the last wire message is a user message made of tool results, which the next
    // tool result joins.
    let mut open_results = false;
    for (index, message) in messages.iter().enumerate() {
        match message.role {
            Role::System => {
                if !out.messages.is_empty() {
                    return Err(WireError::SystemMessageInConversation { index });
                }
                out.system.push(message.content.clone());
                out.positions.push(None);
                continue;
            }
            Role::User => {
                out.messages
                    .push(json!({"role": "user", "content": message.content}));
                open_results = false;
            }
            Role::Assistant => {
                out.messages.push(assistant_to_json(message));
                open_results = false;
            }
            Role::Tool => {
                let id = message
                    .tool_call_id
                    .as_ref()
                    .ok_or(WireError::MissingToolCallId { index })?;
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": id,
                    "content": message.content,
                });
                if open_results
                    && let Some(blocks) = out
                        .messages
                        .last_mut()
                        .and_then(|m| m.get_mut("content"))
                        .and_then(Value::as_array_mut)
                {
                    blocks.push(block);
                } else {
                    out.messages
                        .push(json!({"role": "user", "content": [block]}));
                }
                open_results = true;
            }
        }
        out.positions.push(Some(out.messages.len() - 1));
    }
    Ok(out)
}

fn assistant_to_json(message: &Message) -> Value {
    if message.tool_calls.is_empty() {
        return json!({"role": "assistant", "content": message.content});
    }
    let mut blocks = Vec::with_capacity(message.tool_calls.len() + 1);
    // The API rejects empty text blocks.
    if !message.content.is_empty() {
        blocks.push(json!({"type": "text", "text": message.content}));
    }
    blocks.extend(message.tool_calls.iter().map(|call| {
        json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": call.arguments,
        })
    }));
    json!({"role": "assistant", "content": blocks})
}

/// The `system` field for the given system texts: one text block each.
pub fn system_to_json(system: &[String]) -> Value {
    Value::Array(
        system
            .iter()
            .map(|text| json!({"type": "text", "text": text}))
            .collect(),
    )
}

/// Reads a request's `system` field and `messages` array back into messages.
///
/// `system` may be a string (one system message) or a list of text blocks (one system message
/// each); `None` or `null` means no system prompt.
pub fn from_anthropic(
    system: Option<&Value>,
    messages: &[Value],
) -> Result<Vec<Message>, WireError> {
    let mut out = Vec::new();
    match system {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => out.push(Message::system(text.clone())),
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                let at = format!("system[{i}]");
                let obj = as_object(block, &at)?;
                out.push(Message::system(str_field(obj, &at, "text")?));
            }
        }
        Some(_) => {
            return Err(WireError::InvalidField {
                at: "request".into(),
                field: "system",
                expected: "a string or an array of text blocks",
            });
        }
    }
    for (i, message) in messages.iter().enumerate() {
        out.extend(message_from_json_at(message, &format!("messages[{i}]"))?);
    }
    Ok(out)
}

/// Reads one wire message, which may hold several [`Message`]s: a user message made of tool
/// results gives one tool message per result (then a user message for any text blocks).
///
/// Text blocks are concatenated without a separator (a split text, e.g. around a cache
/// breakpoint, reads back as the original text); block types other than `text`, `tool_use`
/// and `tool_result` (such as `thinking` or `image`) are skipped.
pub fn message_from_json(value: &Value) -> Result<Vec<Message>, WireError> {
    message_from_json_at(value, "message")
}

fn message_from_json_at(value: &Value, at: &str) -> Result<Vec<Message>, WireError> {
    let obj = as_object(value, at)?;
    let role = str_field(obj, at, "role")?;
    let blocks = match obj.get("content") {
        None | Some(Value::Null) => &[][..],
        Some(Value::String(text)) => {
            return match role {
                "user" => Ok(vec![Message::user(text.clone())]),
                "assistant" => Ok(vec![Message::assistant(text.clone())]),
                other => Err(WireError::UnknownRole {
                    at: at.to_string(),
                    role: other.to_string(),
                }),
            };
        }
        Some(Value::Array(blocks)) => &blocks[..],
        Some(_) => {
            return Err(WireError::InvalidField {
                at: at.to_string(),
                field: "content",
                expected: "a string or an array of content blocks",
            });
        }
    };
    match role {
        "user" => user_blocks(blocks, at),
        "assistant" => assistant_blocks(blocks, at).map(|m| vec![m]),
        other => Err(WireError::UnknownRole {
            at: at.to_string(),
            role: other.to_string(),
        }),
    }
}

fn user_blocks(blocks: &[Value], at: &str) -> Result<Vec<Message>, WireError> {
    let mut out = Vec::new();
    let mut text: Option<String> = None;
    for (i, block) in blocks.iter().enumerate() {
        let block_at = format!("{at}.content[{i}]");
        let obj = as_object(block, &block_at)?;
        match obj.get("type").and_then(Value::as_str) {
            Some("text") => text
                .get_or_insert_with(String::new)
                .push_str(str_field(obj, &block_at, "text")?),
            Some("tool_result") => {
                if let Some(pending) = text.take() {
                    out.push(Message::user(pending));
                }
                let id = str_field(obj, &block_at, "tool_use_id")?;
                let content = result_content(obj, &block_at)?;
                out.push(Message::tool_result(id, content));
            }
            _ => {}
        }
    }
    if let Some(pending) = text {
        out.push(Message::user(pending));
    } else if out.is_empty() {
        out.push(Message::user(""));
    }
    Ok(out)
}

fn result_content(obj: &Map<String, Value>, at: &str) -> Result<String, WireError> {
    match obj.get("content") {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Array(blocks)) => Ok(blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect()),
        Some(_) => Err(WireError::InvalidField {
            at: at.to_string(),
            field: "content",
            expected: "a string or an array of content blocks",
        }),
    }
}

fn assistant_blocks(blocks: &[Value], at: &str) -> Result<Message, WireError> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let block_at = format!("{at}.content[{i}]");
        let obj = as_object(block, &block_at)?;
        match obj.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(str_field(obj, &block_at, "text")?),
            Some("tool_use") => calls.push(MessageToolCall {
                id: str_field(obj, &block_at, "id")?.to_string(),
                name: str_field(obj, &block_at, "name")?.to_string(),
                arguments: obj
                    .get("input")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
            }),
            _ => {}
        }
    }
    Ok(Message::assistant(text).with_tool_calls(calls))
}

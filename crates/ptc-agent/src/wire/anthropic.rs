//! The Anthropic Messages format.
//!
//! | [`Message`] | wire |
//! |---|---|
//! | system (leading) | one text block of the request's separate `system` field |
//! | system (after the conversation started) | a user message `{"role": "user", "content": "<system>\n...\n</system>"}` |
//! | user | `{"role": "user", "content": "..."}` |
//! | assistant | `{"role": "assistant", "content": "..."}`; with tool calls, `content` is a list: a `text` block (when the text is not empty) then one `{"type": "tool_use", "id", "name", "input"}` block per call |
//! | tool | a `{"type": "tool_result", "tool_use_id", "content"}` block in a user message; consecutive tool results share one user message, as the API requires all results answering one assistant turn to arrive together |
//!
//! The format has no system role inside the conversation: its system prompt is one field in
//! front of all messages. System messages before the first other message go there. A later
//! one (the `WholeHistoryMultipleSystemMessages` summaries of `ptc-compression` keep one per
//! section of a history) keeps its place instead: it becomes a user message holding its text between
//! `<system>` and `</system>` lines ([`SYSTEM_OPEN`], [`SYSTEM_CLOSE`]), so the model reads it
//! as an instruction given at that point of the conversation, not as the user's words. Moving it
//! into the system prompt would lose where it applies from. Reading back turns such a user
//! message into a system message again, so a user message whose whole text has that form is
//! read as a system message.
//!
//! Tool calls are only carried on assistant messages and `tool_call_id` only on tool messages.
//! Timestamps are written only by [`to_anthropic_stamped`] (see [the module](super)).
//!
//! ```
//! use ptc_agent::wire::anthropic;
//! use ptc_turn::Message;
//!
//! let history = vec![Message::system("Be brief."), Message::user("hi")];
//! let conversation = anthropic::to_anthropic(&history).unwrap();
//! assert_eq!(conversation.system, vec!["Be brief.".to_string()]);
//! assert_eq!(
//!     conversation.messages,
//!     vec![serde_json::json!({"role": "user", "content": "hi"})]
//! );
//! let system = conversation.system_json();
//! let back = anthropic::from_anthropic(Some(&system), &conversation.messages).unwrap();
//! assert_eq!(back, history);
//! ```

use serde_json::{Map, Value, json};

use super::{TIMESTAMP_FIELD, WireError, as_object, str_field, timestamp_field};
use ptc_turn::{Message, MessageToolCall, Role};

/// The line in front of the text of a system message that comes after the conversation started.
pub const SYSTEM_OPEN: &str = "<system>\n";
/// The line after the text of a system message that comes after the conversation started.
pub const SYSTEM_CLOSE: &str = "\n</system>";

/// A message list split the way the Messages API wants it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnthropicConversation {
    /// The texts of the leading system messages, in order; see [`system_json`](Self::system_json).
    pub system: Vec<String>,
    /// The timestamps of the leading system messages, parallel to [`system`](Self::system),
    /// from [`to_anthropic_stamped`]; empty from [`to_anthropic`].
    pub system_timestamps: Vec<Option<i64>>,
    /// The `messages` array of the request.
    pub messages: Vec<Value>,
    /// For each input message, the index in [`messages`](Self::messages) of the wire message
    /// that holds it; `None` for leading system messages. Lets a caller find where one of its
    /// messages went after tool results were merged, e.g. to mark a cache breakpoint.
    pub positions: Vec<Option<usize>>,
}

impl AnthropicConversation {
    /// The `system` field: one text block per leading system message, with its timestamp when
    /// [`system_timestamps`](Self::system_timestamps) has one.
    pub fn system_json(&self) -> Value {
        let mut system = system_to_json(&self.system);
        if let Some(blocks) = system.as_array_mut() {
            for (block, timestamp) in blocks.iter_mut().zip(&self.system_timestamps) {
                if let (Some(timestamp), Some(obj)) = (timestamp, block.as_object_mut()) {
                    obj.insert(TIMESTAMP_FIELD.into(), Value::from(*timestamp));
                }
            }
        }
        system
    }
}

/// Splits `messages` into the system texts and the `messages` array of the Messages API, as a
/// request may hold them: without timestamps (see [`to_anthropic_stamped`]).
pub fn to_anthropic(messages: &[Message]) -> Result<AnthropicConversation, WireError> {
    convert(messages, false)
}

/// Like [`to_anthropic`], plus each message's timestamp, when it has one, as `"timestamp_ms"`:
/// on the wire message of a user or assistant message (or of a system message after the
/// conversation started), on the `tool_result` block of a tool message, and in
/// [`AnthropicConversation::system_timestamps`] for leading system messages. For storing or
/// logging a history; not for requests, as the API rejects the extra field.
///
/// ```
/// use ptc_agent::wire::anthropic;
/// use ptc_turn::Message;
///
/// let history = vec![
///     Message::system("Be brief.").with_timestamp_ms(1),
///     Message::user("hi").with_timestamp_ms(2),
///     Message::tool_result("toolu_1", "42").with_timestamp_ms(3),
/// ];
/// let conversation = anthropic::to_anthropic_stamped(&history).unwrap();
/// assert_eq!(
///     conversation.messages,
///     vec![
///         serde_json::json!({"role": "user", "content": "hi", "timestamp_ms": 2}),
///         serde_json::json!({"role": "user", "content": [
///             {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42", "timestamp_ms": 3}
///         ]}),
///     ]
/// );
/// let system = conversation.system_json();
/// let back = anthropic::from_anthropic(Some(&system), &conversation.messages).unwrap();
/// assert_eq!(back, history);
/// ```
pub fn to_anthropic_stamped(messages: &[Message]) -> Result<AnthropicConversation, WireError> {
    convert(messages, true)
}

fn stamp(value: &mut Value, message: &Message, stamped: bool) {
    if let (true, Some(timestamp), Some(obj)) =
        (stamped, message.timestamp_ms, value.as_object_mut())
    {
        obj.insert(TIMESTAMP_FIELD.into(), Value::from(timestamp));
    }
}

fn convert(messages: &[Message], stamped: bool) -> Result<AnthropicConversation, WireError> {
    let mut out = AnthropicConversation::default();
    // Whether the last wire message is a user message made of tool results, which the next
    // tool result joins.
    let mut open_results = false;
    for (index, message) in messages.iter().enumerate() {
        match message.role {
            Role::System if out.messages.is_empty() => {
                out.system.push(message.content.clone());
                if stamped {
                    out.system_timestamps.push(message.timestamp_ms);
                }
                out.positions.push(None);
                continue;
            }
            Role::System => {
                let text = format!("{SYSTEM_OPEN}{}{SYSTEM_CLOSE}", message.content);
                let mut wire = json!({"role": "user", "content": text});
                stamp(&mut wire, message, stamped);
                out.messages.push(wire);
                open_results = false;
            }
            Role::User => {
                let mut wire = json!({"role": "user", "content": message.content});
                stamp(&mut wire, message, stamped);
                out.messages.push(wire);
                open_results = false;
            }
            Role::Assistant => {
                let mut wire = assistant_to_json(message);
                stamp(&mut wire, message, stamped);
                out.messages.push(wire);
                open_results = false;
            }
            Role::Tool => {
                let id = message
                    .tool_call_id
                    .as_ref()
                    .ok_or(WireError::MissingToolCallId { index })?;
                let mut block = json!({
                    "type": "tool_result",
                    "tool_use_id": id,
                    "content": message.content,
                });
                stamp(&mut block, message, stamped);
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

/// The `system` field for the given system texts: one text block each (no timestamps; see
/// [`AnthropicConversation::system_json`]).
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
/// each); `None` or `null` means no system prompt. `"timestamp_ms"` fields, as
/// [`to_anthropic_stamped`] writes them, become the messages' timestamps.
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
                let mut message = Message::system(str_field(obj, &at, "text")?);
                message.timestamp_ms = timestamp_field(obj, &at)?;
                out.push(message);
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
/// and `tool_result` (such as `thinking` or `image`) are skipped. A user message whose whole
/// text is wrapped in [`SYSTEM_OPEN`] and [`SYSTEM_CLOSE`] is a system message. A message's
/// `"timestamp_ms"` goes to its user, system or assistant message, a `tool_result` block's to
/// its tool message.
pub fn message_from_json(value: &Value) -> Result<Vec<Message>, WireError> {
    message_from_json_at(value, "message")
}

/// A user message's text: a system message if it is wrapped in the system lines.
fn user_text(text: String) -> Message {
    match text
        .strip_prefix(SYSTEM_OPEN)
        .and_then(|rest| rest.strip_suffix(SYSTEM_CLOSE))
    {
        Some(inner) => Message::system(inner),
        None => Message::user(text),
    }
}

fn message_from_json_at(value: &Value, at: &str) -> Result<Vec<Message>, WireError> {
    let obj = as_object(value, at)?;
    let role = str_field(obj, at, "role")?;
    let timestamp = timestamp_field(obj, at)?;
    let with_timestamp = |mut message: Message| {
        message.timestamp_ms = timestamp;
        message
    };
    let blocks = match obj.get("content") {
        None | Some(Value::Null) => &[][..],
        Some(Value::String(text)) => {
            return match role {
                "user" => Ok(vec![with_timestamp(user_text(text.clone()))]),
                "assistant" => Ok(vec![with_timestamp(Message::assistant(text.clone()))]),
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
        "user" => user_blocks(blocks, at, timestamp),
        "assistant" => assistant_blocks(blocks, at).map(|m| vec![with_timestamp(m)]),
        other => Err(WireError::UnknownRole {
            at: at.to_string(),
            role: other.to_string(),
        }),
    }
}

/// The messages of a user wire message; `timestamp` (the wire message's own) goes to its
/// text, the tool results carry their blocks' timestamps.
fn user_blocks(
    blocks: &[Value],
    at: &str,
    timestamp: Option<i64>,
) -> Result<Vec<Message>, WireError> {
    let mut out = Vec::new();
    let mut text: Option<String> = None;
    let text_message = |text: String| {
        let mut message = user_text(text);
        message.timestamp_ms = timestamp;
        message
    };
    for (i, block) in blocks.iter().enumerate() {
        let block_at = format!("{at}.content[{i}]");
        let obj = as_object(block, &block_at)?;
        match obj.get("type").and_then(Value::as_str) {
            Some("text") => text
                .get_or_insert_with(String::new)
                .push_str(str_field(obj, &block_at, "text")?),
            Some("tool_result") => {
                if let Some(pending) = text.take() {
                    out.push(text_message(pending));
                }
                let id = str_field(obj, &block_at, "tool_use_id")?;
                let content = result_content(obj, &block_at)?;
                let mut result = Message::tool_result(id, content);
                result.timestamp_ms = timestamp_field(obj, &block_at)?;
                out.push(result);
            }
            _ => {}
        }
    }
    if let Some(pending) = text {
        out.push(text_message(pending));
    } else if out.is_empty() {
        out.push(text_message(String::new()));
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

//! Chat messages, as sent to and received from a model.

use serde::{Deserialize, Serialize};

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions to the model: the system prompt.
    System,
    /// The host's side of the conversation: the mission, data and each turn's feedback.
    User,
    /// The model's replies.
    Assistant,
    /// The result of a tool call, answering an assistant message's [`MessageToolCall`].
    Tool,
}

impl Role {
    /// The lowercase name the providers use (`"user"`, `"assistant"`, ...), as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A tool call requested by the model in an assistant message (native tool calling, as opposed
/// to `tool/` calls inside a PTC-Lisp program).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageToolCall {
    /// The provider's id of the call, which the answering [`Role::Tool`] message repeats.
    pub id: String,
    /// The name of the tool the model asked for.
    pub name: String,
    /// The arguments as JSON (an object for every provider we know).
    pub arguments: serde_json::Value,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who the message is from.
    pub role: Role,
    /// The message's text.
    pub content: String,
    /// Tool calls requested by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<MessageToolCall>,
    /// On a [`Role::Tool`] message: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// When the message was created, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<i64>,
}

impl Message {
    /// A message from `role` with text `content`, no tool calls and no timestamp.
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            timestamp_ms: None,
        }
    }

    /// A [`Role::System`] message.
    pub fn system(content: impl Into<String>) -> Message {
        Message::new(Role::System, content)
    }

    /// A [`Role::User`] message.
    pub fn user(content: impl Into<String>) -> Message {
        Message::new(Role::User, content)
    }

    /// A [`Role::Assistant`] message.
    pub fn assistant(content: impl Into<String>) -> Message {
        Message::new(Role::Assistant, content)
    }

    /// A tool result answering the call with id `tool_call_id`.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Message {
        Message {
            tool_call_id: Some(tool_call_id.into()),
            ..Message::new(Role::Tool, content)
        }
    }

    /// The message with `calls` as its tool calls, replacing any it had.
    pub fn with_tool_calls(mut self, calls: Vec<MessageToolCall>) -> Message {
        self.tool_calls = calls;
        self
    }

    /// The message stamped with `timestamp_ms` (milliseconds since the Unix epoch).
    pub fn with_timestamp_ms(mut self, timestamp_ms: i64) -> Message {
        self.timestamp_ms = Some(timestamp_ms);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_messages_serialize_compactly() {
        let json = serde_json::to_string(&Message::user("hi")).unwrap();
        assert_eq!(json, r#"{"role":"user","content":"hi"}"#);
        let back: Message = serde_json::from_str(&json).unwrap();
        assert_eq!(back, Message::user("hi"));
    }
}

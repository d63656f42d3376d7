//! Chat messages, as sent to and received from a model.

use serde::{Deserialize, Serialize};

/// Who a message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// The result of a tool call, answering an assistant message's [`MessageToolCall`].
    Tool,
}

impl Role {
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
    pub id: String,
    pub name: String,
    /// The arguments as JSON (an object for every provider we know).
    pub arguments: serde_json::Value,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
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
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            timestamp_ms: None,
        }
    }

    pub fn system(content: impl Into<String>) -> Message {
        Message::new(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Message {
        Message::new(Role::User, content)
    }

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

    pub fn with_tool_calls(mut self, calls: Vec<MessageToolCall>) -> Message {
        self.tool_calls = calls;
        self
    }

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

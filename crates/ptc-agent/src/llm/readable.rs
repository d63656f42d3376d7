//! A request as a person (or a model answering by hand) reads it, and a reply as they write it:
//! what the file and terminal providers share.

use std::fmt::Write as _;

use ptc_compression::Tokenizer;
use ptc_turn::{Message, MessageToolCall};
use serde::Deserialize;
use serde_json::Value;

use super::{LlmError, LlmRequest, LlmResponse, TokenUsage, ToolChoice, tools_prompt_text};

/// How many leading messages of `request` are the same as in `previous`, when both have the
/// same system prompt and tools: what an answerer who read the previous request need not read
/// again. `None` when the system prompt or the tools differ (or there is no previous request).
pub(crate) fn unchanged_prefix(
    previous: Option<&LlmRequest>,
    request: &LlmRequest,
) -> Option<usize> {
    let previous = previous.filter(|p| p.system == request.system && p.tools == request.tools)?;
    Some(
        previous
            .messages
            .iter()
            .zip(&request.messages)
            .take_while(|(a, b)| a == b)
            .count(),
    )
}

/// The request as Markdown: the system prompt, the native tools (if any), then every message
/// with its number and role, under a line saying what is the same as in `previous` (the
/// request before it in the run). `number` is the request's number in the run. With
/// `only_new`, what is the same as in `previous` is left out: for a terminal, where the reader
/// has just seen it.
pub(crate) fn request_markdown(
    request: &LlmRequest,
    number: u32,
    previous: Option<&LlmRequest>,
    only_new: bool,
) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "# Request {number}\n\nThe system prompt, then {} message{}.",
        request.messages.len(),
        if request.messages.len() == 1 { "" } else { "s" }
    );
    let unchanged = unchanged_prefix(previous, request);
    if let Some(unchanged) = unchanged {
        let mut parts = vec!["the system prompt".to_string()];
        if !request.tools.is_empty() {
            parts.push("the tools".into());
        }
        match unchanged {
            0 => {}
            1 => parts.push("message 1".into()),
            n => parts.push(format!("messages 1 to {n}")),
        }
        let verb = if parts.len() == 1 { "is" } else { "are" };
        let last = parts.pop().unwrap_or_default();
        let listed = if parts.is_empty() {
            last
        } else {
            format!("{} and {last}", parts.join(", "))
        };
        let _ = write!(
            out,
            " {}{} {verb} the same as in request {}{}.",
            listed[..1].to_uppercase(),
            &listed[1..],
            number.saturating_sub(1),
            if only_new {
                ""
            } else {
                " (repeated below, as the model receives them)"
            }
        );
    }
    if let Some(max_tokens) = request.max_tokens {
        let _ = write!(out, " The reply may have at most {max_tokens} tokens.");
    }
    let skip = if only_new { unchanged } else { None };
    if skip.is_none() {
        out.push_str("\n\n## System\n\n");
        out.push_str(request.system.trim_end());
    }
    out.push('\n');
    if !request.tools.is_empty() && skip.is_none() {
        let _ = write!(
            out,
            "\n## Tools\n\nThe reply may call these tools natively{}.\n",
            match request.tool_choice {
                ToolChoice::Auto => "",
                ToolChoice::Required => " and must call at least one",
            }
        );
        for tool in &request.tools {
            let _ = write!(
                out,
                "\n### {}\n\n{}\n\nParameters (JSON Schema): `{}`\n",
                tool.name,
                tool.description.trim(),
                tool.parameters
            );
        }
    }
    for (index, message) in request.messages.iter().enumerate().skip(skip.unwrap_or(0)) {
        write_message(&mut out, index + 1, message);
    }
    out
}

fn write_message(out: &mut String, number: usize, message: &Message) {
    let _ = write!(out, "\n## Message {number}: {}", message.role.as_str());
    if let Some(id) = &message.tool_call_id {
        let _ = write!(out, " (the result of call `{id}`)");
    }
    out.push_str("\n\n");
    if !message.content.is_empty() {
        out.push_str(message.content.trim_end());
        out.push('\n');
    }
    for call in &message.tool_calls {
        let _ = writeln!(
            out,
            "{}Tool call `{}`: {}({})",
            if message.content.is_empty() { "" } else { "\n" },
            call.id,
            call.name,
            call.arguments
        );
    }
}

/// `reply-N.json` and a reply typed as JSON: the text and the native tool calls, whose ids the
/// provider gives when the answerer gives none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyFile {
    #[serde(default)]
    content: String,
    #[serde(default)]
    tool_calls: Vec<ReplyCall>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default = "empty_object")]
    arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// A reply written as JSON (`{"content": "...", "tool_calls": [{"name": ..., "arguments":
/// {...}}]}`): its text and tool calls, checked against the tools `request` offered. Calls
/// without an id get `call-N-K` (request N, call K from 1).
pub(crate) fn parse_reply_json(
    text: &str,
    request: &LlmRequest,
    number: u32,
) -> Result<(String, Vec<MessageToolCall>), String> {
    let reply: ReplyFile = serde_json::from_str(text).map_err(|e| {
        format!(
            "the reply is not JSON of the form {{\"content\": \"...\", \"tool_calls\": \
             [{{\"name\": \"...\", \"arguments\": {{...}}}}]}}: {e}"
        )
    })?;
    let mut calls = Vec::with_capacity(reply.tool_calls.len());
    for (k, call) in reply.tool_calls.into_iter().enumerate() {
        if !request.tools.iter().any(|tool| tool.name == call.name) {
            let offered: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            return Err(if offered.is_empty() {
                format!(
                    "the reply calls tool `{}`, but this request offers no native tools: \
                     answer with text",
                    call.name
                )
            } else {
                format!(
                    "the reply calls tool `{}`, which this request does not offer (it offers {})",
                    call.name,
                    offered.join(", ")
                )
            });
        }
        if !call.arguments.is_object() {
            return Err(format!(
                "the arguments of call {} ({}) must be a JSON object, not {}",
                k + 1,
                call.name,
                call.arguments
            ));
        }
        calls.push(MessageToolCall {
            id: call
                .id
                .unwrap_or_else(|| format!("call-{number}-{}", k + 1)),
            name: call.name,
            arguments: call.arguments,
        });
    }
    if reply.content.trim().is_empty() && calls.is_empty() {
        return Err("the reply has neither text nor tool calls".into());
    }
    if request.tool_choice == ToolChoice::Required && calls.is_empty() {
        return Err("this request requires a tool call, and the reply makes none".into());
    }
    Ok((reply.content, calls))
}

/// A reply with the usage `tokenizer` estimates for it (marked as estimated): the whole prompt
/// as uncached input, the text and tool calls as output.
pub(crate) fn estimated_reply(
    request: &LlmRequest,
    content: String,
    tool_calls: Vec<MessageToolCall>,
    tokenizer: &dyn Tokenizer,
) -> LlmResponse {
    let mut reply = LlmResponse::text(content).with_tool_calls(tool_calls);
    let input = tokenizer.count_message(&Message::system(
        tools_prompt_text(&request.tools) + &request.system,
    )) + tokenizer.count_messages(&request.messages);
    let output = tokenizer.count_message(&reply.to_message());
    reply.usage = TokenUsage {
        input_tokens: input as u64,
        output_tokens: output as u64,
        ..TokenUsage::default()
    };
    reply.usage_estimated = true;
    reply.stop_reason = Some(if reply.tool_calls.is_empty() {
        "stop".into()
    } else {
        "tool_calls".into()
    });
    reply
}

/// Turns an answerer's mistake into the error a provider gives for a malformed reply.
pub(crate) fn invalid(provider: String, message: String) -> LlmError {
    LlmError::InvalidResponse { provider, message }
}

/// Whether a reply's text should be read as JSON: it starts with `{` after blanks, and the
/// request offered native tools.
pub(crate) fn looks_like_json_reply(text: &str, request: &LlmRequest) -> bool {
    !request.tools.is_empty() && text.trim_start().starts_with('{')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::FunctionTool;
    use pretty_assertions::assert_eq;
    use ptc_turn::Role;
    use serde_json::json;

    fn request() -> LlmRequest {
        let mut calling = Message::assistant("");
        calling.tool_calls = vec![MessageToolCall {
            id: "call-1-1".into(),
            name: "get_order".into(),
            arguments: json!({"id": "o-1"}),
        }];
        let mut result = Message::new(Role::Tool, "{\"total\": 12}");
        result.tool_call_id = Some("call-1-1".into());
        LlmRequest::new(
            "Be brief.",
            vec![Message::user("Total of o-1?"), calling, result],
        )
        .with_tools(
            vec![FunctionTool::new(
                "get_order",
                "One order",
                json!({"type": "object", "properties": {"id": {"type": "string"}}}),
            )],
            ToolChoice::Auto,
        )
        .with_max_tokens(500)
    }

    #[test]
    fn a_request_reads_as_markdown_with_numbered_messages() {
        let expected = "\
# Request 2

The system prompt, then 3 messages. The system prompt, the tools and message 1 are the same as \
in request 1 (repeated below, as the model receives them). The reply may have at most 500 tokens.

## System

Be brief.

## Tools

The reply may call these tools natively.

### get_order

One order

Parameters (JSON Schema): `{\"properties\":{\"id\":{\"type\":\"string\"}},\"type\":\"object\"}`

## Message 1: user

Total of o-1?

## Message 2: assistant

Tool call `call-1-1`: get_order({\"id\":\"o-1\"})

## Message 3: tool (the result of call `call-1-1`)

{\"total\": 12}
";
        let mut previous = request();
        previous.messages.truncate(1);
        assert_eq!(
            request_markdown(&request(), 2, Some(&previous), false),
            expected
        );
        let only_new = request_markdown(&request(), 2, Some(&previous), true);
        assert_eq!(
            only_new,
            "# Request 2\n\nThe system prompt, then 3 messages. The system prompt, the tools \
             and message 1 are the same as in request 1. The reply may have at most 500 \
             tokens.\n"
                .to_string()
                + &expected[expected.find("\n## Message 2").unwrap()..]
        );
    }

    #[test]
    fn the_unchanged_prefix_stops_at_the_first_difference() {
        let mut previous = request();
        previous.messages.truncate(1);
        assert_eq!(unchanged_prefix(Some(&previous), &request()), Some(1));
        assert_eq!(unchanged_prefix(None, &request()), None);
        previous.system = "Other.".into();
        assert_eq!(unchanged_prefix(Some(&previous), &request()), None);
    }

    #[test]
    fn json_replies_are_checked_against_the_offered_tools() {
        let request = request();
        let (text, calls) = parse_reply_json(
            r#"{"content": "Looking.", "tool_calls": [{"name": "get_order", "arguments": {"id": "o-2"}}]}"#,
            &request,
            4,
        )
        .unwrap();
        assert_eq!(text, "Looking.");
        assert_eq!(
            calls,
            vec![MessageToolCall {
                id: "call-4-1".into(),
                name: "get_order".into(),
                arguments: json!({"id": "o-2"}),
            }]
        );
        let errors: Vec<String> = [
            r#"{"tool_calls": [{"name": "send", "arguments": {}}]}"#,
            r#"{"tool_calls": [{"name": "get_order", "arguments": [1]}]}"#,
            r#"{"content": " "}"#,
            r#"{"text": "hi"}"#,
        ]
        .iter()
        .map(|text| parse_reply_json(text, &request, 1).unwrap_err())
        .collect();
        assert_eq!(
            errors,
            vec![
                "the reply calls tool `send`, which this request does not offer (it offers \
                 get_order)"
                    .to_string(),
                "the arguments of call 1 (get_order) must be a JSON object, not [1]".into(),
                "the reply has neither text nor tool calls".into(),
                "the reply is not JSON of the form {\"content\": \"...\", \"tool_calls\": \
                 [{\"name\": \"...\", \"arguments\": {...}}]}: unknown field `text`, expected \
                 `content` or `tool_calls` at line 1 column 7"
                    .into(),
            ]
        );
    }

    #[test]
    fn estimated_usage_counts_the_prompt_and_the_reply() {
        let reply = estimated_reply(
            &request(),
            "It is 12.".into(),
            Vec::new(),
            &ptc_compression::HeuristicTokenizer,
        );
        assert!(reply.usage_estimated);
        assert_eq!(reply.stop_reason.as_deref(), Some("stop"));
        assert_eq!(reply.usage.output_tokens, 3 + 4);
        assert!(reply.usage.input_tokens > 40, "{:?}", reply.usage);
    }
}

//! How the model hands over its program: in a fenced code block of its text (the default), or as
//! the argument of a native tool call, `run_program {"program": "..."}`, which providers check
//! for well-formed JSON and some models produce more reliably than a fenced block.
//!
//! A run records every turn the same way whatever the form: a tool-call reply is stored as its
//! text followed by the program in a fenced block, so that compression strategies, stores and
//! transcripts need no second kind of turn. Only the request changes: it offers `run_program`,
//! and each earlier reply that carried a program is sent back as that tool call, the feedback on
//! it as the call's result ([`as_tool_calls`]).

use ptc_compression::CachePoint;
use ptc_turn::{Message, MessageToolCall, Role};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::extract::extract_program;
use crate::model::{FunctionTool, LlmResponse};

/// The name of the tool a program is handed over with, in [`ReplyForm::ToolCall`].
pub const RUN_PROGRAM: &str = "run_program";

/// How the model gives its program.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplyForm {
    /// In a ```` ```clojure ```` block of the reply's text.
    #[default]
    Fenced,
    /// As the `program` argument of a native call of the tool `run_program`; a reply without
    /// the call is read for a fenced block as well.
    ToolCall,
}

impl std::str::FromStr for ReplyForm {
    type Err = String;

    /// `fenced` or `tool-call`, as command lines and configuration files write it.
    fn from_str(text: &str) -> Result<ReplyForm, String> {
        match text.trim() {
            "fenced" => Ok(ReplyForm::Fenced),
            "tool-call" => Ok(ReplyForm::ToolCall),
            other => Err(format!(
                "`{other}` is not a reply form: use fenced or tool-call"
            )),
        }
    }
}

impl std::fmt::Display for ReplyForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReplyForm::Fenced => "fenced",
            ReplyForm::ToolCall => "tool-call",
        })
    }
}

impl ReplyForm {
    /// The native tool a request offers in this form: `run_program` for
    /// [`ReplyForm::ToolCall`], none otherwise.
    pub fn tools(self) -> Vec<FunctionTool> {
        match self {
            ReplyForm::Fenced => Vec::new(),
            ReplyForm::ToolCall => vec![FunctionTool::new(
                RUN_PROGRAM,
                "Run a PTC-Lisp program in the sandbox; what it prints, its value or its error and \
                 its tool calls come back as the result.",
                json!({
                    "type": "object",
                    "properties": {"program": {"type": "string", "description": "The program"}},
                    "required": ["program"],
                }),
            )],
        }
    }
}

/// The reply as a run records it: a reply that called `run_program` becomes its text followed
/// by the program (the `program` arguments of its calls, in order) in a fenced block; any other
/// reply stays as it is.
pub(crate) fn as_recorded(mut response: LlmResponse) -> LlmResponse {
    let programs: Vec<String> = response
        .tool_calls
        .iter()
        .filter(|call| call.name == RUN_PROGRAM)
        .filter_map(|call| {
            call.arguments
                .get("program")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        })
        .collect();
    if programs.is_empty() {
        return response;
    }
    let mut text = response.content.trim_end().to_string();
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str("```clojure\n");
    text.push_str(programs.join("\n").trim_end());
    text.push_str("\n```");
    response.content = text;
    response.tool_calls.clear();
    response
}

/// The messages of a request in [`ReplyForm::ToolCall`]: each assistant message holding a
/// fenced program becomes its text and a call of `run_program` (id `run-N`, N counting those
/// calls), and the user message after it the call's result. The last message's part after its
/// stable end (its cache point: the turn count) stays a user message of its own, so that the
/// stable part can be cached as a whole tool result. Points move with the messages they point
/// into; the first user message, before any reply, is unchanged.
pub(crate) fn as_tool_calls(
    messages: &[Message],
    points: &[CachePoint],
) -> (Vec<Message>, Vec<CachePoint>) {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len() + 1);
    let mut moved: Vec<CachePoint> = Vec::with_capacity(points.len());
    let mut pending_call: Option<String> = None;
    let mut calls = 0;
    for (index, message) in messages.iter().enumerate() {
        let point = points.iter().find(|p| p.message_index == index);
        match (message.role, pending_call.take()) {
            (Role::Assistant, _) => match extract_program(&message.content) {
                Some(program) => {
                    calls += 1;
                    let id = format!("run-{calls}");
                    let mut call = Message::assistant(prose_of(&message.content));
                    call.tool_calls = vec![MessageToolCall {
                        id: id.clone(),
                        name: RUN_PROGRAM.to_string(),
                        arguments: json!({ "program": program }),
                    }];
                    out.push(call);
                    pending_call = Some(id);
                }
                None => out.push(message.clone()),
            },
            (Role::User, Some(id)) => {
                let stable = point.map_or(message.content.len(), |p| p.byte_offset);
                let (result, rest) = message.content.split_at(stable.min(message.content.len()));
                let mut tool = Message::new(Role::Tool, result.trim_end());
                tool.tool_call_id = Some(id);
                let length = tool.content.len();
                out.push(tool);
                if point.is_some() {
                    moved.push(CachePoint::new(out.len() - 1, length));
                }
                if !rest.trim().is_empty() {
                    out.push(Message::user(rest.trim_start()));
                }
            }
            _ => {
                if let Some(p) = point {
                    moved.push(CachePoint::new(out.len(), p.byte_offset));
                }
                out.push(message.clone());
            }
        }
    }
    (out, moved)
}

/// A reply's text outside its fenced blocks, trimmed.
fn prose_of(reply: &str) -> String {
    let mut prose = String::new();
    let mut in_block = false;
    for line in reply.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    prose.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_tool_call_reply_is_recorded_as_its_text_and_a_fenced_program() {
        let reply = LlmResponse::text("Counting.").with_tool_calls(vec![MessageToolCall {
            id: "toolu_1".into(),
            name: RUN_PROGRAM.into(),
            arguments: json!({"program": "(count data/xs)\n"}),
        }]);
        let recorded = as_recorded(reply);
        assert_eq!(
            recorded.content,
            "Counting.\n\n```clojure\n(count data/xs)\n```"
        );
        assert!(recorded.tool_calls.is_empty());
        let plain = as_recorded(LlmResponse::text("```clojure\n1\n```"));
        assert_eq!(plain.content, "```clojure\n1\n```");
    }

    #[test]
    fn replies_and_feedback_become_calls_and_results() {
        let messages = vec![
            Message::system("sys"),
            Message::user("Task\n\ntool/ list"),
            Message::assistant("Look first.\n\n```clojure\n(println 1)\n```"),
            Message::user(";; Output:\n1"),
            Message::assistant("no program here"),
            Message::user("Error: no program"),
            Message::assistant("```clojure\n(return 2)\n```"),
            Message::user(";; Result: 2\n\nTurns left: 2"),
        ];
        let points = vec![
            CachePoint::new(1, 4),
            CachePoint::new(7, ";; Result: 2".len()),
        ];
        let (out, moved) = as_tool_calls(&messages, &points);
        let roles: Vec<(Role, String, Option<String>)> = out
            .iter()
            .map(|m| (m.role, m.content.clone(), m.tool_call_id.clone()))
            .collect();
        assert_eq!(
            roles,
            vec![
                (Role::System, "sys".into(), None),
                (Role::User, "Task\n\ntool/ list".into(), None),
                (Role::Assistant, "Look first.".into(), None),
                (Role::Tool, ";; Output:\n1".into(), Some("run-1".into())),
                (Role::Assistant, "no program here".into(), None),
                (Role::User, "Error: no program".into(), None),
                (Role::Assistant, String::new(), None),
                (Role::Tool, ";; Result: 2".into(), Some("run-2".into())),
                (Role::User, "Turns left: 2".into(), None),
            ]
        );
        assert_eq!(
            out[2].tool_calls[0].arguments,
            json!({"program": "(println 1)"})
        );
        assert_eq!(
            moved,
            vec![
                CachePoint::new(1, 4),
                CachePoint::new(7, ";; Result: 2".len())
            ]
        );
    }
}

//! The prompt an LLM-backed [`Summarizer`](super::Summarizer) sends: the sections every summary
//! has, and the transcript of the messages to fold in.

use std::fmt::Write as _;

use ptc_turn::{Message, Role};

use super::SummaryRequest;

/// The headings every summary is asked to have, in order. Fixed headings make summaries of
/// different conversations, and successive summaries of one, comparable.
pub const SUMMARY_SECTIONS: [&str; 5] = [
    "Goal",
    "Facts learned",
    "Actions taken",
    "Open questions",
    "Next step",
];

/// The headings of [`SUMMARY_SECTIONS`] that `summary` lacks (as `## Heading` lines), so a
/// summarizer can reject or retry a reply that ignored the format.
///
/// ```
/// use ptc_compression::history::missing_sections;
///
/// let reply = "## Goal\nShip it\n## Facts learned\n- none\n## Next step\nTest";
/// assert_eq!(missing_sections(reply), vec!["Actions taken", "Open questions"]);
/// ```
pub fn missing_sections(summary: &str) -> Vec<&'static str> {
    SUMMARY_SECTIONS
        .iter()
        .copied()
        .filter(|section| {
            !summary.lines().any(|line| {
                line.trim()
                    .strip_prefix("##")
                    .is_some_and(|heading| heading.trim().eq_ignore_ascii_case(section))
            })
        })
        .collect()
}

/// A summary request as the two messages an LLM-backed summarizer sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryPrompt {
    /// Instructions: the role, the required sections and how to fill them.
    pub system: String,
    /// The task, the previous summary if any, and the new messages as a transcript.
    pub user: String,
}

impl SummaryPrompt {
    /// The prompt as chat messages, system first.
    pub fn to_messages(&self) -> Vec<Message> {
        vec![Message::system(&self.system), Message::user(&self.user)]
    }

    /// Characters sent in total (a size measure for budgets and tests).
    pub fn char_count(&self) -> usize {
        self.system.chars().count() + self.user.chars().count()
    }
}

/// Default for [`SummaryPromptBuilder::max_message_chars`].
pub const DEFAULT_MAX_MESSAGE_CHARS: usize = 4_000;

/// Builds the [`SummaryPrompt`] for a [`SummaryRequest`].
///
/// The prompt asks for the [`SUMMARY_SECTIONS`] under `## ` headings. When the request carries
/// a previous summary, the prompt shows it and asks for an updated, complete summary, so each
/// call only sends the messages added since. Message texts longer than
/// [`max_message_chars`](SummaryPromptBuilder::max_message_chars) are shortened, which keeps
/// one huge tool result from dominating the summarizer's input.
///
/// ```
/// use ptc_compression::history::{SummaryPromptBuilder, SummaryRequest, SummaryStrategy};
/// use ptc_turn::Message;
///
/// let request = SummaryRequest {
///     strategy: SummaryStrategy::WholeHistory,
///     task: Some("Find the largest file".into()),
///     previous_summary: None,
///     messages: vec![Message::assistant("Listing the directory.")],
/// };
/// let prompt = SummaryPromptBuilder::new().build(&request);
/// assert!(prompt.system.contains("## Actions taken"));
/// assert!(prompt.user.contains("[assistant] Listing the directory."));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryPromptBuilder {
    max_message_chars: usize,
}

impl Default for SummaryPromptBuilder {
    fn default() -> SummaryPromptBuilder {
        SummaryPromptBuilder {
            max_message_chars: DEFAULT_MAX_MESSAGE_CHARS,
        }
    }
}

const INSTRUCTIONS: &str = "\
You keep a running summary of a conversation between a user, an assistant, and the tools the \
assistant calls. The summary replaces the messages it covers: whatever it leaves out is gone \
for the assistant.

Reply with the summary only, in exactly these sections, in this order, each under its own \
heading line:

## Goal
What the user wants achieved, in one or two sentences.
## Facts learned
One bullet per established fact: names, identifiers, paths, numbers, decisions, constraints.
## Actions taken
One bullet per action the assistant took, with its result: the tool and its key arguments, \
and what came back, failures included.
## Open questions
What is still unknown or undecided. Write \"None\" if nothing is.
## Next step
The one thing the assistant should do next.

Be terse and factual. Copy identifiers and numbers exactly. Do not add anything the messages \
do not say.";

impl SummaryPromptBuilder {
    /// A builder with the default message length ([`DEFAULT_MAX_MESSAGE_CHARS`]).
    pub fn new() -> SummaryPromptBuilder {
        SummaryPromptBuilder::default()
    }

    /// Longest message text (in characters) shown in full; longer ones are cut and marked.
    pub fn max_message_chars(mut self, max_message_chars: usize) -> SummaryPromptBuilder {
        self.max_message_chars = max_message_chars;
        self
    }

    /// The prompt for `request`.
    pub fn build(&self, request: &SummaryRequest) -> SummaryPrompt {
        let mut user = String::new();
        if let Some(task) = &request.task {
            user.push_str("The user opened the conversation with this request (it stays in the conversation as is):\n<request>\n");
            user.push_str(&self.clip(task));
            user.push_str("\n</request>\n\n");
        }
        match &request.previous_summary {
            Some(previous) => {
                user.push_str("The summary so far:\n<summary>\n");
                user.push_str(previous);
                user.push_str(
                    "\n</summary>\n\nUpdate it with the new messages below: keep every fact \
                     that still holds, drop what they make obsolete, and reply with the \
                     complete updated summary in the same sections.\n\n",
                );
            }
            None => user.push_str("Summarize the messages below.\n\n"),
        }
        user.push_str("<messages>\n");
        for message in &request.messages {
            self.render(&mut user, message);
        }
        user.push_str("</messages>");
        SummaryPrompt {
            system: INSTRUCTIONS.to_owned(),
            user,
        }
    }

    fn render(&self, out: &mut String, message: &Message) {
        match (message.role, &message.tool_call_id) {
            (Role::Tool, Some(id)) => {
                let _ = writeln!(
                    out,
                    "[tool result for {id}] {}",
                    self.clip(&message.content)
                );
            }
            (role, _) => {
                if !message.content.is_empty() || message.tool_calls.is_empty() {
                    let _ = writeln!(out, "[{}] {}", role.as_str(), self.clip(&message.content));
                }
            }
        }
        for call in &message.tool_calls {
            let _ = writeln!(
                out,
                "[assistant calls {} as {}] {}",
                call.name,
                call.id,
                self.clip(&call.arguments.to_string())
            );
        }
    }

    fn clip(&self, text: &str) -> String {
        match text.char_indices().nth(self.max_message_chars) {
            None => text.to_owned(),
            Some((cut, _)) => {
                let omitted = text[cut..].chars().count();
                format!("{} [… {omitted} more characters omitted]", &text[..cut])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::SummaryStrategy;
    use pretty_assertions::assert_eq;
    use ptc_turn::MessageToolCall;

    #[test]
    fn prompt_renders_transcript_task_and_previous_summary() {
        let request = SummaryRequest {
            strategy: SummaryStrategy::FromLastNMessages(4),
            task: Some("count files".into()),
            previous_summary: Some("## Goal\ncount files".into()),
            messages: vec![
                Message::assistant("").with_tool_calls(vec![MessageToolCall {
                    id: "c1".into(),
                    name: "ls".into(),
                    arguments: serde_json::json!({"dir": "logs"}),
                }]),
                Message::tool_result("c1", "a b c"),
                Message::assistant("There are 3 files."),
            ],
        };
        let prompt = SummaryPromptBuilder::new().build(&request);
        assert_eq!(prompt.system, INSTRUCTIONS);
        assert_eq!(
            prompt.user,
            "The user opened the conversation with this request (it stays in the conversation as is):\n\
             <request>\ncount files\n</request>\n\n\
             The summary so far:\n<summary>\n## Goal\ncount files\n</summary>\n\n\
             Update it with the new messages below: keep every fact that still holds, drop what \
             they make obsolete, and reply with the complete updated summary in the same \
             sections.\n\n\
             <messages>\n\
             [assistant calls ls as c1] {\"dir\":\"logs\"}\n\
             [tool result for c1] a b c\n\
             [assistant] There are 3 files.\n\
             </messages>"
        );
        for section in SUMMARY_SECTIONS {
            assert!(
                prompt.system.contains(&format!("## {section}\n")),
                "{section}"
            );
        }
        assert_eq!(prompt.to_messages()[1], Message::user(&prompt.user));
    }

    #[test]
    fn long_messages_are_clipped_at_a_character_boundary() {
        let request = SummaryRequest {
            strategy: SummaryStrategy::WholeHistory,
            task: None,
            previous_summary: None,
            messages: vec![Message::user("ééééé")],
        };
        let prompt = SummaryPromptBuilder::new()
            .max_message_chars(2)
            .build(&request);
        assert_eq!(
            prompt.user,
            "Summarize the messages below.\n\n<messages>\n[user] éé [… 3 more characters omitted]\n</messages>"
        );
    }

    #[test]
    fn missing_sections_accepts_any_heading_case_and_spacing() {
        let all = "##goal\nx\n##  FACTS LEARNED\n## Actions taken\n## Open questions\n## Next step";
        assert_eq!(missing_sections(all), Vec::<&str>::new());
        assert_eq!(missing_sections(""), SUMMARY_SECTIONS.to_vec());
    }
}

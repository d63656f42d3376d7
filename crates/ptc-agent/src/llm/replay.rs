//! A model that replays a recorded transcript.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use serde::Deserialize;

use super::{Llm, LlmError, LlmRequest, LlmResponse, ScriptedLlm, TokenUsage};

/// Replies read from a JSONL transcript, returned in order: one JSON object per line,
/// `{"content": "..."}` plus optional `usage` (the fields of [`TokenUsage`]), `model`,
/// `stop_reason`, `attempts` (the requests the recorded reply took, 1 when absent) and
/// `tool_calls` (native tool calls: `id`, `name`, `arguments`), which is the line
/// [`LlmResponse`] serializes to. Blank lines are skipped; other fields are ignored.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ptc_agent::llm::{Llm, LlmRequest, ReplayLlm};
///
/// let transcript = r#"{"content": "(def x 1)", "usage": {"input_tokens": 90, "output_tokens": 7}}
///
/// {"content": "(return x)"}
/// "#;
/// let llm = ReplayLlm::from_jsonl("demo.jsonl", transcript).unwrap();
/// let first = llm.complete(&LlmRequest::default()).await.unwrap();
/// assert_eq!((first.content.as_str(), first.usage.input_tokens), ("(def x 1)", 90));
/// assert_eq!(llm.complete(&LlmRequest::default()).await.unwrap().content, "(return x)");
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct ReplayLlm {
    script: ScriptedLlm,
    /// Whether the first request, when it is for turn N, starts at the Nth reply.
    by_turn: bool,
    /// Whether a request came already (clones share it, as they share the script).
    asked: Arc<AtomicBool>,
}

#[derive(Deserialize)]
struct Entry {
    content: String,
    #[serde(default)]
    usage: TokenUsage,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    attempts: Option<u32>,
    #[serde(default)]
    tool_calls: Vec<ptc_turn::MessageToolCall>,
    #[serde(default)]
    usage_estimated: bool,
}

impl ReplayLlm {
    /// Reads the transcript at `path`.
    pub fn from_file(path: impl AsRef<Path>) -> Result<ReplayLlm, LlmError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| LlmError::Transcript {
            path: path.display().to_string(),
            line: None,
            message: format!("cannot read it: {e}"),
        })?;
        ReplayLlm::from_jsonl(&path.display().to_string(), &text)
    }

    /// Reads a transcript from text; `source` names it in errors and logs.
    pub fn from_jsonl(source: &str, text: &str) -> Result<ReplayLlm, LlmError> {
        let mut replies = Vec::new();
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let entry: Entry = serde_json::from_str(line).map_err(|e| LlmError::Transcript {
                path: source.to_string(),
                line: Some(index + 1),
                message: describe_json_error(&e),
            })?;
            replies.push(Ok(LlmResponse {
                content: entry.content,
                usage: entry.usage,
                model: entry.model,
                stop_reason: entry.stop_reason,
                attempts: entry.attempts.unwrap_or(1).max(1),
                tool_calls: entry.tool_calls,
                usage_estimated: entry.usage_estimated,
            }));
        }
        Ok(ReplayLlm {
            script: ScriptedLlm::named(
                format!("the replay transcript {source}"),
                format!("replay:{source}"),
                replies,
            ),
            by_turn: false,
            asked: Arc::default(),
        })
    }

    /// The replay of a whole run's transcript (one reply a turn) for a run that may be
    /// resumed: when its first request is for turn N (the run resumed after N - 1 committed
    /// turns), it starts at the transcript's Nth reply instead of its first. A worker plays a
    /// transcript to each run it claims this way.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use ptc_agent::llm::{Llm, LlmRequest, ReplayLlm};
    ///
    /// let transcript = "{\"content\": \"(def x 1)\"}\n{\"content\": \"(return x)\"}\n";
    /// let llm = ReplayLlm::from_jsonl("run.jsonl", transcript).unwrap().by_turn();
    /// let request = LlmRequest { turn: Some(2), ..LlmRequest::default() };
    /// assert_eq!(llm.complete(&request).await.unwrap().content, "(return x)");
    /// # });
    /// ```
    pub fn by_turn(mut self) -> ReplayLlm {
        self.by_turn = true;
        self
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.script.requests()
    }

    /// How many replies are left.
    pub fn remaining(&self) -> usize {
        self.script.remaining()
    }
}

/// serde_json's message without its "at line 1 column N", which would name the line within the
/// one-line document rather than within the transcript.
fn describe_json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let message = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(message, _)| message);
    format!(
        "{message} (column {}); each line must be a JSON object like {{\"content\": \"...\"}}",
        e.column()
    )
}

#[async_trait]
impl Llm for ReplayLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let first = !self.asked.swap(true, Ordering::SeqCst);
        if self.by_turn
            && first
            && let Some(turn) = request.turn
        {
            self.script.skip(turn.saturating_sub(1) as usize);
        }
        self.script.complete(request).await
    }

    fn describe(&self) -> String {
        self.script.describe()
    }
}

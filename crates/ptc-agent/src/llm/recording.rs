//! A model that keeps every reply of another, to save as a replay transcript.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use super::{Llm, LlmError, LlmRequest, LlmResponse};

/// Passes every request to `inner` and keeps each reply, so that a run against a real model
/// can be saved as a transcript and played back offline with [`ReplayLlm`](super::ReplayLlm).
/// Clones share the record.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use ptc_agent::llm::{Llm, LlmRequest, RecordingLlm, ReplayLlm, ScriptedLlm};
///
/// let recording = RecordingLlm::new(Arc::new(ScriptedLlm::new(["(return 1)"])));
/// recording.complete(&LlmRequest::default()).await.unwrap();
/// let transcript = recording.transcript_jsonl().unwrap();
/// assert_eq!(transcript, "{\"content\":\"(return 1)\",\"usage\":{\"input_tokens\":0,\"output_tokens\":0,\"cache_read_tokens\":0,\"cache_write_tokens\":0}}\n");
/// let replay = ReplayLlm::from_jsonl("run.jsonl", &transcript).unwrap();
/// assert_eq!(replay.complete(&LlmRequest::default()).await.unwrap().content, "(return 1)");
/// # });
/// ```
#[derive(Clone)]
pub struct RecordingLlm {
    inner: Arc<dyn Llm>,
    replies: Arc<Mutex<Vec<LlmResponse>>>,
}

impl RecordingLlm {
    /// Records the replies of `inner`, which answers every request.
    pub fn new(inner: Arc<dyn Llm>) -> RecordingLlm {
        RecordingLlm {
            inner,
            replies: Arc::default(),
        }
    }

    /// Every reply so far, oldest first (failed calls have none).
    pub fn replies(&self) -> Vec<LlmResponse> {
        self.replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The replies as a transcript: one JSON line each, as [`ReplayLlm`](super::ReplayLlm)
    /// reads them.
    pub fn transcript_jsonl(&self) -> Result<String, serde_json::Error> {
        transcript_jsonl(&self.replies())
    }
}

/// Replies as a replay transcript: one JSON object a line.
pub fn transcript_jsonl(replies: &[LlmResponse]) -> Result<String, serde_json::Error> {
    let mut text = String::new();
    for reply in replies {
        text.push_str(&serde_json::to_string(reply)?);
        text.push('\n');
    }
    Ok(text)
}

#[async_trait]
impl Llm for RecordingLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let reply = self.inner.complete(request).await?;
        self.replies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(reply.clone());
        Ok(reply)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

//! A model that keeps every reply of another, to save as a replay transcript.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use super::{Llm, LlmError, LlmRequest, LlmResponse};

/// Passes every request to `inner` and keeps each reply, so that a run against a real model
/// can be saved as a transcript and played back offline with [`ReplayLlm`](super::ReplayLlm).
/// Clones share the record. [`RecordingLlm::writing_to`] also appends each reply to a file the
/// moment it arrives, so a run that crashes or is killed leaves every reply it was given.
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
    sink: Option<Arc<Mutex<Sink>>>,
}

/// Where replies are written as they arrive, and the first write that failed.
struct Sink {
    file: std::fs::File,
    error: Option<String>,
}

impl RecordingLlm {
    /// Records the replies of `inner`, which answers every request.
    pub fn new(inner: Arc<dyn Llm>) -> RecordingLlm {
        RecordingLlm {
            inner,
            replies: Arc::default(),
            sink: None,
        }
    }

    /// Records the replies of `inner` and appends each to `file` as one transcript line, written
    /// and flushed before the reply is passed on. A write that fails does not fail the run: the
    /// replies are still kept, and [`RecordingLlm::write_error`] says what went wrong.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use ptc_agent::llm::{Llm, LlmRequest, RecordingLlm, ScriptedLlm};
    ///
    /// let path = std::env::temp_dir().join(format!("recording-doc-{}.jsonl", std::process::id()));
    /// let file = std::fs::File::create(&path).unwrap();
    /// let recording = RecordingLlm::writing_to(Arc::new(ScriptedLlm::new(["(return 1)"])), file);
    /// recording.complete(&LlmRequest::default()).await.unwrap();
    /// // Already on disk, while the run goes on.
    /// assert!(std::fs::read_to_string(&path).unwrap().starts_with("{\"content\":\"(return 1)\""));
    /// assert_eq!(recording.write_error(), None);
    /// # std::fs::remove_file(&path).unwrap();
    /// # });
    /// ```
    pub fn writing_to(inner: Arc<dyn Llm>, file: std::fs::File) -> RecordingLlm {
        RecordingLlm {
            sink: Some(Arc::new(Mutex::new(Sink { file, error: None }))),
            ..RecordingLlm::new(inner)
        }
    }

    /// The first failure to write a reply to the file of [`RecordingLlm::writing_to`], if any.
    pub fn write_error(&self) -> Option<String> {
        let sink = self.sink.as_ref()?;
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .error
            .clone()
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
        if let Some(sink) = &self.sink {
            let mut sink = sink.lock().unwrap_or_else(PoisonError::into_inner);
            if sink.error.is_none() {
                let written = transcript_jsonl(std::slice::from_ref(&reply))
                    .map_err(|e| e.to_string())
                    .and_then(|line| {
                        sink.file
                            .write_all(line.as_bytes())
                            .and_then(|()| sink.file.flush())
                            .map_err(|e| e.to_string())
                    });
                if let Err(error) = written {
                    sink.error = Some(error);
                }
            }
        }
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

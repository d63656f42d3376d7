//! A model that plays back canned replies.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;

use super::{Llm, LlmError, LlmRequest, LlmResponse};

/// Returns canned replies in order and records every request it gets; for tests and demos.
///
/// Clones share the script and the record, so a test can hand one clone to the agent and
/// inspect the requests through another afterwards. When the replies run out, every further
/// call fails with [`LlmError::RepliesExhausted`].
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ptc_agent::llm::{Llm, LlmRequest, ScriptedLlm};
/// use ptc_turn::Message;
///
/// let llm = ScriptedLlm::new(["(+ 1 2)"]);
/// let request = LlmRequest::new("system", vec![Message::user("add")]);
/// assert_eq!(llm.complete(&request).await.unwrap().content, "(+ 1 2)");
/// assert_eq!(llm.requests(), vec![request.clone()]);
/// assert!(llm.complete(&request).await.is_err());
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct ScriptedLlm {
    /// Names the script in errors.
    name: Arc<str>,
    /// What [`Llm::describe`] says.
    description: Arc<str>,
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    replies: VecDeque<Result<LlmResponse, LlmError>>,
    requests: Vec<LlmRequest>,
    served: usize,
}

impl ScriptedLlm {
    /// A script of text replies.
    pub fn new<I, S>(replies: I) -> ScriptedLlm
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ScriptedLlm::from_results(replies.into_iter().map(|text| Ok(LlmResponse::text(text))))
    }

    /// A script of full replies and failures, e.g. to test how a caller handles errors.
    pub fn from_results<I>(replies: I) -> ScriptedLlm
    where
        I: IntoIterator<Item = Result<LlmResponse, LlmError>>,
    {
        ScriptedLlm::named("the scripted model", "scripted", replies)
    }

    /// A script named `name` in errors and `description` in logs.
    pub(crate) fn named<I>(
        name: impl Into<Arc<str>>,
        description: impl Into<Arc<str>>,
        replies: I,
    ) -> ScriptedLlm
    where
        I: IntoIterator<Item = Result<LlmResponse, LlmError>>,
    {
        ScriptedLlm {
            name: name.into(),
            description: description.into(),
            state: Arc::new(Mutex::new(State {
                replies: replies.into_iter().collect(),
                ..State::default()
            })),
        }
    }

    /// Adds a text reply at the end of the script.
    pub fn push_reply(&self, text: impl Into<String>) {
        self.push_result(Ok(LlmResponse::text(text)));
    }

    /// Adds a reply or failure at the end of the script.
    pub fn push_result(&self, reply: Result<LlmResponse, LlmError>) {
        self.lock().replies.push_back(reply);
    }

    /// Every request received so far, oldest first (including ones that got no reply).
    pub fn requests(&self) -> Vec<LlmRequest> {
        self.lock().requests.clone()
    }

    /// How many replies are left.
    pub fn remaining(&self) -> usize {
        self.lock().replies.len()
    }

    /// Drops the next `count` replies unserved.
    pub(crate) fn skip(&self, count: usize) {
        let mut state = self.lock();
        let count = count.min(state.replies.len());
        state.replies.drain(..count);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves the state consistent: every update
        // is a single push or pop.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl Llm for ScriptedLlm {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        let mut state = self.lock();
        state.requests.push(request.clone());
        match state.replies.pop_front() {
            Some(reply) => {
                state.served += 1;
                reply
            }
            None => Err(LlmError::RepliesExhausted {
                script: self.name.to_string(),
                served: state.served,
            }),
        }
    }

    fn describe(&self) -> String {
        self.description.to_string()
    }
}

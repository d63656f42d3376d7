//! Helpers shared by the history-management tests.
#![allow(dead_code)]

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use ptc_compression::history::{Summarizer, SummarizerError, SummaryFuture, SummaryRequest};
use ptc_turn::{Message, MessageToolCall, Role};

/// Runs a future on the current thread (no async runtime needed for these tests).
pub fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(value) => return value,
            Poll::Pending => std::thread::park(),
        }
    }
}

pub fn sys(text: &str) -> Message {
    Message::system(text)
}

pub fn user(text: &str) -> Message {
    Message::user(text)
}

pub fn asst(text: &str) -> Message {
    Message::assistant(text)
}

pub fn tool_call(id: &str) -> MessageToolCall {
    MessageToolCall {
        id: id.into(),
        name: "lookup".into(),
        arguments: serde_json::json!({ "key": id }),
    }
}

/// An assistant message calling the tools with these ids.
pub fn calls(ids: &[&str]) -> Message {
    Message::assistant("").with_tool_calls(ids.iter().map(|id| tool_call(id)).collect())
}

pub fn result(id: &str, text: &str) -> Message {
    Message::tool_result(id, text)
}

/// Answers every request with `summary #k of m new messages` (k counts calls from 1), and
/// remembers the requests.
#[derive(Default)]
pub struct Recorder {
    pub requests: Mutex<Vec<SummaryRequest>>,
}

impl Recorder {
    pub fn requests(&self) -> Vec<SummaryRequest> {
        self.requests.lock().unwrap().clone()
    }

    pub fn calls(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

impl Summarizer for Recorder {
    fn summarize(&self, request: SummaryRequest) -> SummaryFuture<'_> {
        Box::pin(async move {
            let mut requests = self.requests.lock().unwrap();
            let text = format!(
                "summary #{} of {} new messages",
                requests.len() + 1,
                request.messages.len()
            );
            requests.push(request);
            Ok(text)
        })
    }
}

/// Fails on call number `fail_on` (from 1); succeeds like [`Recorder`] before that.
pub struct FailOn {
    pub fail_on: usize,
    pub recorder: Recorder,
}

impl Summarizer for FailOn {
    fn summarize(&self, request: SummaryRequest) -> SummaryFuture<'_> {
        Box::pin(async move {
            if self.recorder.calls() + 1 == self.fail_on {
                return Err(SummarizerError::new("provider returned 503"));
            }
            self.recorder.summarize(request).await
        })
    }
}

/// Checks the pair rules of `out`, produced from the well-formed history `input`: every tool
/// result has its call earlier in `out`, every call in `out` has all the results it had in
/// `input`, and the first message after the leading system messages is not from the assistant
/// or a tool.
pub fn check_pairs(input: &[Message], out: &[Message]) -> Result<(), String> {
    for (j, message) in out.iter().enumerate() {
        if message.role == Role::Tool {
            let id = message.tool_call_id.as_deref().unwrap_or("");
            let has_call = out[..j]
                .iter()
                .any(|m| m.tool_calls.iter().any(|c| c.id == id));
            if !has_call {
                return Err(format!("tool result {id} at {j} lost its call"));
            }
        }
        for call in &message.tool_calls {
            let results = |ms: &[Message]| {
                ms.iter()
                    .filter(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(&call.id))
                    .count()
            };
            if results(&out[j..]) != results(input) {
                return Err(format!("call {} at {j} lost a result", call.id));
            }
        }
    }
    if let Some(first) = out.iter().find(|m| m.role != Role::System)
        && matches!(first.role, Role::Assistant | Role::Tool)
    {
        return Err(format!("history starts with {:?}", first.role));
    }
    Ok(())
}

/// The system messages of a history, in order.
pub fn systems(history: &[Message]) -> Vec<Message> {
    history
        .iter()
        .filter(|m| m.role == Role::System)
        .cloned()
        .collect()
}

//! The agent's tools answering a suspended program's calls, without holding a thread while
//! they are awaited.
//!
//! The program runs inside the run core as a suspendable run of the sandbox
//! ([`Runtime::start`](ptc_lisp::Runtime::start)): it evaluates until it calls agent tools,
//! then suspends; the calls it waits for (one, or all the items of a `pmap` at once) are
//! awaited here ([`LiveTools`]), concurrently, on the async
//! runtime, each under the sandbox's tool timeout, and the run resumes with their answers. A
//! call that times out is cancelled: its future is dropped. When the run's own future is
//! dropped (the run's deadline passed), the tool calls in flight are dropped with it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use ptc_lisp::tool_panicked;
use ptc_lisp::{ToolAnswer, ToolError, ToolRequest, Value};

use crate::caller::with_call_key;
use crate::store::IdempotencyKey;
use crate::telemetry::{record_tool_call, tool_call_span};
use crate::tool::AsyncTool;

/// The agent's tools answering a run's calls for real.
pub(crate) struct LiveTools<'a> {
    pub tools: &'a [Arc<dyn AsyncTool>],
    /// How long one call may take.
    pub timeout: Option<Duration>,
    /// The span each call's `tool_call` span goes under.
    pub parent: tracing::Span,
}

impl LiveTools<'_> {
    /// Make `requests` concurrently; the answers are in the order of the requests.
    pub(crate) async fn answer(&self, requests: Vec<ToolRequest>) -> Vec<ToolAnswer> {
        self.answer_keyed(requests.into_iter().map(|r| (r, None)).collect())
            .await
    }

    /// Make `calls` concurrently, each tool seeing its call's idempotency key (if it has one)
    /// as [`current_idempotency_key`](crate::current_idempotency_key); the answers are in the
    /// order of the calls.
    pub(crate) async fn answer_keyed(
        &self,
        calls: Vec<(ToolRequest, Option<IdempotencyKey>)>,
    ) -> Vec<ToolAnswer> {
        let calls: Vec<_> = calls
            .into_iter()
            .map(|(request, key)| Box::pin(self.call(request, key)))
            .collect();
        join_all(calls).await
    }

    async fn call(&self, request: ToolRequest, key: Option<IdempotencyKey>) -> ToolAnswer {
        let ToolRequest { name, args } = request;
        let span = tool_call_span(&self.parent, &name, args.len());
        let started = Instant::now();
        let tool = self.tools.iter().find(|t| t.name() == name).cloned();
        let result = match tool {
            None => Err(ToolError::new(format!(
                "tool/{name} is not one of this agent's tools"
            ))),
            Some(tool) => {
                let call: Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + '_>> =
                    match key {
                        Some(key) => Box::pin(with_call_key(key, tool.call(args))),
                        None => tool.call(args),
                    };
                let call = CatchPanic(call);
                let call = tracing::Instrument::instrument(call, span.clone());
                match self.timeout {
                    None => call.await,
                    Some(limit) => tokio::time::timeout(limit, call)
                        .await
                        .unwrap_or_else(|_| Err(tool_timed_out(limit))),
                }
            }
        };
        let duration = started.elapsed();
        record_tool_call(&span, duration, &result);
        ToolAnswer::new(result, duration)
    }
}

/// The error of a tool call that gave no answer within `limit`, the sandbox's tool timeout.
pub fn tool_timed_out(limit: Duration) -> ToolError {
    ToolError::new(format!(
        "no answer within {} ms (the call was cancelled)",
        limit.as_millis()
    ))
}

/// A tool's future whose panic becomes a tool error, as a panic of a synchronous sandbox tool
/// does.
struct CatchPanic<F>(F);

impl<F> Future for CatchPanic<F>
where
    F: Future<Output = Result<Value, ToolError>> + Unpin,
{
    type Output = Result<Value, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Pin::new(&mut *inner).poll(cx)
        })) {
            Ok(poll) => poll,
            Err(payload) => Poll::Ready(Err(ToolError::new(tool_panicked(payload.as_ref())))),
        }
    }
}

/// Await all `futures` on this task, concurrently; their outputs in order.
async fn join_all<F: Future + Unpin>(futures: Vec<F>) -> Vec<F::Output> {
    let mut pending: Vec<Option<F>> = futures.into_iter().map(Some).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut all_done = true;
        for (slot, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot {
                match Pin::new(future).poll(cx) {
                    Poll::Ready(value) => {
                        *output = Some(value);
                        *slot = None;
                    }
                    Poll::Pending => all_done = false,
                }
            }
        }
        if all_done {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

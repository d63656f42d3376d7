//! A turn's program and its tool calls, without holding a thread while it waits for them.
//!
//! The program runs as a suspendable run of the sandbox ([`Runtime::start`](ptc_lisp::Runtime::start)):
//! it evaluates until it calls agent tools, then suspends; the calls it waits for (one, or all
//! the items of a `pmap` at once) are awaited here ([`LiveTools`]), concurrently, on the async
//! runtime, each under the sandbox's tool timeout, and the run resumes with their answers. A
//! call that times out is cancelled: its future is dropped. When the run's own future is
//! dropped (the run's deadline passed), the tool calls in flight are dropped with it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use ptc_lisp::{Progress, ToolAnswer, ToolError, ToolRequest, ToolSpec, Tools, Value};

use crate::store::IdempotencyKey;
use crate::telemetry::micros;
use crate::tool::AsyncTool;

/// The sandbox's tools for `specs`: each call suspends the run, to be answered by its host.
pub(crate) fn awaited_tools<'s>(specs: impl IntoIterator<Item = &'s ToolSpec>) -> Tools {
    let mut tools = Tools::new();
    for spec in specs {
        tools.insert_awaited(spec.clone());
    }
    tools
}

/// One stretch of evaluation, in `span`, with a panic caught.
pub(crate) fn evaluating(
    span: &tracing::Span,
    f: impl FnOnce() -> Progress,
) -> Result<Progress, String> {
    span.in_scope(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)))
        .map_err(|payload| panic_text(payload.as_ref()))
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

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
    /// as [`IdempotencyKey::current`]; the answers are in the order of the calls.
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
        let span = tracing::info_span!(
            parent: &self.parent,
            "tool_call",
            otel.name = %format!("execute_tool {name}"),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = name.as_str(),
            tool = name.as_str(),
            args = args.len(),
            duration_us = tracing::field::Empty,
            outcome = tracing::field::Empty,
            error = tracing::field::Empty,
        );
        let started = Instant::now();
        let tool = self.tools.iter().find(|t| t.name() == name).cloned();
        let result = match tool {
            None => Err(ToolError::new(format!(
                "tool/{name} is not one of this agent's tools"
            ))),
            Some(tool) => {
                let call: Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + '_>> =
                    match key {
                        Some(key) => Box::pin(key.scope(tool.call(args))),
                        None => tool.call(args),
                    };
                let call = CatchPanic(call);
                let call = tracing::Instrument::instrument(call, span.clone());
                match self.timeout {
                    None => call.await,
                    Some(limit) => tokio::time::timeout(limit, call).await.unwrap_or_else(|_| {
                        Err(ToolError::new(format!(
                            "no answer within {} ms (the call was cancelled)",
                            limit.as_millis()
                        )))
                    }),
                }
            }
        };
        let duration = started.elapsed();
        span.record("duration_us", micros(duration));
        match &result {
            Ok(_) => span.record("outcome", "ok"),
            Err(e) => {
                span.record("outcome", "error");
                span.record("error", e.message.as_str())
            }
        };
        ToolAnswer::new(result, duration)
    }
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
            Err(payload) => Poll::Ready(Err(ToolError::new(format!(
                "the tool panicked: {}",
                panic_text(payload.as_ref())
            )))),
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

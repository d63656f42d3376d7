//! Calling host tools: the tool-call limit, what may leave the sandbox as an argument, the
//! record of each call, tools that panic or hang, and stopping a fiber at a call the host
//! answers.

use super::fiber::Resume;
use super::tools::{SyncTool, ToolCallRecord, ToolHandler, ToolOutcome, ToolRequest};
use super::{Ctx, EvalResult};
use crate::error::{Error, ErrorKind};
use crate::value::{Value, meter};
use arcstr::ArcStr;
use std::sync::Arc;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::time::{Duration, Instant};

impl Ctx {
    /// Call host tool `name` and record the call.
    pub fn call_tool(&mut self, name: &ArcStr, tool: &ToolHandler, args: Vec<Value>) -> EvalResult {
        let within_limit = match &self.tool_budget {
            // A parallel worker: its siblings draw from the same remaining calls.
            Some(budget) => budget
                .fetch_update(AtomicOrdering::SeqCst, AtomicOrdering::SeqCst, |n| {
                    n.checked_sub(1)
                })
                .is_ok(),
            None => self.tool_calls.len() < self.limits.max_tool_calls,
        };
        if !within_limit {
            let message = if self.tool_budget.is_some() {
                "tool call limit exceeded: the calls made before and inside pmap/pcalls used up \
                 the run's tool calls; batch the work or continue in the next turn"
                    .to_string()
            } else {
                format!(
                    "tool call limit exceeded: a program may call tools at most {} times; \
                     batch the work or continue in the next turn",
                    self.limits.max_tool_calls
                )
            };
            return Err(Error::new(ErrorKind::ToolCallLimit, message).into());
        }
        self.settle_meter()?;
        for arg in &args {
            self.check_export(arg, &format!("an argument of tool/{name}"))?;
        }
        let start = Instant::now();
        let (outcome, duration) = match tool {
            ToolHandler::Sync(tool) => {
                let outcome = invoke_tool(tool, &args, self.limits.tool_timeout);
                (outcome, start.elapsed())
            }
            ToolHandler::Awaited => match self.suspender {
                None => (
                    Err(format!(
                        "tool/{name} is answered by the host only in a run that can wait for \
                         it; the host must run the program with Runtime::start"
                    )),
                    Duration::ZERO,
                ),
                Some(suspender) => {
                    let request = ToolRequest {
                        name: name.to_string(),
                        args: args.clone(),
                    };
                    match suspender.suspend(vec![request]) {
                        Resume::Answers(mut answers) => match answers.pop() {
                            Some(answer) => (answer.result.map_err(|e| e.message), answer.duration),
                            None => (Err("the host gave no answer".to_string()), start.elapsed()),
                        },
                        Resume::Stop(error) => {
                            let waited = start.elapsed();
                            self.tool_time += waited;
                            meter::extend_deadline(waited);
                            self.tool_calls.push(ToolCallRecord {
                                name: name.to_string(),
                                args,
                                result: ToolOutcome::Error(format!(
                                    "the call was cancelled: {}",
                                    error.message
                                )),
                                duration_us: micros(waited),
                            });
                            return Err(error.into());
                        }
                    }
                }
            },
        };
        // Time waiting for a tool, suspended or not, is not the program's: it does not count
        // against the time limit.
        let waited = start.elapsed();
        self.tool_time += waited;
        meter::extend_deadline(waited);
        let duration_us = micros(duration);
        match outcome {
            Ok(value) => {
                // Recorded first: the call happened even if its result is too large to keep.
                self.tool_calls.push(ToolCallRecord {
                    name: name.to_string(),
                    args,
                    result: ToolOutcome::Ok(value.clone()),
                    duration_us,
                });
                self.charge(value.estimated_size())?;
                Ok(value)
            }
            Err(message) => {
                let err = Error::new(ErrorKind::Tool, format!("tool/{name} failed: {message}"));
                self.tool_calls.push(ToolCallRecord {
                    name: name.to_string(),
                    args,
                    result: ToolOutcome::Error(message),
                    duration_us,
                });
                Err(err.into())
            }
        }
    }
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

/// What a caught panic says: its message, or `unknown panic` when it carries none.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

/// The error of a tool call whose tool panicked with `payload`, for every kind of tool (a
/// synchronous one here, an awaited one in the agent).
pub fn tool_panicked(payload: &(dyn std::any::Any + Send)) -> String {
    format!("the tool panicked: {}", panic_text(payload))
}

/// Run a tool, turning panics and (when a timeout is set) hangs into error messages.
fn invoke_tool(
    tool: &Arc<dyn SyncTool>,
    args: &[Value],
    timeout: Option<Duration>,
) -> Result<Value, String> {
    fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
        tool_panicked(payload.as_ref())
    }
    let Some(timeout) = timeout else {
        return match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.call(args))) {
            Ok(result) => result.map_err(|e| e.message),
            Err(payload) => Err(panic_message(payload)),
        };
    };
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    let tool = tool.clone();
    let owned_args = args.to_vec();
    let spawned = std::thread::Builder::new()
        .name("ptc-tool".into())
        .spawn(move || {
            let result =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tool.call(&owned_args)));
            let _ = sender.send(result);
        });
    if let Err(e) = spawned {
        return Err(format!("could not start the tool call: {e}"));
    }
    match receiver.recv_timeout(timeout) {
        Ok(Ok(result)) => result.map_err(|e| e.message),
        Ok(Err(payload)) => Err(panic_message(payload)),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(format!(
            "no answer within {} ms (the call was abandoned)",
            timeout.as_millis()
        )),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            Err("the tool stopped without an answer".to_string())
        }
    }
}

//! Issue 7, fault injection: an agent run against a faulty model or faulty tools keeps every
//! turn and every tool call that happened, and its `Step` read back from JSON is identical.
//!
//! The faults: provider 500s (with and without recovery), timeouts, malformed JSON, empty
//! replies, replies without code, a signature mismatch on every turn, tools that fail, hang or
//! break inside `pmap` every other call, and `pmap` items over the memory and output limits
//! together. Most strike mid-run, after turns that called tools; one comes after a tool result
//! longer than a program may be and a value nested deeper than a program may be, which the step
//! must still read back.
//!
//! Every case is data ([`cases`]): the model (a `ScriptedLlm` script, or a local server answering
//! like the OpenAI or Anthropic API), the tools, and the exact run expected: how it ended, and for
//! each turn its program, result, prints, tool calls (results and failures), definitions, raw
//! reply and model requests. One runner ([`check`]) runs a full agent per case and checks that,
//! that the tools received exactly the calls the step records, and the JSON round trip.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pretty_assertions::assert_eq;
use ptc_agent::llm::{Anthropic, OpenAiCompatible};
use ptc_agent::{
    Agent, FnTool, LlmError, LlmResponse, NO_PROGRAM, RetryPolicy, ScriptedLlm, ToolError,
    async_tool, value_tool,
};
use ptc_lisp::pr_str;
use ptc_lisp::{Limits, ToolOutcome, Value};
use ptc_turn::{FailureKind, Step, StepOutcome, Turn, TurnResult};
use serde_json::{Value as Json, json};
use support::{Reply, TestServer};

const MISSION: &str = "Look up the users in data/ids and report their names";

/// Long enough that no answer arrives before a client gives up; the server task is dropped
/// with the test's runtime.
const HANG: Duration = Duration::from_secs(60);

/// The HTTP request timeout of the cases that time out. Local answers take a few milliseconds,
/// so even a loaded machine answers well within it.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(500);

/// The per-call tool timeout of the case whose tool hangs.
const TOOL_TIMEOUT: Duration = Duration::from_millis(500);

// ---------------------------------------------------------------------------------------------
// What a run is compared on
// ---------------------------------------------------------------------------------------------

/// A turn as the assertions see it: everything recorded except timings and the messages sent.
#[derive(Debug, Clone, PartialEq)]
struct TurnView {
    number: u32,
    program: String,
    /// `=> value` or `kind: message`.
    result: String,
    prints: Vec<String>,
    tool_calls: Vec<CallView>,
    /// The names defined after the turn, in definition order.
    memory: Vec<String>,
    raw_response: String,
    llm_requests: u32,
}

/// A tool call: name, arguments as a vector, `=> value` or `error: message`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct CallView {
    name: String,
    args: String,
    result: String,
}

fn view_turn(turn: &Turn) -> TurnView {
    TurnView {
        number: turn.number(),
        program: turn.program().to_string(),
        result: match turn.result() {
            TurnResult::Value(value) => format!("=> {}", pr_str(value)),
            TurnResult::Error(error) => format!("{}: {error}", error.kind),
        },
        prints: turn.prints().to_vec(),
        tool_calls: turn
            .tool_calls()
            .iter()
            .map(|call| CallView {
                name: call.name.clone(),
                args: pr_str(&Value::vector(call.args.iter().cloned())),
                result: match &call.result {
                    ToolOutcome::Ok(value) => format!("=> {}", pr_str(value)),
                    ToolOutcome::Error(message) => format!("error: {message}"),
                },
            })
            .collect(),
        memory: turn.memory().iter().map(|d| d.name.clone()).collect(),
        raw_response: turn.raw_response().to_string(),
        llm_requests: turn.usage().llm_requests,
    }
}

fn view_outcome(outcome: &StepOutcome) -> String {
    match outcome {
        StepOutcome::Returned { value } => returned(&pr_str(value)),
        StepOutcome::Failed {
            kind,
            reason,
            value,
            llm_errors,
        } => {
            let mut text = failed(*kind, reason);
            if let Some(value) = value {
                text.push_str(&format!(" | value {}", pr_str(value)));
            }
            // One error is the reason itself; several are listed (or, all alike, counted).
            match llm_errors.as_slice() {
                [] => {}
                [only] => assert_eq!(only, reason, "the one attempt's error is the reason"),
                [first, rest @ ..] if rest.iter().all(|e| e == first) => {
                    text.push_str(&format!(" | {} attempts, each: {first}", llm_errors.len()));
                }
                all => text.push_str(&format!(" | attempts: {}", all.join(" / "))),
            }
            text
        }
    }
}

fn returned(value: &str) -> String {
    format!("returned {value}")
}

fn failed(kind: FailureKind, reason: &str) -> String {
    format!("failed [{}] {reason}", kind.as_str())
}

// ---------------------------------------------------------------------------------------------
// Expected turns
// ---------------------------------------------------------------------------------------------

/// A model reply holding `program`.
fn code(program: &str) -> String {
    format!("Next step:\n```clojure\n{program}\n```")
}

/// A turn that ran `program`, taken from the reply `code(program)`, with one model request,
/// nothing printed, no tool calls and nothing defined (each part set by the methods below).
fn turn(program: &str) -> TurnView {
    TurnView {
        number: 0,
        program: program.to_string(),
        result: String::new(),
        prints: Vec::new(),
        tool_calls: Vec::new(),
        memory: Vec::new(),
        raw_response: code(program),
        llm_requests: 1,
    }
}

/// A turn whose reply `raw` held no program.
fn no_program(raw: &str) -> TurnView {
    TurnView {
        program: String::new(),
        raw_response: raw.to_string(),
        ..turn("").error(&format!("no_program: {NO_PROGRAM}"))
    }
}

impl TurnView {
    fn value(mut self, value: &str) -> TurnView {
        self.result = format!("=> {value}");
        self
    }

    /// `kind: message` as the turn error displays.
    fn error(mut self, error: &str) -> TurnView {
        self.result = error.to_string();
        self
    }

    fn prints(mut self, prints: &[&str]) -> TurnView {
        self.prints = prints.iter().map(|p| p.to_string()).collect();
        self
    }

    fn calls(mut self, calls: Vec<CallView>) -> TurnView {
        self.tool_calls = calls;
        self
    }

    fn memory(mut self, names: &[&str]) -> TurnView {
        self.memory = names.iter().map(|n| n.to_string()).collect();
        self
    }
}

fn ok(name: &str, args: &str, value: &str) -> CallView {
    CallView {
        name: name.into(),
        args: args.into(),
        result: format!("=> {value}"),
    }
}

fn err(name: &str, args: &str, message: &str) -> CallView {
    CallView {
        name: name.into(),
        args: args.into(),
        result: format!("error: {message}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum ToolKind {
    /// `(tool/lookup id)`: a user map; always works.
    Lookup,
    /// `(tool/flaky id)`: `{:id id :ok true}` on odd calls, fails on even ones.
    Flaky,
    /// `(tool/shard id)`: `(* 10 id)`, fails for even ids; for `pmap`, whose call order varies.
    Shard,
    /// `(tool/stall id)`: `id` on odd calls, hangs past the tool timeout on even ones.
    Stall,
    /// `(tool/bulk n)`: an export of `n` lines, longer than a program may be for large `n`.
    Bulk,
}

/// The calls the tools received, as `(name, args)`, in the order they arrived.
type CallLog = Arc<Mutex<Vec<(String, String)>>>;

fn note(log: &CallLog, name: &str, args: &[Value]) -> usize {
    let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
    log.push((
        name.to_string(),
        pr_str(&Value::vector(args.iter().cloned())),
    ));
    log.len()
}

fn int_arg(args: &[Value]) -> Result<i64, ToolError> {
    match args {
        [Value::Int(id)] => Ok(*id),
        _ => Err(ToolError::new("expected one integer id")),
    }
}

fn user(id: i64) -> Value {
    let name = match id {
        1 => "Ada",
        2 => "Grace \"Amazing\" Hopper",
        3 => "Zoë\nO'Neil",
        _ => "nobody",
    };
    Value::map([
        (Value::keyword("id"), Value::Int(id)),
        (Value::keyword("name"), Value::string(name)),
        (Value::keyword("score"), Value::Float(id as f64 * 0.1)),
    ])
}

const ADA: &str = "{:id 1, :name \"Ada\", :score 0.1}";
const GRACE: &str = "{:id 2, :name \"Grace \\\"Amazing\\\" Hopper\", :score 0.2}";
const ZOE: &str = "{:id 3, :name \"Zoë\\nO'Neil\", :score 0.30000000000000004}";

fn make_tool(kind: ToolKind, log: &CallLog) -> FnTool {
    let log = log.clone();
    match kind {
        ToolKind::Lookup => value_tool("lookup", "The user with this id", move |args| {
            note(&log, "lookup", args);
            int_arg(args).map(user)
        })
        .with_signature("(id :int) -> {id :int, name :string, score :float}"),
        ToolKind::Flaky => {
            let calls = AtomicUsize::new(0);
            value_tool(
                "flaky",
                "A status check that fails every other call",
                move |args| {
                    note(&log, "flaky", args);
                    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                    let id = int_arg(args)?;
                    if n.is_multiple_of(2) {
                        return Err(ToolError::new(format!("service unavailable (call {n})")));
                    }
                    Ok(Value::map([
                        (Value::keyword("id"), Value::Int(id)),
                        (Value::keyword("ok"), Value::Bool(true)),
                    ]))
                },
            )
            .with_signature("(id :int) -> {id :int, ok :bool}")
        }
        ToolKind::Shard => value_tool("shard", "Reads one shard", move |args| {
            note(&log, "shard", args);
            let id = int_arg(args)?;
            if id % 2 == 0 {
                Err(ToolError::new(format!("shard {id} is down")))
            } else {
                Ok(Value::Int(id * 10))
            }
        })
        .with_signature("(id :int) -> :int"),
        ToolKind::Stall => {
            let calls = Arc::new(AtomicUsize::new(0));
            async_tool("stall", "Answers every other call", move |id: i64| {
                note(&log, "stall", &[Value::Int(id)]);
                let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    if n.is_multiple_of(2) {
                        // Cancelled at the tool timeout: the sleep is dropped.
                        tokio::time::sleep(HANG).await;
                    }
                    Ok::<_, ToolError>(id)
                }
            })
            .with_signature("(id :int) -> :int")
        }
        ToolKind::Bulk => value_tool("bulk", "An export of n lines", move |args| {
            note(&log, "bulk", args);
            let n = int_arg(args)?;
            Ok(Value::string(export(n)))
        })
        .with_signature("(n :int) -> :string"),
    }
}

/// What `(tool/bulk n)` returns: `n` lines of 32 bytes.
fn export(n: i64) -> String {
    (0..n)
        .map(|i| format!("{i:>8},\"user {i:>8}\",active\n"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

enum Model {
    /// Canned replies and failures.
    Scripted(Vec<Result<LlmResponse, LlmError>>),
    /// `OpenAiCompatible` (model `gpt-4o`) against a local server, with retries.
    OpenAi(Vec<Reply>, u32),
    /// `Anthropic` (model `claude-sonnet-4-5`) against a local server, with retries.
    Anthropic(Vec<Reply>, u32),
}

fn script(replies: Vec<Result<String, LlmError>>) -> Model {
    Model::Scripted(
        replies
            .into_iter()
            .map(|reply| reply.map(LlmResponse::text))
            .collect(),
    )
}

fn http_error(status: u16, message: &str) -> LlmError {
    LlmError::Http {
        provider: "test".into(),
        status,
        message: message.into(),
    }
}

/// A Chat Completions answer; `None` is a `null` content.
fn openai(content: Option<&str>) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "chatcmpl-7",
            "object": "chat.completion",
            "model": "gpt-4o-2024-08-06",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop"
            }],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
        }),
    )
}

/// A Messages API answer with these content blocks.
fn anthropic_blocks(content: Json) -> Reply {
    Reply::json(
        200,
        &json!({
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 110, "output_tokens": 25}
        }),
    )
}

fn anthropic(text: &str) -> Reply {
    anthropic_blocks(json!([{"type": "text", "text": text}]))
}

fn server_error(status: u16) -> Reply {
    Reply::json(
        status,
        &json!({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}),
    )
}

fn hang() -> Reply {
    openai(Some("too late")).with_delay(HANG)
}

/// Retries without real waiting.
fn quick_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(10),
        multiplier: 2.0,
        jitter: false,
    }
}

// ---------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------

struct Case {
    name: &'static str,
    model: Model,
    tools: Vec<ToolKind>,
    signature: Option<&'static str>,
    max_turns: u32,
    /// Retries of the agent's own policy (the HTTP providers retry on their own).
    agent_retries: u32,
    tool_timeout: Option<Duration>,
    /// The sandbox's memory budget, when not the default.
    max_memory_bytes: Option<usize>,
    /// The sandbox's output budget, when not the default.
    max_output_bytes: Option<usize>,
    /// [`view_outcome`] of the step; `{url}` stands for the local server's address.
    outcome: String,
    /// The turns, numbered in order.
    turns: Vec<TurnView>,
    /// Model calls the step counts (one per `complete`, agent retries included).
    llm_requests: u32,
    /// Requests the model received: script requests, or HTTP requests with provider retries.
    model_requests: usize,
}

impl Default for Case {
    fn default() -> Case {
        Case {
            name: "",
            model: Model::Scripted(Vec::new()),
            tools: Vec::new(),
            signature: None,
            max_turns: 5,
            agent_retries: 0,
            tool_timeout: None,
            max_memory_bytes: None,
            max_output_bytes: None,
            outcome: String::new(),
            turns: Vec::new(),
            llm_requests: 0,
            model_requests: 0,
        }
    }
}

const LOOKUP_ADA: &str = "(def ada (tool/lookup 1))\n(println \"found\" (:name ada))";
const LOOKUP_GRACE: &str = "(def grace (tool/lookup 2))\n[(:name ada) (:name grace)]";
const RETURN_NAMES: &str = "(return [(:name ada) (:name grace)])";
const NAMES: &str = "[\"Ada\" \"Grace \\\"Amazing\\\" Hopper\"]";

/// The two turns many cases start with: two successful lookups.
fn two_lookups() -> Vec<TurnView> {
    vec![
        turn(LOOKUP_ADA)
            .value("nil")
            .prints(&["found Ada"])
            .calls(vec![ok("lookup", "[1]", ADA)])
            .memory(&["ada"]),
        turn(LOOKUP_GRACE)
            .value(NAMES)
            .calls(vec![ok("lookup", "[2]", GRACE)])
            .memory(&["ada", "grace"]),
    ]
}

fn cases() -> Vec<Case> {
    use FailureKind::*;
    use ToolKind::*;
    let openai_500 = "openai-compatible:{url}/v1:gpt-4o answered HTTP 500: The server had an \
                      error while processing your request.";
    let flaky_loop = "(def results (mapv (fn [id] (try (tool/flaky id) (catch Exception e \
                      {:id id :error (ex-message e)}))) [3 4 5 6]))\n\
                      (println (count (filter :ok results)) \"of\" (count results))";
    let flaky_results = "[{:id 3, :ok true} \
                         {:id 4, :error \"tool/flaky failed: service unavailable (call 4)\"} \
                         {:id 5, :ok true} \
                         {:id 6, :error \"tool/flaky failed: service unavailable (call 6)\"}]";
    let flaky_calls = vec![
        ok("flaky", "[3]", "{:id 3, :ok true}"),
        err("flaky", "[4]", "service unavailable (call 4)"),
        ok("flaky", "[5]", "{:id 5, :ok true}"),
        err("flaky", "[6]", "service unavailable (call 6)"),
    ];
    let mismatch = |returned: &str, problems: &str| {
        format!(
            "signature_mismatch: the returned value does not match the expected output.\n\
             Expected: {{names [:string], total :int}}\nReturned: {returned}\n{problems}\n\
             Fix the value and call (return ...) again."
        )
    };
    vec![
        // --- Provider 500s -----------------------------------------------------------------
        Case {
            name: "provider 500s after two turns with tool calls exhaust the retries",
            model: Model::OpenAi(
                vec![
                    openai(Some(&code(LOOKUP_ADA))),
                    openai(Some(&code(LOOKUP_GRACE))),
                    server_error(500),
                    server_error(500),
                    server_error(500),
                ],
                2,
            ),
            tools: vec![Lookup],
            outcome: failed(
                LlmError,
                &format!(
                    "gave up after 3 attempts, the first and the last failing alike: \
                     {openai_500} | 3 attempts, each: {openai_500}"
                ),
            ),
            turns: two_lookups(),
            llm_requests: 5,
            model_requests: 5,
            ..Case::default()
        },
        Case {
            name: "a 500 without retries ends the run after a flaky tool failed",
            model: Model::OpenAi(
                vec![
                    openai(Some(&code("(def first-try (tool/flaky 1))"))),
                    openai(Some(&code("(def second-try (tool/flaky 2))"))),
                    server_error(500),
                ],
                0,
            ),
            tools: vec![Flaky],
            outcome: failed(LlmError, openai_500),
            turns: vec![
                turn("(def first-try (tool/flaky 1))")
                    .value("#'user/first-try")
                    .calls(vec![ok("flaky", "[1]", "{:id 1, :ok true}")])
                    .memory(&["first-try"]),
                turn("(def second-try (tool/flaky 2))")
                    .error("tool: 1:17: tool/flaky failed: service unavailable (call 2)")
                    .calls(vec![err("flaky", "[2]", "service unavailable (call 2)")])
                    .memory(&["first-try"]),
            ],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        Case {
            name: "500 and 529 answers between turns are retried and the run returns",
            model: Model::Anthropic(
                vec![
                    server_error(500),
                    anthropic(&code(LOOKUP_ADA)),
                    server_error(529),
                    server_error(503),
                    anthropic(&code(LOOKUP_GRACE)),
                    anthropic(&code(RETURN_NAMES)),
                ],
                3,
            ),
            tools: vec![Lookup],
            outcome: returned(NAMES),
            turns: {
                let mut turns = two_lookups();
                turns[0].llm_requests = 2;
                turns[1].llm_requests = 3;
                turns.push(turn(RETURN_NAMES).value(NAMES).memory(&["ada", "grace"]));
                turns
            },
            llm_requests: 6,
            model_requests: 6,
            ..Case::default()
        },
        Case {
            name: "scripted 500s are retried by the agent and counted on their turn",
            model: script(vec![
                Ok(code(LOOKUP_ADA)),
                Err(http_error(500, "internal error")),
                Err(http_error(502, "bad gateway")),
                Ok(code(LOOKUP_GRACE)),
                Ok(code(RETURN_NAMES)),
            ]),
            tools: vec![Lookup],
            agent_retries: 2,
            outcome: returned(NAMES),
            turns: {
                let mut turns = two_lookups();
                turns[1].llm_requests = 3;
                turns.push(turn(RETURN_NAMES).value(NAMES).memory(&["ada", "grace"]));
                turns
            },
            llm_requests: 5,
            model_requests: 5,
            ..Case::default()
        },
        Case {
            name: "scripted 500s mid-run exhaust the agent's retries",
            model: script(vec![
                Ok(code(LOOKUP_ADA)),
                Ok(code(LOOKUP_GRACE)),
                Err(http_error(500, "internal error")),
                Err(http_error(500, "internal error")),
                Err(http_error(500, "internal error")),
            ]),
            tools: vec![Lookup],
            agent_retries: 2,
            outcome: failed(
                LlmError,
                "gave up after 3 attempts, the first and the last failing alike: test answered \
                 HTTP 500: internal error | 3 attempts, each: test answered HTTP 500: internal \
                 error",
            ),
            turns: two_lookups(),
            llm_requests: 5,
            model_requests: 5,
            ..Case::default()
        },
        Case {
            name: "a failure before the first turn leaves an empty step",
            model: Model::OpenAi(
                vec![Reply::json(
                    401,
                    &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
                )],
                3,
            ),
            tools: vec![Lookup],
            outcome: failed(
                LlmError,
                "openai-compatible:{url}/v1:gpt-4o answered HTTP 401: Incorrect API key \
                 provided (check the API key and its permissions)",
            ),
            llm_requests: 1,
            model_requests: 1,
            ..Case::default()
        },
        Case {
            name: "a rate limit with Retry-After is waited out",
            model: Model::OpenAi(
                vec![
                    openai(Some(&code(LOOKUP_ADA))),
                    Reply::json(429, &json!({"error": {"message": "Rate limit reached"}}))
                        .with_header("retry-after", "0"),
                    openai(Some(&code("(return (:name ada))"))),
                ],
                1,
            ),
            tools: vec![Lookup],
            outcome: returned("\"Ada\""),
            turns: vec![
                two_lookups().remove(0),
                TurnView {
                    llm_requests: 2,
                    ..turn("(return (:name ada))")
                        .value("\"Ada\"")
                        .memory(&["ada"])
                },
            ],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        // --- Timeouts ----------------------------------------------------------------------
        Case {
            name: "requests that time out after a turn with tool calls exhaust the retries",
            model: Model::OpenAi(vec![openai(Some(&code(LOOKUP_ADA))), hang(), hang()], 1),
            tools: vec![Lookup],
            outcome: failed(
                LlmError,
                "gave up after 2 attempts, the first and the last failing alike: \
                 openai-compatible:{url}/v1:gpt-4o did not answer within 0.5 s; raise the \
                 request timeout if the model is slow | 2 attempts, each: \
                 openai-compatible:{url}/v1:gpt-4o did not answer within 0.5 s; raise the \
                 request timeout if the model is slow",
            ),
            turns: vec![two_lookups().remove(0)],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        Case {
            name: "a request that times out is retried and the run returns",
            model: Model::Anthropic(
                vec![
                    anthropic(&code(LOOKUP_ADA)),
                    anthropic("late").with_delay(HANG),
                    anthropic(&code("(return (:name ada))")),
                ],
                2,
            ),
            tools: vec![Lookup],
            outcome: returned("\"Ada\""),
            turns: vec![
                two_lookups().remove(0),
                TurnView {
                    llm_requests: 2,
                    ..turn("(return (:name ada))")
                        .value("\"Ada\"")
                        .memory(&["ada"])
                },
            ],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        // --- Malformed answers -------------------------------------------------------------
        Case {
            name: "malformed JSON mid-run fails the run at once",
            model: Model::OpenAi(
                vec![
                    openai(Some(&code(LOOKUP_ADA))),
                    openai(Some(&code(LOOKUP_GRACE))),
                    Reply::raw(
                        200,
                        "{\"choices\": [{\"message\": {\"role\": \"assistant\", \"content\": \"(ret",
                    ),
                ],
                3,
            ),
            tools: vec![Lookup],
            outcome: failed(
                LlmError,
                "openai-compatible:{url}/v1:gpt-4o sent a response that could not be read: the \
                 body is not valid JSON (EOF while parsing a string at line 1 column 63); it \
                 starts with: {\"choices\": [{\"message\": {\"role\": \"assistant\", \
                 \"content\": \"(ret",
            ),
            turns: two_lookups(),
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        Case {
            name: "an empty body mid-run fails the run",
            model: Model::OpenAi(
                vec![openai(Some(&code(LOOKUP_ADA))), Reply::raw(200, "")],
                3,
            ),
            tools: vec![Lookup],
            outcome: failed(
                LlmError,
                "openai-compatible:{url}/v1:gpt-4o sent a response that could not be read: the \
                 body is not valid JSON (EOF while parsing a value at line 1 column 0); it \
                 starts with: ",
            ),
            turns: vec![two_lookups().remove(0)],
            llm_requests: 2,
            model_requests: 2,
            ..Case::default()
        },
        Case {
            name: "JSON without the reply mid-run fails the run",
            model: Model::Anthropic(
                vec![
                    anthropic(&code(LOOKUP_ADA)),
                    Reply::json(200, &json!({"type": "message", "role": "assistant"})),
                ],
                3,
            ),
            tools: vec![Lookup],
            outcome: failed(
                LlmError,
                "anthropic:claude-sonnet-4-5 sent a response that could not be read: the \
                 response has no `content`",
            ),
            turns: vec![two_lookups().remove(0)],
            llm_requests: 2,
            model_requests: 2,
            ..Case::default()
        },
        Case {
            name: "choices of the wrong shape mid-run fail the run",
            model: Model::OpenAi(
                vec![
                    openai(Some(&code(LOOKUP_ADA))),
                    Reply::json(
                        200,
                        &json!({"choices": [{"message": {"role": "assistant", "content": 42}}]}),
                    ),
                ],
                3,
            ),
            tools: vec![Lookup],
            outcome: failed(
                LlmError,
                "openai-compatible:{url}/v1:gpt-4o sent a response that could not be read: \
                 `choices[0].message` is malformed: message: the field `content` must be a \
                 string, null or an array of content parts",
            ),
            turns: vec![two_lookups().remove(0)],
            llm_requests: 2,
            model_requests: 2,
            ..Case::default()
        },
        // --- Empty replies and replies without code ----------------------------------------
        Case {
            name: "empty and null replies are turns without a program",
            model: Model::OpenAi(
                vec![
                    openai(Some(&code(LOOKUP_ADA))),
                    openai(Some("")),
                    openai(None),
                    openai(Some(&code("(return (:name ada))"))),
                ],
                0,
            ),
            tools: vec![Lookup],
            outcome: returned("\"Ada\""),
            turns: vec![
                two_lookups().remove(0),
                no_program("").memory(&["ada"]),
                no_program("").memory(&["ada"]),
                turn("(return (:name ada))")
                    .value("\"Ada\"")
                    .memory(&["ada"]),
            ],
            llm_requests: 4,
            model_requests: 4,
            ..Case::default()
        },
        Case {
            name: "an empty content list is a turn without a program",
            model: Model::Anthropic(
                vec![
                    anthropic(&code(LOOKUP_ADA)),
                    anthropic_blocks(json!([])),
                    anthropic(&code("(return (:name ada))")),
                ],
                0,
            ),
            tools: vec![Lookup],
            outcome: returned("\"Ada\""),
            turns: vec![
                two_lookups().remove(0),
                no_program("").memory(&["ada"]),
                turn("(return (:name ada))")
                    .value("\"Ada\"")
                    .memory(&["ada"]),
            ],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        Case {
            name: "replies without code until the turns run out",
            model: script(vec![
                Ok(code(LOOKUP_ADA)),
                Ok("I would need to see the users first.".into()),
                Ok("```python\nprint(ada)\n```".into()),
                Ok("```clojure\n\n```".into()),
            ]),
            tools: vec![Lookup],
            max_turns: 4,
            outcome: failed(
                MaxTurnsExceeded,
                "no (return ...) or (fail ...) after 4 turns",
            ),
            turns: vec![
                two_lookups().remove(0),
                no_program("I would need to see the users first.").memory(&["ada"]),
                no_program("```python\nprint(ada)\n```").memory(&["ada"]),
                no_program("```clojure\n\n```").memory(&["ada"]),
            ],
            llm_requests: 4,
            model_requests: 4,
            ..Case::default()
        },
        Case {
            name: "a script that runs out mid-run fails the run",
            model: script(vec![
                Ok(code(LOOKUP_ADA)),
                Ok("Let me think about it.".into()),
            ]),
            tools: vec![Lookup],
            outcome: failed(
                LlmError,
                "the scripted model has no reply left after serving 2; add more replies, or \
                 make the run need fewer model calls",
            ),
            turns: vec![
                two_lookups().remove(0),
                no_program("Let me think about it.").memory(&["ada"]),
            ],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        // --- Signature mismatches ----------------------------------------------------------
        Case {
            name: "a signature mismatch on every turn",
            model: script(vec![
                Ok(code(
                    "(def users (mapv #(tool/lookup %) data/ids))\n\
                     (return {:names (mapv :name users)})",
                )),
                Ok(code(
                    "(let [users (mapv #(tool/lookup %) [1 2])]\n  \
                     (return {:names (mapv :name users) :total \"2\"}))",
                )),
                Ok(code("(return [\"Ada\"])")),
            ]),
            tools: vec![Lookup],
            signature: Some("{names [:string], total :int}"),
            max_turns: 3,
            outcome: failed(
                MaxTurnsExceeded,
                "no (return ...) or (fail ...) after 3 turns",
            ),
            turns: vec![
                turn(
                    "(def users (mapv #(tool/lookup %) data/ids))\n\
                     (return {:names (mapv :name users)})",
                )
                .error(&mismatch(
                    "{:names [\"Ada\" \"Grace \\\"Amazing\\\" Hopper\" \"Zoë\\nO'Neil\"]}",
                    "- total: expected int, got nothing (the field is missing)",
                ))
                .calls(vec![
                    ok("lookup", "[1]", ADA),
                    ok("lookup", "[2]", GRACE),
                    ok("lookup", "[3]", ZOE),
                ]),
                turn(
                    "(let [users (mapv #(tool/lookup %) [1 2])]\n  \
                     (return {:names (mapv :name users) :total \"2\"}))",
                )
                .error(&mismatch(
                    &format!("{{:names {NAMES} :total \"2\"}}"),
                    "- total: expected int, got string \"2\"",
                ))
                .calls(vec![ok("lookup", "[1]", ADA), ok("lookup", "[2]", GRACE)]),
                turn("(return [\"Ada\"])").error(&mismatch(
                    "[\"Ada\"]",
                    "- the value: expected map, got vector [\"Ada\"]",
                )),
            ],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        Case {
            name: "a single-shot signature mismatch after tool calls",
            model: script(vec![Ok(code("(mapv :name (map #(tool/lookup %) [3 1]))"))]),
            tools: vec![Lookup],
            signature: Some(":int"),
            max_turns: 1,
            outcome: failed(
                SignatureMismatch,
                "the returned value does not match the expected output.\nExpected: :int\n\
                 Returned: [\"Zoë\\nO'Neil\" \"Ada\"]\n\
                 - the value: expected int, got vector [\"Zoë\\nO'Neil\" \"Ada\"]\n\
                 Fix the value and call (return ...) again.",
            ),
            turns: vec![
                turn("(mapv :name (map #(tool/lookup %) [3 1]))")
                    .error(
                        "signature_mismatch: the returned value does not match the expected \
                         output.\nExpected: :int\nReturned: [\"Zoë\\nO'Neil\" \"Ada\"]\n\
                         - the value: expected int, got vector [\"Zoë\\nO'Neil\" \"Ada\"]\n\
                         Fix the value and call (return ...) again.",
                    )
                    .calls(vec![ok("lookup", "[3]", ZOE), ok("lookup", "[1]", ADA)]),
            ],
            llm_requests: 1,
            model_requests: 1,
            ..Case::default()
        },
        // --- Tools that fail intermittently ------------------------------------------------
        Case {
            name: "a tool that fails every other call",
            model: script(vec![
                Ok(code("(def first-try (tool/flaky 1))")),
                Ok(code("(def second-try (tool/flaky 2))")),
                Ok(code(flaky_loop)),
                Ok(code("(return {:first first-try :results results})")),
            ]),
            tools: vec![Flaky],
            outcome: returned(&format!(
                "{{:first {{:id 1, :ok true}}, :results {flaky_results}}}"
            )),
            turns: vec![
                turn("(def first-try (tool/flaky 1))")
                    .value("#'user/first-try")
                    .calls(vec![ok("flaky", "[1]", "{:id 1, :ok true}")])
                    .memory(&["first-try"]),
                turn("(def second-try (tool/flaky 2))")
                    .error("tool: 1:17: tool/flaky failed: service unavailable (call 2)")
                    .calls(vec![err("flaky", "[2]", "service unavailable (call 2)")])
                    .memory(&["first-try"]),
                turn(flaky_loop)
                    .value("nil")
                    .prints(&["2 of 4"])
                    .calls(flaky_calls.clone())
                    .memory(&["first-try", "results"]),
                turn("(return {:first first-try :results results})")
                    .value(&format!(
                        "{{:first {{:id 1, :ok true}}, :results {flaky_results}}}"
                    ))
                    .memory(&["first-try", "results"]),
            ],
            llm_requests: 4,
            model_requests: 4,
            ..Case::default()
        },
        Case {
            name: "a flaky tool, then the model gives up with fail",
            model: script(vec![
                Ok(code(flaky_loop)),
                Ok(code(
                    "(fail {:reason \"the status service is unreliable\" :failures 2})",
                )),
            ]),
            tools: vec![Flaky],
            outcome: failed(
                Failed,
                "{:reason the status service is unreliable, :failures 2} | value {:reason \
                 \"the status service is unreliable\", :failures 2}",
            ),
            turns: vec![
                turn(flaky_loop)
                    .value("nil")
                    .prints(&["2 of 4"])
                    .calls(vec![
                        ok("flaky", "[3]", "{:id 3, :ok true}"),
                        err("flaky", "[4]", "service unavailable (call 2)"),
                        ok("flaky", "[5]", "{:id 5, :ok true}"),
                        err("flaky", "[6]", "service unavailable (call 4)"),
                    ])
                    .memory(&["results"]),
                turn("(fail {:reason \"the status service is unreliable\" :failures 2})")
                    .error(
                        "failed: the program called (fail ...): {:reason the status service is \
                         unreliable, :failures 2}",
                    )
                    .memory(&["results"]),
            ],
            llm_requests: 2,
            model_requests: 2,
            ..Case::default()
        },
        Case {
            name: "pmap over a tool that fails for some items keeps every call",
            model: script(vec![
                Ok(code("(pmap #(tool/shard %) [1 2 3 4])")),
                Ok(code(
                    "(return (pmap #(try (tool/shard %) (catch Exception e :down)) [4 3 2 1]))",
                )),
            ]),
            tools: vec![Shard],
            outcome: returned("(:down 30 :down 10)"),
            turns: vec![
                turn("(pmap #(tool/shard %) [1 2 3 4])")
                    .error("tool: 1:7: tool/shard failed: shard 2 is down")
                    .calls(vec![
                        ok("shard", "[1]", "10"),
                        err("shard", "[2]", "shard 2 is down"),
                        ok("shard", "[3]", "30"),
                        err("shard", "[4]", "shard 4 is down"),
                    ]),
                turn("(return (pmap #(try (tool/shard %) (catch Exception e :down)) [4 3 2 1]))")
                    .value("(:down 30 :down 10)")
                    .calls(vec![
                        err("shard", "[4]", "shard 4 is down"),
                        ok("shard", "[3]", "30"),
                        err("shard", "[2]", "shard 2 is down"),
                        ok("shard", "[1]", "10"),
                    ]),
            ],
            llm_requests: 2,
            model_requests: 2,
            ..Case::default()
        },
        Case {
            name: "pmap items over the memory and output limits keep every call",
            model: script(vec![
                Ok(code(PMAP_OVER_MEMORY)),
                Ok(code(PMAP_OVER_OUTPUT)),
                Ok(code("(return :done)")),
            ]),
            tools: vec![Bulk],
            max_memory_bytes: Some(100_000),
            max_output_bytes: Some(40),
            outcome: returned(":done"),
            turns: vec![
                turn(PMAP_OVER_MEMORY)
                    .error(&format!("memory_limit: 1:7: {MEMORY_LIMIT}"))
                    .calls(vec![
                        ok("bulk", "[1]", &pr_str(&Value::string(export(1)))),
                        ok("bulk", "[2000]", &pr_str(&Value::string(export(2000)))),
                        ok("bulk", "[3]", &pr_str(&Value::string(export(3)))),
                        ok("bulk", "[2000]", &pr_str(&Value::string(export(2000)))),
                        ok("bulk", "[4]", &pr_str(&Value::string(export(4)))),
                    ]),
                turn(PMAP_OVER_OUTPUT)
                    .error(&format!("output_limit: 1:1: {OUTPUT_LIMIT}"))
                    .prints(&["reading 1 line", "reading 2 lines"])
                    .calls(
                        (1..=4)
                            .map(|n| {
                                let args = format!("[{n}]");
                                ok("bulk", &args, &pr_str(&Value::string(export(n))))
                            })
                            .collect(),
                    ),
                turn("(return :done)").value(":done"),
            ],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
        Case {
            name: "a tool that hangs every other call, then a provider 500",
            model: Model::OpenAi(
                vec![
                    openai(Some(&code("(def a (tool/stall 1))"))),
                    openai(Some(&code("(tool/stall 2)"))),
                    openai(Some(&code("(def b [a (tool/stall 3)])"))),
                    server_error(500),
                ],
                0,
            ),
            tools: vec![Stall],
            tool_timeout: Some(TOOL_TIMEOUT),
            outcome: failed(LlmError, openai_500),
            turns: vec![
                turn("(def a (tool/stall 1))")
                    .value("#'user/a")
                    .calls(vec![ok("stall", "[1]", "1")])
                    .memory(&["a"]),
                turn("(tool/stall 2)")
                    .error(
                        "tool: 1:1: tool/stall failed: no answer within 500 ms (the call was \
                         cancelled)",
                    )
                    .calls(vec![err(
                        "stall",
                        "[2]",
                        "no answer within 500 ms (the call was cancelled)",
                    )])
                    .memory(&["a"]),
                turn("(def b [a (tool/stall 3)])")
                    .value("#'user/b")
                    .calls(vec![ok("stall", "[3]", "3")])
                    .memory(&["a", "b"]),
            ],
            llm_requests: 4,
            model_requests: 4,
            ..Case::default()
        },
        // --- Large and deep values before a fault ------------------------------------------
        Case {
            name: "a result larger than a program and a deeply nested value, then a 500",
            model: Model::Anthropic(
                vec![
                    anthropic(&code(BULK)),
                    anthropic(&code(DEEP)),
                    server_error(500),
                ],
                0,
            ),
            tools: vec![Bulk],
            outcome: failed(
                LlmError,
                "anthropic:claude-sonnet-4-5 answered HTTP 500: The server had an error while \
                 processing your request.",
            ),
            turns: vec![
                turn(BULK)
                    .value("nil")
                    .prints(&["1056000 bytes"])
                    .calls(vec![ok(
                        "bulk",
                        "[33000]",
                        &pr_str(&Value::string(export(33_000))),
                    )])
                    .memory(&["export"]),
                turn(DEEP)
                    .value(&format!("{}{}", "[".repeat(400), "]".repeat(400)))
                    .memory(&["export", "deep"]),
            ],
            llm_requests: 3,
            model_requests: 3,
            ..Case::default()
        },
    ]
}

/// Items 1 and 3 each receive more than their share of a 100,000-byte budget, and more than
/// the whole budget together.
const PMAP_OVER_MEMORY: &str = "(pmap #(tool/bulk %) [1 2000 3 2000 4])";
/// Each item's print fits in 40 bytes; together they do not.
const PMAP_OVER_OUTPUT: &str = "(pmap (fn [n] (println \"reading\" n (if (= n 1) \"line\" \"lines\")) (tool/bulk n)) [1 2 3 4])";
/// The error is item 1's, the first to fail: over its share of what the budget had left.
const MEMORY_LIMIT: &str = "memory limit exceeded: the values built by this program exceed \
                            19984 bytes; work on smaller pieces (take, filter first) instead of \
                            materializing everything";
const OUTPUT_LIMIT: &str = "output limit exceeded: the program printed more than 40 bytes; print \
                            samples or counts instead of whole collections";

/// Prints over 1 MiB: more than a program may be.
const BULK: &str = "(def export (tool/bulk 33000))\n(println (count export) \"bytes\")";
/// Nests deeper than a program may.
const DEEP: &str = "(def deep (reduce (fn [acc _] [acc]) [] (range 399)))\ndeep";

// ---------------------------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------------------------

/// What the model received, to count its requests after the run.
enum Received {
    Script(ScriptedLlm),
    Server(TestServer),
}

impl Received {
    fn count(&self) -> usize {
        match self {
            Received::Script(llm) => llm.requests().len(),
            Received::Server(server) => server.requests().len(),
        }
    }

    fn url(&self) -> &str {
        match self {
            Received::Script(_) => "",
            Received::Server(server) => &server.base_url,
        }
    }
}

/// Runs a full agent on `case` and checks the step it returns.
async fn check(case: Case) {
    let name = case.name;
    let log = CallLog::default();
    let mut builder = Agent::builder(MISSION)
        .data(&json!({"ids": [1, 2, 3], "team": "Zoë's \"crew\""}))
        .max_turns(case.max_turns)
        .retry_policy(RetryPolicy {
            initial_backoff: Duration::ZERO,
            jitter: false,
            ..quick_retries(case.agent_retries)
        });
    let received = match case.model {
        Model::Scripted(replies) => {
            let llm = ScriptedLlm::from_results(replies);
            builder = builder.llm(llm.clone());
            Received::Script(llm)
        }
        Model::OpenAi(replies, retries) => {
            let server = TestServer::start(replies).await;
            let llm = OpenAiCompatible::new(format!("{}/v1", server.base_url), "gpt-4o")
                .expect("model")
                .with_timeout(REQUEST_TIMEOUT)
                .with_retry_policy(quick_retries(retries));
            builder = builder.llm(llm);
            Received::Server(server)
        }
        Model::Anthropic(replies, retries) => {
            let server = TestServer::start(replies).await;
            let llm = Anthropic::new("claude-sonnet-4-5", "sk-ant-test")
                .expect("model")
                .with_base_url(server.base_url.clone())
                .expect("base url")
                .with_timeout(REQUEST_TIMEOUT)
                .with_retry_policy(quick_retries(retries));
            builder = builder.llm(llm);
            Received::Server(server)
        }
    };
    for kind in &case.tools {
        builder = builder.tool(make_tool(*kind, &log));
    }
    if let Some(signature) = case.signature {
        builder = builder.signature(signature);
    }
    let mut limits = Limits::default();
    if let Some(timeout) = case.tool_timeout {
        limits.tool_timeout = Some(timeout);
    }
    if let Some(bytes) = case.max_memory_bytes {
        limits.max_memory_bytes = bytes;
    }
    if let Some(bytes) = case.max_output_bytes {
        limits.max_output_bytes = bytes;
    }
    builder = builder.limits(limits);
    let step = builder
        .build()
        .expect("a valid agent")
        .run()
        .await
        .expect("the run starts");

    assert_eq!(
        view_outcome(&step.outcome),
        case.outcome.replace("{url}", received.url()),
        "{name}: the outcome"
    );
    let expected: Vec<TurnView> = case
        .turns
        .into_iter()
        .zip(1..)
        .map(|(turn, number)| TurnView { number, ..turn })
        .collect();
    let turns: Vec<TurnView> = step.turns.iter().map(view_turn).collect();
    assert_eq!(turns, expected, "{name}: the turns");
    assert_eq!(
        (step.usage.llm_requests, received.count()),
        (case.llm_requests, case.model_requests),
        "{name}: model calls counted by the step, and received by the model"
    );

    // Nothing lost: the tools received exactly the calls the step records.
    let mut recorded: Vec<(String, String)> = turns
        .iter()
        .flat_map(|t| &t.tool_calls)
        .map(|call| (call.name.clone(), call.args.clone()))
        .collect();
    let mut received_calls = log.lock().unwrap_or_else(PoisonError::into_inner).clone();
    recorded.sort();
    received_calls.sort();
    assert_eq!(recorded, received_calls, "{name}: the tool calls");

    assert_round_trip(name, &step);
}

/// The step's JSON reads back as an equal step that writes the same JSON again.
fn assert_round_trip(name: &str, step: &Step) {
    for json in [
        serde_json::to_string(step).expect("the step serializes"),
        serde_json::to_string_pretty(step).expect("the step serializes"),
    ] {
        let back: Step = serde_json::from_str(&json)
            .unwrap_or_else(|e| panic!("{name}: the step's JSON does not read back: {e}"));
        assert!(back == *step, "{name}: the step read back differs");
        let again = if json.contains('\n') {
            serde_json::to_string_pretty(&back)
        } else {
            serde_json::to_string(&back)
        };
        assert_eq!(
            again.expect("serializes"),
            json,
            "{name}: the step writes different JSON after a round trip"
        );
    }
}

#[tokio::test]
async fn every_fault_keeps_every_turn_and_tool_call_and_the_step_round_trips() {
    let cases = cases();
    let mut names: Vec<&str> = cases.iter().map(|c| c.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), cases.len(), "case names are unique");
    // Each case runs in its own task, so one failing case does not hide the others.
    let mut failures = Vec::new();
    for case in cases {
        let name = case.name;
        if tokio::spawn(check(case)).await.is_err() {
            failures.push(name);
        }
    }
    assert_eq!(failures, Vec::<&str>::new(), "failing cases (see above)");
}

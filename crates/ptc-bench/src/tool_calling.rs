//! Plain tool calling, the baseline PTC is measured against: the model calls the mission's tools
//! natively (OpenAI `tools`, Anthropic `tool_use`), several per reply if it likes, sees every
//! result in its context, and gives the answer through a `final_answer` tool whose parameter is
//! the mission's output signature as JSON Schema (or gives up through `fail`). The input data is
//! in the first message as JSON, or, when it is too large for that, behind a `read_data` tool
//! that pages through it.

use std::sync::Arc;

use ptc_agent::{AsyncTool, FunctionTool, Llm, LlmRequest, Signature, ToolChoice};
use ptc_lisp::{Value, from_json, to_json};
use ptc_turn::{Message, MessageToolCall, Role, TokenUsage};
use serde_json::{Value as Json, json};

use crate::check::RunEnd;
use crate::mission::Mission;

/// The system prompt of a tool-calling run: the contract, nothing more.
pub const SYSTEM_PROMPT: &str = "\
You complete the user's task by calling the tools you are given. Call several tools in one reply \
when the calls do not depend on each other's results. Tools may have side effects (they send, \
book, write): call each only as often as the task needs. When you have the answer, call \
`final_answer` with it; if the task cannot be done, call `fail` with the reason. Every reply must \
call at least one tool: text alone is not read.";

/// The most characters of input data shown in the first message; above it, the data is read
/// through `read_data`.
pub const INLINE_DATA_CHARS: usize = 100_000;

/// The most items `read_data` returns at once.
pub const READ_DATA_LIMIT: usize = 500;

/// The name of the tool that gives the answer.
pub const FINAL_ANSWER: &str = "final_answer";
/// The name of the tool that gives up.
pub const FAIL: &str = "fail";
/// The name of the tool that pages through input data too large for the first message.
pub const READ_DATA: &str = "read_data";

/// A mission tool offered natively, with the JSON Schema of its arguments when its server gave
/// one (MCP); otherwise the schema comes from the tool's signature or parameter names.
pub struct NativeTool {
    /// The tool, with its calls logged.
    pub tool: Arc<dyn AsyncTool>,
    /// The server's own schema of its arguments, if any.
    pub input_schema: Option<Json>,
}

/// How one tool-calling run ended, and what it used.
pub struct ToolCallingRun {
    /// The end the checker judges, or why the run could not go on (a model error).
    pub end: Result<RunEnd, String>,
    /// How the run ended in the words of [`crate::RunRecord::outcome`]: `returned`, `failed`,
    /// `max_turns_exceeded`, `signature_mismatch` or `llm_error`.
    pub outcome: String,
    /// Requests made to the model (each a turn of the run).
    pub requests: u32,
    /// The usage the model reported, summed.
    pub usage: TokenUsage,
    /// Every message of the conversation, the last reply included.
    pub messages: Vec<Message>,
    /// Whether the data was behind `read_data` rather than in the first message.
    pub data_behind_tool: bool,
}

/// What a tool-calling run takes besides the mission and the model.
pub struct Settings {
    /// The most requests the run may make.
    pub max_requests: u32,
    /// The reply limit of every request.
    pub max_tokens: Option<u32>,
    /// The sampling temperature.
    pub temperature: Option<f32>,
}

/// Runs `mission` by plain tool calling with `llm` and the mission's `tools` (logged by the
/// caller).
pub async fn run(
    mission: &Mission,
    llm: &dyn Llm,
    tools: &[NativeTool],
    settings: &Settings,
) -> ToolCallingRun {
    let signature = mission
        .signature
        .as_deref()
        .and_then(|text| Signature::parse(text).ok());
    let (first_message, data_behind_tool) = first_message(mission);
    let mut functions: Vec<FunctionTool> = tools.iter().map(function_of).collect();
    if data_behind_tool {
        functions.push(read_data_function(mission));
    }
    functions.push(final_answer_function(signature.as_ref()));
    functions.push(FunctionTool::new(
        FAIL,
        "Give up: the task cannot be done. Say why.",
        json!({"type": "object", "properties": {"reason": {"type": "string"}},
               "required": ["reason"]}),
    ));
    let mut run = ToolCallingRun {
        end: Err(String::new()),
        outcome: "max_turns_exceeded".into(),
        requests: 0,
        usage: TokenUsage::default(),
        messages: vec![Message::user(first_message)],
        data_behind_tool,
    };
    while run.requests < settings.max_requests {
        let mut request = LlmRequest::new(SYSTEM_PROMPT, run.messages.clone())
            .with_tools(functions.clone(), ToolChoice::Auto);
        request.max_tokens = settings.max_tokens;
        request.temperature = settings.temperature;
        run.requests += 1;
        let reply = match llm.complete(&request).await {
            Ok(reply) => reply,
            Err(e) => {
                run.requests += e.attempts().saturating_sub(1);
                run.end = Err(e.to_string());
                run.outcome = "llm_error".into();
                return run;
            }
        };
        run.requests += reply.attempts.saturating_sub(1);
        run.usage += reply.usage;
        run.messages.push(reply.to_message());
        if reply.tool_calls.is_empty() {
            run.messages.push(Message::user(
                "Text replies are not read. Call a tool: `final_answer` with the answer, `fail` \
                 if the task cannot be done, or the tools the task needs.",
            ));
            continue;
        }
        let mut ended: Option<(RunEnd, &'static str)> = None;
        for call in &reply.tool_calls {
            let (content, end) = answer(call, mission, tools, signature.as_ref()).await;
            let mut result = Message::new(Role::Tool, content);
            result.tool_call_id = Some(call.id.clone());
            run.messages.push(result);
            if ended.is_none() {
                ended = end;
            }
        }
        if let Some((end, outcome)) = ended {
            run.end = Ok(end);
            run.outcome = outcome.into();
            return run;
        }
        if reply
            .tool_calls
            .iter()
            .any(|c| c.name == FINAL_ANSWER || c.name == FAIL)
        {
            // A final answer that did not match the signature: the run goes on, as a PTC run
            // whose returned value does not match goes on.
            run.outcome = "signature_mismatch".into();
        }
    }
    run.end = Err(format!(
        "no final answer within {} requests",
        settings.max_requests
    ));
    run
}

/// The mission's text and its input data: inline as JSON when small, else a line naming the
/// inputs `read_data` serves.
fn first_message(mission: &Mission) -> (String, bool) {
    // `{{name}}` placeholders filled from the data, as for a PTC run (the mission loaded only if
    // every placeholder has its input).
    let mut text = ptc_agent::expand_mission(&mission.text, &mission.data)
        .unwrap_or_else(|_| mission.text.clone());
    if mission.data.is_empty() {
        return (text, false);
    }
    let data: serde_json::Map<String, Json> = mission
        .data
        .iter()
        .map(|(name, value)| (name.clone(), to_json(value)))
        .collect();
    let inline = serde_json::to_string_pretty(&data).unwrap_or_default();
    if inline.chars().count() <= INLINE_DATA_CHARS {
        text.push_str("\n\nInput data (JSON):\n```json\n");
        text.push_str(&inline);
        text.push_str("\n```");
        return (text, false);
    }
    text.push_str(
        "\n\nThe input data is too large to show here; read it with `read_data`. The inputs:",
    );
    for (name, value) in &mission.data {
        text.push_str(&format!("\n- `{name}`: {}", size_of(value)));
    }
    (text, true)
}

/// `a list of 20,000 items`, `a map of 3 keys`, `a string of 1,204 characters`, `a number`.
fn size_of(value: &Value) -> String {
    let grouped = ptc_compression::cost::token_count_text;
    match to_json(value) {
        Json::Array(items) => format!("a list of {} items", grouped(items.len() as f64)),
        Json::Object(map) => format!("a map of {} keys", grouped(map.len() as f64)),
        Json::String(s) => format!(
            "a string of {} characters",
            grouped(s.chars().count() as f64)
        ),
        _ => "a single value".to_string(),
    }
}

fn read_data_function(mission: &Mission) -> FunctionTool {
    let names: Vec<&str> = mission.data.keys().map(String::as_str).collect();
    FunctionTool::new(
        READ_DATA,
        format!(
            "Read an input: the items offset to offset + limit of a list (at most \
             {READ_DATA_LIMIT} at once), or the whole value of any other input. Returns \
             {{\"total\": <items in the list>, \"items\": [...]}} for a list."
        ),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": names},
                "offset": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "minimum": 1, "maximum": READ_DATA_LIMIT},
            },
            "required": ["name"],
        }),
    )
}

fn final_answer_function(signature: Option<&Signature>) -> FunctionTool {
    let answer = signature.map_or_else(|| json!({}), |s| s.output().json_schema());
    FunctionTool::new(
        FINAL_ANSWER,
        "Give the answer to the task. This ends the task.",
        json!({"type": "object", "properties": {"answer": answer}, "required": ["answer"]}),
    )
}

/// A mission tool as a native function: its description with what it returns, and the JSON
/// Schema of its arguments (the server's own, its signature's, or its parameter names').
fn function_of(native: &NativeTool) -> FunctionTool {
    let tool = &native.tool;
    let signature = tool
        .signature()
        .and_then(|text| Signature::parse(text).ok());
    let mut description = tool.description().trim().to_string();
    if let Some(signature) = &signature
        && !matches!(signature.output(), ptc_agent::Type::Any)
    {
        description.push_str(&format!(" Returns {}.", signature.output()));
    }
    let parameters = match (&native.input_schema, &signature) {
        (Some(schema), _) => schema.clone(),
        (None, Some(signature)) if !signature.params().is_empty() => signature.params_json_schema(),
        _ => {
            let params = tool.spec().map(|s| s.params).unwrap_or_default();
            let properties: serde_json::Map<String, Json> =
                params.iter().map(|p| (p.clone(), json!({}))).collect();
            json!({"type": "object", "properties": properties, "required": params})
        }
    };
    FunctionTool::new(tool.name(), description, parameters)
}

/// The content of the tool message answering `call`, and the end of the run if the call ends
/// it.
async fn answer(
    call: &MessageToolCall,
    mission: &Mission,
    tools: &[NativeTool],
    signature: Option<&Signature>,
) -> (String, Option<(RunEnd, &'static str)>) {
    let arguments = call.arguments.as_object().cloned().unwrap_or_default();
    match call.name.as_str() {
        FINAL_ANSWER => {
            let Some(answer) = arguments.get("answer") else {
                return (error_json("final_answer needs `answer`"), None);
            };
            if let Some(signature) = signature
                && let Err(problems) = signature.validate(&from_json(answer))
            {
                let problems: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
                return (
                    error_json(&format!(
                        "the answer does not match the expected shape {}: {}",
                        signature.output(),
                        problems.join("; ")
                    )),
                    None,
                );
            }
            (
                json!({"accepted": true}).to_string(),
                Some((RunEnd::Returned(answer.clone()), "returned")),
            )
        }
        FAIL => {
            let reason = arguments
                .get("reason")
                .and_then(Json::as_str)
                .unwrap_or("no reason given")
                .to_string();
            (
                json!({"accepted": true}).to_string(),
                Some((RunEnd::Failed(reason), "failed")),
            )
        }
        READ_DATA => (read_data(mission, &arguments), None),
        name => match tools.iter().find(|t| t.tool.name() == name) {
            None => (error_json(&format!("there is no tool named {name}")), None),
            Some(native) => {
                let args = if arguments.is_empty() {
                    Vec::new()
                } else {
                    vec![from_json(&Json::Object(arguments))]
                };
                match native.tool.call(args).await {
                    Ok(value) => (to_json(&value).to_string(), None),
                    Err(e) => (error_json(&e.to_string()), None),
                }
            }
        },
    }
}

fn error_json(message: &str) -> String {
    json!({"error": message}).to_string()
}

/// The answer of `read_data`: a page of a list, or a whole other value.
fn read_data(mission: &Mission, arguments: &serde_json::Map<String, Json>) -> String {
    let Some(name) = arguments.get("name").and_then(Json::as_str) else {
        return error_json("read_data needs `name`");
    };
    let Some(value) = mission.data.get(name) else {
        let names: Vec<&str> = mission.data.keys().map(String::as_str).collect();
        return error_json(&format!(
            "no input named {name}; the inputs are {}",
            names.join(", ")
        ));
    };
    let items: Option<Vec<Json>> = match to_json(value) {
        Json::Array(items) => Some(items),
        _ => None,
    };
    let Some(items) = items else {
        return to_json(value).to_string();
    };
    let number = |key: &str, default: usize| {
        arguments
            .get(key)
            .and_then(Json::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(default)
    };
    let offset = number("offset", 0).min(items.len());
    let limit = number("limit", READ_DATA_LIMIT).clamp(1, READ_DATA_LIMIT);
    let end = (offset + limit).min(items.len());
    json!({"total": items.len(), "offset": offset, "items": &items[offset..end]}).to_string()
}

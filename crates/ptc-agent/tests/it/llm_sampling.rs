//! Sampling parameters in the providers' request bodies, and what a request says about its
//! place in the run.

use pretty_assertions::assert_eq;
use ptc_agent::{
    Agent, Anthropic, FunctionTool, LlmError, LlmRequest, OpenAiCompatible, ResponseFormat,
    Sampling, ScriptedLlm, ToolChoice, value_tool,
};
use ptc_lisp::Value;
use ptc_turn::Message;
use serde_json::json;

fn sampling() -> Sampling {
    Sampling {
        top_p: Some(0.9),
        stop: vec!["```\n\n".into()],
        user: Some("user-42".into()),
        ..Sampling::default()
    }
}

fn request(sampling: Sampling) -> LlmRequest {
    LlmRequest::new("sys", vec![Message::user("hi")]).with_sampling(sampling)
}

#[test]
fn openai_bodies_carry_every_parameter() {
    let llm = OpenAiCompatible::new("http://localhost:8080/v1", "qwen").expect("llm");
    let body = llm
        .request_body(&request(Sampling {
            seed: Some(7),
            response_format: Some(ResponseFormat::JsonSchema {
                name: "answer".into(),
                schema: json!({"type": "object"}),
            }),
            ..sampling()
        }))
        .expect("body");
    assert_eq!(
        body,
        json!({
            "model": "qwen",
            "max_tokens": 4096,
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"}
            ],
            "top_p": 0.9,
            "stop": ["```\n\n"],
            "seed": 7,
            "response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object"}}},
            "user": "user-42"
        })
    );
    let json_object = llm
        .request_body(&request(Sampling {
            response_format: Some(ResponseFormat::JsonObject),
            ..Sampling::default()
        }))
        .expect("body");
    assert_eq!(
        json_object["response_format"],
        json!({"type": "json_object"})
    );
}

#[test]
fn anthropic_bodies_carry_what_the_messages_api_has_and_refuse_the_rest() {
    let llm = Anthropic::new("claude-haiku-4-5", "sk-ant-test").expect("llm");
    let body = llm.request_body(&request(sampling())).expect("body");
    assert_eq!(body["top_p"], json!(0.9));
    assert_eq!(body["stop_sequences"], json!(["```\n\n"]));
    assert_eq!(body["metadata"], json!({"user_id": "user-42"}));
    let error = llm
        .request_body(&request(Sampling {
            seed: Some(7),
            response_format: Some(ResponseFormat::JsonObject),
            ..Sampling::default()
        }))
        .expect_err("unsupported");
    assert_eq!(
        error.to_string(),
        LlmError::InvalidRequest(
            "Anthropic's Messages API has no seed or response_format; leave them unset for this \
             model"
                .into()
        )
        .to_string()
    );
}

#[test]
fn a_top_p_out_of_range_is_refused() {
    let llm = OpenAiCompatible::new("http://localhost:8080/v1", "qwen").expect("llm");
    let error = llm
        .request_body(&request(Sampling {
            top_p: Some(1.5),
            ..Sampling::default()
        }))
        .expect_err("out of range");
    assert!(
        error
            .to_string()
            .contains("top_p must be a number above 0 and at most 1, not 1.5"),
        "{error}"
    );
}

#[tokio::test]
async fn each_request_says_its_turn_and_tools_and_carries_the_sampling() {
    let llm = ScriptedLlm::new(["(def a 1)", "(return a)"]);
    let agent = Agent::builder("Go")
        .llm(llm.clone())
        .tool(value_tool("search", "Search", |_| Ok(Value::Nil)))
        .tool(value_tool("notify", "Notify", |_| Ok(Value::Nil)))
        .sampling(sampling())
        .build()
        .expect("agent");
    agent.run().await.expect("runs");
    let seen: Vec<(Option<u32>, Vec<String>, Sampling)> = llm
        .requests()
        .into_iter()
        .map(|r| (r.turn, r.tool_names, r.sampling))
        .collect();
    let tools = vec!["search".to_string(), "notify".to_string()];
    assert_eq!(
        seen,
        vec![
            (Some(1), tools.clone(), sampling()),
            (Some(2), tools, sampling()),
        ]
    );
}

#[test]
fn parallel_tool_calls_reach_both_providers_with_the_tools_alone() {
    let with_tools = |parallel: Option<bool>, choice: ToolChoice| {
        LlmRequest::new("sys", vec![Message::user("hi")])
            .with_tools(
                vec![FunctionTool::new(
                    "get_order",
                    "One order",
                    json!({"type": "object", "properties": {"id": {"type": "string"}}}),
                )],
                choice,
            )
            .with_sampling(Sampling {
                parallel_tool_calls: parallel,
                ..Sampling::default()
            })
    };
    let openai = OpenAiCompatible::new("http://localhost:8080/v1", "qwen").expect("llm");
    let anthropic = Anthropic::new("claude-haiku-4-5", "sk-ant-test").expect("llm");
    let field = |body: serde_json::Value, name: &str| body.get(name).cloned();
    let cases = [
        (None, ToolChoice::Auto),
        (Some(false), ToolChoice::Auto),
        (Some(true), ToolChoice::Auto),
        (Some(false), ToolChoice::Required),
        (Some(true), ToolChoice::Required),
    ];
    let bodies: Vec<_> = cases
        .iter()
        .map(|(parallel, choice)| {
            let request = with_tools(*parallel, *choice);
            (
                field(
                    openai.request_body(&request).expect("body"),
                    "parallel_tool_calls",
                ),
                field(
                    anthropic.request_body(&request).expect("body"),
                    "tool_choice",
                ),
            )
        })
        .collect();
    assert_eq!(
        bodies,
        [
            (None, None),
            (
                Some(json!(false)),
                Some(json!({"type": "auto", "disable_parallel_tool_use": true}))
            ),
            (Some(json!(true)), None),
            (
                Some(json!(false)),
                Some(json!({"type": "any", "disable_parallel_tool_use": true}))
            ),
            (Some(json!(true)), Some(json!({"type": "any"}))),
        ]
    );
    // The whole OpenAI body of one case, to see where the field sits.
    assert_eq!(
        openai
            .request_body(&with_tools(Some(false), ToolChoice::Auto))
            .expect("body"),
        json!({
            "model": "qwen",
            "max_tokens": 4096,
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"}
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_order",
                "description": "One order",
                "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}
            }}],
            "parallel_tool_calls": false
        })
    );
    // Without tools the parameter is not sent: both providers refuse it there.
    let bare = request(Sampling {
        parallel_tool_calls: Some(false),
        ..Sampling::default()
    });
    assert_eq!(
        (
            field(
                openai.request_body(&bare).expect("body"),
                "parallel_tool_calls"
            ),
            field(anthropic.request_body(&bare).expect("body"), "tool_choice"),
        ),
        (None, None)
    );
}

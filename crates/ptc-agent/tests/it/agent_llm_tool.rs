//! LLM tools: one model call with its own prompt and output signature, called from programs
//! like any tool, counted in the run's usage.

use std::sync::Mutex;

use pretty_assertions::assert_eq;
use ptc_agent::{
    Agent, AsyncTool, LlmRegistry, LlmRequest, LlmResponse, LlmTool, LlmToolCall, LlmToolError,
    RunObserver, RunOptions, ScriptedLlm,
};
use ptc_lisp::Value;
use ptc_turn::{Message, TokenUsage};

const SIGNATURE: &str = "(text :string) -> {label :keyword, urgent :bool}";

fn classify() -> LlmTool {
    LlmTool::new("classify", SIGNATURE, "Classify this ticket: {{text}}")
        .expect("a valid tool")
        .with_field_descriptions([("label", "one of :bug :feature :question")])
}

fn reply(
    content: &str,
    input_tokens: u64,
    output_tokens: u64,
) -> Result<LlmResponse, ptc_agent::LlmError> {
    Ok(LlmResponse::text(content).with_usage(TokenUsage {
        input_tokens,
        output_tokens,
        ..TokenUsage::default()
    }))
}

/// The system prompt every request of `classify()` carries.
const SYSTEM: &str = "Answer with one JSON value of the shape below and nothing else: no code \
fence, no words before or after it.\n\nShape: {label :keyword, urgent :bool}\n\nlabel: one of \
:bug :feature :question\n\nHow to read the shape: {name type, ...} is a JSON object with these \
keys; [type] is an array of that type; :string and :keyword are strings, :int an integer, \
:float a number, :bool true or false, :map any object, :any any value; a type ending in ? may \
be null, and such a key may be left out.";

fn agent(llm: &ScriptedLlm, tool: LlmTool) -> Agent {
    Agent::builder("Label the ticket")
        .llm(llm.clone())
        .tool(tool)
        .build()
        .expect("agent")
}

#[tokio::test]
async fn the_tool_asks_the_calling_runs_model_and_its_tokens_count_in_the_turn_and_the_step() {
    let llm = ScriptedLlm::from_results([
        reply(
            "(def t (tool/classify \"The app crashes on start\"))\n(return [(:label t) (:urgent t)])",
            900,
            30,
        ),
        reply(r#"{"label": "bug", "urgent": true}"#, 120, 9),
    ]);
    let step = agent(&llm, classify()).run().await.expect("runs");
    assert_eq!(
        step.value(),
        Some(&Value::vector([Value::keyword("bug"), Value::Bool(true)]))
    );
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    let expected = LlmRequest::new(
        SYSTEM,
        vec![Message::user(
            "Classify this ticket: The app crashes on start",
        )],
    )
    .with_max_tokens(4096)
    .with_turn(1, Vec::new());
    assert_eq!(requests[1], expected);
    let tokens = |input_tokens, output_tokens| TokenUsage {
        input_tokens,
        output_tokens,
        ..TokenUsage::default()
    };
    // The turn that called the tool counts both requests, and so does the step.
    let turn = step.turns[0].usage();
    assert_eq!((turn.llm_requests, turn.tokens), (2, tokens(1020, 39)));
    assert_eq!(
        (step.usage.llm_requests, step.usage.tokens),
        (2, tokens(1020, 39))
    );
    // The program records the call like any tool call.
    assert_eq!(step.turns[0].tool_calls()[0].name, "classify");
}

#[tokio::test]
async fn a_malformed_answer_is_a_tool_error_the_program_can_handle() {
    let program = "(return (try (tool/classify \"hi\") (catch Exception e (ex-message e))))";
    let cases = [
        (
            "It is a bug.",
            "tool/classify failed: the model's answer is not JSON (expected value at line 1 \
             column 1); it answered \"It is a bug.\"",
        ),
        (
            r#"{"label": "bug", "urgent": "yes"}"#,
            "tool/classify failed: the model's answer does not match {label :keyword, urgent \
             :bool}: urgent: expected bool, got string \"yes\"; it answered \"{\\\"label\\\": \
             \\\"bug\\\", \\\"urgent\\\": \\\"yes\\\"}\"",
        ),
    ];
    for (answer, expected) in cases {
        let llm = ScriptedLlm::new([program, answer]);
        let step = agent(&llm, classify()).run().await.expect("runs");
        assert_eq!(step.value(), Some(&Value::string(expected)), "{answer}");
    }
}

#[tokio::test]
async fn arguments_are_checked_against_the_input_signature_before_any_request() {
    let llm = ScriptedLlm::new(["(tool/classify 42)", "(return 1)"]);
    let step = agent(&llm, classify()).run().await.expect("runs");
    let error = step.turns[0].error().expect("the first turn failed");
    assert_eq!(
        error.message,
        "tool/classify failed: the arguments do not match (text :string) -> {label :keyword, \
         urgent :bool}: text: expected string, got integer 42"
    );
    // The agent's two requests only: the tool asked nothing.
    assert_eq!(llm.requests().len(), 2);
    assert_eq!(step.usage.llm_requests, 2);
}

#[tokio::test]
async fn a_fenced_answer_is_read_and_a_string_answer_may_be_plain_text() {
    let summarize = LlmTool::new(
        "summarize",
        "(text :string, words :int?) -> :string",
        "Summarize in {{words}} words: {{text}}",
    )
    .expect("tool");
    let llm = ScriptedLlm::new([
        "(return [(tool/classify {:text \"x\"}) (tool/summarize \"long text\")])",
        "```json\n{\"label\": \":question\", \"urgent\": false}\n```",
        "A short text.",
    ]);
    let agent = Agent::builder("Both")
        .llm(llm.clone())
        .tool(classify())
        .tool(summarize)
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    assert_eq!(
        step.value(),
        Some(&Value::vector([
            Value::map([
                (Value::keyword("label"), Value::keyword("question")),
                (Value::keyword("urgent"), Value::Bool(false)),
            ]),
            Value::string("A short text."),
        ]))
    );
    // The optional argument left out reads as nothing in the prompt.
    assert_eq!(
        llm.requests()[2].messages,
        vec![Message::user("Summarize in  words: long text")]
    );
}

#[tokio::test]
async fn a_named_model_comes_from_the_calling_agents_registry() {
    let main = ScriptedLlm::new(["(return (:label (tool/classify \"slow page\")))"]);
    let small = ScriptedLlm::new([r#"{"label": "feature", "urgent": false}"#]);
    let other = LlmTool::new("other", "(text :string) -> :string", "{{text}}")
        .expect("tool")
        .with_llm_named("huge");
    let agent = Agent::builder("Label")
        .llm(main.clone())
        .llm_registry(LlmRegistry::new().with("small", small.clone()))
        .tool(classify().with_llm_named("small"))
        .tool(other)
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    assert_eq!(step.value(), Some(&Value::keyword("feature")));
    assert_eq!((main.requests().len(), small.requests().len()), (1, 1));

    let step = agent
        .run_with(RunOptions::new().with_llm(ScriptedLlm::new(["(tool/other \"x\")"])))
        .await
        .expect("runs");
    assert_eq!(
        step.turns[0].error().expect("unknown model").message,
        "tool/other failed: no model is called `huge`; the registry has `small`"
    );
}

#[tokio::test]
async fn the_observer_is_told_each_request_of_the_tool() {
    #[derive(Default)]
    struct Seen(Mutex<Vec<(u32, String, usize)>>);
    impl RunObserver for Seen {
        fn on_tool_request(&self, turn: u32, call: &LlmToolCall) {
            self.0
                .lock()
                .unwrap()
                .push((turn, call.tool.clone(), call.request.messages.len()));
            assert_eq!(call.usage.llm_requests, 1);
        }
    }
    let llm = ScriptedLlm::new([
        "(def a (pmap (fn [t] (tool/classify t)) [\"a\" \"b\"]))",
        r#"{"label": "bug", "urgent": true}"#,
        r#"{"label": "bug", "urgent": false}"#,
        "(return (count a))",
    ]);
    let seen = Seen::default();
    let step = agent(&llm, classify())
        .run_with(RunOptions::new().with_observer(&seen))
        .await
        .expect("runs");
    assert_eq!(step.value(), Some(&Value::Int(2)));
    assert_eq!(
        seen.0.into_inner().unwrap(),
        vec![
            (1, "classify".to_string(), 1),
            (1, "classify".to_string(), 1)
        ]
    );
    assert_eq!(step.turns[0].usage().llm_requests, 3);
}

#[tokio::test]
async fn outside_an_agent_run_the_tool_needs_a_model_of_its_own() {
    let error = classify()
        .call(vec![Value::string("x")])
        .await
        .expect_err("no caller");
    assert_eq!(
        error.message,
        "this LLM tool asks the model of the agent run that calls it, and no agent run called \
         it; give it a model with LlmTool::with_llm"
    );
    let own = ScriptedLlm::new([r#"{"label": "bug", "urgent": true}"#]);
    let value = classify()
        .with_llm(own.clone())
        .with_temperature(0.0)
        .call(vec![Value::string("x")])
        .await
        .expect("answers");
    assert_eq!(
        value,
        Value::map([
            (Value::keyword("label"), Value::keyword("bug")),
            (Value::keyword("urgent"), Value::Bool(true)),
        ])
    );
    assert_eq!(own.requests()[0].temperature, Some(0.0));
    assert_eq!(own.requests()[0].turn, None);
}

#[tokio::test]
async fn a_cut_off_answer_and_a_failed_model_are_tool_errors() {
    let cut = ScriptedLlm::from_results([Ok(
        LlmResponse::text("{\"label\": \"bu").with_stop_reason("length")
    )]);
    let error = classify()
        .with_llm(cut)
        .with_max_tokens(5)
        .call(vec![Value::string("x")])
        .await
        .expect_err("cut off");
    assert_eq!(
        error.message,
        "the model's answer was cut off at the limit of 5 tokens: \"{\\\"label\\\": \\\"bu\""
    );
    let error = classify()
        .with_llm(ScriptedLlm::new(Vec::<String>::new()))
        .call(vec![Value::string("x")])
        .await
        .expect_err("no replies");
    assert!(
        error.message.starts_with("the model failed: "),
        "{}",
        error.message
    );
}

#[test]
fn a_tool_that_cannot_work_is_refused_when_made() {
    let cases: [(&str, &str, &str); 3] = [
        (
            "(text :string) -> :strin",
            "x",
            "the signature of tool/t is invalid: invalid signature at line 1, column 19: unknown type :strin",
        ),
        (
            "(text :string) -> :string",
            "  ",
            "the prompt of tool/t is empty; say what the model must answer",
        ),
        (
            "(text :string) -> :string",
            "Compare {{text}} with {{other}}",
            "the prompt of tool/t uses {{other}} but its signature's parameters are (text); \
             every placeholder must be a parameter",
        ),
    ];
    for (signature, prompt, expected) in cases {
        let error = LlmTool::new("t", signature, prompt).err().expect("refused");
        assert!(error.to_string().starts_with(expected), "{error}");
    }
    assert!(matches!(
        LlmTool::new("t", ":string", "{{x}}").err(),
        Some(LlmToolError::UnknownPlaceholders { .. })
    ));
}

#[test]
fn the_agent_sees_the_tool_with_its_signature_and_description() {
    let spec = classify()
        .with_description("Labels a ticket")
        .spec()
        .expect("spec");
    assert_eq!(
        (spec.name.as_str(), spec.description.as_str()),
        ("classify", "Labels a ticket")
    );
    assert_eq!(classify().description(), "Classify this ticket: {{text}}");
}

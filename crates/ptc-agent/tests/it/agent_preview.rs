//! The first request of a run, previewed without sending it.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, RunError, RunOptions, ScriptedLlm, value_tool};
use ptc_lisp::Value;

fn agent(llm: &ScriptedLlm, compression: bool) -> Agent {
    Agent::builder("Count the {{kind}} users")
        .llm(llm.clone())
        .tool(value_tool("notify", "Tell the team", |_| Ok(Value::Nil)))
        .data(&serde_json::json!({"users": ["ann", "bo"]}))
        .signature("(kind :string) -> :int")
        .max_tokens(300)
        .temperature(0.5)
        .compression(compression)
        .build()
        .expect("agent")
}

#[tokio::test]
async fn the_preview_is_the_first_request_the_run_sends() {
    for compression in [false, true] {
        let llm = ScriptedLlm::new(["(return 2)"]);
        let agent = agent(&llm, compression);
        let options = || RunOptions::new().with_data_value("kind", Value::string("active"));
        let preview = agent.preview_prompt(&options()).expect("preview");
        agent.run_with(options()).await.expect("runs");
        assert_eq!(
            llm.requests()[0],
            preview.request,
            "compression {compression}"
        );
    }
}

#[test]
fn the_preview_shows_each_message_with_its_size() {
    let llm = ScriptedLlm::new(Vec::<String>::new());
    let preview = agent(&llm, false)
        .preview_prompt(&RunOptions::new().with_data_value("kind", Value::string("active")))
        .expect("preview");
    let text = preview.to_string();
    let system = &preview.system_prompt;
    assert!(text.starts_with(&format!(
        "=== system ({} chars, about {} tokens) ===\n{}\n=== user (",
        system.chars, system.estimated_tokens, system.text
    )));
    let user_part = &text[text.find("=== user (").expect("user header")..];
    assert_eq!(
        user_part,
        "=== user (230 chars) ===\n\
         Count the active users\n\n\
         ;; === tool/ ===\n\
         (tool/notify)                 ; Tell the team\n\n\
         ;; === data/ ===\n\
         data/kind                     ; string = \"active\"\n\
         data/users                    ; list[2], whole: [\"ann\" \"bo\"]\n\n\
         Turns left: 5\n\
         === cacheable prefix: the system prompt and the first 215 bytes of message 1 ===\n"
    );
}

#[test]
fn the_preview_checks_the_input_as_the_run_does() {
    let llm = ScriptedLlm::new(Vec::<String>::new());
    let error = agent(&llm, false)
        .preview_prompt(&RunOptions::new())
        .expect_err("kind is missing");
    assert!(matches!(error, RunError::Input(_)), "{error}");
}

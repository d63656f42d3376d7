//! Models answered by hand: through the files of a directory (`FileLlm`, `file:DIR`) and at a
//! terminal (`HumanLlm`, `human`). An answerer thread stands in for the person or model that
//! writes the replies.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use pretty_assertions::assert_eq;
use ptc_agent::Agent;
use ptc_agent::llm::{FileLlm, FunctionTool, HumanLlm, Llm, LlmError, LlmRequest, ToolChoice};
use ptc_lisp::Value;
use ptc_turn::{Message, MessageToolCall};
use serde_json::json;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ptc-by-hand-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Waits for `dir/name` (a request or END), for at most 20 s.
fn wait_for(dir: &Path, name: &str) -> bool {
    for _ in 0..400 {
        if dir.join(name).exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Writes a reply as an answerer must: elsewhere first, then renamed into place.
fn answer(dir: &Path, name: &str, text: &str) {
    let temporary = dir.join(format!(".tmp-{name}"));
    std::fs::write(&temporary, text).unwrap();
    std::fs::rename(&temporary, dir.join(name)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_answered_through_files_reads_each_reply_and_ends_with_end() {
    let dir = scratch("run");
    let llm = Arc::new(
        FileLlm::new(&dir)
            .unwrap()
            .with_poll_interval(Duration::from_millis(10)),
    );
    let answerer = {
        let dir = dir.clone();
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            assert!(wait_for(&dir, "req-1.md"));
            seen.push(std::fs::read_to_string(dir.join("req-1.md")).unwrap());
            answer(
                &dir,
                "reply-1.txt",
                "```clojure\n(def n (count data/xs))\n(println n)\n```",
            );
            assert!(wait_for(&dir, "req-2.md"));
            seen.push(std::fs::read_to_string(dir.join("req-2.md")).unwrap());
            answer(&dir, "reply-2.txt", "```clojure\n(return (* n 10))\n```");
            assert!(wait_for(&dir, "END"));
            seen
        })
    };
    let agent = Agent::builder("Count the items, times ten.")
        .llm_arc(llm.clone())
        .data_value("xs", Value::vector([Value::Int(1), Value::Int(2)]))
        .build()
        .unwrap();
    let step = agent.run().await.unwrap();
    assert_eq!(step.value(), Some(&Value::Int(20)));
    drop(agent);
    drop(llm);
    let seen = answerer.join().unwrap();
    assert!(seen[0].starts_with(
        "# Request 1\n\nThe system prompt, then 1 message. The reply may have at most 4096 \
         tokens.\n\n## System\n\n"
    ));
    assert!(seen[0].contains("\n## Message 1: user\n\nCount the items, times ten."));
    // The second request says what the first had too, then shows every message again.
    assert!(
        seen[1].starts_with(
            "# Request 2\n\nThe system prompt, then 3 messages. The system prompt is the same \
             as in request 1 (repeated below, as the model receives them). The reply may have \
             at most 4096 tokens.\n"
        ),
        "{}",
        seen[1]
    );
    assert!(seen[1].contains("\n## Message 2: assistant\n\n```clojure\n(def n (count data/xs))"));
    // The exact requests, as JSON.
    let request: LlmRequest =
        serde_json::from_str(&std::fs::read_to_string(dir.join("req-2.json")).unwrap()).unwrap();
    assert_eq!(request.messages.len(), 3);
    // Usage is the client's estimate, and says so.
    let turn = &step.turns[0];
    assert!(turn.usage().tokens.input_tokens > 100);
    let _ = std::fs::remove_dir_all(&dir);
}

fn offering_a_tool() -> LlmRequest {
    LlmRequest::new("Be brief.", vec![Message::user("Order o-1's total?")]).with_tools(
        vec![FunctionTool::new(
            "get_order",
            "One order",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        )],
        ToolChoice::Auto,
    )
}

#[tokio::test]
async fn a_json_reply_carries_native_tool_calls_and_the_usage_is_marked_estimated() {
    let dir = scratch("json");
    let llm = FileLlm::new(&dir)
        .unwrap()
        .with_poll_interval(Duration::from_millis(10));
    answer(
        &dir,
        "reply-1.json",
        r#"{"content": "Looking it up.", "tool_calls": [{"name": "get_order", "arguments": {"id": "o-1"}}]}"#,
    );
    let reply = llm.complete(&offering_a_tool()).await.unwrap();
    assert_eq!(reply.content, "Looking it up.");
    assert_eq!(
        reply.tool_calls,
        vec![MessageToolCall {
            id: "call-1-1".into(),
            name: "get_order".into(),
            arguments: json!({"id": "o-1"}),
        }]
    );
    assert!(reply.usage_estimated);
    assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
    let markdown = std::fs::read_to_string(dir.join("req-1.md")).unwrap();
    assert!(markdown.contains(
        "## Tools\n\nThe reply may call these tools natively.\n\n### get_order\n\nOne order\n"
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_reply_that_does_not_fit_the_request_is_an_error_that_says_why() {
    let dir = scratch("bad");
    let llm = FileLlm::new(&dir)
        .unwrap()
        .with_poll_interval(Duration::from_millis(10));
    answer(
        &dir,
        "reply-1.json",
        r#"{"tool_calls": [{"name": "send_email", "arguments": {}}]}"#,
    );
    let error = llm.complete(&offering_a_tool()).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{} sent a response that could not be read: {}: the reply calls tool `send_email`, \
             which this request does not offer (it offers get_order)",
            llm.describe(),
            dir.join("reply-1.json").display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_request_asked_again_after_a_timeout_keeps_its_number() {
    let dir = scratch("timeout");
    let llm = FileLlm::new(&dir)
        .unwrap()
        .with_poll_interval(Duration::from_millis(10))
        .with_timeout(Duration::from_millis(50));
    let request = LlmRequest::new("Be brief.", vec![Message::user("Hi")]);
    assert!(matches!(
        llm.complete(&request).await,
        Err(LlmError::Timeout { .. })
    ));
    answer(&dir, "reply-1.txt", "Hello.");
    assert_eq!(llm.complete(&request).await.unwrap().content, "Hello.");
    assert!(!dir.join("req-2.md").exists());
    // A new directory model goes on after the requests already there.
    llm.finish().unwrap();
    let again = FileLlm::new(&dir)
        .unwrap()
        .with_poll_interval(Duration::from_millis(10));
    assert!(!dir.join("END").exists(), "a new run removes the old END");
    answer(&dir, "reply-2.txt", "Again.");
    assert_eq!(again.complete(&request).await.unwrap().content, "Again.");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_person_at_a_terminal_types_replies_ended_by_a_dot() {
    let typed = "{\"tool_calls\": [{\"name\": \"nope\"}]}\n.\n\
                 {\"tool_calls\": [{\"name\": \"get_order\", \"arguments\": {\"id\": \"o-1\"}}]}\n.\n\
                 It is 12.\n.\n";
    let shown = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    struct Shared(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let llm = HumanLlm::new(std::io::Cursor::new(typed), Shared(shown.clone()));
    let first = llm.complete(&offering_a_tool()).await.unwrap();
    assert_eq!(first.tool_calls[0].name, "get_order");
    let mut next = offering_a_tool();
    next.messages.push(first.to_message());
    let mut result = Message::new(ptc_turn::Role::Tool, "{\"total\": 12}");
    result.tool_call_id = Some("call-1-1".into());
    next.messages.push(result);
    assert_eq!(llm.complete(&next).await.unwrap().content, "It is 12.");
    let text = String::from_utf8(shown.lock().unwrap().clone()).unwrap();
    assert!(text.contains(
        "That reply cannot be sent: the reply calls tool `nope`, which this request does not \
         offer (it offers get_order). Try again."
    ));
    // The second request shows only what is new.
    let second = &text[text.find("# Request 2").unwrap()..];
    assert!(second.starts_with(
        "# Request 2\n\nThe system prompt, then 3 messages. The system prompt, the tools and \
         message 1 are the same as in request 1.\n\n## Message 2: assistant\n"
    ));
    assert!(matches!(
        llm.complete(&offering_a_tool()).await,
        Err(LlmError::InvalidResponse { .. })
    ));
}

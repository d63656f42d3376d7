//! `ScriptedLlm` and `ReplayLlm`.

use pretty_assertions::assert_eq;
use ptc_agent::llm::{Llm, LlmError, LlmRequest, LlmResponse, ReplayLlm, ScriptedLlm, TokenUsage};
use ptc_turn::Message;

fn ask(text: &str) -> LlmRequest {
    LlmRequest::new("system", vec![Message::user(text)])
}

#[tokio::test]
async fn scripted_replies_come_in_order_and_requests_are_recorded() {
    let llm = ScriptedLlm::new(["(def x 1)", "(return x)"]);
    let shared = llm.clone();
    assert_eq!(llm.remaining(), 2);
    assert_eq!(
        llm.complete(&ask("one")).await.unwrap().content,
        "(def x 1)"
    );
    assert_eq!(
        llm.complete(&ask("two")).await.unwrap().content,
        "(return x)"
    );
    let err = llm.complete(&ask("three")).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the scripted model has no reply left after serving 2; add more replies, or make the \
         run need fewer model calls"
    );
    assert!(!err.is_transient());
    // The clone sees every request, including the one that got no reply.
    assert_eq!(
        shared.requests(),
        vec![ask("one"), ask("two"), ask("three")]
    );
    assert_eq!(shared.remaining(), 0);
    assert_eq!(shared.describe(), "scripted");
}

#[tokio::test]
async fn scripted_results_can_be_failures_and_be_appended() {
    let usage = TokenUsage {
        input_tokens: 10,
        output_tokens: 2,
        cache_read_tokens: 4,
        cache_write_tokens: 0,
    };
    let overloaded = LlmError::Http {
        provider: "fake".into(),
        status: 529,
        message: "Overloaded".into(),
    };
    let llm = ScriptedLlm::from_results([
        Err(overloaded.clone()),
        Ok(LlmResponse::text("ok").with_usage(usage)),
    ]);
    llm.push_reply("later");
    assert_eq!(llm.complete(&ask("a")).await, Err(overloaded));
    assert_eq!(
        llm.complete(&ask("b")).await,
        Ok(LlmResponse::text("ok").with_usage(usage))
    );
    assert_eq!(llm.complete(&ask("c")).await.unwrap().content, "later");
}

#[tokio::test]
async fn a_scripted_model_works_behind_a_shared_trait_object() {
    let script = ScriptedLlm::new(["reply"]);
    let llm: std::sync::Arc<dyn Llm> = std::sync::Arc::new(script.clone());
    assert_eq!(llm.complete(&ask("q")).await.unwrap().content, "reply");
    assert_eq!(script.requests().len(), 1);
}

const TRANSCRIPT: &str = r#"{"content": "(def rows (tool/fetch))", "usage": {"input_tokens": 900, "output_tokens": 12, "cache_read_tokens": 800}}

{"content": "(return (count rows))", "model": "claude-sonnet-4-5", "stop_reason": "end_turn", "extra": "ignored"}
   
"#;

#[tokio::test]
async fn replay_returns_the_transcript_in_order() {
    let llm = ReplayLlm::from_jsonl("run.jsonl", TRANSCRIPT).unwrap();
    assert_eq!(llm.remaining(), 2);
    assert_eq!(
        llm.complete(&ask("1")).await.unwrap(),
        LlmResponse {
            content: "(def rows (tool/fetch))".into(),
            usage: TokenUsage {
                input_tokens: 900,
                output_tokens: 12,
                cache_read_tokens: 800,
                cache_write_tokens: 0,
            },
            model: None,
            stop_reason: None,
            attempts: 1,
            tool_calls: Vec::new(),
            usage_estimated: false,
        }
    );
    assert_eq!(
        llm.complete(&ask("2")).await.unwrap(),
        LlmResponse {
            content: "(return (count rows))".into(),
            usage: TokenUsage::default(),
            model: Some("claude-sonnet-4-5".into()),
            stop_reason: Some("end_turn".into()),
            attempts: 1,
            tool_calls: Vec::new(),
            usage_estimated: false,
        }
    );
    assert_eq!(
        llm.complete(&ask("3")).await.unwrap_err().to_string(),
        "the replay transcript run.jsonl has no reply left after serving 2; add more replies, \
         or make the run need fewer model calls"
    );
    assert_eq!(llm.requests().len(), 3);
    assert_eq!(llm.describe(), "replay:run.jsonl");
}

#[tokio::test]
async fn a_reply_keeps_the_requests_it_took_through_a_transcript() {
    let reply = LlmResponse {
        attempts: 3,
        ..LlmResponse::text("(return 1)")
    };
    let line = serde_json::to_string(&reply).unwrap();
    assert_eq!(
        line,
        r#"{"content":"(return 1)","usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0},"attempts":3}"#
    );
    // One attempt is the default and is not written.
    assert_eq!(
        serde_json::to_string(&LlmResponse::text("x")).unwrap(),
        r#"{"content":"x","usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0}}"#
    );
    let llm =
        ReplayLlm::from_jsonl("run.jsonl", &format!("{line}\n{{\"content\": \"y\"}}")).unwrap();
    assert_eq!(llm.complete(&ask("1")).await.unwrap(), reply);
    assert_eq!(llm.complete(&ask("2")).await.unwrap().attempts, 1);
}

#[test]
fn a_bad_transcript_line_is_named() {
    let text = "{\"content\": \"ok\"}\n\n{\"content\": 5}\n";
    let err = ReplayLlm::from_jsonl("bad.jsonl", text).unwrap_err();
    assert_eq!(
        err.to_string(),
        "replay transcript bad.jsonl, line 3: invalid type: integer `5`, expected a string \
         (column 13); each line must be a JSON object like {\"content\": \"...\"}"
    );
    let LlmError::Transcript { line, .. } = err else {
        panic!("expected a transcript error");
    };
    assert_eq!(line, Some(3));

    let err = ReplayLlm::from_jsonl("bad.jsonl", "{\"usage\": {}}").unwrap_err();
    assert_eq!(
        err.to_string(),
        "replay transcript bad.jsonl, line 1: missing field `content` (column 13); each line \
         must be a JSON object like {\"content\": \"...\"}"
    );
}

#[tokio::test]
async fn replay_reads_a_file() {
    let path = std::env::temp_dir().join(format!("ptc-replay-test-{}.jsonl", std::process::id()));
    std::fs::write(&path, TRANSCRIPT).unwrap();
    let llm = ReplayLlm::from_file(&path);
    std::fs::remove_file(&path).unwrap();
    let llm = llm.unwrap();
    assert_eq!(
        llm.complete(&ask("1")).await.unwrap().content,
        "(def rows (tool/fetch))"
    );
    assert_eq!(llm.describe(), format!("replay:{}", path.display()));
}

#[test]
fn a_missing_transcript_file_is_reported() {
    let path = std::env::temp_dir().join("ptc-replay-test-does-not-exist.jsonl");
    let err = ReplayLlm::from_file(&path).unwrap_err();
    let LlmError::Transcript {
        path: reported,
        line,
        message,
    } = err
    else {
        panic!("expected a transcript error");
    };
    assert_eq!((reported, line), (path.display().to_string(), None));
    assert!(message.starts_with("cannot read it: "), "{message}");
}

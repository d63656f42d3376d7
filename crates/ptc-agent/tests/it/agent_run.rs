//! Observing a run, the system prompt, and history summaries written by the agent's model.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, RunObserver, RunOptions, ScriptedLlm};
use ptc_compression::history::{HistoryPolicy, SUMMARY_HEADER, SummaryStrategy};
use ptc_lisp::Value;
use ptc_turn::{Message, Role, Turn};
use std::sync::Mutex;

fn clojure(program: &str) -> String {
    format!("```clojure\n{program}\n```")
}

#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl RunObserver for Log {
    fn on_request(&self, turn: u32, messages: &[Message]) {
        self.0
            .lock()
            .unwrap()
            .push(format!("request {turn}: {} messages", messages.len()));
    }

    fn on_turn(&self, turn: &Turn) {
        let status = match turn.error() {
            None => "ok".to_string(),
            Some(e) => e.kind.to_string(),
        };
        self.0
            .lock()
            .unwrap()
            .push(format!("turn {}: {status}", turn.number()));
    }
}

#[tokio::test]
async fn the_observer_sees_each_request_and_turn_as_it_happens() {
    let llm = ScriptedLlm::new([
        clojure("(def a 1)"),
        "no code".into(),
        clojure("(return a)"),
    ]);
    let agent = Agent::builder("Go").llm(llm).build().expect("agent");
    let log = Log::default();
    let step = agent
        .run_with(RunOptions::new().with_observer(&log))
        .await
        .expect("runs");
    assert_eq!(step.value(), Some(&Value::Int(1)));
    assert_eq!(
        log.0.into_inner().unwrap(),
        vec![
            "request 1: 2 messages",
            "turn 1: ok",
            "request 2: 4 messages",
            "turn 2: no_program",
            "request 3: 6 messages",
            "turn 3: ok",
        ]
    );
}

/// Providers cache a prompt prefix only from 1,024 tokens on (Anthropic's and OpenAI's
/// minimum); below it every token of the system prompt is paid in full on every request, above
/// it a run that follows another pays a tenth (Anthropic) for it. The default prompt is kept
/// past the threshold in real tokens, not only in the four-characters-a-token estimate.
#[test]
fn the_default_system_prompt_is_long_enough_to_be_cached() {
    use ptc_compression::tokenizer::{OpenAiEncoding, TiktokenTokenizer, Tokenizer};
    let agent = Agent::builder("x")
        .llm(ScriptedLlm::new(Vec::<String>::new()))
        .build()
        .expect("agent");
    let text = &agent.system_prompt().text;
    for encoding in [OpenAiEncoding::Cl100kBase, OpenAiEncoding::O200kBase] {
        let tokens = TiktokenTokenizer::new(encoding).count_text(text);
        assert!(tokens >= 1024, "{encoding:?}: {tokens} tokens");
    }
}

#[test]
fn the_system_prompt_size_is_known() {
    let llm = ScriptedLlm::new(Vec::<String>::new());
    let plain = Agent::builder("x").llm(llm.clone()).build().expect("agent");
    let prompt = plain.system_prompt();
    // A deliberate number: changing the prompt or the builtin registry changes it.
    assert_eq!((prompt.chars, prompt.estimated_tokens), (4549, 1138));
    assert!(
        prompt
            .text
            .starts_with("You solve tasks by writing PTC-Lisp programs")
    );
    // The language paragraph comes from ptc-lisp's list of differences and its registry.
    assert!(
        prompt.text.contains(
            "\nEverything is as in Clojure, except: type gives keywords (:integer :string :map \
             ...); get, get-in and keyword lookup match string keys too; "
        ),
        "{}",
        prompt.text
    );
    assert!(
        prompt.text.contains(
            "\nAdded:\n- (all-of & preds): A predicate that is true when every pred is truthy.\n"
        ),
        "{}",
        prompt.text
    );
    assert!(
        prompt
            .text
            .contains("Each message ends with the turns left")
    );

    let single = Agent::builder("x")
        .llm(llm.clone())
        .max_turns(1)
        .build()
        .expect("agent");
    assert!(
        single
            .system_prompt()
            .text
            .contains("you get a single turn")
    );
    assert!(
        !single
            .system_prompt()
            .text
            .contains("Each message ends with the turns left")
    );

    let typed = Agent::builder("x")
        .llm(llm)
        .signature("{ids [:int], _key :string}")
        .system_prompt_extra("Answer in English.")
        .build()
        .expect("agent");
    let text = &typed.system_prompt().text;
    assert!(
        text.contains(
            "## Expected output\n\nCall `(return value)` with a value of this shape:\n\n    \
             {ids [:int], _key :string}\n\n\
             - `{field T}` is a map with keyword keys, e.g. `{:total 12.5}`; extra keys are fine.\n\
             - `[T]` is a list or vector whose items are all `T`.\n\
             - Fields starting with `_` go to the caller only: fill them in, but they are hidden \
             from you in later messages.\n\nAnswer in English."
        ),
        "{text}"
    );
    assert!(text.ends_with("\n\nAnswer in English."));
}

#[tokio::test]
async fn history_summaries_are_written_by_the_agents_model() {
    let llm = ScriptedLlm::new([
        clojure("(def a 1)"),
        clojure("(def b 2)"),
        clojure("(def c 3)"),
        clojure("(def d 4)"),
        "## Goal\nAdd numbers\n## Facts learned\n- a, b defined".into(),
        clojure("(return (+ a b c d))"),
    ]);
    let agent = Agent::builder("Add numbers")
        .llm(llm.clone())
        .max_turns(6)
        .history_policy(
            HistoryPolicy::default().with_summary(SummaryStrategy::FromLastNMessages(2)),
        )
        .build()
        .expect("agent");
    let step = agent.run().await.expect("runs");
    assert_eq!(step.value(), Some(&Value::Int(10)));
    let requests = llm.requests();
    assert_eq!(requests.len(), 6);
    // The fifth model call is the summary, made before turn 5's request.
    assert!(requests[4].system.contains("## Facts learned"));
    assert_eq!(requests[4].messages.len(), 1);
    let fifth = &requests[5];
    assert_eq!(
        fifth.messages.iter().map(|m| m.role).collect::<Vec<_>>(),
        vec![Role::User, Role::User, Role::Assistant, Role::User]
    );
    assert_eq!(fifth.messages[0].content, "Add numbers");
    assert_eq!(
        fifth.messages[1].content,
        format!("{SUMMARY_HEADER}\n## Goal\nAdd numbers\n## Facts learned\n- a, b defined")
    );
    assert_eq!(fifth.messages[2].content, clojure("(def d 4)"));
    // The summary call is part of the cost of the turn that needed it.
    assert_eq!(step.turns[4].usage().llm_requests, 2);
    assert_eq!(step.usage.llm_requests, 6);
}

#[tokio::test]
async fn a_history_budget_must_hold_the_system_prompt_and_the_mission() {
    let llm = ScriptedLlm::new(Vec::<String>::new());
    let error = Agent::builder("x")
        .llm(llm.clone())
        .history_policy(HistoryPolicy::default().with_max_tokens(100))
        .build()
        .expect_err("the system prompt alone is larger");
    assert_eq!(
        error.to_string(),
        "the history policy cannot be applied: max_tokens is 100, but the system messages alone \
         take about 1142 tokens; raise max_tokens to at least 1142 or shorten the system messages"
    );
    // The system prompt fits, but not together with a long mission.
    let agent = Agent::builder("y ".repeat(400))
        .llm(llm)
        .history_policy(HistoryPolicy::default().with_max_tokens(1300))
        .build()
        .expect("the system prompt fits");
    let error = agent.run().await.expect_err("no room for the mission");
    assert_eq!(
        error.to_string(),
        "the history policy's max_tokens (1300) cannot hold the system prompt (about 1142 \
         tokens) and the mission message (about 208 tokens), which are always sent; raise \
         max_tokens to at least 1350"
    );
}

/// `1234567` as `1,234,567`, as the docs write numbers.
fn thousands(n: usize) -> String {
    ptc_compression::cost::token_count_text(n as f64)
}

#[test]
fn the_documented_system_prompt_size_is_the_real_one() {
    // docs/agent.md states the size of the default prompt; this keeps it true.
    let agent = Agent::builder("x")
        .llm(ScriptedLlm::new(Vec::<String>::new()))
        .build()
        .expect("agent");
    let prompt = agent.system_prompt();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/agent.md");
    let doc = std::fs::read_to_string(&path)
        .expect("docs/agent.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let sentence = format!(
        "a default agent's prompt is {} characters, about {} tokens.",
        thousands(prompt.chars),
        thousands(prompt.estimated_tokens)
    );
    assert!(
        doc.contains(&sentence),
        "docs/agent.md should say: {sentence}"
    );
    assert_eq!(thousands(7836), "7,836");
    assert_eq!(thousands(999), "999");
}

#[tokio::test]
async fn a_history_policy_also_limits_compressed_messages() {
    let replies = [
        clojure("(def a 1)"),
        clojure("(first-item)"),
        clojure("(second-item)"),
        clojure("(third-item)"),
        clojure("(return a)"),
    ];
    let run = |policy: Option<HistoryPolicy>| {
        let llm = ScriptedLlm::new(replies.clone());
        let mut builder = Agent::builder("Find a")
            .llm(llm.clone())
            .compression_config(
                ptc_compression::CompressionConfig::parse("single-user-coalesced")
                    .expect("a strategy"),
            );
        if let Some(policy) = policy {
            builder = builder.history_policy(policy);
        }
        let agent = builder.build().expect("agent");
        async move {
            let step = agent.run().await.expect("runs");
            assert_eq!(step.value(), Some(&Value::Int(1)));
            llm.requests()
        }
    };
    // Compression alone: the coalesced user message, then the three unrecovered failed turns
    // as pairs.
    let compressed = run(None).await;
    let last = &compressed[4];
    assert_eq!(last.messages.len(), 7);
    // With a message limit too: the same coalesced user message (always kept), then the
    // newest messages that fit. Of four messages, the system message and the first user
    // message take two; the newest two are a program and its error, and a trimmed history may
    // not go on with the program (an assistant message), so only the error remains.
    let limited = run(Some(HistoryPolicy::default().with_max_messages(4))).await;
    let trimmed = &limited[4];
    assert_eq!(trimmed.system, last.system);
    assert_eq!(
        trimmed.messages,
        vec![last.messages[0].clone(), last.messages[6].clone()]
    );
    assert!(
        last.messages[0]
            .content
            .starts_with("Find a\n\n;; === user/ (your prelude) ===\na "),
        "{}",
        last.messages[0].content
    );
    assert_eq!(
        trimmed.messages[1].content,
        "Error: 1:2: undefined symbol third-item\n    (third-item)\n     ^\n\n\
         FINAL TURN - you must call (return result) or (fail reason) now."
    );
    // Up to four messages, the limit changes nothing.
    assert_eq!(compressed[2].messages.len(), 3);
    assert_eq!(limited[..3], compressed[..3]);
}

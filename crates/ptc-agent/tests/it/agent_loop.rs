//! Every way a run can go: return, fail, recover from errors, run out of turns, single-shot,
//! with and without compression, with a history policy.

use pretty_assertions::assert_eq;
use ptc_agent::{
    Agent, LlmError, LlmResponse, NO_PROGRAM, RetryPolicy, RunObserver, RunOptions, ScriptedLlm,
    ToolError, tool_fn, value_tool,
};
use ptc_compression::CompressionStats;
use ptc_compression::history::HistoryPolicy;
use ptc_lisp::Value;
use ptc_lisp::pr_str;
use ptc_turn::{FailureKind, Message, Role, Step, StepOutcome, TokenUsage};
use std::time::Duration;

fn clojure(program: &str) -> String {
    format!("Here is the next step.\n\n```clojure\n{program}\n```")
}

fn agent(mission: &str, llm: &ScriptedLlm) -> ptc_agent::AgentBuilder {
    Agent::builder(mission).llm(llm.clone())
}

async fn run(builder: ptc_agent::AgentBuilder) -> Step {
    builder
        .build()
        .expect("valid agent")
        .run()
        .await
        .expect("run starts")
}

/// The stats of every rendering of the history, by turn.
#[derive(Default)]
struct Renders(std::sync::Mutex<Vec<(u32, CompressionStats)>>);

impl RunObserver for Renders {
    fn on_history_rendered(&self, turn: u32, stats: &CompressionStats) {
        self.0.lock().unwrap().push((turn, stats.clone()));
    }
}

/// Turn, strategy and whether it compressed, of each rendering.
fn strategies(renders: &[(u32, CompressionStats)]) -> Vec<(u32, &str, bool)> {
    renders
        .iter()
        .map(|(turn, stats)| (*turn, stats.strategy.as_str(), stats.compressed))
        .collect()
}

/// The run, and the stats of its history's rendering for each turn.
async fn run_rendered(builder: ptc_agent::AgentBuilder) -> (Step, Vec<(u32, CompressionStats)>) {
    let renders = Renders::default();
    let agent = builder.build().expect("valid agent");
    let options = RunOptions::default().with_observer(&renders);
    let step = agent.run_with(options).await.expect("run starts");
    (step, renders.0.into_inner().unwrap())
}

fn failure(step: &Step) -> (FailureKind, String) {
    match &step.outcome {
        StepOutcome::Failed { kind, reason, .. } => (*kind, reason.clone()),
        StepOutcome::Returned { value } => panic!("expected a failure, got {}", pr_str(value)),
    }
}

fn errors(step: &Step) -> Vec<Option<String>> {
    step.turns
        .iter()
        .map(|t| t.error().map(|e| format!("{}: {e}", e.kind)))
        .collect()
}

fn value(text: &str) -> Value {
    ptc_lisp::eval_str(text).expect("a valid value")
}

/// The last user message of the request for turn `n` (1-based).
fn feedback(llm: &ScriptedLlm, n: usize) -> String {
    let request = &llm.requests()[n - 1];
    let last = request.messages.last().expect("a message");
    assert_eq!(last.role, Role::User);
    last.content.clone()
}

#[tokio::test]
async fn explores_then_returns_with_definitions_kept_across_turns() {
    let llm = ScriptedLlm::new([
        clojure(
            "(def total \"Sum of the numbers\" (reduce + data/numbers))\n(println \"total:\" total)",
        ),
        clojure("(return {:total total :count (count data/numbers)})"),
    ]);
    let step =
        run(agent("Sum the numbers", &llm).data(&serde_json::json!({"numbers": [1, 2, 3]}))).await;
    assert_eq!(step.value(), Some(&value("{:total 6 :count 3}")));
    assert_eq!(step.turns.len(), 2);
    let first = &step.turns[0];
    assert_eq!(first.number(), 1);
    assert_eq!(first.prints(), ["total: 6".to_string()]);
    assert_eq!(first.value(), Some(&Value::Nil));
    assert_eq!(
        first
            .memory()
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>(),
        vec!["total"]
    );
    // DBG-002: the raw reply and the exact messages sent are kept.
    assert_eq!(
        first.raw_response(),
        clojure(
            "(def total \"Sum of the numbers\" (reduce + data/numbers))\n(println \"total:\" total)"
        )
    );
    assert_eq!(first.messages()[0].role, Role::System);
    assert_eq!(first.messages()[1..], llm.requests()[0].messages[..]);
    assert_eq!(step.usage.llm_requests, 2);
    assert_eq!(step.task.mission, "Sum the numbers");
}

#[tokio::test]
async fn a_return_without_a_signature_is_taken_as_it_is() {
    let llm = ScriptedLlm::new([clojure("(return [1 \"two\" :three nil])")]);
    let step = run(agent("Anything", &llm)).await;
    assert_eq!(step.value(), Some(&value("[1 \"two\" :three nil]")));
    assert_eq!(step.turns.len(), 1);
}

#[tokio::test]
async fn a_return_matching_the_signature_ends_the_run() {
    let llm = ScriptedLlm::new([clojure("(return {:name \"Ada\" :score 9})")]);
    let step = run(agent("Best player", &llm).signature("{name :string, score :float}")).await;
    assert_eq!(step.value(), Some(&value("{:name \"Ada\" :score 9}")));
}

#[tokio::test]
async fn a_signature_mismatch_is_a_failed_turn_then_the_model_recovers() {
    let llm = ScriptedLlm::new([
        clojure(
            "(def best {:name \"Ada\"})\n(return {:name \"Ada\" :score \"nine\" :_token \"s3cret\"})",
        ),
        clojure("(return {:name \"Ada\" :score 9.5 :_token \"s3cret\"})"),
    ]);
    let step =
        run(agent("Best player", &llm).signature("{name :string, score :float, _token :string}"))
            .await;
    assert_eq!(
        step.value(),
        Some(&value("{:name \"Ada\" :score 9.5 :_token \"s3cret\"}"))
    );
    assert_eq!(
        errors(&step),
        vec![
            Some(
                "signature_mismatch: the returned value does not match the expected output.\n\
                 Expected: {name :string, score :float, _token :string}\n\
                 Returned: {:name \"Ada\" :score \"nine\" :_token \"[hidden]\"}\n\
                 - score: expected float, got string \"nine\"\n\
                 Fix the value and call (return ...) again."
                    .to_string()
            ),
            None
        ]
    );
    // The failed turn's definition is discarded.
    assert_eq!(step.turns[0].memory(), &[]);
    // The model reads the mismatch, with the firewalled field hidden.
    let shown = feedback(&llm, 2);
    assert!(
        shown.contains("Returned: {:name \"Ada\" :score \"nine\" :_token \"[hidden]\"}"),
        "{shown}"
    );
    assert!(!shown.contains("s3cret"), "{shown}");
}

#[tokio::test]
async fn fail_ends_the_run_with_the_reason() {
    let llm = ScriptedLlm::new([clojure("(fail \"the archive is empty\")")]);
    let step = run(agent("Read the archive", &llm)).await;
    assert_eq!(
        step.outcome,
        StepOutcome::Failed {
            kind: FailureKind::Failed,
            reason: "the archive is empty".into(),
            value: Some(Value::string("the archive is empty")),
            llm_errors: Vec::new(),
        }
    );
    assert_eq!(
        errors(&step),
        vec![Some(
            "failed: the program called (fail ...): the archive is empty".to_string()
        )]
    );
}

#[tokio::test]
async fn a_reply_without_code_is_a_failed_turn_that_says_so() {
    let llm = ScriptedLlm::new([
        "I would need to know more about the data first.".to_string(),
        clojure("(return 1)"),
    ]);
    let step = run(agent("Do it", &llm)).await;
    assert_eq!(step.value(), Some(&Value::Int(1)));
    assert_eq!(errors(&step)[0], Some(format!("no_program: {NO_PROGRAM}")));
    assert_eq!(step.turns[0].program(), "");
    assert_eq!(
        feedback(&llm, 2),
        format!("Error: {NO_PROGRAM}\n\nTurns left: 4")
    );
    // The reply is shown back as the model wrote it.
    let request = &llm.requests()[1];
    assert_eq!(
        request.messages[request.messages.len() - 2],
        Message::assistant("I would need to know more about the data first.")
    );
}

#[tokio::test]
async fn a_program_error_discards_its_definitions_and_the_model_recovers() {
    let llm = ScriptedLlm::new([
        clojure("(def a 1)"),
        clojure("(def bravo 2)\n(undefined-thing bravo)"),
        clojure("(def c (+ a 2))\n(inc bravo)"),
        clojure("(return a)"),
    ]);
    let step = run(agent("Count", &llm)).await;
    assert_eq!(step.value(), Some(&Value::Int(1)));
    assert_eq!(
        errors(&step),
        vec![
            None,
            Some("undefined_symbol: 2:2: undefined symbol undefined-thing".to_string()),
            Some("undefined_symbol: 2:6: undefined symbol bravo".to_string()),
            None,
        ]
    );
    let names = |n: usize| -> Vec<String> {
        step.turns[n]
            .memory()
            .iter()
            .map(|d| d.name.clone())
            .collect()
    };
    assert_eq!(names(1), vec!["a"]);
    assert_eq!(names(2), vec!["a"]);
    assert_eq!(names(3), vec!["a"]);
    assert_eq!(
        feedback(&llm, 3),
        "Error: 2:2: undefined symbol undefined-thing\n    (undefined-thing bravo)\n     ^\n\n\
         Turns left: 3"
    );
}

#[tokio::test]
async fn a_tool_error_is_a_turn_error_the_model_reads() {
    let lookup = tool_fn(
        "lookup",
        "Finds a user",
        |id: i64| -> Result<String, ToolError> {
            if id == 7 {
                Ok("Ada".into())
            } else {
                Err(ToolError::new(format!("no user with id {id}")))
            }
        },
    )
    .with_signature("(id :int) -> :string");
    let llm = ScriptedLlm::new([
        clojure("(tool/lookup 3)"),
        clojure("(return (tool/lookup 7))"),
    ]);
    let step = run(agent("Find user 7", &llm).tool(lookup)).await;
    assert_eq!(step.value(), Some(&Value::string("Ada")));
    assert_eq!(
        errors(&step)[0],
        Some("tool: 1:1: tool/lookup failed: no user with id 3".to_string())
    );
    assert_eq!(step.turns[0].tool_calls().len(), 1);
    // The failed call is listed after the error: the model sees what happened.
    assert_eq!(
        feedback(&llm, 2),
        "Error: 1:1: tool/lookup failed: no user with id 3\n    (tool/lookup 3)\n    ^\n\n\
         ;; Tool calls made before the error (they happened and are not undone):\n\
         ;   lookup(3) -> error: no user with id 3\n\n\
         Turns left: 4"
    );
}

#[tokio::test]
async fn a_tool_panic_is_a_turn_error_and_the_run_goes_on() {
    let boom = value_tool(
        "boom",
        "Always panics",
        |_args| -> Result<Value, ToolError> { panic!("disk on fire") },
    );
    let llm = ScriptedLlm::new([clojure("(tool/boom)"), clojure("(return :survived)")]);
    let step = run(agent("Try the tool", &llm).tool(boom)).await;
    assert_eq!(step.value(), Some(&Value::keyword("survived")));
    assert_eq!(
        errors(&step)[0],
        Some("tool: 1:1: tool/boom failed: the tool panicked: disk on fire".to_string())
    );
}

#[tokio::test]
async fn running_out_of_turns_fails_with_every_turn_kept() {
    let llm = ScriptedLlm::new([
        clojure("(def a 1)"),
        clojure("(oops)"),
        clojure("(def b 2)"),
    ]);
    let step = run(agent("Never returns", &llm).max_turns(3)).await;
    assert_eq!(
        failure(&step),
        (
            FailureKind::MaxTurnsExceeded,
            "no (return ...) or (fail ...) after 3 turns".to_string()
        )
    );
    assert_eq!(step.turns.len(), 3);
    assert_eq!(step.turns[2].program(), "(def b 2)");
    // MSG-005: the last request warns that it is the final turn.
    assert_eq!(
        feedback(&llm, 3),
        "Error: 1:2: undefined symbol oops\n    (oops)\n     ^\n\n\
         FINAL TURN - you must call (return result) or (fail reason) now."
    );
    assert_eq!(llm.remaining(), 0);
}

// SS-001, SS-002
#[tokio::test]
async fn single_shot_takes_the_last_value_and_is_never_compressed() {
    let llm = ScriptedLlm::new([clojure("(def xs [1 2 3])\n(println xs)\n(reduce + xs)")]);
    let (step, renders) = run_rendered(
        agent("Sum", &llm)
            .max_turns(1)
            .compression(true)
            .signature(":int"),
    )
    .await;
    assert_eq!(step.value(), Some(&Value::Int(6)));
    assert_eq!(strategies(&renders), vec![(1, "uncompressed", false)]);
    assert_eq!(
        llm.requests()[0].messages,
        vec![Message::user(
            "Sum\n\nFINAL TURN - you must call (return result) or (fail reason) now."
        )]
    );
}

#[tokio::test]
async fn single_shot_errors_and_mismatches_end_the_run() {
    let llm = ScriptedLlm::new([clojure("(+ 1 \"a\")")]);
    let step = run(agent("Add", &llm).max_turns(1)).await;
    let (kind, reason) = failure(&step);
    assert_eq!(kind, FailureKind::ProgramError);
    assert!(reason.starts_with("1:1: "), "{reason}");

    let llm = ScriptedLlm::new([clojure("\"six\"")]);
    let step = run(agent("Add", &llm).max_turns(1).signature(":int")).await;
    let (kind, reason) = failure(&step);
    assert_eq!(kind, FailureKind::SignatureMismatch);
    assert!(
        reason.contains("- the value: expected int, got string \"six\""),
        "{reason}"
    );
}

#[tokio::test]
async fn max_turns_defaults_to_five() {
    let llm = ScriptedLlm::new((0..5).map(|i| clojure(&format!("(def x{i} {i})"))));
    let step = run(agent("Loop", &llm)).await;
    assert_eq!(failure(&step).0, FailureKind::MaxTurnsExceeded);
    assert_eq!(step.turns.len(), 5);
    assert_eq!(step.task.max_turns, 5);
}

const TWO_TURNS: [&str; 2] = [
    "(def total \"Sum of the numbers\" (reduce + data/numbers))\n(println \"total:\" total)",
    "(return total)",
];

// CMP-004: each request renders the stored turns again, at the start of its turn.
// MSG-006, DBG-004: with compression (the default strategy) the second request is the first one
// without its turn count, then the program alone and the short feedback on it.
#[tokio::test]
async fn with_compression_the_history_grows_by_programs_and_short_feedback() {
    let llm = ScriptedLlm::new(TWO_TURNS.map(clojure));
    let (step, renders) = run_rendered(
        agent("Sum the numbers", &llm)
            .data(&serde_json::json!({"numbers": [1, 2, 3]}))
            .compression(true),
    )
    .await;
    assert_eq!(step.value(), Some(&Value::Int(6)));
    let second = &llm.requests()[1];
    assert_eq!(second.system, llm.requests()[0].system);
    assert_eq!(
        second.messages,
        vec![
            Message::user(
                "Sum the numbers\n\n\
                 ;; === data/ ===\n\
                 data/numbers                  ; list[3], whole: [1 2 3]"
            ),
            // The reply's sentence before the program is left out: the program is shorter.
            Message::assistant(format!("```clojure\n{}\n```", TWO_TURNS[0])),
            Message::user(";; Output:\ntotal: 6\n\nTurns left: 4"),
        ]
    );
    assert_eq!(
        strategies(&renders),
        vec![(1, "append-compact", true), (2, "append-compact", true)]
    );
    let stats = &renders[1].1;
    assert!(stats.estimated_tokens < stats.uncompressed_estimated_tokens);
}

#[tokio::test]
async fn without_compression_the_full_history_is_sent() {
    let llm = ScriptedLlm::new(TWO_TURNS.map(clojure));
    let (step, renders) = run_rendered(
        agent("Sum the numbers", &llm).data(&serde_json::json!({"numbers": [1, 2, 3]})),
    )
    .await;
    assert_eq!(step.value(), Some(&Value::Int(6)));
    let second = &llm.requests()[1];
    assert_eq!(
        second.messages,
        vec![
            Message::user(
                "Sum the numbers\n\n\
                 ;; === data/ ===\n\
                 data/numbers                  ; list[3], whole: [1 2 3]"
            ),
            Message::assistant(clojure(TWO_TURNS[0])),
            Message::user(";; Output:\ntotal: 6\n\n;; Result: nil\n\nTurns left: 4"),
        ]
    );
    // The full history only grows: the turn count is the one thing the next request drops.
    assert_eq!(
        llm.requests()[0].messages[0].content,
        format!("{}\n\nTurns left: 5", second.messages[0].content)
    );
    assert_eq!(
        strategies(&renders),
        vec![(1, "uncompressed", false), (2, "uncompressed", false)]
    );
}

// NS-012: the stable prefix (mission, tool/, data/) is marked for the prompt cache, and with
// the default strategy the newest message up to its turn count too: the next request repeats
// everything before it.
#[tokio::test]
async fn cache_breakpoints_mark_the_prefix_and_the_newest_stable_message() {
    let llm = ScriptedLlm::new(TWO_TURNS.map(clojure));
    run(agent("Sum the numbers", &llm)
        .data(&serde_json::json!({"numbers": [1, 2, 3]}))
        .compression(true))
    .await;
    let requests = llm.requests();
    let marked: Vec<Vec<(usize, String)>> = requests
        .iter()
        .map(|request| {
            request
                .cache_breakpoints
                .iter()
                .map(|b| {
                    let text = &request.messages[b.message_index].content;
                    (b.message_index, text[..b.byte_offset].to_string())
                })
                .collect()
        })
        .collect();
    let prefix = "Sum the numbers\n\n;; === data/ ===\n\
                  data/numbers                  ; list[3], whole: [1 2 3]";
    assert_eq!(
        marked,
        vec![
            vec![(0, prefix.to_string())],
            vec![
                (0, prefix.to_string()),
                (2, ";; Output:\ntotal: 6".to_string()),
            ],
        ]
    );
    // The second request repeats the first up to its last breakpoint.
    assert_eq!(requests[1].messages[0].content, prefix);
}

#[tokio::test]
async fn the_history_policy_trims_the_uncompressed_history_but_keeps_the_mission() {
    let llm = ScriptedLlm::new([
        clojure("(def a 1)"),
        clojure("(def b 2)"),
        clojure("(def c 3)"),
        clojure("(return [a b c])"),
    ]);
    let step =
        run(agent("Build a list", &llm)
            .history_policy(HistoryPolicy::default().with_max_messages(5)))
        .await;
    assert_eq!(step.value(), Some(&value("[1 2 3]")));
    let fourth = &llm.requests()[3];
    assert_eq!(
        fourth.messages,
        vec![
            Message::user("Build a list"),
            Message::user(";; Result: #'user/b"),
            Message::assistant(clojure("(def c 3)")),
            Message::user(";; Result: #'user/c\n\nTurns left: 2"),
        ]
    );
    // The turn records exactly what was sent.
    assert_eq!(step.turns[3].messages()[1..], fourth.messages[..]);
}

#[tokio::test]
async fn a_permanent_model_error_fails_the_run_with_the_turns_so_far() {
    let llm = ScriptedLlm::from_results([
        Ok(
            LlmResponse::text(clojure("(def a 1)")).with_usage(TokenUsage {
                input_tokens: 100,
                output_tokens: 10,
                ..TokenUsage::default()
            }),
        ),
        Err(LlmError::Http {
            provider: "test".into(),
            status: 401,
            message: "invalid key".into(),
        }),
    ]);
    let step = run(agent("Go", &llm)).await;
    assert_eq!(
        failure(&step),
        (
            FailureKind::LlmError,
            "test answered HTTP 401: invalid key (check the API key and its permissions)"
                .to_string()
        )
    );
    assert_eq!(step.turns.len(), 1);
    assert_eq!(step.usage.llm_requests, 2);
    assert_eq!(step.usage.tokens.input_tokens, 100);
}

#[tokio::test]
async fn transient_model_errors_are_retried_by_the_agent_policy() {
    let overloaded = || LlmError::Http {
        provider: "test".into(),
        status: 503,
        message: "overloaded".into(),
    };
    let policy = RetryPolicy {
        max_retries: 2,
        initial_backoff: Duration::ZERO,
        jitter: false,
        ..RetryPolicy::default()
    };
    let llm = ScriptedLlm::from_results([
        Err(overloaded()),
        Ok(LlmResponse::text(clojure("(return 1)"))),
    ]);
    let step = run(agent("Go", &llm).retry_policy(policy.clone())).await;
    assert_eq!(step.value(), Some(&Value::Int(1)));
    assert_eq!(step.usage.llm_requests, 2);
    assert_eq!(step.turns[0].usage().llm_requests, 2);

    // A reply cut short by a dropped connection, then a server that is gone: the reason names
    // the first failure and the last, and the step keeps all three.
    let dropped = LlmError::Transport {
        provider: "test".into(),
        message: "connection closed before message completed".into(),
    };
    let refused = LlmError::Connect {
        provider: "test".into(),
        url: "http://127.0.0.1:9/v1/chat/completions".into(),
        message: "Connection refused (os error 111)".into(),
    };
    let llm = ScriptedLlm::from_results([
        Err(dropped.clone()),
        Err(overloaded()),
        Err(refused.clone()),
    ]);
    let step = run(agent("Go", &llm).retry_policy(policy)).await;
    assert_eq!(
        failure(&step),
        (
            FailureKind::LlmError,
            "gave up after 3 attempts; the first failed with: network error talking to test: \
             connection closed before message completed; the last with: could not connect to \
             test at http://127.0.0.1:9/v1/chat/completions: Connection refused (os error 111); \
             check that the server is running and that the URL is right"
                .to_string()
        )
    );
    let StepOutcome::Failed { llm_errors, .. } = &step.outcome else {
        panic!("expected a failed run");
    };
    assert_eq!(
        llm_errors,
        &vec![
            dropped.to_string(),
            overloaded().to_string(),
            refused.to_string()
        ]
    );
    assert_eq!(step.usage.llm_requests, 3);
}

fn cut_off(content: &str) -> Result<LlmResponse, LlmError> {
    Ok(LlmResponse::text(content).with_stop_reason("length"))
}

#[tokio::test]
async fn every_request_carries_the_reply_limit() {
    let llm = ScriptedLlm::new([clojure("(return 1)")]);
    run(agent("Go", &llm)).await;
    assert_eq!(
        llm.requests()[0].max_tokens,
        Some(ptc_agent::llm::DEFAULT_MAX_TOKENS)
    );
    let llm = ScriptedLlm::new([clojure("(return 1)")]);
    let built = agent("Go", &llm).max_tokens(300).build().expect("agent");
    assert_eq!(built.max_tokens(), 300);
    built.run().await.expect("runs");
    assert_eq!(llm.requests()[0].max_tokens, Some(300));
}

#[tokio::test]
async fn a_reply_cut_off_by_the_limit_is_recorded_and_the_model_told() {
    let llm = ScriptedLlm::from_results([
        // Cut inside the program: it does not parse, and the model hears why.
        cut_off("Let me sum them.\n```clojure\n(return (reduce + [1 2"),
        // Cut before any program.
        cut_off("First I will explain the approach in detail. The data holds"),
        // Cut after a complete program: it runs.
        cut_off("```clojure\n(return 3)\n```\nThis works because"),
    ]);
    let step = run(agent("Sum 1 and 2", &llm).max_tokens(40)).await;
    assert_eq!(step.value(), Some(&Value::Int(3)));
    assert_eq!(
        errors(&step),
        vec![
            Some(
                "reply_cut_off: Your reply was cut off at the limit of 40 tokens before its \
                 program was complete (the program was incomplete: 1:23: unclosed '[' opened \
                 at 1:19), so nothing ran. Write a shorter program, with little or no text \
                 around it."
                    .to_string()
            ),
            Some(
                "reply_cut_off: Your reply was cut off at the limit of 40 tokens before its \
                 program was complete, so nothing ran. Write a shorter program, with little or \
                 no text around it."
                    .to_string()
            ),
            None,
        ]
    );
    let flags: Vec<(Option<&str>, bool)> = step
        .turns
        .iter()
        .map(|t| (t.stop_reason(), t.reply_cut_off()))
        .collect();
    assert_eq!(
        flags,
        vec![
            (Some("length"), true),
            (Some("length"), true),
            (Some("length"), true)
        ]
    );
    // The model reads the error in the next request.
    assert!(
        feedback(&llm, 2).contains("Your reply was cut off at the limit of 40 tokens"),
        "{}",
        feedback(&llm, 2)
    );
}

#[tokio::test]
async fn a_reply_that_ended_on_its_own_is_not_cut_off() {
    let llm = ScriptedLlm::from_results([Ok(
        LlmResponse::text(clojure("(return 1)")).with_stop_reason("stop")
    )]);
    let step = run(agent("Go", &llm)).await;
    assert_eq!(step.turns[0].stop_reason(), Some("stop"));
    assert!(!step.turns[0].reply_cut_off());
    let llm = ScriptedLlm::new(["I cannot."]);
    let step = run(agent("Go", &llm).max_turns(1)).await;
    assert_eq!(
        errors(&step),
        vec![Some(format!("no_program: {NO_PROGRAM}"))]
    );
    assert_eq!(step.turns[0].stop_reason(), None);
}

//! A compiled agent answers as the run it was compiled from: earlier values (`*1 *2 *3 *e`),
//! float precision and the limit on what is kept between turns travel with it, through its
//! file too, while a file written before they did runs as it always did.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, AgentBuilder, CompiledAgent, ScriptedLlm};
use ptc_turn::{Step, StepOutcome};

/// How a run ended, in one line: `returned <value>` (strings quoted) or `failed <kind>:
/// <reason>`.
fn ending(step: &Step) -> String {
    match &step.outcome {
        StepOutcome::Returned { value } => format!("returned {}", ptc_lisp::pr_str(value)),
        StepOutcome::Failed { kind, reason, .. } => format!("failed {}: {reason}", kind.as_str()),
    }
}

fn agent(replies: &[&str], data: serde_json::Value) -> AgentBuilder {
    Agent::builder("Work it out")
        .llm(ScriptedLlm::new(replies.to_vec()))
        .data(&data)
}

/// The compiled agent of `agent`'s run, which must have ended as `expected`, as its file reads
/// back.
async fn compile(agent: Agent, expected: &str) -> CompiledAgent {
    let step = agent.run().await.unwrap();
    assert_eq!(ending(&step), expected);
    let compiled = agent.compiled_from(&step).unwrap();
    let loaded = CompiledAgent::from_json(&compiled.to_json()).unwrap();
    assert_eq!(loaded, compiled);
    loaded
}

/// The file of `compiled` as JSON, with its creation time and duration fixed.
fn file_json(compiled: &CompiledAgent) -> serde_json::Value {
    let mut json: serde_json::Value = serde_json::from_str(&compiled.to_json()).unwrap();
    json["metadata"]["created_at"] = "Thu, 26 Nov 2026 04:30:25 GMT".into();
    json["metadata"]["duration_ms"] = 0.into();
    json
}

/// `compiled` as a file of format 1 reads it: without the fields that came after.
fn as_format_1(compiled: &CompiledAgent) -> CompiledAgent {
    let mut json = file_json(compiled);
    let file = json.as_object_mut().unwrap();
    file.insert("format".into(), 1.into());
    for field in ["float_precision", "max_kept_bytes", "last_errors"] {
        file.remove(field);
    }
    CompiledAgent::from_json(&serde_json::Value::Object(file.clone()).to_string()).unwrap()
}

#[tokio::test]
async fn earlier_values_are_the_values_of_the_earlier_stages() {
    let compiled = compile(
        agent(&["(+ 2 3)", "(return *1)"], serde_json::json!({}))
            .build()
            .unwrap(),
        "returned 5",
    )
    .await;
    let step = compiled.run(&serde_json::json!({})).await.unwrap();
    assert_eq!(ending(&step), "returned 5");

    // A failed turn has no value and is no stage, so `*1 *2 *3` skip it in both.
    let compiled = compile(
        agent(
            &[
                "(count data/xs)",
                "(no-such-fn)",
                "(reduce + data/xs)",
                "(apply max data/xs)",
                "(return [*1 *2 *3])",
            ],
            serde_json::json!({"xs": [4, 1, 7]}),
        )
        .build()
        .unwrap(),
        "returned [7 12 3]",
    )
    .await;
    let step = compiled
        .run(&serde_json::json!({"xs": [4, 1, 7]}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned [7 12 3]");
    let step = compiled
        .run(&serde_json::json!({"xs": [10, 20]}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned [20 30 2]");
    // `*1 *2 *3` are computed, not kept: a file of format 1 reads them as well.
    let step = as_format_1(&compiled)
        .run(&serde_json::json!({"xs": [10, 20]}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned [20 30 2]");
}

#[tokio::test]
async fn the_last_error_is_the_one_the_stage_was_written_after() {
    let compiled = compile(
        agent(
            &[
                "(def n (count data/xs))",
                "(nth data/xs 9)",
                "(return {:n n :error *e})",
            ],
            serde_json::json!({"xs": [1, 2]}),
        )
        .build()
        .unwrap(),
        "returned {:n 2, :error {:turn 2, :kind \"index\", :message \"nth: index 9 is out of \
         bounds for a vector of 2 items\"}}",
    )
    .await;
    let json = file_json(&compiled);
    assert_eq!(
        json["last_errors"],
        serde_json::json!({"2": {
            "turn": 2,
            "kind": "index",
            "message": "nth: index 9 is out of bounds for a vector of 2 items"
        }})
    );
    let step = compiled
        .run(&serde_json::json!({"xs": [1, 2]}))
        .await
        .unwrap();
    assert_eq!(
        ending(&step),
        "returned {:n 2, :error {:turn 2, :kind \"index\", :message \"nth: index 9 is out of \
         bounds for a vector of 2 items\"}}"
    );
    let step = compiled
        .run(&serde_json::json!({"xs": [1, 2, 3]}))
        .await
        .unwrap();
    assert_eq!(
        ending(&step),
        "returned {:n 3, :error {:turn 2, :kind \"index\", :message \"nth: index 9 is out of \
         bounds for a vector of 2 items\"}}"
    );
    // A file of format 1 kept no error: `*e` is nil there, as before.
    let step = as_format_1(&compiled)
        .run(&serde_json::json!({"xs": [1, 2]}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned {:n 2, :error nil}");

    // Only the stages that read `*e` keep it, and only when there was an error before them.
    let compiled = compile(
        agent(
            &["(str *e)", "(nth [] 1)", "(return 1)"],
            serde_json::json!({}),
        )
        .build()
        .unwrap(),
        "returned 1",
    )
    .await;
    assert_eq!(file_json(&compiled).get("last_errors"), None);
}

#[tokio::test]
async fn floats_are_rounded_as_the_run_rounded_them() {
    let compiled = compile(
        agent(
            &["(return {:mean (/ (reduce + data/xs) (count data/xs))})"],
            serde_json::json!({"xs": [1.0, 2.0, 7.0]}),
        )
        .float_precision(2)
        .build()
        .unwrap(),
        "returned {:mean 3.33}",
    )
    .await;
    assert_eq!(compiled.float_precision(), Some(2));
    assert_eq!(file_json(&compiled)["float_precision"], 2);
    let step = compiled
        .run(&serde_json::json!({"xs": [1.0, 2.0, 7.0]}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned {:mean 3.33}");
    let step = compiled
        .run(&serde_json::json!({"xs": [1.0, 1.0, 0.0]}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned {:mean 0.67}");
    // The stage's turn holds the answer as the run's last turn held it: rounded.
    assert_eq!(
        step.turns[0].value().map(ptc_lisp::print_str),
        Some("{:mean 0.67}".to_string())
    );

    let old = as_format_1(&compiled);
    assert_eq!(old.float_precision(), None);
    let step = old
        .run(&serde_json::json!({"xs": [1.0, 2.0, 7.0]}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned {:mean 3.3333333333333335}");

    // Without the setting, the file has no such field.
    let compiled = compile(
        agent(&["(return (/ 1.0 3))"], serde_json::json!({}))
            .build()
            .unwrap(),
        "returned 0.3333333333333333",
    )
    .await;
    assert_eq!(file_json(&compiled).get("float_precision"), None);
}

#[tokio::test]
async fn a_stage_keeping_more_than_the_run_could_keep_fails_as_its_turn_would_have() {
    let compiled = compile(
        agent(
            &["(def xs data/xs)", "(return (count xs))"],
            serde_json::json!({"xs": [1, 2, 3]}),
        )
        .max_kept_bytes(200)
        .build()
        .unwrap(),
        "returned 3",
    )
    .await;
    assert_eq!(compiled.max_kept_bytes(), Some(200));
    let small = serde_json::json!({"xs": [1, 2, 3, 4]});
    let step = compiled.run(&small).await.unwrap();
    assert_eq!(ending(&step), "returned 4");
    let large = serde_json::json!({"xs": (0..100).collect::<Vec<_>>()});
    let step = compiled.run(&large).await.unwrap();
    assert_eq!(
        ending(&step),
        "failed program_error: your definitions would take more than 200 bytes kept between \
         turns, the most a run may keep (largest: xs (more than 200 bytes)); nothing this \
         program defined was kept. Keep less: def only what later programs need (counts, ids, \
         the few fields or items you use), not whole tool results, and compute the rest in the \
         same program."
    );
    assert_eq!(step.turns.len(), 1);

    // A file of format 1 had no such limit.
    let old = as_format_1(&compiled);
    assert_eq!(old.max_kept_bytes(), None);
    let step = old.run(&large).await.unwrap();
    assert_eq!(ending(&step), "returned 100");
}

#[tokio::test]
async fn a_run_whose_failed_turn_called_tools_is_refused() {
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = sent.clone();
    let send = ptc_agent::async_tool("send", "Send a message", move |_: serde_json::Value| {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok("sent")
        }
    });
    let agent = agent(
        &[
            "(tool/send {:to \"a\"}) (tool/send {:to \"b\"}) (tool/send {:to \"a\"}) (nth [] 1)",
            "(return :done)",
        ],
        serde_json::json!({}),
    )
    .tool(send)
    .build()
    .unwrap();
    let step = agent.run().await.unwrap();
    assert_eq!(ending(&step), "returned :done");
    assert_eq!(sent.load(std::sync::atomic::Ordering::SeqCst), 3);
    assert_eq!(
        agent.compiled_from(&step).unwrap_err().to_string(),
        "cannot compile: turn 1 failed after calling tool/send, and a compiled agent runs only \
         the programs of the successful turns: it would not make those calls, which the turns \
         after it may rely on (a side effect already done, a failure retried); run the agent \
         instead, or compile a run whose failed turns call no tools"
    );
}

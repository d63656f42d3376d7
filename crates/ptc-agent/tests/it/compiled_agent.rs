//! Compiled agents: compiling a scripted run, inspecting the result, running it on new inputs
//! without a model (one, a batch, cases to validate), saving and loading it, and the agents
//! that are refused.

use std::collections::BTreeMap;

use pretty_assertions::assert_eq;
use ptc_agent::{
    Agent, Case, CompiledAgent, ExecError, LoadError, ScriptedLlm, ToolError, async_tool,
};
use ptc_lisp::Value;
use ptc_turn::{Step, StepOutcome};
use serde::Deserialize;

fn value(text: &str) -> Value {
    ptc_lisp::eval_str(text).expect("a valid value")
}

fn input(text: &str) -> BTreeMap<String, Value> {
    match value(text) {
        Value::Map(_) => ptc_lisp::data_entries(&value(text))
            .expect("data entries")
            .into_iter()
            .collect(),
        other => panic!("not a map: {other:?}"),
    }
}

/// How a run ended, in one line: `returned <value>` or `failed <kind>: <reason>`.
fn ending(step: &Step) -> String {
    match &step.outcome {
        StepOutcome::Returned { value } => format!("returned {}", ptc_lisp::print_str(value)),
        StepOutcome::Failed { kind, reason, .. } => format!("failed {}: {reason}", kind.as_str()),
    }
}

#[derive(Deserialize)]
struct Price {
    sku: String,
}

fn price_tool() -> impl ptc_agent::AsyncTool {
    async_tool(
        "price",
        "The price of a product",
        |args: Price| async move {
            tokio::task::yield_now().await;
            match args.sku.as_str() {
                "a" => Ok(3),
                "b" => Ok(5),
                "c" => Ok(11),
                other => Err(ToolError::new(format!("no product {other}"))),
            }
        },
    )
    .with_signature("(sku :string) -> :int")
}

fn unused_tool() -> impl ptc_agent::AsyncTool {
    async_tool("unused", "Never called", |_: Price| async move { Ok(0) })
        .with_signature("(sku :string) -> :int")
}

const DEFINE: &str = "(defn cost [skus] (reduce + (map tool/price skus)))";
const BROKEN: &str = "(return {:total (costs data/skus)})";
const FINAL: &str = "(return {:total (cost data/skus) :items (count data/skus)})";

/// A three-turn run: a definition, a failed turn, and the answer that uses the definition.
fn multi_turn_agent() -> Agent {
    Agent::builder("Price the basket")
        .llm(ScriptedLlm::new([DEFINE, BROKEN, FINAL]))
        .tool(price_tool())
        .tool(unused_tool())
        .signature("(skus [:string]) -> {total :int, items :int}")
        .data(&serde_json::json!({"skus": ["a", "b"]}))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_multi_turn_run_compiles_to_its_successful_programs() {
    let compiled = multi_turn_agent().compile().await.unwrap();
    assert_eq!(compiled.programs(), [DEFINE.to_string(), FINAL.to_string()]);
    assert_eq!(compiled.source(), format!("{DEFINE}\n\n{FINAL}"));
    assert_eq!(compiled.tool_names(), ["price".to_string()]);
    assert_eq!(compiled.mission(), "Price the basket");
    assert_eq!(
        compiled.signature().map(|s| s.source()),
        Some("(skus [:string]) -> {total :int, items :int}")
    );
    let meta = compiled.metadata();
    assert_eq!(
        (
            meta.model.as_str(),
            meta.provider.as_str(),
            meta.llm_requests,
            meta.turns,
            meta.compression.as_str()
        ),
        ("scripted", "scripted", 3, 3, "off")
    );
    assert!(
        httpdate::parse_http_date(&meta.created_at).is_ok(),
        "{}",
        meta.created_at
    );
}

#[tokio::test]
async fn a_compiled_agent_runs_on_new_inputs_with_its_tools_and_no_model() {
    let compiled = multi_turn_agent().compile().await.unwrap();
    let step = compiled
        .run(&serde_json::json!({"skus": ["c", "c", "a"]}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned {:total 25, :items 3}");
    assert_eq!(step.turns.len(), 2);
    assert_eq!(step.usage.llm_requests, 0);
    assert_eq!(step.usage.tokens, Default::default());
    assert_eq!(step.turns[1].tool_calls().len(), 3);

    let step = compiled
        .run(&serde_json::json!({"skus": ["a", "zz"]}))
        .await
        .unwrap();
    assert_eq!(
        ending(&step),
        "failed program_error: 1:29: tool/price failed: no product zz"
    );
}

#[tokio::test]
async fn the_input_and_the_answer_are_checked_against_the_signature() {
    let compiled = multi_turn_agent().compile().await.unwrap();
    let error = compiled
        .run(&serde_json::json!({"skus": "a"}))
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "the input data does not match the signature's parameters: data/skus: expected list, \
         got string \"a\""
    );

    let agent = Agent::builder("Echo")
        .llm(ScriptedLlm::new(["(return data/x)"]))
        .signature("(x :any) -> :int")
        .data(&serde_json::json!({"x": 1}))
        .build()
        .unwrap();
    let step = agent
        .compile()
        .await
        .unwrap()
        .run(&serde_json::json!({"x": "one"}))
        .await
        .unwrap();
    assert_eq!(
        ending(&step),
        "failed signature_mismatch: the returned value does not match the expected output.\n\
         Expected: :int\nReturned: \"one\"\n- the value: expected int, got string \"one\"\n\
         Fix the value and call (return ...) again."
    );
}

#[tokio::test]
async fn a_batch_runs_every_input_and_keeps_their_order() {
    let compiled = multi_turn_agent().compile().await.unwrap();
    let results = compiled
        .run_batch(vec![
            input("{:skus [\"a\"]}"),
            input("{:skus 7}"),
            input("{:skus [\"b\" \"c\"]}"),
            input("{:skus []}"),
        ])
        .await;
    let lines: Vec<String> = results
        .iter()
        .map(|r| match r {
            Ok(step) => ending(step),
            Err(error) => format!("error: {error}"),
        })
        .collect();
    assert_eq!(
        lines,
        [
            "returned {:total 3, :items 1}",
            "error: the input data does not match the signature's parameters: data/skus: \
             expected list, got integer 7",
            "returned {:total 16, :items 2}",
            "returned {:total 0, :items 0}",
        ]
    );
}

#[tokio::test]
async fn a_bounded_batch_keeps_at_most_that_many_runs_in_flight() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    #[derive(Default)]
    struct Load {
        now: AtomicUsize,
        most: AtomicUsize,
    }
    let load = Arc::new(Load::default());
    let watched = {
        let load = load.clone();
        async_tool("price", "The price of a product", move |_: Price| {
            let load = load.clone();
            async move {
                let now = load.now.fetch_add(1, Ordering::SeqCst) + 1;
                load.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                load.now.fetch_sub(1, Ordering::SeqCst);
                Ok(1)
            }
        })
        .with_signature("(sku :string) -> :int")
    };
    let compiled = Agent::builder("Price the basket")
        .llm(ScriptedLlm::new([
            "(return {:total (reduce + (map tool/price data/skus)) :items (count data/skus)})",
        ]))
        .tool(watched)
        .signature("(skus [:string]) -> {total :int, items :int}")
        .data(&serde_json::json!({"skus": ["a"]}))
        .build()
        .unwrap()
        .compile()
        .await
        .unwrap();
    let inputs = vec![input("{:skus [\"a\"]}"); 6];
    let bounded = compiled.run_batch_bounded(inputs.clone(), 2).await;
    assert_eq!(bounded.len(), 6);
    assert!(
        bounded
            .iter()
            .all(|r| r.as_ref().is_ok_and(|s| s.value().is_some()))
    );
    assert_eq!(load.most.swap(0, Ordering::SeqCst), 2);
    // Unbounded, the runs reach the tool together (all six unless the machine stalls one
    // for the whole of another's call).
    compiled.run_batch(inputs).await;
    assert!(load.most.load(Ordering::SeqCst) > 2);
}

#[tokio::test]
async fn a_single_shot_agent_answers_with_its_last_value() {
    let agent = Agent::builder("Sum")
        .llm(ScriptedLlm::new(["(+ data/a data/b)"]))
        .max_turns(1)
        .data(&serde_json::json!({"a": 1, "b": 2}))
        .build()
        .unwrap();
    let compiled = agent.compile().await.unwrap();
    let step = compiled
        .run(&serde_json::json!({"a": 40, "b": 2}))
        .await
        .unwrap();
    assert_eq!(ending(&step), "returned 42");

    // A multi-turn agent's program must still return.
    let agent = Agent::builder("Sum")
        .llm(ScriptedLlm::new([
            "(when (> data/a 0) (return (+ data/a data/b)))",
        ]))
        .data(&serde_json::json!({"a": 1, "b": 2}))
        .build()
        .unwrap();
    let step = agent
        .compile()
        .await
        .unwrap()
        .run(&serde_json::json!({"a": -1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(
        ending(&step),
        "failed program_error: the program ended without (return ...)"
    );
}

#[tokio::test]
async fn save_and_load_round_trip_exactly() {
    let compiled = multi_turn_agent().compile().await.unwrap();
    let path = std::env::temp_dir().join(format!("ptc-compiled-{}.json", std::process::id()));
    compiled.save(&path).unwrap();
    let loaded = CompiledAgent::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(loaded, compiled);
    assert_eq!(loaded.to_json(), compiled.to_json());
    assert_eq!(format!("{loaded:?}"), format!("{compiled:?}"));

    // Loaded, it has no tools until they are given.
    let data = serde_json::json!({"skus": ["b"]});
    assert_eq!(
        loaded.run(&data).await.unwrap_err(),
        ExecError::MissingTools(vec!["price".into()])
    );
    assert_eq!(
        loaded.run(&data).await.unwrap_err().to_string(),
        "the compiled agent calls tool/price but was not given it; add it with with_tool"
    );
    let step = loaded.with_tool(price_tool()).run(&data).await.unwrap();
    assert_eq!(ending(&step), "returned {:total 5, :items 1}");
}

#[tokio::test]
async fn the_file_format_is_versioned_json() {
    let compiled = multi_turn_agent().compile().await.unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&compiled.to_json()).unwrap();
    json["metadata"]["created_at"] = "Thu, 26 Nov 2026 04:30:25 GMT".into();
    let expected = serde_json::json!({
        "format": 2,
        "mission": "Price the basket",
        "signature": "(skus [:string]) -> {total :int, items :int}",
        "programs": [DEFINE, FINAL],
        "last_value_is_answer": false,
        "max_kept_bytes": 16 << 20,
        "tools": ["price"],
        "metadata": {
            "model": "scripted",
            "provider": "scripted",
            "tokens": {
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0
            },
            "llm_requests": 3,
            "turns": 3,
            "duration_ms": json["metadata"]["duration_ms"].clone(),
            "compression": "off",
            "created_at": "Thu, 26 Nov 2026 04:30:25 GMT"
        }
    });
    assert_eq!(json, expected);

    let mut newer = json.clone();
    newer["format"] = 3.into();
    assert_eq!(
        CompiledAgent::from_json(&newer.to_string())
            .unwrap_err()
            .to_string(),
        "the compiled agent has format version 3, but this version reads only versions 1 to \
         2; upgrade to run it, or compile the agent again"
    );
    let mut never = json.clone();
    never["format"] = 0.into();
    assert_eq!(
        CompiledAgent::from_json(&never.to_string()).unwrap_err(),
        LoadError::Corrupt("its format 0 is not a version this library ever wrote".into())
    );
    let mut unknown = json.clone();
    unknown["format"] = "one".into();
    assert_eq!(
        CompiledAgent::from_json(&unknown.to_string()).unwrap_err(),
        LoadError::Corrupt("its format \"one\" is not a version this library ever wrote".into())
    );
    assert_eq!(
        CompiledAgent::from_json("{\"programs\": []}")
            .unwrap_err()
            .to_string(),
        "not a valid compiled agent: it has no \"format\" field (is it a file written by `ptc \
         run --compile-to`?)"
    );
    assert_eq!(
        CompiledAgent::from_json("{\"format\": 1, \"mission\": 3")
            .unwrap_err()
            .to_string(),
        "not a valid compiled agent: EOF while parsing an object at line 1 column 26"
    );
    let mut missing = json.clone();
    missing.as_object_mut().unwrap().remove("programs");
    assert_eq!(
        CompiledAgent::from_json(&missing.to_string())
            .unwrap_err()
            .to_string(),
        "not a valid compiled agent: missing field `programs`"
    );
    assert_eq!(
        CompiledAgent::load("/nonexistent/compiled.json")
            .unwrap_err()
            .to_string(),
        "/nonexistent/compiled.json: No such file or directory (os error 2)"
    );
}

/// An agent with `tool` cannot be compiled, and is refused before its model is asked.
async fn assert_refused_before_any_request(tool: impl ptc_agent::AsyncTool + 'static) {
    let name = tool.name().to_string();
    let llm = ScriptedLlm::new(["(return 1)"]);
    let agent = Agent::builder("Use the tool")
        .llm(llm.clone())
        .tool(tool)
        .build()
        .unwrap();
    assert_eq!(
        agent.compile().await.unwrap_err().to_string(),
        format!(
            "cannot compile: tool/{name} needs a model when it is called (a sub-agent or a model \
             call), and a compiled agent runs without one; remove the tool or run the agent \
             instead"
        )
    );
    assert_eq!(llm.remaining(), 1);
}

#[tokio::test]
async fn an_agent_with_a_sub_agent_tool_is_refused_before_any_request() {
    let helper = Agent::builder("Help")
        .llm(ScriptedLlm::new(["(return 2)"]))
        .build()
        .unwrap();
    assert_refused_before_any_request(helper.as_tool("helper", "Helps")).await;
}

#[tokio::test]
async fn an_agent_with_an_llm_tool_is_refused_before_any_request() {
    let classify = ptc_agent::LlmTool::new(
        "classify",
        "(text :string) -> :keyword",
        "Classify this ticket: {{text}}",
    )
    .unwrap();
    assert_refused_before_any_request(classify).await;
}

#[test]
fn a_batch_outside_a_runtime_is_an_error_for_each_input() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let compiled = runtime.block_on(multi_turn_agent().compile()).unwrap();
    let results = poll_outside_a_runtime(compiled.run_batch(vec![input("{:skus []}"); 2]));
    assert_eq!(
        results,
        vec![
            Err(ExecError::Run(ptc_agent::RunError::NoRuntime)),
            Err(ExecError::Run(ptc_agent::RunError::NoRuntime))
        ]
    );
}

/// Polls `future` on this thread, outside any tokio runtime.
fn poll_outside_a_runtime<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

#[tokio::test]
async fn a_failed_run_compiles_to_nothing() {
    let agent = Agent::builder("Give up")
        .llm(ScriptedLlm::new(["(fail \"no data\")"]))
        .build()
        .unwrap();
    assert_eq!(
        agent.compile().await.unwrap_err().to_string(),
        "cannot compile: the run failed (failed) after 1 turn(s): no data"
    );
}

#[tokio::test]
async fn validation_reports_which_cases_passed_and_why_not() {
    let compiled = multi_turn_agent().compile().await.unwrap();
    let report = compiled
        .validate(vec![
            Case::new(
                &serde_json::json!({"skus": ["a", "b"]}),
                value("{:total 8 :items 2}"),
            )
            .unwrap(),
            Case::new(
                &serde_json::json!({"skus": ["c"]}),
                value("{:total 10 :items 1}"),
            )
            .unwrap(),
            Case::new(
                &serde_json::json!({"skus": ["x"]}),
                value("{:total 0 :items 1}"),
            )
            .unwrap(),
            Case::new(
                &serde_json::json!({"skus": "a"}),
                value("{:total 3 :items 1}"),
            )
            .unwrap(),
        ])
        .await;
    assert_eq!(report.passed(), 1);
    assert!(!report.all_passed());
    assert_eq!(
        report.to_string(),
        "1 of 4 cases passed\n\
         case 2: expected {:total 10, :items 1}, got {:total 11, :items 1}\n\
         case 3: failed (program_error): 1:29: tool/price failed: no product x\n\
         case 4: could not run: the input data does not match the signature's parameters: \
         data/skus: expected list, got string \"a\"\n"
    );
    assert_eq!(
        report
            .outcomes
            .iter()
            .map(|o| o.failure.is_none())
            .collect::<Vec<_>>(),
        [true, false, false, false]
    );
}

/// The example of the guide's section on compiled agents.
#[tokio::test]
async fn the_guide_example_runs() {
    let agent = Agent::builder("Total the prices")
        .llm(ScriptedLlm::new([
            "(defn total [items] (reduce + (map :price items)))",
            "(return (total data/items))",
        ]))
        .signature("(items [{price :int}]) -> :int")
        .data(&serde_json::json!({"items": [{"price": 2}, {"price": 3}]}))
        .build()
        .unwrap();
    let compiled = agent.compile().await.unwrap();
    assert_eq!(
        compiled.source(),
        "(defn total [items] (reduce + (map :price items)))\n\n(return (total data/items))"
    );
    assert_eq!(compiled.metadata().turns, 2);

    // New input, no model.
    let step = compiled
        .run(&serde_json::json!({"items": [{"price": 10}]}))
        .await
        .unwrap();
    assert_eq!(step.value(), Some(&Value::Int(10)));

    // Many inputs, concurrently, and cases with the answers expected.
    let report = compiled
        .validate(vec![
            Case::new(
                &serde_json::json!({"items": [{"price": 1}, {"price": 1}]}),
                Value::Int(2),
            )
            .unwrap(),
            Case::new(&serde_json::json!({"items": []}), Value::Int(1)).unwrap(),
        ])
        .await;
    assert_eq!(
        report.to_string(),
        "1 of 2 cases passed\ncase 2: expected 1, got 0\n"
    );

    // A file, read back exactly.
    let path = std::env::temp_dir().join("total-prices.compiled.json");
    compiled.save(&path).unwrap();
    assert_eq!(CompiledAgent::load(&path).unwrap(), compiled);
    std::fs::remove_file(&path).unwrap();
}

//! Async tools with typed arguments, fixture tools, sub-agents as tools, and how tools are
//! shown to the model.

use pretty_assertions::assert_eq;
use ptc_agent::{
    Agent, AsyncTool, RunOptions, ScriptedLlm, ToolError, async_tool, tool_fn, value_tool,
};
use ptc_lisp::Value;
use ptc_turn::{FailureKind, Step, StepOutcome};
use serde::{Deserialize, Serialize};
use std::time::Duration;

fn clojure(program: &str) -> String {
    format!("```clojure\n{program}\n```")
}

fn value(text: &str) -> Value {
    ptc_lisp::eval_str(text).expect("a valid value")
}

#[derive(Deserialize)]
struct Forecast {
    city: String,
    days: Option<u32>,
}

#[derive(Serialize)]
struct Weather {
    city: String,
    days: u32,
    temps: Vec<f64>,
}

fn weather_tool() -> impl AsyncTool {
    tool_fn("weather", "The forecast for a city", |args: Forecast| {
        let days = args.days.unwrap_or(1);
        Ok::<_, ToolError>(Weather {
            temps: (0..days).map(|d| 10.0 + f64::from(d) / 2.0).collect(),
            city: args.city,
            days,
        })
    })
    .with_signature("(city :string, days :int?) -> {city :string, days :int, temps [:float]}")
}

async fn run_one(agent: Agent) -> Step {
    agent.run().await.expect("run starts")
}

fn tool_calls_of(step: &Step) -> Vec<String> {
    step.turns
        .iter()
        .flat_map(|t| t.tool_calls())
        .map(|c| {
            format!(
                "{}({}) -> {}",
                c.name,
                c.args
                    .iter()
                    .map(ptc_lisp::pr_str)
                    .collect::<Vec<_>>()
                    .join(" "),
                match &c.result {
                    ptc_lisp::ToolOutcome::Ok(v) => ptc_lisp::pr_str(v),
                    ptc_lisp::ToolOutcome::Error(e) => format!("error: {e}"),
                }
            )
        })
        .collect()
}

#[tokio::test]
async fn typed_arguments_come_from_a_map_or_from_positions() {
    let llm = ScriptedLlm::new([clojure(
        "(return [(tool/weather {:city \"Oslo\" :days 2}) (tool/weather \"Rome\" 1) (tool/weather \"Bergen\")])",
    )]);
    let agent = Agent::builder("Weather")
        .llm(llm)
        .tool(weather_tool())
        .build()
        .expect("agent");
    let step = run_one(agent).await;
    assert_eq!(
        step.value(),
        Some(&value(
            "[{:city \"Oslo\" :days 2 :temps [10.0 10.5]} {:city \"Rome\" :days 1 :temps [10.0]} \
             {:city \"Bergen\" :days 1 :temps [10.0]}]"
        ))
    );
}

#[tokio::test]
async fn wrong_arguments_are_a_tool_error_saying_how_to_call_it() {
    let llm = ScriptedLlm::new([clojure("(tool/weather 42)"), clojure("(return 0)")]);
    let agent = Agent::builder("Weather")
        .llm(llm)
        .tool(weather_tool())
        .build()
        .expect("agent");
    let step = run_one(agent).await;
    assert_eq!(
        step.turns[0].error().map(ToString::to_string),
        Some(
            "1:1: tool/weather failed: invalid arguments (42): invalid type: integer `42`, \
             expected a string; call it as (tool/weather city days)"
                .to_string()
        )
    );
}

#[tokio::test]
async fn tuples_and_no_arguments() {
    let add = tool_fn("add", "Adds", |(a, b): (i64, i64)| {
        Ok::<_, ToolError>(a + b)
    });
    let now = tool_fn("now", "The time", |(): ()| Ok::<_, ToolError>("12:00"));
    let llm = ScriptedLlm::new([clojure("(return [(tool/add 2 3) (tool/now)])")]);
    let agent = Agent::builder("Add")
        .llm(llm)
        .tool(add)
        .tool(now)
        .build()
        .expect("agent");
    assert_eq!(run_one(agent).await.value(), Some(&value("[5 \"12:00\"]")));
}

#[tokio::test]
async fn async_tools_can_await_the_runtime() {
    let slow = async_tool("slow-double", "Doubles, slowly", |n: i64| async move {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let joined = tokio::spawn(async move { n * 2 }).await;
        joined.map_err(|e| ToolError::new(e.to_string()))
    });
    let llm = ScriptedLlm::new([clojure("(return (map tool/slow-double [1 2 3]))")]);
    let agent = Agent::builder("Double")
        .llm(llm)
        .tool(slow)
        .build()
        .expect("agent");
    let step = run_one(agent).await;
    assert_eq!(step.value(), Some(&value("'(2 4 6)")));
    assert_eq!(
        tool_calls_of(&step),
        vec![
            "slow-double(1) -> 2",
            "slow-double(2) -> 4",
            "slow-double(3) -> 6"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_tools_work_on_a_multi_threaded_runtime() {
    let slow = async_tool("wait", "Waits", |ms: u64| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, ToolError>(ms)
    });
    let llm = ScriptedLlm::new([clojure("(return (tool/wait 3))")]);
    let agent = Agent::builder("Wait")
        .llm(llm)
        .tool(slow)
        .build()
        .expect("agent");
    assert_eq!(run_one(agent).await.value(), Some(&Value::Int(3)));
}

#[tokio::test]
async fn fixture_tools_and_their_lines_in_the_first_message() {
    let fixtures = ptc_lisp::Tools::from_fixture_json(
        r#"{"get-user": {"description": "One user by id", "params": ["id"], "returns": {"name": "Ann"}}}"#,
    )
    .expect("fixtures");
    let llm = ScriptedLlm::new([clojure("(return (:name (tool/get-user 1)))")]);
    let agent = Agent::builder("Name of user 1")
        .llm(llm.clone())
        .lisp_tools(&fixtures)
        .tool(weather_tool())
        .build()
        .expect("agent");
    let step = run_one(agent).await;
    assert_eq!(step.value(), Some(&Value::string("Ann")));
    assert_eq!(
        llm.requests()[0].messages[0].content,
        "Name of user 1\n\n\
         ;; === tool/ ===\n\
         (tool/get-user id)            ; One user by id\n\
         (tool/weather city days)      ; (city :string, days :int?) -> {city :string, days \
         :int, temps [:float]} -- The forecast for a city\n\n\
         Turns left: 5"
    );
}

#[tokio::test]
async fn tool_names_must_be_callable_and_unique() {
    let llm = ScriptedLlm::new(Vec::<String>::new());
    let echo = || {
        value_tool("echo", "Echo", |args| {
            Ok(args.first().cloned().unwrap_or_default())
        })
    };
    let error = Agent::builder("x")
        .llm(llm.clone())
        .tool(echo())
        .tool(echo())
        .build()
        .expect_err("duplicate");
    assert_eq!(
        error.to_string(),
        "two tools are named echo; tool names must be unique"
    );
    let error = Agent::builder("x")
        .llm(llm)
        .tool(value_tool("get weather", "Bad", |_| Ok(Value::Nil)))
        .build()
        .expect_err("bad name");
    assert_eq!(
        error.to_string(),
        "invalid tool name `get weather`: use letters, digits and - _ ? ! * only, e.g. get-weather"
    );
}

// API-007: a sub-agent inherits the parent's settings unless it overrides them.
#[tokio::test]
async fn sub_agents_inherit_settings_and_run_as_tools() {
    let llm = ScriptedLlm::new([
        // The parent's first program calls the sub-agent ...
        clojure("(def answer (tool/shout \"hello\"))\n(println answer)"),
        // ... whose one turn answers it (same model: the settings are inherited) ...
        clojure("(return {:text (str data/text \"!\") :_audit \"secret\"})"),
        // ... and the parent returns.
        clojure("(return (:text answer))"),
    ]);
    let parent = Agent::builder("Make it loud")
        .llm(llm.clone())
        .max_turns(3)
        .compression(true)
        .system_prompt_extra("Be brief.")
        .build()
        .expect("parent");
    let child = parent
        .sub_agent("Shout {{text}}")
        .signature("(text :string) -> {text :string, _audit :string}")
        .build()
        .expect("child");
    assert_eq!(child.max_turns(), 3);
    assert!(child.compression().is_enabled());
    assert!(child.system_prompt().text.ends_with("Be brief."));
    let overridden = parent
        .sub_agent("Other")
        .max_turns(1)
        .build()
        .expect("child");
    assert_eq!(overridden.max_turns(), 1);

    let parent = Agent::builder("Make it loud")
        .llm(llm.clone())
        .max_turns(3)
        .tool(child.as_tool("shout", "Makes text loud"))
        .build()
        .expect("parent with tool");
    let step = run_one(parent).await;
    assert_eq!(step.value(), Some(&Value::string("hello!")));
    // The firewalled field reaches the parent program, but its printed output hides it.
    assert_eq!(
        step.turns[0].prints(),
        ["{:text hello!, :_audit [hidden]}".to_string()]
    );
    assert_eq!(
        llm.requests()[1].messages[0].content.lines().next(),
        Some("Shout hello")
    );
    // The sub-agent's request counts in the turn that called it.
    let requests: Vec<u32> = step.turns.iter().map(|t| t.usage().llm_requests).collect();
    assert_eq!((requests, step.usage.llm_requests), (vec![2, 1], 3));
}

#[tokio::test]
async fn a_failing_sub_agent_is_a_tool_error() {
    let llm = ScriptedLlm::new([
        clojure("(tool/helper {:x 1})"),
        clojure("(fail \"cannot help\")"),
        clojure("(return :done)"),
    ]);
    let child = Agent::builder("Help")
        .llm(llm.clone())
        .build()
        .expect("child");
    let parent = Agent::builder("Use the helper")
        .llm(llm)
        .tool(child.as_tool("helper", "Helps"))
        .build()
        .expect("parent");
    let step = run_one(parent).await;
    assert_eq!(step.value(), Some(&Value::keyword("done")));
    assert_eq!(
        step.turns[0].error().map(|e| e.message.clone()),
        Some(
            "tool/helper failed: the sub-agent failed (failed) after 1 turn(s): cannot help".into()
        )
    );
    // A sub-agent that failed spent its request all the same.
    assert_eq!(step.usage.llm_requests, 3);
}

#[tokio::test]
async fn run_data_fills_placeholders_and_is_checked() {
    let llm = ScriptedLlm::new([clojure("(return (* data/n 2))")]);
    let agent = Agent::builder("Double {{n}}")
        .llm(llm.clone())
        .signature("(n :int) -> :int")
        .build()
        .expect("agent");
    let step = agent
        .run_with(RunOptions::new().with_data(&serde_json::json!({"n": 21})))
        .await
        .expect("runs");
    assert_eq!(step.value(), Some(&Value::Int(42)));
    assert_eq!(step.task.mission, "Double 21");
    let error = agent.run().await.expect_err("n is missing");
    assert_eq!(
        error.to_string(),
        "the input data does not match the signature's parameters: data/n: expected int, got \
         nothing (it is missing from the input data)"
    );
    let untyped = Agent::builder("Hi {{who}}").llm(llm).build();
    assert_eq!(
        untyped.map(|_| ()).map_err(|e| e.to_string()),
        Err(
            "the mission uses {{who}} but the input data has no such key; add it to the data or \
             declare it as a parameter of the signature"
                .to_string()
        )
    );
}

#[tokio::test]
async fn a_failed_step_keeps_the_failure_kind_of_the_model_error() {
    let llm = ScriptedLlm::new(Vec::<String>::new());
    let agent = Agent::builder("x").llm(llm).build().expect("agent");
    let step = run_one(agent).await;
    match step.outcome {
        StepOutcome::Failed { kind, .. } => assert_eq!(kind, FailureKind::LlmError),
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(step.turns.len(), 0);
    assert_eq!(step.usage.llm_requests, 1);
}

//! Choosing the model: by name from a registry that sub-agents inherit, for one run, and from
//! an async closure.

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use ptc_agent::{
    Agent, BuildError, LlmError, LlmRegistry, LlmResponse, RunError, RunOptions, ScriptedLlm,
    llm_fn,
};
use ptc_lisp::Value;

fn registry() -> LlmRegistry {
    LlmRegistry::new()
        .with(
            "fast",
            llm_fn("test:fast", |_| async {
                Ok(LlmResponse::text("(return :fast)"))
            }),
        )
        .with(
            "smart",
            llm_fn("test:smart", |_| async {
                Ok(LlmResponse::text("(return :smart)"))
            }),
        )
}

#[tokio::test]
async fn an_agent_and_its_sub_agents_pick_models_by_name() {
    let parent = Agent::builder("Go")
        .llm_registry(registry())
        .llm_named("fast")
        .build()
        .expect("agent");
    assert_eq!(parent.llm().describe(), "test:fast");
    assert_eq!(
        parent.run().await.unwrap().value(),
        Some(&Value::keyword("fast"))
    );
    // The sub-agent inherits the model and the registry, and may name another.
    let same = parent.sub_agent("Child").build().expect("child");
    assert_eq!(same.llm().describe(), "test:fast");
    let smart = parent
        .sub_agent("Child")
        .llm_named("smart")
        .build()
        .expect("child");
    assert_eq!(
        smart.run().await.unwrap().value(),
        Some(&Value::keyword("smart"))
    );
    assert_eq!(smart.llm_registry().names(), vec!["fast", "smart"]);
}

#[test]
fn an_unknown_name_is_a_build_error_listing_the_names() {
    let error = Agent::builder("Go")
        .llm_registry(registry())
        .llm_named("smrt")
        .build()
        .expect_err("unknown");
    assert_eq!(
        error,
        BuildError::UnknownLlm(
            "no model is called `smrt`; the registry has `fast`, `smart`".into()
        )
    );
    let error = Agent::builder("Go")
        .llm_named("fast")
        .build()
        .expect_err("no registry");
    assert_eq!(
        error.to_string(),
        "no model is called `fast`: the agent has no model registry; give one with \
         .llm_registry(...)"
    );
}

#[tokio::test]
async fn a_run_can_ask_another_model() {
    let default = ScriptedLlm::new(Vec::<String>::new());
    let agent = Agent::builder("Go")
        .llm(default.clone())
        .llm_registry(registry())
        .build()
        .expect("agent");
    let step = agent
        .run_with(RunOptions::new().with_llm_named("smart"))
        .await
        .expect("runs");
    assert_eq!(step.value(), Some(&Value::keyword("smart")));
    let step = agent
        .run_with(RunOptions::new().with_llm(ScriptedLlm::new(["(return 3)"])))
        .await
        .expect("runs");
    assert_eq!(step.value(), Some(&Value::Int(3)));
    assert!(
        default.requests().is_empty(),
        "the agent's own model was not asked"
    );
    let error = agent
        .run_with(RunOptions::new().with_llm_named("huge"))
        .await
        .expect_err("unknown");
    assert_eq!(
        error,
        RunError::UnknownLlm("no model is called `huge`; the registry has `fast`, `smart`".into())
    );
}

#[tokio::test]
async fn sub_agents_follow_the_model_a_run_asks_instead() {
    let own = ScriptedLlm::new(["(return :own)", "(return :own)"]);
    let base = Agent::builder("Base").llm(own.clone()).build().unwrap();
    let inherited = base.sub_agent("Answer").build().unwrap();
    let pinned = base
        .sub_agent("Answer")
        .llm(ScriptedLlm::new(["(return :pinned)"]))
        .build()
        .unwrap();
    let parent = base
        .sub_agent("Ask both")
        .tool(inherited.as_tool("inherited", "Answers"))
        .tool(pinned.as_tool("pinned", "Answers"))
        .build()
        .unwrap();
    let other = ScriptedLlm::new([
        "(return [(tool/inherited) (tool/pinned)])",
        "(return :other)",
    ]);
    let step = parent
        .run_with(RunOptions::new().with_llm(other.clone()))
        .await
        .unwrap();
    // The sub-agent that inherited its model asked the run's; the one given a model, its own.
    assert_eq!(
        step.value().map(ptc_lisp::pr_str),
        Some("[:other :pinned]".to_string())
    );
    assert_eq!(other.requests().len(), 2);
    assert_eq!(own.remaining(), 2, "the parent's own model was not asked");

    // Run alone, a sub-agent asks the model it inherited.
    assert_eq!(
        inherited.run().await.unwrap().value(),
        Some(&Value::keyword("own"))
    );
}

#[tokio::test]
async fn a_closure_model_sees_each_request_and_its_errors_end_the_run() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let llm = llm_fn("test:closure", move |request| {
        let log = log.clone();
        async move {
            let turn = request.turn.unwrap_or(0);
            log.lock().unwrap().push(turn);
            if turn == 1 {
                Ok(LlmResponse::text("(def x 1)"))
            } else {
                Err(LlmError::InvalidRequest("no more".into()))
            }
        }
    });
    let step = Agent::builder("Go")
        .llm(llm)
        .build()
        .unwrap()
        .run()
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![1, 2]);
    assert_eq!(step.turns.len(), 1);
    assert!(!step.is_success());
}

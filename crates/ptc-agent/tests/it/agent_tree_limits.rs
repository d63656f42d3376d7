//! Limits of a tree of agents: how deep sub-agents nest (`max_depth`), the turns the whole
//! tree shares (`turn_budget`), and the deadline of the whole tree.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, AgentBuilder, LlmResponse, ScriptedLlm, llm_fn};
use ptc_lisp::Value;
use ptc_turn::{FailureKind, Step, StepOutcome};

fn scripted(mission: &str, replies: &[&str]) -> AgentBuilder {
    Agent::builder(mission)
        .llm(ScriptedLlm::new(replies.to_vec()))
        .max_turns(5)
}

fn failure(step: &Step) -> (FailureKind, String) {
    match &step.outcome {
        StepOutcome::Failed { kind, reason, .. } => (*kind, reason.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// `top` calls `middle`, whose programs (`middle_programs`) may call `leaf`, which returns 1.
fn three_levels(top: AgentBuilder, middle_programs: &[&str]) -> Agent {
    let leaf = scripted("Say one", &["(return 1)"]).build().expect("leaf");
    let middle = scripted("Ask the leaf", middle_programs)
        .tool(leaf.as_tool("leaf", "Says one"))
        .build()
        .expect("middle");
    top.tool(middle.as_tool("middle", "Asks the leaf"))
        .build()
        .expect("top")
}

#[tokio::test]
async fn a_sub_agent_deeper_than_max_depth_fails_without_a_request() {
    // The middle returns the message of the error its call of the leaf got.
    let top = three_levels(
        scripted("Ask", &["(return (tool/middle))"]).max_depth(1),
        &["(def got (tool/leaf))", "(return (:message *e))"],
    );
    let step = top.run().await.expect("run");
    assert_eq!(
        step.value(),
        Some(&Value::from(
            "tool/leaf failed: the sub-agent failed (max_depth_exceeded) after 0 turn(s): this \
             sub-agent would run at depth 2 below the top run, but max_depth is 1: sub-agents \
             may call sub-agents only 1 level deep"
        ))
    );
}

#[tokio::test]
async fn within_max_depth_sub_agents_of_sub_agents_run() {
    let top = three_levels(
        scripted("Ask", &["(return (+ 1 (tool/middle)))"]).max_depth(2),
        &["(return (tool/leaf))"],
    );
    let step = top.run().await.expect("run");
    assert_eq!(step.value(), Some(&Value::Int(2)));
}

#[tokio::test]
async fn a_top_run_with_max_depth_zero_may_not_call_sub_agents() {
    let leaf = scripted("Say one", &["(return 1)"]).build().expect("leaf");
    let top = scripted("Ask", &["(tool/leaf)", "(return (:message *e))"])
        .tool(leaf.as_tool("leaf", "Says one"))
        .max_depth(0)
        .build()
        .expect("top");
    let step = top.run().await.expect("run");
    assert_eq!(
        step.value(),
        Some(&Value::from(
            "tool/leaf failed: the sub-agent failed (max_depth_exceeded) after 0 turn(s): this \
             sub-agent would run at depth 1 below the top run, but max_depth is 0: sub-agents \
             may call sub-agents only 0 levels deep"
        ))
    );
}

#[tokio::test]
async fn the_turn_budget_ends_a_run_that_still_has_turns() {
    let agent = scripted("Count", &["(+ 1 1)", "(+ 1 2)", "(+ 1 3)"])
        .turn_budget(2)
        .build()
        .expect("agent");
    let step = agent.run().await.expect("run");
    assert_eq!(
        failure(&step),
        (
            FailureKind::TurnBudgetExhausted,
            "the turn budget of 2 turns shared by this run and its sub-agents is used up".into()
        )
    );
    assert_eq!(step.turns.len(), 2);
}

#[tokio::test]
async fn sub_agents_take_their_turns_from_the_top_runs_budget() {
    // The top's first turn, then two of the middle's: the budget of 3 is used up when the
    // middle wants a third, so the middle fails and the top cannot take another turn.
    let top = three_levels(
        scripted("Ask", &["(tool/middle)", "(return 0)"]).turn_budget(3),
        &["(+ 1 1)", "(+ 1 2)", "(return 3)"],
    );
    let step = top.run().await.expect("run");
    assert_eq!(
        failure(&step),
        (
            FailureKind::TurnBudgetExhausted,
            "the turn budget of 3 turns shared by this run and its sub-agents is used up".into()
        )
    );
    assert_eq!(step.turns.len(), 1);
    assert_eq!(
        step.turns[0].error().expect("the middle failed").message,
        "tool/middle failed: the sub-agent failed (turn_budget_exhausted) after 2 turn(s): the \
         turn budget of 3 turns shared by this run and its sub-agents is used up"
    );
}

#[tokio::test]
async fn the_deadline_of_the_top_run_bounds_its_sub_agents() {
    let slow = llm_fn("test:slow", |_request| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(LlmResponse::text("(return 1)"))
    });
    let sub = Agent::builder("Think slowly")
        .llm(slow)
        .build()
        .expect("sub");
    let top = scripted("Ask", &["(return (tool/sub))"])
        .tool(sub.as_tool("sub", "Thinks slowly"))
        .deadline(Duration::from_millis(300))
        .build()
        .expect("top");
    let started = Instant::now();
    let step = top.run().await.expect("run");
    assert_eq!(
        failure(&step),
        (
            FailureKind::Timeout,
            "the run did not finish within its deadline of 300 ms; turn 1 was cut off".into()
        )
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

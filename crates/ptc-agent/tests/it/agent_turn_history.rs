//! `*1 *2 *3` (values of earlier turns) and `*e` (the latest error) in an agent's programs.

use pretty_assertions::assert_eq;
use ptc_agent::store::InProcessStore;
use ptc_agent::{Agent, RunOptions, ScriptedLlm};
use ptc_lisp::pr_str;

fn agent(replies: &[&str]) -> Agent {
    Agent::builder("Work it out")
        .llm(ScriptedLlm::new(replies.to_vec()))
        .max_turns(6)
        .build()
        .expect("agent")
}

#[tokio::test]
async fn star_names_read_the_values_of_the_latest_turns_newest_first() {
    let step = agent(&[
        "(+ 0 1)",
        "(+ 1 1)",
        "(/ 1 0)",
        "(+ 1 2)",
        "(return [*1 *2 *3])",
    ])
    .run()
    .await
    .expect("run");
    // The failed third turn does not shift the values.
    assert_eq!(pr_str(step.value().expect("value")), "[3 2 1]");
}

#[tokio::test]
async fn before_any_turn_the_history_is_nil() {
    let step = agent(&["(return [*1 *2 *3 *e])"]).run().await.expect("run");
    assert_eq!(pr_str(step.value().expect("value")), "[nil nil nil nil]");
}

#[tokio::test]
async fn star_e_is_the_latest_error_with_its_turn_kind_and_message() {
    let step = agent(&["(/ 1 0)", "(count 5)", "(+ 3 4)", "(return *e)"])
        .run()
        .await
        .expect("run");
    assert_eq!(
        pr_str(step.value().expect("value")),
        "{:turn 2, :kind \"type\", :message \"count expects a collection or string, got integer 5\"}"
    );
}

#[tokio::test]
async fn a_definition_named_like_a_history_name_wins() {
    let step = agent(&["(+ 2 3)", "(def *1 \"mine\")", "(return *1)"])
        .run()
        .await
        .expect("run");
    assert_eq!(pr_str(step.value().expect("value")), "\"mine\"");
}

#[tokio::test]
async fn a_resumed_run_restores_definitions_made_from_the_history() {
    let store = InProcessStore::new();
    let first = agent(&["(* 6 7)", "(def answer *1)"]);
    let step = first
        .run_with(RunOptions::new().with_store(&store, "r"))
        .await
        .expect("run");
    assert!(!step.is_success(), "the scripted model runs out of replies");
    // Forget the end so that the run can be resumed.
    let mut checkpoint = ptc_agent::store::RunStore::load(&store, "r")
        .await
        .expect("load")
        .expect("stored");
    checkpoint.end = None;
    let resumable = InProcessStore::new();
    ptc_agent::store::RunStore::start(&resumable, "r", &checkpoint.task)
        .await
        .expect("start");
    for turn in &checkpoint.turns {
        ptc_agent::store::RunStore::append(&resumable, None, "r", turn)
            .await
            .expect("append");
    }
    let step = agent(&["(return [answer *1 *2])"])
        .resume(&resumable, "r", RunOptions::new())
        .await
        .expect("resume");
    assert_eq!(
        pr_str(step.value().expect("value")),
        "[42 #'user/answer 42]"
    );
}

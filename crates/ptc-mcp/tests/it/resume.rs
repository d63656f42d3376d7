//! A run with MCP tools resumed from its checkpoint: restoring the definitions answers every
//! tool call from the record and reaches no server (a server that got `tool/exit` again would
//! be gone), while the functions restored call the new process's server afterwards.

use crate::support;

use std::time::Duration;

use pretty_assertions::assert_eq;
use ptc_agent::store::{MemoryStore, RunStore};
use ptc_agent::{Agent, RunOptions, ScriptedLlm};
use ptc_lisp::ToolOutcome;
use ptc_lisp::pr_str;

const TURN_1: &str = "```clojure\n(defn ask [t] (tool/ok {:text t}))\n\
                      (def one (ask \"one\"))\n\
                      (def gone (try (tool/exit) (catch Exception e :gone)))\n```";
const TURN_2: &str = "```clojure\n(return [one gone (ask \"two\")])\n```";

/// One process: a fresh fault server, an agent with its tools, run (or resumed) with
/// `replies` and `store`.
fn process(replies: &[&str], store: &MemoryStore, resume: bool) -> ptc_turn::Step {
    let runtime = support::runtime();
    let servers = runtime.block_on(support::connect(vec![support::fault(
        &[],
        Duration::from_secs(10),
    )]));
    let agent = support::agent_with(
        Agent::builder("Ask twice")
            .llm(ScriptedLlm::new(replies.iter().map(|r| r.to_string())))
            .max_turns(3),
        &servers,
    );
    let step = runtime
        .block_on(async {
            if resume {
                agent.resume(store, "r", RunOptions::new()).await
            } else {
                agent
                    .run_with(RunOptions::new().with_store(store, "r"))
                    .await
            }
        })
        .expect("runs");
    runtime.block_on(servers.close());
    step
}

#[test]
fn restoring_a_run_calls_no_server_and_restored_functions_call_the_new_one() {
    // The first process made turn 1 (its server exited on `tool/exit`), then stopped.
    let first = MemoryStore::new();
    let step = process(&[TURN_1], &first, false);
    let turn_1 = step.turns.as_slice()[0].clone();
    assert!(turn_1.is_success(), "{:?}", turn_1.error());
    let store = MemoryStore::new();
    let runtime = support::runtime();
    runtime.block_on(async {
        store.start("r", &step.task).await.expect("start");
        store.append(None, "r", &turn_1).await.expect("append");
    });

    let resumed = process(&[TURN_2], &store, true);
    assert_eq!(
        resumed.value().map(pr_str),
        Some("[\"ok: one\" :gone \"ok: two\"]".to_string()),
        "{:?}",
        resumed.turns.as_slice().last().and_then(|t| t.error())
    );
    let calls: Vec<(String, Option<String>)> = resumed.turns.as_slice()[1]
        .tool_calls()
        .iter()
        .map(|c| {
            let value = match &c.result {
                ToolOutcome::Ok(v) => Some(pr_str(v)),
                ToolOutcome::Error(_) => None,
            };
            (c.name.clone(), value)
        })
        .collect();
    assert_eq!(
        calls,
        vec![("ok".to_string(), Some("\"ok: two\"".to_string()))]
    );
}

//! Many agents at once on a multi-threaded runtime: every run gets its own result.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, ScriptedLlm, ToolError, tool_fn};
use ptc_lisp::Value;
use std::sync::Arc;

/// A run of `agent` for each `x`, with `data/x` set to it; each task returns `x` and its step.
fn spawn_runs(
    agent: &Agent,
    xs: std::ops::Range<i64>,
) -> tokio::task::JoinSet<(i64, ptc_turn::Step)> {
    let mut runs = tokio::task::JoinSet::new();
    for x in xs {
        let agent = agent.clone();
        runs.spawn(async move {
            let step = agent
                .run_with(ptc_agent::RunOptions::new().with_data_value("x", Value::Int(x)))
                .await
                .expect("runs");
            (x, step)
        });
    }
    runs
}

fn clojure(program: &str) -> String {
    format!("```clojure\n{program}\n```")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_agents_run_concurrently_each_with_its_own_result() {
    const AGENTS: i64 = 1_000;
    // One tool shared by every agent: what it returns depends only on the call.
    let square = Arc::new(tool_fn("square", "Squares a number", |n: i64| {
        Ok::<_, ToolError>(n * n)
    }));
    let mut runs = tokio::task::JoinSet::new();
    for i in 0..AGENTS {
        let llm = ScriptedLlm::new([
            clojure("(def n \"The input\" data/i)\n(def sq (tool/square n))\n(println sq)"),
            clojure("(return {:i n :square sq :twice (* 2 n)})"),
        ]);
        let agent = Agent::builder("Work on {{i}}")
            .llm(llm)
            .tool_arc(square.clone())
            .data(&serde_json::json!({ "i": i }))
            .signature("{i :int, square :int, twice :int}")
            .compression(i % 2 == 0)
            .build()
            .expect("agent");
        runs.spawn(async move { (i, agent.run().await) });
    }
    let mut seen = 0;
    while let Some(joined) = runs.join_next().await {
        let (i, step) = joined.expect("the task finished");
        let step = step.expect("the run started");
        let expected =
            ptc_lisp::eval_str(&format!("{{:i {i} :square {} :twice {}}}", i * i, 2 * i))
                .expect("value");
        assert_eq!(step.value(), Some(&expected), "agent {i}");
        assert_eq!(step.task.mission, format!("Work on {i}"));
        assert_eq!(step.turns[0].prints(), [(i * i).to_string()]);
        assert_eq!(
            step.turns[0].tool_calls()[0].args,
            vec![Value::Int(i)],
            "agent {i}"
        );
        seen += 1;
    }
    assert_eq!(seen, AGENTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_agent_serves_many_concurrent_runs() {
    // Agent is Send + Sync and cheap to clone; runs of one agent share nothing mutable.
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Agent>();
    let llm = ScriptedLlm::new((0..50).map(|_| clojure("(return (* 3 data/x))")));
    let agent = Agent::builder("Triple")
        .llm(llm)
        .max_turns(1)
        .build()
        .expect("agent");
    let mut runs = spawn_runs(&agent, 0..50);
    while let Some(joined) = runs.join_next().await {
        let (x, step) = joined.expect("task");
        assert_eq!(step.value(), Some(&Value::Int(3 * x)));
    }
}

/// Hundreds of programs on one saturated worker thread: each waits for the thread far longer
/// than its time limit allows, and for its tools too, yet none times out, because the limit
/// counts only the program's own evaluation.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn under_load_healthy_programs_do_not_time_out() {
    const RUNS: i64 = 400;
    let wait = Arc::new(ptc_agent::async_tool(
        "wait",
        "Waits 20 ms, then returns n",
        |n: i64| async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            Ok::<_, ToolError>(n)
        },
    ));
    // Each program evaluates some 40,000 steps around its tool calls: together far more than
    // one thread does within one program's time limit.
    let program = clojure(
        "(let [a (reduce + (range 10000))
               b (tool/wait data/x)
               cs (pmap tool/wait [1 2])
               d (count (filter even? (range 10000)))]
           (return (+ a b (reduce + cs) d)))",
    );
    let agent = Agent::builder("Count")
        .llm(ScriptedLlm::new((0..RUNS).map(|_| program.clone())))
        .tool_arc(wait)
        .build()
        .expect("agent");
    let mut runs = spawn_runs(&agent, 0..RUNS);
    let mut outcomes = Vec::new();
    while let Some(joined) = runs.join_next().await {
        let (x, step) = joined.expect("task");
        let expected = Value::Int(49_995_000 + x + 3 + 5_000);
        // A wrong run shows why its first turn did not return.
        let first_error = step.turns.first().and_then(|t| t.error()).cloned();
        outcomes.push((
            x,
            step.value() == Some(&expected),
            format!("{first_error:?}"),
        ));
    }
    outcomes.sort_by_key(|(x, ..)| *x);
    let wrong: Vec<&(i64, bool, String)> = outcomes.iter().filter(|(_, ok, _)| !ok).collect();
    assert_eq!(wrong, Vec::<&(i64, bool, String)>::new());
    assert_eq!(outcomes.len(), RUNS as usize);
}

//! The limit on what a run keeps between turns.

use pretty_assertions::assert_eq;
use ptc_agent::{Agent, ScriptedLlm};
use ptc_lisp::Value;

#[tokio::test]
async fn a_turn_that_would_keep_too_much_fails_and_keeps_nothing() {
    let agent = Agent::builder("Count the rows")
        .llm(ScriptedLlm::new([
            "(def label \"rows\") (def rows (vec (range 100)))",
            "(def n 100)",
            "(return n)",
        ]))
        .max_kept_bytes(1000)
        .build()
        .expect("agent");
    let step = agent.run().await.expect("run");
    let error = step.turns[0].error().expect("turn 1 kept too much");
    assert_eq!(error.kind.as_str(), "memory_kept_limit");
    assert_eq!(
        error.message,
        "your definitions would take more than 1000 bytes kept between turns, the most a run may \
         keep (largest: rows (more than 980 bytes), label (20 bytes)); nothing this program \
         defined was kept. Keep less: def only what later programs need (counts, ids, the few \
         fields or items you use), not whole tool results, and compute the rest in the same \
         program."
    );
    assert!(step.turns[1].memory().iter().all(|d| d.name == "n"));
    assert_eq!(step.turns[1].memory().len(), 1);
    assert_eq!(step.value(), Some(&Value::Int(100)));
}

#[tokio::test]
async fn within_the_limit_definitions_are_kept() {
    let agent = Agent::builder("Count the rows")
        .llm(ScriptedLlm::new([
            "(def rows (vec (range 100)))",
            "(return (count rows))",
        ]))
        .max_kept_bytes(2000)
        .build()
        .expect("agent");
    let step = agent.run().await.expect("run");
    assert_eq!(step.value(), Some(&Value::Int(100)));
}

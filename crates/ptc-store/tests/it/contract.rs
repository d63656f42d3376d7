//! What every `RunStore` does, checked the same way on each store: a run kept turn by turn and
//! read back exactly by another connection, a run stopped half way resumed elsewhere to the
//! same step, and misuse refused.

use pretty_assertions::assert_eq;
use ptc_agent::store::{RunStore, StoreError};
use ptc_agent::{Agent, RunOptions, ScriptedLlm};
use ptc_turn::{Step, StepOutcome, Task, Turn};

pub const REPLIES: [&str; 3] = [
    "```clojure\n(defn sq \"Square\" [x] (* x x))\n(def a (sq 3))\n```",
    "```clojure\n(def b (+ a (sq 4)))\n```",
    "```clojure\n(return (sq b))\n```",
];

pub fn agent(replies: &[&str]) -> Agent {
    Agent::builder("Square things")
        .llm(ScriptedLlm::new(replies.iter().map(|r| r.to_string())))
        .build()
        .expect("agent")
}

/// A whole run through `store`, read back through `other` (another connection).
pub async fn a_run_is_kept_and_read_back_exactly(store: &impl RunStore, other: &impl RunStore) {
    let step = agent(&REPLIES)
        .run_with(RunOptions::new().with_store(store, "job-1"))
        .await
        .expect("runs");
    assert_eq!(step.value(), Some(&ptc_lisp::Value::Int(625)));
    let checkpoint = other.load("job-1").await.unwrap().expect("stored");
    assert_eq!(checkpoint.step(), Some(step));
    assert_eq!(other.load("job-2").await.unwrap(), None);
}

/// Two turns written through `writer`, the run resumed through `reader`.
pub async fn a_stopped_run_resumes_elsewhere_to_the_same_step(
    writer: &impl RunStore,
    reader: &impl RunStore,
) {
    let whole: Step = agent(&REPLIES).run().await.expect("runs");
    writer.start("job", &whole.task).await.unwrap();
    for turn in &whole.turns[..2] {
        writer.append("job", turn).await.unwrap();
    }
    let resumed = agent(&REPLIES[2..])
        .resume(reader, "job", RunOptions::new())
        .await
        .expect("resumes");
    assert_eq!(resumed.outcome, whole.outcome);
    assert_eq!(
        resumed.turns.iter().map(Turn::program).collect::<Vec<_>>(),
        whole.turns.iter().map(Turn::program).collect::<Vec<_>>()
    );
    // Functions compare by identity, so the definitions are compared as they are stored.
    let stored_memory = |step: &Step| serde_json::to_value(step.turns[2].memory()).unwrap();
    assert_eq!(stored_memory(&resumed), stored_memory(&whole));
    let stored = reader.load("job").await.unwrap().expect("stored");
    assert_eq!(stored.turns.len(), 3);
    assert_eq!(stored.end.map(|(outcome, _)| outcome), Some(whole.outcome));
}

pub fn turn(n: u32) -> Turn {
    Turn::success(n, "(def x 1)", ptc_lisp::Value::Int(1))
}

pub fn returned(n: i64) -> StepOutcome {
    StepOutcome::Returned {
        value: ptc_lisp::Value::Int(n),
    }
}

pub async fn misuse_is_refused_and_leaves_the_store_as_it_was(store: &impl RunStore) {
    assert_eq!(
        store.append("nope", &turn(1)).await,
        Err(StoreError::Missing("nope".into()))
    );
    store.start("a", &Task::new("m")).await.unwrap();
    assert_eq!(
        store.start("a", &Task::new("other")).await,
        Err(StoreError::Exists("a".into()))
    );
    assert_eq!(
        store.append("a", &turn(2)).await,
        Err(StoreError::OutOfOrder {
            id: "a".into(),
            expected: 1,
            found: 2
        })
    );
    store.append("a", &turn(1)).await.unwrap();
    assert_eq!(
        store.append("a", &turn(1)).await,
        Err(StoreError::OutOfOrder {
            id: "a".into(),
            expected: 2,
            found: 1
        })
    );
    store
        .finish("a", &returned(1), &Default::default())
        .await
        .unwrap();
    assert_eq!(
        store.append("a", &turn(2)).await,
        Err(StoreError::Ended("a".into()))
    );
    assert_eq!(
        store.finish("a", &returned(2), &Default::default()).await,
        Err(StoreError::Ended("a".into()))
    );
    let checkpoint = store.load("a").await.unwrap().expect("stored");
    assert_eq!(checkpoint.task, Task::new("m"));
    assert_eq!(checkpoint.turns.len(), 1);
    assert_eq!(
        checkpoint.end.map(|(outcome, _)| outcome),
        Some(returned(1))
    );
}

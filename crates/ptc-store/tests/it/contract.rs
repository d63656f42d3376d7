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
        writer.append(None, "job", turn).await.unwrap();
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
        store.append(None, "nope", &turn(1)).await,
        Err(StoreError::Missing("nope".into()))
    );
    store.start("a", &Task::new("m")).await.unwrap();
    assert_eq!(
        store.start("a", &Task::new("other")).await,
        Err(StoreError::Exists("a".into()))
    );
    assert_eq!(
        store.append(None, "a", &turn(2)).await,
        Err(StoreError::OutOfOrder {
            id: "a".into(),
            expected: 1,
            found: 2
        })
    );
    store.append(None, "a", &turn(1)).await.unwrap();
    assert_eq!(
        store.append(None, "a", &turn(1)).await,
        Err(StoreError::OutOfOrder {
            id: "a".into(),
            expected: 2,
            found: 1
        })
    );
    store
        .finish(None, "a", &returned(1), &Default::default())
        .await
        .unwrap();
    assert_eq!(
        store.append(None, "a", &turn(2)).await,
        Err(StoreError::Ended("a".into()))
    );
    assert_eq!(
        store
            .finish(None, "a", &returned(2), &Default::default())
            .await,
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

/// A run whose model failed after turn 2, through `store`, resumed through `other` (another
/// connection, as another process would): it goes on after turn 2 to the step of a run whose
/// model never failed, and the store keeps all three turns and the new end.
pub async fn a_run_ended_on_a_model_error_goes_on_elsewhere(
    store: &impl RunStore,
    other: &impl RunStore,
) {
    let whole = agent(&REPLIES).run().await.expect("runs");
    let failed = agent(&REPLIES[..2])
        .run_with(RunOptions::new().with_store(store, "outage"))
        .await
        .expect("runs");
    let StepOutcome::Failed { kind, reason, .. } = &failed.outcome else {
        panic!("the run returned");
    };
    assert_eq!(*kind, ptc_turn::FailureKind::LlmError);
    assert_eq!(
        reason,
        "the scripted model has no reply left after serving 2; add more replies, or make the \
         run need fewer model calls"
    );
    assert_eq!(failed.turns.len(), 2);
    assert_eq!(
        other.load("outage").await.unwrap().unwrap().step(),
        Some(failed.clone())
    );
    let resumed = agent(&REPLIES[2..])
        .resume(other, "outage", RunOptions::new())
        .await
        .expect("resumes");
    assert_eq!(resumed.value(), Some(&ptc_lisp::Value::Int(625)));
    assert_eq!(resumed.turns.len(), 3);
    assert_eq!(resumed.turns[..2], failed.turns[..]);
    assert_eq!(resumed.value(), whole.value());
    let stored = store.load("outage").await.unwrap().expect("stored");
    assert_eq!(stored.step(), Some(resumed));
    // Reopening a run that has not ended changes nothing; an unknown run is missing.
    let task = stored.task.clone();
    store.start("open", &task).await.unwrap();
    store.reopen("open").await.unwrap();
    assert_eq!(other.load("open").await.unwrap().unwrap().end, None);
    assert_eq!(
        store.reopen("nope").await,
        Err(StoreError::Missing("nope".into()))
    );
}

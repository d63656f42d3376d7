//! Durable runs: each turn is checkpointed as it completes, a run resumes from its last
//! completed turn with the definitions it had, and a run deadline ends a run that takes too
//! long.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use ptc_agent::llm::{Llm, LlmError, LlmRequest, LlmResponse};
use ptc_agent::store::{InProcessStore, JsonlStore, RunStore};
use ptc_agent::{Agent, RunError, RunOptions, ScriptedLlm, ToolError, tool_fn};
use ptc_turn::{FailureKind, Step, StepOutcome};

/// The replies of a run that defines a helper, calls a tool twice, and returns on turn 4.
const REPLIES: [&str; 4] = [
    "```clojure\n(defn double \"Twice n\" [n] (* 2 n))\n(def base (tool/price {:item \"pen\"}))\n```",
    "```clojure\n(def total (+ (double base) (tool/price {:item \"ink\"})))\n(println total)\n```",
    "```clojure\n(undefined-thing)\n```",
    "```clojure\n(return {:total total :doubled (double total)})\n```",
];

/// An agent with a `price` tool that counts its calls.
fn agent(replies: &[&str], calls: Arc<AtomicUsize>) -> Agent {
    #[derive(serde::Deserialize)]
    struct Item {
        item: String,
    }
    let price = tool_fn("price", "The price of an item", move |args: Item| {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok::<_, ToolError>(if args.item == "pen" { 3 } else { 5 })
    });
    Agent::builder("Price the pen and the ink")
        .llm(ScriptedLlm::new(replies.iter().map(|r| r.to_string())))
        .tool(price)
        .max_turns(6)
        .build()
        .expect("agent")
}

/// A step as JSON with every timing zeroed, so two runs of the same replies compare equal.
fn without_timings(step: &Step) -> serde_json::Value {
    fn zero(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, field) in map.iter_mut() {
                    if key.ends_with("duration_us") {
                        *field = 0.into();
                    } else {
                        zero(field);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(zero),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(step).expect("a step serializes");
    zero(&mut value);
    value
}

/// A store holding the start and the first `turns` turns of `step`, as a process that stopped
/// after them would have left it.
async fn interrupted(store: &dyn RunStore, id: &str, step: &Step, turns: usize) {
    store.start(id, &step.task).await.expect("start");
    for turn in &step.turns[..turns] {
        store.append(None, id, turn).await.expect("append");
    }
}

/// Resumes run `id` of `store`, holding the first `done` turns of `whole`, with an agent given
/// the replies of the turns left, and checks that it ends as `whole` did and that the tool was
/// called only by the turns run after the resume.
async fn check_resume(
    store: &dyn RunStore,
    id: &str,
    whole: &Step,
    replies: &[&str],
    done: usize,
    label: &str,
) {
    interrupted(store, id, whole, done).await;
    let calls = Arc::new(AtomicUsize::new(0));
    let resumed = agent(&replies[done..], calls.clone())
        .resume(store, id, RunOptions::new())
        .await
        .expect("resumes");
    assert_eq!(
        without_timings(&resumed),
        without_timings(whole),
        "{label}, resumed after {done} turns"
    );
    let made_after: usize = whole.turns[done..]
        .iter()
        .map(|t| t.tool_calls().len())
        .sum();
    assert_eq!(calls.load(Ordering::SeqCst), made_after, "{label}, {done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_turn_is_checkpointed_and_the_end_recorded() {
    let store = InProcessStore::new();
    let step = agent(&REPLIES, Arc::default())
        .run_with(RunOptions::new().with_store(&store, "r1"))
        .await
        .expect("runs");
    assert!(step.is_success());
    let checkpoint = store.load("r1").await.unwrap().expect("recorded");
    assert_eq!(checkpoint.turns, step.turns);
    assert_eq!(checkpoint.task, step.task);
    assert_eq!(checkpoint.step(), Some(step));
    let again = agent(&REPLIES, Arc::default())
        .run_with(RunOptions::new().with_store(&store, "r1"))
        .await;
    assert_eq!(
        again.map(|_| ()).map_err(|e| e.to_string()),
        Err(
            "the run store: the store already has a run `r1`; resume it, or start the new run \
             under another id"
                .to_string()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_ends_as_the_uninterrupted_one_without_calling_tools_twice() {
    let whole = agent(&REPLIES, Arc::default()).run().await.expect("runs");
    assert_eq!(
        whole.value().map(ptc_lisp::pr_str),
        Some("{:total 11, :doubled 22}".to_string())
    );
    for (name, store) in [
        (
            "in-process",
            Box::new(InProcessStore::new()) as Box<dyn RunStore>,
        ),
        (
            "jsonl",
            Box::new(
                JsonlStore::open(
                    std::env::temp_dir().join(format!("ptc-resume-{}.jsonl", std::process::id())),
                )
                .expect("open"),
            ),
        ),
    ] {
        // After 4 turns the run had returned, but its end was not recorded: resumed, it ends
        // with its value without asking the model.
        for done in 0..=4 {
            let id = format!("after-{done}");
            // The two `price` calls are made once in all: by the turns run after the resume.
            check_resume(store.as_ref(), &id, &whole, &REPLIES, done, name).await;
            let stored = store.load(&id).await.unwrap().expect("stored");
            assert_eq!(stored.turns.len(), 4, "{name}, {done}");
            assert!(stored.end.is_some());
        }
    }
    let _ = std::fs::remove_file(
        std::env::temp_dir().join(format!("ptc-resume-{}.jsonl", std::process::id())),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_last_turn_failed_before_its_end_was_recorded_ends_failed_when_resumed() {
    let replies = [
        "(def pens (tool/price {:item \"pen\"}))",
        "(fail {:out-of \"pens\"})",
    ];
    let whole = agent(&replies, Arc::default()).run().await.expect("runs");
    assert_eq!(
        whole.outcome,
        StepOutcome::Failed {
            kind: FailureKind::Failed,
            reason: "{:out-of pens}".into(),
            value: Some(ptc_lisp::read_value("{:out-of \"pens\"}").expect("a map")),
            llm_errors: Vec::new(),
        }
    );
    let store = InProcessStore::new();
    check_resume(&store, "r", &whole, &replies, 2, "failed").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_needs_the_same_task_and_an_ended_run_is_returned_as_it_was() {
    let whole = agent(&REPLIES, Arc::default()).run().await.expect("runs");
    let store = InProcessStore::new();
    interrupted(&store, "r", &whole, 2).await;
    let other = Agent::builder("Something else")
        .llm(ScriptedLlm::new(["(return 1)"]))
        .build()
        .unwrap();
    let error = other
        .resume(&store, "r", RunOptions::new())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot resume run `r`: its mission differs from this agent's; resume it with the \
         mission it was started with"
    );
    assert_eq!(
        other
            .resume(&store, "missing", RunOptions::new())
            .await
            .unwrap_err(),
        RunError::Resume {
            id: "missing".into(),
            reason: "the store has no such run".into()
        }
    );
    // A finished run comes back without asking the model.
    let finished = agent(&REPLIES[2..], Arc::default())
        .resume(&store, "r", RunOptions::new())
        .await
        .expect("resumes");
    let llm = ScriptedLlm::new(Vec::<String>::new());
    let replayed = Agent::builder("Price the pen and the ink")
        .llm(llm.clone())
        .tool(tool_fn(
            "price",
            "The price of an item",
            |_: serde_json::Value| Ok::<_, ToolError>(0),
        ))
        .max_turns(6)
        .build()
        .unwrap()
        .resume(&store, "r", RunOptions::new())
        .await
        .expect("an ended run");
    assert_eq!(replayed, finished);
    assert!(llm.requests().is_empty());
}

/// A model that never answers.
struct Silent;

#[async_trait]
impl Llm for Silent {
    async fn complete(&self, _: &LlmRequest) -> Result<LlmResponse, LlmError> {
        std::future::pending().await
    }

    fn describe(&self) -> String {
        "silent".into()
    }
}

/// A model that answers with `reply` the first time and never again.
struct OnceThenSilent(ScriptedLlm);

#[async_trait]
impl Llm for OnceThenSilent {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        if self.0.remaining() == 0 {
            return Silent.complete(request).await;
        }
        self.0.complete(request).await
    }

    fn describe(&self) -> String {
        "once".into()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_its_deadline_fails_with_timeout_and_keeps_its_turns() {
    let agent = Agent::builder("Never done")
        .llm(OnceThenSilent(ScriptedLlm::new(["(def x 1)"])))
        .deadline(Duration::from_millis(300))
        .build()
        .unwrap();
    let step = agent.run().await.expect("runs");
    assert_eq!(
        step.outcome,
        StepOutcome::Failed {
            kind: FailureKind::Timeout,
            reason: "the run did not finish within its deadline of 300 ms; turn 2 was cut off"
                .into(),
            value: None,
            llm_errors: Vec::new(),
        }
    );
    assert_eq!(step.turns.len(), 1);
    // The request left waiting counts as sent.
    assert_eq!(step.usage.llm_requests, 2);
}

/// A run whose helper, defined in turn 1, calls the tool again in turns 2 and 3.
const HELPER_REPLIES: [&str; 3] = [
    "```clojure\n(defn price-of [item] (tool/price {:item item}))\n(def pen (price-of \"pen\"))\n```",
    "```clojure\n(def ink (price-of \"ink\"))\n```",
    "```clojure\n(return {:pen pen :ink ink :again (price-of \"ink\")})\n```",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_restored_on_resume_call_the_tools_of_the_resumed_run() {
    let whole = agent(&HELPER_REPLIES, Arc::default())
        .run()
        .await
        .expect("runs");
    assert_eq!(
        whole.value().map(ptc_lisp::pr_str),
        Some("{:pen 3, :ink 5, :again 5}".to_string())
    );
    let store = InProcessStore::new();
    for done in 0..=2 {
        // Restoring `price-of` and `pen` answers from the record; the turns run after the
        // resume call the tool, through the restored function too.
        check_resume(
            &store,
            &format!("after-{done}"),
            &whole,
            &HELPER_REPLIES,
            done,
            "helper",
        )
        .await;
    }
}

/// Tells `asked` when the request of turn `turn` is about to be sent.
struct AskedFor {
    turn: u32,
    asked: Arc<tokio::sync::Notify>,
}

impl ptc_agent::RunObserver for AskedFor {
    fn on_request(&self, turn: u32, _: &[ptc_turn::Message]) {
        if turn == self.turn {
            self.asked.notify_one();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_run_keeps_its_turns_stays_open_in_its_store_and_resumes() {
    let whole = agent(&REPLIES, Arc::default()).run().await.expect("runs");
    let store = InProcessStore::new();
    let asked = Arc::new(tokio::sync::Notify::new());
    let observer = AskedFor {
        turn: 3,
        asked: asked.clone(),
    };
    let first_two = Agent::builder("Price the pen and the ink")
        .llm(OnceThenSilent(ScriptedLlm::new(
            REPLIES[..2].iter().copied(),
        )))
        .tool(tool_fn(
            "price",
            "The price of an item",
            |args: serde_json::Value| Ok::<_, ToolError>(if args["item"] == "pen" { 3 } else { 5 }),
        ))
        .max_turns(6)
        .build()
        .expect("agent");
    let step = first_two
        .run_with(
            RunOptions::new()
                .with_store(&store, "r1")
                .with_observer(&observer)
                .with_stop_signal(async move { asked.notified().await }),
        )
        .await
        .expect("runs");
    assert_eq!(
        step.outcome,
        StepOutcome::Failed {
            kind: FailureKind::Interrupted,
            reason: "the run was stopped during turn 3, which was cut off".into(),
            value: None,
            llm_errors: Vec::new(),
        }
    );
    assert_eq!(
        without_timings(&step)["turns"],
        serde_json::Value::from(without_timings(&whole)["turns"].as_array().unwrap()[..2].to_vec())
    );
    let checkpoint = store.load("r1").await.unwrap().expect("recorded");
    assert_eq!(checkpoint.step(), None, "an interrupted run stays open");
    assert_eq!(checkpoint.turns.len(), 2);

    let resumed = agent(&REPLIES[2..], Arc::default())
        .resume(&store, "r1", RunOptions::new())
        .await
        .expect("resumes");
    assert_eq!(without_timings(&resumed), without_timings(&whole));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_ended_on_a_model_error_goes_on_with_its_turns_when_resumed() {
    let whole = agent(&REPLIES, Arc::default()).run().await.expect("runs");
    let path = std::env::temp_dir().join(format!("ptc-outage-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    for (name, store) in [
        (
            "in-process",
            Box::new(InProcessStore::new()) as Box<dyn RunStore>,
        ),
        ("jsonl", Box::new(JsonlStore::open(&path).expect("open"))),
    ] {
        // The model answers twice, then fails: the run ends on `llm_error` after turn 2.
        let calls = Arc::new(AtomicUsize::new(0));
        let failed = agent(&REPLIES[..2], calls.clone())
            .run_with(RunOptions::new().with_store(store.as_ref(), "r"))
            .await
            .expect("runs");
        let StepOutcome::Failed { kind, reason, .. } = &failed.outcome else {
            panic!("{name}: the run returned");
        };
        assert_eq!(*kind, FailureKind::LlmError, "{name}");
        assert_eq!(
            reason,
            "the scripted model has no reply left after serving 2; add more replies, or make the \
             run need fewer model calls",
            "{name}"
        );
        assert_eq!(failed.turns.len(), 2, "{name}");
        assert_eq!(calls.load(Ordering::SeqCst), 2, "{name}");
        let stored = store.load("r").await.unwrap().expect("stored");
        assert_eq!(stored.step(), Some(failed.clone()), "{name}");

        // Resumed, the model answers: the run goes on after turn 2 and ends as the run the
        // model never failed, without calling the tool again.
        let calls = Arc::new(AtomicUsize::new(0));
        let resumed = agent(&REPLIES[2..], calls.clone())
            .resume(store.as_ref(), "r", RunOptions::new())
            .await
            .expect("resumes");
        assert_eq!(without_timings(&resumed), without_timings(&whole), "{name}");
        assert_eq!(
            resumed.value().map(ptc_lisp::pr_str),
            Some("{:total 11, :doubled 22}".to_string()),
            "{name}"
        );
        assert_eq!(resumed.turns.len(), 4, "{name}");
        assert_eq!(resumed.turns[..2], failed.turns[..], "{name}");
        assert_eq!(calls.load(Ordering::SeqCst), 0, "{name}");
        let stored = store.load("r").await.unwrap().expect("stored");
        assert_eq!(stored.step(), Some(resumed), "{name}");
    }
    // The file read anew has the run reopened and ended again.
    let reread = JsonlStore::open(&path).expect("reopen the file");
    let stored = reread.load("r").await.unwrap().expect("stored");
    assert_eq!(stored.turns.len(), 4);
    assert_eq!(
        stored.step().and_then(|s| s.value().map(ptc_lisp::pr_str)),
        Some("{:total 11, :doubled 22}".to_string())
    );
    let _ = std::fs::remove_file(&path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_ended_on_its_deadline_goes_on_but_a_failed_run_stays_ended() {
    let store = InProcessStore::new();
    let timed_out = Agent::builder("Add up")
        .llm(OnceThenSilent(ScriptedLlm::new(["(def x 40)"])))
        .deadline(Duration::from_millis(300))
        .build()
        .unwrap()
        .run_with(RunOptions::new().with_store(&store, "late"))
        .await
        .expect("runs");
    assert!(matches!(
        timed_out.outcome,
        StepOutcome::Failed {
            kind: FailureKind::Timeout,
            ..
        }
    ));
    assert_eq!(timed_out.turns.len(), 1);
    let again = |replies: &[&str]| {
        Agent::builder("Add up")
            .llm(ScriptedLlm::new(replies.to_vec()))
            .deadline(Duration::from_millis(300))
            .build()
            .unwrap()
    };
    let resumed = again(&["(return (+ x 2))"])
        .resume(&store, "late", RunOptions::new())
        .await
        .expect("resumes");
    assert_eq!(resumed.value(), Some(&ptc_lisp::Value::Int(42)));
    assert_eq!(resumed.turns.len(), 2);
    assert_eq!(resumed.turns[0], timed_out.turns[0]);

    // A run whose program failed ended on its own decision: resuming returns it as it was.
    let failed = again(&["(fail \"no\")"])
        .run_with(RunOptions::new().with_store(&store, "failed"))
        .await
        .expect("runs");
    let llm = ScriptedLlm::new(["(return 1)"]);
    let replayed = Agent::builder("Add up")
        .llm(llm.clone())
        .deadline(Duration::from_millis(300))
        .build()
        .unwrap()
        .resume(&store, "failed", RunOptions::new())
        .await
        .expect("an ended run");
    assert_eq!(replayed, failed);
    assert!(llm.requests().is_empty());
    assert!(!store.load("failed").await.unwrap().unwrap().goes_on());
}

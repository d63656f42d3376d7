//! Tool calls recorded before they are made (a store with an intent log): each tool sees its
//! call's idempotency key; after a crash mid-turn, the turn runs the model's reply recorded
//! before it again, without asking the model, a call that completed is answered from the log
//! and one in flight is made again under the same key; where no reply was recorded, a program
//! that differs gets new keys, and the resumed model is told which calls of its unfinished turn
//! may have happened.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use ptc_agent::store::{
    Checkpoint, IdempotencyKey, InProcessStore, IntentLog, IntentRecord, Lease, RunStore,
    StoreError, ToolIntent,
};
use ptc_agent::{
    Agent, LlmResponse, RunObserver, RunOptions, ScriptedLlm, ToolError, async_tool,
    current_idempotency_key,
};
use ptc_lisp::ToolOutcome;
use ptc_turn::{FailureKind, Message, StepOutcome, Task, Turn, Usage};

const SEND_TWO: &str = "(def a (tool/send \"hi\"))\n(def b (tool/send \"ho\"))";
const SEND_BYE: &str = "(return [a b (tool/send \"bye\")])";

/// An agent whose `send` tool notes each call it makes with its key, and answers `sent TEXT`;
/// a call sending `hangs` never answers, and then the run has a deadline of 300 ms.
fn agent(replies: &[&str], made: Arc<Mutex<Vec<String>>>, hangs: Option<&'static str>) -> Agent {
    let send = async_tool("send", "Sends a message", move |text: String| {
        let key = current_idempotency_key().map_or("no key".to_string(), |k| k.to_string());
        made.lock().unwrap().push(format!("{key} {text}"));
        async move {
            if Some(text.as_str()) == hangs {
                std::future::pending::<()>().await;
            }
            Ok::<_, ToolError>(format!("sent {text}"))
        }
    });
    let builder = Agent::builder("Send the messages")
        .llm(ScriptedLlm::new(replies.iter().map(|r| r.to_string())))
        .tool(send)
        .max_turns(4);
    match hangs {
        Some(_) => builder.deadline(Duration::from_millis(300)),
        None => builder,
    }
    .build()
    .expect("agent")
}

/// An [`InProcessStore`] whose intent log keeps no model replies, as a log written before
/// replies were kept: a turn run again after a crash asks the model anew. When its flag is set,
/// it refuses to record any call.
#[derive(Default)]
struct WithoutReplies(InProcessStore, AtomicBool);

#[async_trait]
impl RunStore for WithoutReplies {
    async fn start(&self, id: &str, task: &Task) -> Result<(), StoreError> {
        self.0.start(id, task).await
    }

    async fn append(&self, lease: Option<&Lease>, id: &str, turn: &Turn) -> Result<(), StoreError> {
        self.0.append(lease, id, turn).await
    }

    async fn finish(
        &self,
        lease: Option<&Lease>,
        id: &str,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        self.0.finish(lease, id, outcome, usage).await
    }

    async fn load(&self, id: &str) -> Result<Option<Checkpoint>, StoreError> {
        self.0.load(id).await
    }

    async fn reopen(&self, id: &str) -> Result<(), StoreError> {
        self.0.reopen(id).await
    }

    fn intent_log(&self) -> Option<&dyn IntentLog> {
        Some(self)
    }
}

#[async_trait]
impl IntentLog for WithoutReplies {
    async fn record_intent(
        &self,
        lease: Option<&Lease>,
        intent: &ToolIntent,
    ) -> Result<IntentRecord, StoreError> {
        if self.1.load(Ordering::SeqCst) {
            return Err(StoreError::Io("the log is full".into()));
        }
        self.0.record_intent(lease, intent).await
    }

    async fn complete_intent(
        &self,
        lease: Option<&Lease>,
        key: &IdempotencyKey,
        outcome: &ToolOutcome,
    ) -> Result<(), StoreError> {
        self.0.complete_intent(lease, key, outcome).await
    }

    async fn intents(&self, run_id: &str) -> Result<Vec<IntentRecord>, StoreError> {
        self.0.intents(run_id).await
    }

    async fn record_reply(
        &self,
        _: Option<&Lease>,
        _: &str,
        _: u32,
        _: &LlmResponse,
    ) -> Result<(), StoreError> {
        Err(StoreError::Io("this log keeps no replies".into()))
    }

    async fn recorded_reply(&self, _: &str, _: u32) -> Result<Option<LlmResponse>, StoreError> {
        Ok(None)
    }
}

/// The intent log of run `id` as `KEY TOOL ARGS ATTEMPTS OUTCOME` lines.
async fn log_of(store: &dyn IntentLog, id: &str) -> Vec<String> {
    store
        .intents(id)
        .await
        .expect("intents")
        .iter()
        .map(|r| {
            let args: Vec<String> = r.intent.args.iter().map(ptc_lisp::pr_str).collect();
            let outcome = match &r.outcome {
                None => "in flight".to_string(),
                Some(ToolOutcome::Ok(value)) => ptc_lisp::pr_str(value),
                Some(ToolOutcome::Error(message)) => format!("error: {message}"),
            };
            format!(
                "{} {} {} x{} {outcome}",
                r.intent.key,
                r.intent.tool,
                args.join(" "),
                r.attempts
            )
        })
        .collect()
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

/// The last message of each request, by turn.
#[derive(Default)]
struct LastMessages(Mutex<Vec<(u32, String)>>);

impl RunObserver for LastMessages {
    fn on_request(&self, turn: u32, messages: &[Message]) {
        let last = messages
            .last()
            .map(|m| m.content.clone())
            .unwrap_or_default();
        self.0.lock().unwrap().push((turn, last));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_call_is_recorded_with_its_key_before_it_is_made_and_completed_after() {
    let store = InProcessStore::new();
    let made = Arc::new(Mutex::new(Vec::new()));
    let step = agent(&[SEND_TWO, SEND_BYE], made.clone(), None)
        .run_with(RunOptions::new().with_store(&store, "r"))
        .await
        .expect("runs");
    assert_eq!(
        step.value().map(ptc_lisp::pr_str),
        Some("[\"sent hi\" \"sent ho\" \"sent bye\"]".to_string())
    );
    assert_eq!(
        *made.lock().unwrap(),
        strings(&["r:1:0 hi", "r:1:1 ho", "r:2:0 bye"])
    );
    assert_eq!(
        log_of(&store, "r").await,
        strings(&[
            "r:1:0 send \"hi\" x1 \"sent hi\"",
            "r:1:1 send \"ho\" x1 \"sent ho\"",
            "r:2:0 send \"bye\" x1 \"sent bye\"",
        ])
    );

    // Without a store there is no run id: tools see no key.
    let made = Arc::new(Mutex::new(Vec::new()));
    agent(&[SEND_TWO, SEND_BYE], made.clone(), None)
        .run()
        .await
        .expect("runs");
    assert_eq!(
        *made.lock().unwrap(),
        strings(&["no key hi", "no key ho", "no key bye"])
    );
}

/// Run `r` of `store`, stopped by its deadline while the second call of turn 1 hangs: the
/// first call completed, the second is in flight.
async fn stopped_in_turn_one(store: &(impl RunStore + IntentLog)) {
    let made = Arc::new(Mutex::new(Vec::new()));
    let step = agent(&[SEND_TWO, SEND_BYE], made.clone(), Some("ho"))
        .run_with(RunOptions::new().with_store(store, "r"))
        .await
        .expect("runs");
    let StepOutcome::Failed { kind, .. } = &step.outcome else {
        panic!("the run returned");
    };
    assert_eq!(*kind, FailureKind::Timeout);
    assert_eq!(*made.lock().unwrap(), strings(&["r:1:0 hi", "r:1:1 ho"]));
    assert_eq!(
        log_of(store, "r").await,
        strings(&[
            "r:1:0 send \"hi\" x1 \"sent hi\"",
            "r:1:1 send \"ho\" x1 in flight",
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_turn_runs_its_recorded_reply_taking_a_completed_call_from_the_log() {
    let store = InProcessStore::new();
    stopped_in_turn_one(&store).await;
    assert_eq!(
        store
            .recorded_reply("r", 1)
            .await
            .map(|r| r.map(|r| r.content)),
        Ok(Some(SEND_TWO.to_string()))
    );

    // The model has only turn 2's reply: turn 1 runs the reply recorded before the stop.
    let made = Arc::new(Mutex::new(Vec::new()));
    let asked = LastMessages::default();
    let step = agent(&[SEND_BYE], made.clone(), None)
        .resume(&store, "r", RunOptions::new().with_observer(&asked))
        .await
        .expect("resumes");
    assert_eq!(
        step.value().map(ptc_lisp::pr_str),
        Some("[\"sent hi\" \"sent ho\" \"sent bye\"]".to_string())
    );
    // `hi` completed before the stop: not sent again. `ho` may have been sent: sent again
    // under the same key.
    assert_eq!(*made.lock().unwrap(), strings(&["r:1:1 ho", "r:2:0 bye"]));
    assert_eq!(
        log_of(&store, "r").await,
        strings(&[
            "r:1:0 send \"hi\" x1 \"sent hi\"",
            "r:1:1 send \"ho\" x2 \"sent ho\"",
            "r:2:0 send \"bye\" x1 \"sent bye\"",
        ])
    );
    let programs: Vec<_> = step.turns.iter().map(|t| t.program().to_string()).collect();
    assert_eq!(programs, [SEND_TWO, SEND_BYE]);
    // Asked once, for turn 2, and told nothing: the calls of turn 1 were made again as before.
    let asked = asked.0.lock().unwrap();
    let turns: Vec<u32> = asked.iter().map(|(turn, _)| *turn).collect();
    assert_eq!(turns, [2]);
    assert!(!asked[0].1.contains("Note:"), "{}", asked[0].1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_turn_without_a_recorded_reply_asks_the_model_and_tells_it_of_the_calls() {
    let store = WithoutReplies::default();
    stopped_in_turn_one(&store).await;

    let made = Arc::new(Mutex::new(Vec::new()));
    let asked = LastMessages::default();
    let step = agent(&[SEND_TWO, SEND_BYE], made.clone(), None)
        .resume(&store, "r", RunOptions::new().with_observer(&asked))
        .await
        .expect("resumes");
    assert_eq!(
        step.value().map(ptc_lisp::pr_str),
        Some("[\"sent hi\" \"sent ho\" \"sent bye\"]".to_string())
    );
    assert_eq!(*made.lock().unwrap(), strings(&["r:1:1 ho", "r:2:0 bye"]));
    let asked = asked.0.lock().unwrap();
    let (turn, first) = &asked[0];
    assert_eq!(*turn, 1);
    let notice = &first[first.find("Note:").expect("a notice")..];
    assert_eq!(
        notice,
        "Note: this run stopped during turn 1, before the turn was saved, after its program had \
         made these tool calls:\n\
         - (tool/send \"hi\") completed, returning \"sent hi\"\n\
         - (tool/send \"ho\") may or may not have happened\n\
         A call made again with the same arguments in the same order is not repeated: a \
         completed one returns its recorded result, and one that may have happened is retried \
         under the same idempotency key."
    );
    assert!(!asked[1].1.contains("Note:"), "told once: {}", asked[1].1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_turn_that_makes_other_calls_gets_new_keys_after_the_recorded_ones() {
    let store = WithoutReplies::default();
    stopped_in_turn_one(&store).await;

    let made = Arc::new(Mutex::new(Vec::new()));
    let other =
        "(def a (tool/send \"hi\"))\n(def b (tool/send \"hey\"))\n(def c (tool/send \"ho\"))";
    let step = agent(&[other, SEND_BYE], made.clone(), None)
        .resume(&store, "r", RunOptions::new())
        .await
        .expect("resumes");
    assert_eq!(
        step.value().map(ptc_lisp::pr_str),
        Some("[\"sent hi\" \"sent hey\" \"sent bye\"]".to_string())
    );
    // `hi` is the recorded call 0; `hey` differs from the recorded call 1, so it and every
    // later call of the turn get keys after the recorded ones.
    assert_eq!(
        *made.lock().unwrap(),
        strings(&["r:1:2 hey", "r:1:3 ho", "r:2:0 bye"])
    );
    assert_eq!(
        log_of(&store, "r").await,
        strings(&[
            "r:1:0 send \"hi\" x1 \"sent hi\"",
            "r:1:1 send \"ho\" x1 in flight",
            "r:1:2 send \"hey\" x1 \"sent hey\"",
            "r:1:3 send \"ho\" x1 \"sent ho\"",
            "r:2:0 send \"bye\" x1 \"sent bye\"",
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_cannot_be_recorded_first_is_not_made_and_the_program_is_told() {
    let store = WithoutReplies::default();
    store.1.store(true, Ordering::SeqCst);
    let made = Arc::new(Mutex::new(Vec::new()));
    let step = agent(
        &["(return (tool/send \"hi\"))", "(return \"gave up\")"],
        made.clone(),
        None,
    )
    .run_with(RunOptions::new().with_store(&store, "r"))
    .await
    .expect("runs");
    assert_eq!(
        step.value().map(ptc_lisp::pr_str),
        Some("\"gave up\"".into())
    );
    assert_eq!(*made.lock().unwrap(), Vec::<String>::new());
    assert_eq!(
        step.turns[0].error().map(|e| e.message.as_str()),
        Some(
            "tool/send failed: the call was not made: it could not be recorded first (the log \
             is full)"
        )
    );
    assert_eq!(log_of(&store, "r").await, Vec::<String>::new());
}

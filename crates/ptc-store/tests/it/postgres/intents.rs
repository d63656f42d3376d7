//! The intent log: calls recorded before they are made, retried, completed, fenced; the
//! model's reply to a turn, recorded once before its program runs.

use std::time::Duration;

use pretty_assertions::assert_eq;

use ptc_agent::LlmResponse;
use ptc_agent::store::{
    FleetStore, IdempotencyKey, IntentLog, IntentRecord, RunStore, StoreError, ToolIntent,
};
use ptc_lisp::{ToolOutcome, Value};
use ptc_turn::{Task, TokenUsage};

use super::TestDb;

fn intent(run: &str, turn: u32, call: u32, tool: &str, arg: i64) -> ToolIntent {
    ToolIntent {
        key: IdempotencyKey::new(run, turn, call),
        tool: tool.to_string(),
        args: vec![Value::Int(arg)],
    }
}

fn record(intent: &ToolIntent, attempts: u32, outcome: Option<ToolOutcome>) -> IntentRecord {
    IntentRecord {
        intent: intent.clone(),
        attempts,
        outcome,
    }
}

#[tokio::test]
async fn calls_are_recorded_retried_and_completed() {
    let db = TestDb::new("intents").await;
    let store = db.store().await;
    store.submit("r", &Task::new("m")).await.unwrap();
    let lease = store
        .claim("a", "", Duration::from_secs(60), 1)
        .await
        .unwrap()[0]
        .lease
        .clone();
    let charge = intent("r", 1, 0, "charge", 30);
    let mail = intent("r", 1, 1, "mail", 7);
    let paid = ToolOutcome::Ok(Value::keyword("paid"));
    assert_eq!(
        store.record_intent(Some(&lease), &charge).await,
        Ok(record(&charge, 1, None))
    );
    assert_eq!(
        store.record_intent(Some(&lease), &mail).await,
        Ok(record(&mail, 1, None))
    );
    // A retry of the charge (the worker did not learn whether it happened).
    assert_eq!(
        store.record_intent(Some(&lease), &charge).await,
        Ok(record(&charge, 2, None))
    );
    store
        .complete_intent(Some(&lease), &charge.key, &paid)
        .await
        .unwrap();
    // Completing again with the same outcome changes nothing; with another it is refused.
    store
        .complete_intent(Some(&lease), &charge.key, &paid)
        .await
        .unwrap();
    assert_eq!(
        store
            .complete_intent(Some(&lease), &charge.key, &ToolOutcome::Error("x".into()))
            .await,
        Err(StoreError::IntentCompleted("r:1:0".into()))
    );
    assert_eq!(store.in_flight("r").await, Ok(vec![record(&mail, 1, None)]));
    // Recording a completed call again hands back its outcome instead of a new attempt.
    assert_eq!(
        store.record_intent(Some(&lease), &charge).await,
        Ok(record(&charge, 2, Some(paid.clone())))
    );
    assert_eq!(
        store.intents("r").await,
        Ok(vec![record(&charge, 2, Some(paid)), record(&mail, 1, None)])
    );
}

#[tokio::test]
async fn a_key_names_one_call_and_a_stale_lease_records_nothing() {
    let db = TestDb::new("intents_refused").await;
    let store = db.store().await;
    store.submit("r", &Task::new("m")).await.unwrap();
    let short = Duration::from_secs(1);
    let stale = store.claim("a", "", short, 1).await.unwrap()[0]
        .lease
        .clone();
    store
        .record_intent(Some(&stale), &intent("r", 1, 0, "charge", 30))
        .await
        .unwrap();
    assert_eq!(
        store
            .record_intent(Some(&stale), &intent("r", 1, 0, "refund", 30))
            .await,
        Err(StoreError::IntentMismatch {
            key: "r:1:0".into(),
            recorded: "tool/charge".into()
        })
    );
    assert_eq!(
        store
            .record_intent(Some(&stale), &intent("r", 1, 0, "charge", 31))
            .await,
        Err(StoreError::IntentMismatch {
            key: "r:1:0".into(),
            recorded: "tool/charge".into()
        })
    );
    assert_eq!(
        store
            .complete_intent(
                Some(&stale),
                &IdempotencyKey::new("r", 1, 5),
                &ToolOutcome::Ok(Value::Nil)
            )
            .await,
        Err(StoreError::IntentUnknown("r:1:5".into()))
    );
    tokio::time::sleep(short + Duration::from_millis(500)).await;
    let fresh = store
        .claim("b", "", Duration::from_secs(60), 1)
        .await
        .unwrap()[0]
        .lease
        .clone();
    let lost = Err(StoreError::LeaseLost {
        id: "r".into(),
        token: stale.token,
    });
    assert_eq!(
        store
            .record_intent(Some(&stale), &intent("r", 1, 1, "mail", 7))
            .await
            .map(|_| ()),
        lost
    );
    assert_eq!(
        store
            .complete_intent(
                Some(&stale),
                &IdempotencyKey::new("r", 1, 0),
                &ToolOutcome::Ok(Value::Nil)
            )
            .await,
        lost
    );
    assert_eq!(
        store
            .record_intent(None, &intent("r", 1, 1, "mail", 7))
            .await
            .map(|_| ()),
        Err(StoreError::FleetRun("r".into()))
    );
    // The new holder sees the call the old one left in flight, and retries it.
    let in_flight = store.in_flight("r").await.unwrap();
    assert_eq!(
        in_flight,
        vec![record(&intent("r", 1, 0, "charge", 30), 1, None)]
    );
    assert_eq!(
        store
            .record_intent(Some(&fresh), &intent("r", 1, 0, "charge", 30))
            .await,
        Ok(record(&intent("r", 1, 0, "charge", 30), 2, None))
    );
}

#[tokio::test]
async fn a_local_run_logs_its_calls_without_a_lease() {
    let db = TestDb::new("intents_local").await;
    let store = db.store().await;
    store.start("local", &Task::new("m")).await.unwrap();
    let call = intent("local", 2, 0, "search", 1);
    assert_eq!(
        store.record_intent(None, &call).await,
        Ok(record(&call, 1, None))
    );
    store
        .complete_intent(None, &call.key, &ToolOutcome::Error("timed out".into()))
        .await
        .unwrap();
    assert_eq!(
        store.intents("local").await,
        Ok(vec![record(
            &call,
            1,
            Some(ToolOutcome::Error("timed out".into()))
        )])
    );
    assert_eq!(
        store
            .record_intent(None, &intent("missing", 1, 0, "x", 1))
            .await
            .map(|_| ()),
        Err(StoreError::Missing("missing".into()))
    );
}

#[tokio::test]
async fn a_turns_reply_is_recorded_once_under_the_lease_and_read_back() {
    let db = TestDb::new("intents_replies").await;
    let store = db.store().await;
    store.submit("r", &Task::new("m")).await.unwrap();
    let short = Duration::from_secs(1);
    let stale = store.claim("a", "", short, 1).await.unwrap()[0]
        .lease
        .clone();
    let reply = LlmResponse {
        usage: TokenUsage {
            input_tokens: 120,
            output_tokens: 12,
            ..TokenUsage::default()
        },
        model: Some("m-1".into()),
        ..LlmResponse::text("(def a 1)")
    };
    assert_eq!(store.recorded_reply("r", 1).await, Ok(None));
    store
        .record_reply(Some(&stale), "r", 1, &reply)
        .await
        .unwrap();
    // The first reply of a turn is kept.
    store
        .record_reply(Some(&stale), "r", 1, &LlmResponse::text("(def a 2)"))
        .await
        .unwrap();
    assert_eq!(store.recorded_reply("r", 1).await, Ok(Some(reply.clone())));
    assert_eq!(store.recorded_reply("r", 2).await, Ok(None));
    // Fenced: a lease taken over records nothing.
    tokio::time::sleep(short + Duration::from_millis(500)).await;
    store
        .claim("b", "", Duration::from_secs(60), 1)
        .await
        .unwrap();
    assert_eq!(
        store
            .record_reply(Some(&stale), "r", 2, &LlmResponse::text("(def b 2)"))
            .await,
        Err(StoreError::LeaseLost {
            id: "r".into(),
            token: stale.token
        })
    );
    assert_eq!(store.recorded_reply("r", 2).await, Ok(None));
}

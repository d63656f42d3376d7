//! Leases: claims by many workers at once, fencing of a worker that lost its lease, expiry,
//! renewal, hand-back and the state of a run.

use std::collections::BTreeMap;
use std::time::Duration;

use pretty_assertions::assert_eq;
use ptc_agent::store::{Claimed, FleetStore, RunState, RunStatus, RunStore, StoreError};
use ptc_lisp::Value;
use ptc_store::PgStore;
use ptc_turn::{Task, Turn};

use super::TestDb;
use crate::contract::{returned, turn};

const LONG: Duration = Duration::from_secs(60);
/// Long enough that a busy machine does not lose a lease between two steps of a test.
const SHORT: Duration = Duration::from_secs(1);
/// Waited for a short lease to have expired.
const PAST_SHORT: Duration = Duration::from_millis(1500);

async fn submit_runs(store: &PgStore, count: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..count {
        let id = format!("run-{i:04}");
        store
            .submit(&id, &Task::new(format!("mission {i}")))
            .await
            .unwrap();
        ids.push(id);
    }
    ids
}

async fn claim_one(store: &PgStore, worker: &str, duration: Duration) -> Claimed {
    let mut claimed = store.claim(worker, "", duration, 1).await.unwrap();
    assert_eq!(claimed.len(), 1, "{worker} claimed nothing");
    claimed.remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claimers_never_take_the_same_run() {
    let db = TestDb::new("claimers").await;
    let store = db.store().await;
    let ids = submit_runs(&store, 300).await;
    // Eight workers, each with connections of its own, claim in small batches until nothing
    // is left.
    let mut workers = Vec::new();
    for w in 0..8 {
        let url = db.url.clone();
        workers.push(tokio::spawn(async move {
            let store = PgStore::connect_with_pool_size(&url, 2).await.unwrap();
            let mut mine = Vec::new();
            loop {
                let claimed = store
                    .claim(&format!("w{w}"), "", LONG, 1 + w % 3)
                    .await
                    .unwrap();
                if claimed.is_empty() {
                    return mine;
                }
                mine.extend(
                    claimed
                        .into_iter()
                        .map(|c| (c.lease.run_id, c.lease.token, c.claims)),
                );
            }
        }));
    }
    let mut by_run: BTreeMap<String, Vec<(u64, u32)>> = BTreeMap::new();
    for worker in workers {
        for (id, token, claims) in worker.await.unwrap() {
            by_run.entry(id).or_default().push((token, claims));
        }
    }
    assert_eq!(by_run.keys().cloned().collect::<Vec<_>>(), ids);
    let claimed_twice: Vec<_> = by_run.iter().filter(|(_, c)| c.len() != 1).collect();
    assert_eq!(claimed_twice, Vec::<(&String, &Vec<(u64, u32)>)>::new());
    let mut tokens: Vec<u64> = by_run.values().map(|c| c[0].0).collect();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), 300, "every claim has its own token");
    assert!(by_run.values().all(|c| c[0].1 == 1));
    assert_eq!(store.claim("late", "", LONG, 10).await.unwrap(), vec![]);
}

#[tokio::test]
async fn runs_are_claimed_oldest_first_with_their_checkpoint() {
    let db = TestDb::new("claim_order").await;
    let store = db.store().await;
    submit_runs(&store, 3).await;
    store
        .start("local", &Task::new("not the fleet's"))
        .await
        .unwrap();
    let first = claim_one(&store, "a", LONG).await;
    assert_eq!(first.lease.run_id, "run-0000");
    assert_eq!(first.lease.worker, "a");
    assert_eq!(first.lease.duration, LONG);
    assert_eq!(first.claims, 1);
    assert_eq!(first.checkpoint.task, Task::new("mission 0"));
    assert_eq!(first.checkpoint.turns.len(), 0);
    let rest = store.claim("b", "", LONG, 10).await.unwrap();
    let ids: Vec<_> = rest.iter().map(|c| c.lease.run_id.as_str()).collect();
    assert_eq!(ids, vec!["run-0001", "run-0002"]);
    assert!(rest.iter().all(|c| c.lease.token > first.lease.token));
    // The local run is never the fleet's.
    assert_eq!(store.claim("c", "", LONG, 10).await.unwrap(), vec![]);
}

#[tokio::test]
async fn a_worker_that_lost_its_lease_can_never_write() {
    let db = TestDb::new("fencing").await;
    let store = db.store().await;
    submit_runs(&store, 1).await;
    let stale = claim_one(&store, "a", SHORT).await;
    store
        .append(Some(&stale.lease), &stale.lease.run_id, &turn(1))
        .await
        .unwrap();
    tokio::time::sleep(PAST_SHORT).await;
    // Expired: the run is claimable again, and its next holder resumes after turn 1.
    let fresh = claim_one(&store, "b", LONG).await;
    assert_eq!(fresh.lease.run_id, "run-0000");
    assert!(fresh.lease.token > stale.lease.token);
    assert_eq!(fresh.claims, 2);
    assert_eq!(fresh.checkpoint.turns.len(), 1);
    let lost = Err(StoreError::LeaseLost {
        id: "run-0000".into(),
        token: stale.lease.token,
    });
    assert_eq!(
        store
            .append(Some(&stale.lease), &stale.lease.run_id, &turn(2))
            .await,
        lost
    );
    assert_eq!(store.renew(&stale.lease).await, lost);
    assert_eq!(store.release(&stale.lease).await, lost);
    assert_eq!(
        store
            .finish(
                Some(&stale.lease),
                &stale.lease.run_id,
                &returned(0),
                &Default::default()
            )
            .await,
        lost
    );
    // Without a lease, nobody writes a fleet's run.
    assert_eq!(
        store.append(None, "run-0000", &turn(2)).await,
        Err(StoreError::FleetRun("run-0000".into()))
    );
    assert_eq!(
        store
            .finish(None, "run-0000", &returned(0), &Default::default())
            .await,
        Err(StoreError::FleetRun("run-0000".into()))
    );
    store
        .append(Some(&fresh.lease), &fresh.lease.run_id, &turn(2))
        .await
        .unwrap();
    store
        .finish(
            Some(&fresh.lease),
            &fresh.lease.run_id,
            &returned(7),
            &Default::default(),
        )
        .await
        .unwrap();
    let stored = store.load("run-0000").await.unwrap().unwrap();
    assert_eq!(stored.turns.len(), 2);
    assert_eq!(stored.end.map(|(outcome, _)| outcome), Some(returned(7)));
    assert_eq!(store.claim("c", "", LONG, 1).await.unwrap(), vec![]);
    assert_eq!(
        store
            .append(Some(&fresh.lease), &fresh.lease.run_id, &turn(3))
            .await,
        Err(StoreError::Ended("run-0000".into()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_and_live_holders_racing_leave_only_the_live_holders_turns() {
    let db = TestDb::new("racing").await;
    let store = db.store().await;
    let ids = submit_runs(&store, 20).await;
    let stale = store.claim("stale", "", SHORT, 20).await.unwrap();
    for claimed in &stale {
        store
            .append(Some(&claimed.lease), &claimed.lease.run_id, &turn(1))
            .await
            .unwrap();
    }
    tokio::time::sleep(PAST_SHORT).await;
    let live = store.claim("live", "", LONG, 20).await.unwrap();
    assert_eq!(live.len(), 20);
    // Both commit turn 2 of every run at the same time, from connections of their own.
    let race = |claims: Vec<Claimed>, url: String| {
        tokio::spawn(async move {
            let store = PgStore::connect_with_pool_size(&url, 4).await.unwrap();
            let mut accepted = 0;
            for claimed in claims {
                // The program names its writer, so the stored turns tell who wrote them.
                let second = Turn::success(2, claimed.lease.worker.clone(), Value::Int(2));
                if store
                    .append(Some(&claimed.lease), &claimed.lease.run_id, &second)
                    .await
                    .is_ok()
                {
                    accepted += 1;
                }
            }
            accepted
        })
    };
    let stale_writes = race(stale, db.url.clone());
    let live_writes = race(live, db.url.clone());
    assert_eq!(
        (stale_writes.await.unwrap(), live_writes.await.unwrap()),
        (0, 20)
    );
    for id in ids {
        let stored = store.load(&id).await.unwrap().unwrap();
        let programs: Vec<_> = stored
            .turns
            .iter()
            .map(|t| t.program().to_string())
            .collect();
        assert_eq!(
            programs,
            vec!["(def x 1)".to_string(), "live".to_string()],
            "{id}"
        );
    }
}

#[tokio::test]
async fn a_renewed_lease_holds_and_a_handed_back_one_is_claimable_at_once() {
    let db = TestDb::new("renew").await;
    let store = db.store().await;
    submit_runs(&store, 1).await;
    // Renewed (or committed under) every 0.8 s, a lease of 2 s lasts 4 s and more.
    let lease = Duration::from_secs(2);
    let held = claim_one(&store, "a", lease).await;
    for _ in 0..3 {
        tokio::time::sleep(lease * 2 / 5).await;
        store.renew(&held.lease).await.unwrap();
        assert_eq!(store.claim("b", "", LONG, 1).await.unwrap(), vec![]);
    }
    // A commit extends the lease too.
    for n in 1..=3 {
        tokio::time::sleep(lease * 2 / 5).await;
        store
            .append(Some(&held.lease), &held.lease.run_id, &turn(n))
            .await
            .unwrap();
    }
    assert_eq!(store.claim("b", "", LONG, 1).await.unwrap(), vec![]);
    store.release(&held.lease).await.unwrap();
    let next = claim_one(&store, "b", LONG).await;
    assert_eq!((next.claims, next.checkpoint.turns.len()), (2, 3));
}

#[tokio::test]
async fn a_commit_retried_under_the_same_lease_is_kept_once() {
    let db = TestDb::new("retried_commit").await;
    let store = db.store().await;
    submit_runs(&store, 1).await;
    let held = claim_one(&store, "a", LONG).await;
    store
        .append(Some(&held.lease), &held.lease.run_id, &turn(1))
        .await
        .unwrap();
    store
        .append(Some(&held.lease), &held.lease.run_id, &turn(1))
        .await
        .unwrap();
    assert_eq!(
        store
            .append(
                Some(&held.lease),
                &held.lease.run_id,
                &Turn::success(1, "(other)", Value::Nil)
            )
            .await,
        Err(StoreError::OutOfOrder {
            id: "run-0000".into(),
            expected: 2,
            found: 1
        })
    );
    assert_eq!(
        store
            .append(Some(&held.lease), &held.lease.run_id, &turn(3))
            .await,
        Err(StoreError::OutOfOrder {
            id: "run-0000".into(),
            expected: 2,
            found: 3
        })
    );
    assert_eq!(
        store.load("run-0000").await.unwrap().unwrap().turns.len(),
        1
    );
}

#[tokio::test]
async fn the_status_of_a_run_follows_its_leases() {
    let db = TestDb::new("status").await;
    let store = db.store().await;
    submit_runs(&store, 1).await;
    store.start("local", &Task::new("m")).await.unwrap();
    let status = |state, turns, claims| {
        Some(RunStatus {
            state,
            turns,
            claims,
        })
    };
    assert_eq!(store.status("nope").await, Ok(None));
    assert_eq!(
        store.status("local").await,
        Ok(status(RunState::Local, 0, 0))
    );
    assert_eq!(
        store.status("run-0000").await,
        Ok(status(RunState::Queued, 0, 0))
    );
    let held = claim_one(&store, "a", LONG).await;
    store
        .append(Some(&held.lease), &held.lease.run_id, &turn(1))
        .await
        .unwrap();
    let leased = RunState::Leased {
        worker: "a".into(),
        token: held.lease.token,
    };
    assert_eq!(store.status("run-0000").await, Ok(status(leased, 1, 1)));
    store.release(&held.lease).await.unwrap();
    assert_eq!(
        store.status("run-0000").await,
        Ok(status(RunState::Queued, 1, 1))
    );
    let held = claim_one(&store, "b", LONG).await;
    store
        .finish(
            Some(&held.lease),
            &held.lease.run_id,
            &returned(3),
            &Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        store.status("run-0000").await,
        Ok(status(RunState::Ended(returned(3)), 1, 2))
    );
    assert_eq!(
        store.submit("run-0000", &Task::new("again")).await,
        Err(StoreError::Exists("run-0000".into()))
    );
}

#[tokio::test]
async fn a_refused_run_waits_for_other_settings_or_a_requeue() {
    let db = TestDb::new("refused").await;
    let store = db.store().await;
    submit_runs(&store, 2).await;
    let mut held = store.claim("a", "five-turns", LONG, 1).await.unwrap();
    let held = held.remove(0);
    assert_eq!(held.lease.run_id, "run-0000");
    let reason = "it was started with a budget of 7 turns, this agent has 5";
    store
        .refuse(&held.lease, "five-turns", reason)
        .await
        .unwrap();
    let refused = RunStatus {
        state: RunState::Refused {
            worker: "a".into(),
            reason: reason.into(),
        },
        turns: 0,
        claims: 1,
    };
    assert_eq!(
        store.status("run-0000").await.unwrap(),
        Some(refused.clone())
    );
    // A refusal ends the lease: nothing more is written under it.
    assert_eq!(
        store
            .append(Some(&held.lease), &held.lease.run_id, &turn(1))
            .await,
        Err(StoreError::LeaseLost {
            id: "run-0000".into(),
            token: held.lease.token
        })
    );
    // Workers with the refuser's settings pass it over, whatever their names.
    for worker in ["a", "b"] {
        let claimed = store.claim(worker, "five-turns", LONG, 10).await.unwrap();
        let ids: Vec<_> = claimed.iter().map(|c| c.lease.run_id.as_str()).collect();
        assert_eq!(
            ids,
            if worker == "a" {
                vec!["run-0001"]
            } else {
                vec![]
            }
        );
    }
    assert_eq!(store.status("run-0000").await.unwrap(), Some(refused));
    // A worker with other settings takes it; refused there too, it waits for a third.
    let other = claim_one(&store, "c", LONG).await;
    assert_eq!((other.lease.run_id.as_str(), other.claims), ("run-0000", 2));
    store.refuse(&other.lease, "", "no tool `x`").await.unwrap();
    for settings in ["five-turns", ""] {
        assert_eq!(store.claim("d", settings, LONG, 10).await.unwrap(), vec![]);
    }
    assert_eq!(
        store.status("run-0000").await.unwrap().map(|s| s.state),
        Some(RunState::Refused {
            worker: "c".into(),
            reason: "no tool `x`".into()
        })
    );
    // Requeued, any worker claims it.
    store.requeue("run-0000").await.unwrap();
    assert_eq!(
        store.status("run-0000").await.unwrap().map(|s| s.state),
        Some(RunState::Queued)
    );
    let again = store.claim("a", "five-turns", LONG, 10).await.unwrap();
    assert_eq!(
        (again.len(), again[0].lease.run_id.as_str(), again[0].claims),
        (1, "run-0000", 3)
    );
    assert_eq!(
        store.requeue("nope").await,
        Err(StoreError::Missing("nope".into()))
    );
}

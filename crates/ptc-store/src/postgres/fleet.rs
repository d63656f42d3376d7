//! Runs submitted to a fleet of workers, claimed and written under leases.

use std::time::Duration;

use async_trait::async_trait;
use ptc_agent::store::{Claimed, FleetStore, Lease, RunState, RunStatus, StoreError};
use ptc_turn::{StepOutcome, Task};

use super::{
    PgStore, changed_meanwhile, db_error, load_checkpoint, run_row, token_of, writer_check,
};
use crate::codec::decode;

#[async_trait]
impl FleetStore for PgStore {
    async fn submit(&self, id: &str, task: &Task) -> Result<(), StoreError> {
        self.insert_run(id, task, true).await
    }

    async fn claim(
        &self,
        worker: &str,
        settings: &str,
        duration: Duration,
        limit: usize,
    ) -> Result<Vec<Claimed>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let seconds = duration.as_secs_f64();
        let client = self.client().await?;
        // Rows another claimer has locked are skipped, so claimers never wait for each other
        // and never take the same run; a row whose lease a commit is extending is locked too,
        // and by the time it is free again its lease is live.
        let statement = client
            .prepare_cached(
                "WITH picked AS (
                     SELECT id FROM ptc_runs
                     WHERE fleet AND outcome IS NULL
                       AND (lease_expires_at IS NULL OR lease_expires_at <= clock_timestamp())
                       AND NOT ($4 = ANY (refused_settings))
                     ORDER BY seq
                     LIMIT $1
                     FOR UPDATE SKIP LOCKED)
                 UPDATE ptc_runs AS r
                 SET lease_worker = $2,
                     lease_token = nextval('ptc_lease_tokens'),
                     lease_expires_at = clock_timestamp() + make_interval(secs => $3),
                     claims = r.claims + 1
                 FROM picked WHERE r.id = picked.id
                 RETURNING r.seq, r.id, r.lease_token, r.claims",
            )
            .await
            .map_err(db_error)?;
        let mut rows = client
            .query(&statement, &[&limit, &worker, &seconds, &settings])
            .await
            .map_err(db_error)?;
        rows.sort_by_key(|row| row.get::<_, i64>(0));
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.get(1);
            // The lease is held, so nothing else writes the run while it is read.
            let checkpoint = load_checkpoint(&**client, &id)
                .await?
                .ok_or_else(|| StoreError::Missing(id.clone()))?;
            claimed.push(Claimed {
                lease: Lease {
                    run_id: id,
                    worker: worker.to_string(),
                    token: u64::try_from(row.get::<_, i64>(2)).unwrap_or(0),
                    duration,
                },
                checkpoint,
                claims: u32::try_from(row.get::<_, i32>(3)).unwrap_or(0),
            });
        }
        Ok(claimed)
    }

    async fn renew(&self, lease: &Lease) -> Result<(), StoreError> {
        let client = self.client().await?;
        let renewed = client
            .execute(
                "UPDATE ptc_runs
                 SET lease_expires_at = clock_timestamp() + make_interval(secs => $3)
                 WHERE id = $1 AND fleet AND outcome IS NULL AND lease_token = $2
                   AND lease_expires_at > clock_timestamp()",
                &[
                    &lease.run_id,
                    &token_of(Some(lease)),
                    &lease.duration.as_secs_f64(),
                ],
            )
            .await
            .map_err(db_error)?;
        if renewed == 1 {
            return Ok(());
        }
        writer_check(&**client, &lease.run_id, Some(lease)).await?;
        Err(changed_meanwhile(&lease.run_id))
    }

    async fn release(&self, lease: &Lease) -> Result<(), StoreError> {
        let client = self.client().await?;
        // A lease that expired with no one else claiming the run since is still this
        // worker's to give up.
        let released = client
            .execute(
                "UPDATE ptc_runs SET lease_expires_at = NULL
                 WHERE id = $1 AND fleet AND outcome IS NULL AND lease_token = $2",
                &[&lease.run_id, &token_of(Some(lease))],
            )
            .await
            .map_err(db_error)?;
        if released == 1 {
            return Ok(());
        }
        writer_check(&**client, &lease.run_id, Some(lease)).await?;
        Err(changed_meanwhile(&lease.run_id))
    }

    async fn refuse(&self, lease: &Lease, settings: &str, reason: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        let refused = client
            .execute(
                "UPDATE ptc_runs
                 SET refused_reason = $3, refused_worker = lease_worker,
                     refused_settings = array_append(refused_settings, $4),
                     lease_expires_at = NULL
                 WHERE id = $1 AND fleet AND outcome IS NULL AND lease_token = $2
                   AND lease_expires_at > clock_timestamp()",
                &[&lease.run_id, &token_of(Some(lease)), &reason, &settings],
            )
            .await
            .map_err(db_error)?;
        if refused == 1 {
            return Ok(());
        }
        writer_check(&**client, &lease.run_id, Some(lease)).await?;
        Err(changed_meanwhile(&lease.run_id))
    }

    async fn requeue(&self, id: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        let found = client
            .execute(
                "UPDATE ptc_runs
                 SET refused_reason = NULL, refused_worker = NULL, refused_settings = '{}'
                 WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(db_error)?;
        if found == 0 {
            return Err(StoreError::Missing(id.to_string()));
        }
        Ok(())
    }

    async fn wait_for_runs(&self, timeout: Duration) {
        self.announcements.wait(timeout).await;
    }

    async fn status(&self, id: &str) -> Result<Option<RunStatus>, StoreError> {
        let client = self.client().await?;
        let Some(run) = run_row(&**client, id).await? else {
            return Ok(None);
        };
        let state = match (run.outcome, run.fleet, run.lease_live) {
            (Some(outcome), _, _) => RunState::Ended(decode::<StepOutcome>(
                &format!("the outcome of run `{id}`"),
                &outcome,
            )?),
            (None, false, _) => RunState::Local,
            (None, true, true) => RunState::Leased {
                worker: run.lease_worker.unwrap_or_default(),
                token: run
                    .lease_token
                    .and_then(|t| u64::try_from(t).ok())
                    .unwrap_or(0),
            },
            (None, true, false) => match run.refused_reason {
                Some(reason) => RunState::Refused {
                    worker: run.refused_worker.unwrap_or_default(),
                    reason,
                },
                None => RunState::Queued,
            },
        };
        Ok(Some(RunStatus {
            state,
            turns: run.turns,
            claims: run.claims,
        }))
    }
}

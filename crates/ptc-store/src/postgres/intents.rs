//! The intent log: tool calls recorded before they are made.

use async_trait::async_trait;
use ptc_agent::LlmResponse;
use ptc_agent::store::{
    IdempotencyKey, IntentLog, IntentRecord, Lease, Recording, StoreError, ToolIntent, Writable,
    completing, recording, replying,
};
use ptc_lisp::{ToolOutcome, Value};
use tokio_postgres::Transaction;

use super::{PgStore, RunRow, db_error, run_row, token_of};
use crate::codec::{decode, encode};

/// Turn and call index as the database keeps them.
fn position(key: &IdempotencyKey) -> Result<(i32, i32), StoreError> {
    let number = |n: u32| {
        i32::try_from(n).map_err(|_| StoreError::Io(format!("the key `{key}` is out of range")))
    };
    Ok((number(key.turn())?, number(key.call())?))
}

/// Locks run `id` against claims for the rest of `tx` and reads it as the rules of the log
/// check it ([`recording`], [`completing`], [`replying`]), so the write that follows is
/// ordered before any loss of the lease.
async fn lock_run(tx: &Transaction<'_>, id: &str) -> Result<Option<Writable>, StoreError> {
    tx.query_opt("SELECT 1 FROM ptc_runs WHERE id = $1 FOR SHARE", &[&id])
        .await
        .map_err(db_error)?;
    Ok(run_row(tx, id).await?.as_ref().map(RunRow::writable))
}

/// The call recorded under `key`, locked for the rest of `tx`.
async fn stored(
    tx: &Transaction<'_>,
    key: &IdempotencyKey,
) -> Result<Option<IntentRecord>, StoreError> {
    let (turn, call) = position(key)?;
    let row = tx
        .query_opt(
            "SELECT tool, args, attempts, outcome FROM ptc_tool_intents \
             WHERE run_id = $1 AND turn = $2 AND call = $3 FOR UPDATE",
            &[&key.run_id(), &turn, &call],
        )
        .await
        .map_err(db_error)?;
    row.map(|row| {
        Ok(IntentRecord {
            intent: ToolIntent {
                key: key.clone(),
                tool: row.get(0),
                args: decode(&format!("the arguments of the call `{key}`"), row.get(1))?,
            },
            attempts: u32::try_from(row.get::<_, i32>(2)).unwrap_or(0),
            outcome: outcome_of(key, row.get(3))?,
        })
    })
    .transpose()
}

fn outcome_of(key: &IdempotencyKey, text: Option<&str>) -> Result<Option<ToolOutcome>, StoreError> {
    text.map(|t| decode(&format!("the outcome of the call `{key}`"), t))
        .transpose()
}

#[async_trait]
impl IntentLog for PgStore {
    async fn record_intent(
        &self,
        lease: Option<&Lease>,
        intent: &ToolIntent,
    ) -> Result<IntentRecord, StoreError> {
        let key = &intent.key;
        let (turn, call) = position(key)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        let run = lock_run(&tx, key.run_id()).await?;
        let recorded = stored(&tx, key).await?;
        let token = token_of(lease);
        let recording = recording(run, lease, recorded.as_ref(), intent)?;
        match &recording {
            Recording::First(_) => {
                let args = encode(&intent.args)?;
                tx.execute(
                    "INSERT INTO ptc_tool_intents (run_id, turn, call, tool, args, lease_token) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                    &[&key.run_id(), &turn, &call, &intent.tool, &args, &token],
                )
                .await
                .map_err(db_error)?;
            }
            Recording::Again(_) => {
                tx.execute(
                    "UPDATE ptc_tool_intents SET attempts = attempts + 1, lease_token = $4, \
                     recorded_at = clock_timestamp() \
                     WHERE run_id = $1 AND turn = $2 AND call = $3",
                    &[&key.run_id(), &turn, &call, &token],
                )
                .await
                .map_err(db_error)?;
            }
            Recording::Completed(_) => {}
        }
        tx.commit().await.map_err(db_error)?;
        Ok(recording.into_record())
    }

    async fn complete_intent(
        &self,
        lease: Option<&Lease>,
        key: &IdempotencyKey,
        outcome: &ToolOutcome,
    ) -> Result<(), StoreError> {
        let (turn, call) = position(key)?;
        let text = encode(outcome)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        let run = lock_run(&tx, key.run_id()).await?;
        let recorded = stored(&tx, key).await?;
        if completing(run, lease, recorded.as_ref(), key, outcome)? {
            tx.execute(
                "UPDATE ptc_tool_intents SET outcome = $4, completed_at = clock_timestamp() \
                 WHERE run_id = $1 AND turn = $2 AND call = $3",
                &[&key.run_id(), &turn, &call, &text],
            )
            .await
            .map_err(db_error)?;
        }
        tx.commit().await.map_err(db_error)
    }

    async fn intents(&self, run_id: &str) -> Result<Vec<IntentRecord>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT turn, call, tool, args, attempts, outcome FROM ptc_tool_intents \
                 WHERE run_id = $1 ORDER BY turn, call",
                &[&run_id],
            )
            .await
            .map_err(db_error)?;
        rows.iter()
            .map(|row| {
                let number = |i: usize| u32::try_from(row.get::<_, i32>(i)).unwrap_or(0);
                let key = IdempotencyKey::new(run_id, number(0), number(1));
                let args: Vec<Value> =
                    decode(&format!("the arguments of the call `{key}`"), row.get(3))?;
                let outcome = outcome_of(&key, row.get(5))?;
                Ok(IntentRecord {
                    intent: ToolIntent {
                        key,
                        tool: row.get(2),
                        args,
                    },
                    attempts: number(4),
                    outcome,
                })
            })
            .collect()
    }

    async fn record_reply(
        &self,
        lease: Option<&Lease>,
        run_id: &str,
        turn: u32,
        reply: &LlmResponse,
    ) -> Result<(), StoreError> {
        let number = i32::try_from(turn)
            .map_err(|_| StoreError::Io(format!("turn number {turn} is too large")))?;
        let reply = encode(reply)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        let run = lock_run(&tx, run_id).await?;
        let held = tx
            .query_opt(
                "SELECT 1 FROM ptc_turn_replies WHERE run_id = $1 AND turn = $2 FOR UPDATE",
                &[&run_id, &number],
            )
            .await
            .map_err(db_error)?;
        if replying(run, lease, run_id, held.is_some())? {
            tx.execute(
                "INSERT INTO ptc_turn_replies (run_id, turn, reply, lease_token) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (run_id, turn) DO NOTHING",
                &[&run_id, &number, &reply, &token_of(lease)],
            )
            .await
            .map_err(db_error)?;
        }
        tx.commit().await.map_err(db_error)
    }

    async fn recorded_reply(
        &self,
        run_id: &str,
        turn: u32,
    ) -> Result<Option<LlmResponse>, StoreError> {
        let number = i32::try_from(turn)
            .map_err(|_| StoreError::Io(format!("turn number {turn} is too large")))?;
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT reply FROM ptc_turn_replies WHERE run_id = $1 AND turn = $2",
                &[&run_id, &number],
            )
            .await
            .map_err(db_error)?;
        row.map(|row| {
            decode(
                &format!("the reply to turn {turn} of run `{run_id}`"),
                row.get::<_, &str>(0),
            )
        })
        .transpose()
    }
}

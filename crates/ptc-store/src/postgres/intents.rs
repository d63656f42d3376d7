//! The intent log: tool calls recorded before they are made.

use async_trait::async_trait;
use ptc_agent::LlmResponse;
use ptc_agent::store::{IdempotencyKey, IntentLog, IntentRecord, Lease, StoreError, ToolIntent};
use ptc_lisp::{ToolOutcome, Value};
use tokio_postgres::Transaction;

use super::{PgStore, db_error, token_of, writer_check};
use crate::codec::{decode, encode};

/// Turn and call index as the database keeps them.
fn position(key: &IdempotencyKey) -> Result<(i32, i32), StoreError> {
    let number = |n: u32| {
        i32::try_from(n).map_err(|_| StoreError::Io(format!("the key `{key}` is out of range")))
    };
    Ok((number(key.turn())?, number(key.call())?))
}

/// Locks run `id` against claims for the rest of `tx` and checks that `writer` may write it,
/// so the write that follows is ordered before any loss of the lease.
async fn lock_for_writer(
    tx: &Transaction<'_>,
    id: &str,
    writer: Option<&Lease>,
) -> Result<(), StoreError> {
    tx.query_opt("SELECT 1 FROM ptc_runs WHERE id = $1 FOR SHARE", &[&id])
        .await
        .map_err(db_error)?;
    writer_check(tx, id, writer).await.map(|_| ())
}

/// A recorded call as its row holds it.
struct Stored {
    tool: String,
    args: String,
    attempts: i32,
    outcome: Option<String>,
}

async fn stored(tx: &Transaction<'_>, key: &IdempotencyKey) -> Result<Option<Stored>, StoreError> {
    let (turn, call) = position(key)?;
    let row = tx
        .query_opt(
            "SELECT tool, args, attempts, outcome FROM ptc_tool_intents \
             WHERE run_id = $1 AND turn = $2 AND call = $3 FOR UPDATE",
            &[&key.run_id(), &turn, &call],
        )
        .await
        .map_err(db_error)?;
    Ok(row.map(|row| Stored {
        tool: row.get(0),
        args: row.get(1),
        attempts: row.get(2),
        outcome: row.get(3),
    }))
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
        let args = encode(&intent.args)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(db_error)?;
        lock_for_writer(&tx, key.run_id(), lease).await?;
        let token = token_of(lease);
        let (attempts, outcome) = match stored(&tx, key).await? {
            Some(found) if found.tool != intent.tool || found.args != args => {
                return Err(StoreError::IntentMismatch {
                    key: key.to_string(),
                    recorded: format!("tool/{}", found.tool),
                });
            }
            Some(Stored {
                attempts,
                outcome: Some(outcome),
                ..
            }) => (attempts, Some(outcome)),
            Some(Stored { attempts, .. }) => {
                tx.execute(
                    "UPDATE ptc_tool_intents SET attempts = attempts + 1, lease_token = $4, \
                     recorded_at = clock_timestamp() \
                     WHERE run_id = $1 AND turn = $2 AND call = $3",
                    &[&key.run_id(), &turn, &call, &token],
                )
                .await
                .map_err(db_error)?;
                (attempts + 1, None)
            }
            None => {
                tx.execute(
                    "INSERT INTO ptc_tool_intents (run_id, turn, call, tool, args, lease_token) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                    &[&key.run_id(), &turn, &call, &intent.tool, &args, &token],
                )
                .await
                .map_err(db_error)?;
                (1, None)
            }
        };
        tx.commit().await.map_err(db_error)?;
        Ok(IntentRecord {
            intent: intent.clone(),
            attempts: u32::try_from(attempts).unwrap_or(0),
            outcome: outcome_of(key, outcome.as_deref())?,
        })
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
        lock_for_writer(&tx, key.run_id(), lease).await?;
        match stored(&tx, key).await? {
            None => {
                return Err(StoreError::Io(format!(
                    "the intent log has no call under the key `{key}`; record a call before \
                     making it"
                )));
            }
            Some(Stored {
                outcome: Some(done),
                ..
            }) => {
                if done != text {
                    return Err(StoreError::Io(format!(
                        "the call `{key}` was completed already, with another outcome"
                    )));
                }
            }
            Some(_) => {
                tx.execute(
                    "UPDATE ptc_tool_intents SET outcome = $4, completed_at = clock_timestamp() \
                     WHERE run_id = $1 AND turn = $2 AND call = $3",
                    &[&key.run_id(), &turn, &call, &text],
                )
                .await
                .map_err(db_error)?;
            }
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
        lock_for_writer(&tx, run_id, lease).await?;
        tx.execute(
            "INSERT INTO ptc_turn_replies (run_id, turn, reply, lease_token) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (run_id, turn) DO NOTHING",
            &[&run_id, &number, &reply, &token_of(lease)],
        )
        .await
        .map_err(db_error)?;
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

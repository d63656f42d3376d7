//! Records as the JSON text the stores keep, so a row reads back exactly as it was written.

use ptc_agent::store::{Checkpoint, StoreError};
use ptc_turn::{Task, Turn, Turns, Usage};

/// `value` as JSON text.
pub(crate) fn encode<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Io(format!("cannot encode: {e}")))
}

/// The record `text` holds; `what` names it in the error when it does not hold one.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("{what} is damaged: {e}")))
}

/// A run's checkpoint from the texts a store keeps: its task, its turns with their numbers
/// in order, and its outcome and usage once it ended.
pub(crate) fn checkpoint(
    id: &str,
    task: &str,
    turns: Vec<(u32, String)>,
    outcome: Option<String>,
    usage: Option<String>,
) -> Result<Checkpoint, StoreError> {
    let task: Task = decode(&format!("the task of run `{id}`"), task)?;
    let mut kept = Turns::new();
    for (number, text) in turns {
        let turn: Turn = decode(&format!("turn {number} of run `{id}`"), &text)?;
        kept.push(turn).map_err(|e| {
            StoreError::Corrupt(format!("the turns of run `{id}` are not in order: {e}"))
        })?;
    }
    let end = match (outcome, usage) {
        (Some(outcome), usage) => Some((
            decode(&format!("the outcome of run `{id}`"), &outcome)?,
            match usage {
                Some(usage) => decode(&format!("the usage of run `{id}`"), &usage)?,
                None => Usage::default(),
            },
        )),
        (None, _) => None,
    };
    Ok(Checkpoint {
        task,
        turns: kept,
        end,
    })
}

//! What a driver of the run core writes to a run's store as the run goes: each recorded turn,
//! and the run's end. A write that fails is logged, never the run's end: a run the store owns
//! goes on without it, a worker's leased run stops.

use ptc_turn::{Step, Turn};

use crate::store::RunStore;

/// Appends `turn`, just recorded, to run `id` of `store`.
pub async fn checkpoint_turn(store: &dyn RunStore, id: &str, turn: &Turn) {
    let Err(error) = store.append(id, turn).await else {
        return;
    };
    let number = turn.number();
    if store.stops_when_a_write_fails() {
        tracing::warn!(
            run = id,
            turn = number,
            %error,
            "turn {number} of run `{id}` was not committed ({error}); the run stops, and goes on \
             from its last committed turn once a worker claims it again"
        );
    } else {
        tracing::error!(
            run = id,
            turn = number,
            %error,
            "turn {number} could not be checkpointed; the run goes on, but cannot resume after it"
        );
    }
}

/// Records the end of run `id` of `store`, which ended as `step` says; a run that was
/// interrupted is left open, so that it can be resumed.
pub async fn checkpoint_end(store: &dyn RunStore, id: &str, step: &Step) {
    if ptc_run::was_interrupted(&step.outcome) {
        return;
    }
    let Err(error) = store.finish(id, &step.outcome, &step.usage).await else {
        return;
    };
    if store.stops_when_a_write_fails() {
        tracing::warn!(
            run = %id,
            %error,
            "the end of run `{id}` was not recorded ({error}); the worker that claims it next \
             ends it again from its committed turns"
        );
    } else {
        tracing::error!(run = %id, %error, "the end of the run could not be checkpointed");
    }
}

//! What a driver of the run core writes to a run's store as the run goes: each recorded turn,
//! and the run's end. A write that fails is logged, never the run's end: a run the store owns
//! goes on without it, a worker's leased run stops.

use ptc_turn::{Step, Turn};

use crate::store::{RunStore, StoredRun};

/// Appends `turn`, just recorded, to run `id` of `store`.
pub async fn checkpoint_turn(store: &dyn RunStore, id: &str, turn: &Turn) {
    checkpoint_turn_of(StoredRun::new(store, id, None), turn).await;
}

/// Records the end of run `id` of `store`, which ended as `step` says; a run that was
/// interrupted is left open, so that it can be resumed.
pub async fn checkpoint_end(store: &dyn RunStore, id: &str, step: &Step) {
    checkpoint_end_of(StoredRun::new(store, id, None), step).await;
}

/// [`checkpoint_turn`] through the run's one write path (with its worker's lease, if any).
pub(crate) async fn checkpoint_turn_of(run: StoredRun<'_>, turn: &Turn) {
    let Err(error) = run.append(turn).await else {
        return;
    };
    let id = run.id();
    let number = turn.number();
    if run.leased() {
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

/// [`checkpoint_end`] through the run's one write path (with its worker's lease, if any).
pub(crate) async fn checkpoint_end_of(run: StoredRun<'_>, step: &Step) {
    if ptc_run::was_interrupted(&step.outcome) {
        return;
    }
    let Err(error) = run.finish(&step.outcome, &step.usage).await else {
        return;
    };
    let id = run.id();
    if run.leased() {
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

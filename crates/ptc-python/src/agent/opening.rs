//! Where an agent run opens: its task made and its checkpoint started, or a checkpointed run
//! loaded to resume (which may have ended already).

use std::path::Path;

use ptc_agent::store::RunStore;
use ptc_agent::{Agent, Resumption, RunOptions};
use ptc_run::Start;
use ptc_turn::{Step, Task};

/// Where a run opens: ended already (a resumed run that had), or going on.
pub(super) enum Opening {
    Ended(Step),
    GoesOn(Task, Start),
}

/// Opens run `id` in `store` (if any), as `ptc run` does with a checkpoint: a new run refuses
/// an id the store already holds, and resuming needs one.
pub(super) async fn opening(
    agent: &Agent,
    options: RunOptions<'_>,
    store: Option<&dyn RunStore>,
    checkpoint: Option<&Path>,
    id: &str,
    resume: bool,
) -> Result<Opening, String> {
    let Some(store) = store else {
        if resume {
            return Err("resume=True needs the checkpoint= the run was recorded in".into());
        }
        let task = agent.task_for(&options).map_err(|e| e.to_string())?;
        return Ok(Opening::GoesOn(task, Start::new()));
    };
    let path = checkpoint.unwrap_or(Path::new("")).display().to_string();
    let recorded = store.load(id).await.map_err(|e| e.to_string())?;
    match (resume, recorded) {
        (false, None) => {
            let task = agent.task_for(&options).map_err(|e| e.to_string())?;
            store
                .start(id, &task)
                .await
                .map_err(|e| ptc_agent::RunError::from(e).to_string())?;
            Ok(Opening::GoesOn(task, Start::new()))
        }
        (false, Some(_)) => Err(format!(
            "{path} already holds run `{id}`; pass resume=True to continue it, or another \
             checkpoint or run_id"
        )),
        (true, None) => Err(format!("{path} holds no run `{id}` to resume")),
        (true, Some(_)) => match agent.resumption(store, id, &options).await {
            Ok(Resumption::Ended(step)) => Ok(Opening::Ended(step)),
            Ok(Resumption::GoesOn { task, start }) => Ok(Opening::GoesOn(task, start)),
            Err(e) => Err(e.to_string()),
        },
    }
}

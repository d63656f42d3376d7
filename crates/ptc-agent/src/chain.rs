//! Chaining: the step of one run handed to the next agent as its input.
//!
//! The previous step's returned map becomes the next run's `data/` (one input per key), the
//! descriptions of its output fields describe those inputs, and a previous step that failed
//! fails the next run at once, without asking its model.

use std::collections::BTreeMap;

use ptc_lisp::Compact;
use ptc_lisp::Value;
use ptc_turn::preview;
use ptc_turn::{Step, Task, Turns, Usage};

use crate::error::RunError;

/// What a successful previous step gives the next run.
pub(crate) struct Upstream {
    /// The returned map's entries, as `data/` inputs.
    pub data: Vec<(String, Value)>,
    /// The previous step's field descriptions, for those inputs.
    pub descriptions: BTreeMap<String, String>,
}

/// The input a step that returned `value` gives the next run, or why it cannot give one.
pub(crate) fn upstream_input(value: &Value, step: &Step) -> Result<Upstream, RunError> {
    let Value::Map(map) = value else {
        let shown = preview(value, Compact::new(5, 80));
        return Err(RunError::ChainNotMap { returned: shown });
    };
    let mut data = Vec::with_capacity(map.len());
    for (key, value) in map.iter() {
        let name = match key {
            Value::Keyword(k) => k.as_str().to_string(),
            Value::Str(s) => s.to_string(),
            other => {
                let shown = preview(other, Compact::new(5, 40));
                return Err(RunError::ChainNotMap {
                    returned: format!("a map with the key {shown}"),
                });
            }
        };
        data.push((name, value.clone()));
    }
    Ok(Upstream {
        data,
        descriptions: step.task.field_descriptions.clone(),
    })
}

/// The step of a run chained onto `upstream` when that step failed: it fails at once as the
/// run crate decides ([`ptc_run::chained_failure`]), with no turn and no cost. `None` when
/// `upstream` succeeded.
pub(crate) fn failed_run(upstream: &Step, task: Task) -> Option<Step> {
    Some(Step {
        outcome: ptc_run::chained_failure(upstream)?,
        task,
        turns: Turns::new(),
        usage: Usage::default(),
    })
}

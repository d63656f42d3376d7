//! Whether a run starts, and whether a resumed one goes on: decided before its first turn,
//! here once, for every driver.

use ptc_turn::{FailureKind, Step, StepOutcome};

/// Why a run chained onto `upstream` ends before its first turn: `upstream` failed, so the run
/// fails at once with `chained_failure`, the upstream failure's kind and reason in its reason.
/// `None` when `upstream` succeeded.
pub fn chained_failure(upstream: &Step) -> Option<StepOutcome> {
    let StepOutcome::Failed { kind, reason, .. } = &upstream.outcome else {
        return None;
    };
    Some(failed(
        FailureKind::ChainedFailure,
        format!(
            "the step this run was chained onto failed ({}): {reason}",
            kind.as_str()
        ),
    ))
}

/// Why a run at `depth` below the top run of its tree may not start when sub-agents may run
/// only `max_depth` levels deep, if it may not.
pub fn depth_exceeded(depth: u32, max_depth: u32) -> Option<StepOutcome> {
    (depth > max_depth).then(|| {
        failed(
            FailureKind::MaxDepthExceeded,
            format!(
                "this sub-agent would run at depth {depth} below the top run, but max_depth is \
                 {max_depth}: sub-agents may call sub-agents only {max_depth} level{} deep",
                if max_depth == 1 { "" } else { "s" }
            ),
        )
    })
}

/// Whether a stored run that ended with `end` (none when its end was not recorded) goes on
/// when resumed: it has not ended, or it ended on an outage (a model error, its deadline or a
/// stop), not on anything its turns decided. A run whose end was not recorded but whose last
/// turn returned or failed has ended all the same: the core asks nothing more of it.
pub fn resumed_goes_on(end: Option<&StepOutcome>) -> bool {
    match end {
        None => true,
        Some(outcome) => matches!(
            outcome,
            StepOutcome::Failed {
                kind: FailureKind::LlmError | FailureKind::Timeout | FailureKind::Interrupted,
                ..
            }
        ),
    }
}

/// Whether `outcome` ends a run because its driver was stopped, which a store does not record
/// as the run's end (the run goes on from its last turn once resumed).
pub fn was_interrupted(outcome: &StepOutcome) -> bool {
    matches!(
        outcome,
        StepOutcome::Failed {
            kind: FailureKind::Interrupted,
            ..
        }
    )
}

/// A failed outcome of `kind` for `reason`, with no value and no model errors.
pub(crate) fn failed(kind: FailureKind, reason: String) -> StepOutcome {
    StepOutcome::Failed {
        kind,
        reason,
        value: None,
        llm_errors: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_turn::{Task, Turns, Usage};

    fn step(outcome: StepOutcome) -> Step {
        Step {
            outcome,
            task: Task::default(),
            turns: Turns::new(),
            usage: Usage::default(),
        }
    }

    #[test]
    fn a_run_chained_onto_a_failed_step_fails_with_its_kind_and_reason() {
        let upstream = step(failed(FailureKind::Timeout, "too slow".into()));
        assert_eq!(
            chained_failure(&upstream),
            Some(failed(
                FailureKind::ChainedFailure,
                "the step this run was chained onto failed (timeout): too slow".into()
            ))
        );
        let returned = step(StepOutcome::Returned {
            value: ptc_lisp::Value::Int(1),
        });
        assert_eq!(chained_failure(&returned), None);
    }

    #[test]
    fn a_sub_agent_below_max_depth_does_not_start() {
        assert_eq!(depth_exceeded(1, 1), None);
        assert_eq!(
            depth_exceeded(2, 1),
            Some(failed(
                FailureKind::MaxDepthExceeded,
                "this sub-agent would run at depth 2 below the top run, but max_depth is 1: \
                 sub-agents may call sub-agents only 1 level deep"
                    .into()
            ))
        );
    }

    #[test]
    fn only_an_outage_lets_an_ended_run_go_on() {
        assert!(resumed_goes_on(None));
        for kind in [
            FailureKind::LlmError,
            FailureKind::Timeout,
            FailureKind::Interrupted,
        ] {
            assert!(
                resumed_goes_on(Some(&failed(kind, String::new()))),
                "{kind:?}"
            );
        }
        for kind in [
            FailureKind::Failed,
            FailureKind::MaxTurnsExceeded,
            FailureKind::ProgramError,
        ] {
            assert!(
                !resumed_goes_on(Some(&failed(kind, String::new()))),
                "{kind:?}"
            );
        }
        let returned = StepOutcome::Returned {
            value: ptc_lisp::Value::Nil,
        };
        assert!(!resumed_goes_on(Some(&returned)));
        assert!(was_interrupted(&failed(
            FailureKind::Interrupted,
            String::new()
        )));
        assert!(!was_interrupted(&returned));
    }
}

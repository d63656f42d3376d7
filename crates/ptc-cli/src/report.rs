//! The `--json` reports of `ptc run` and `ptc exec`: how a step ended, as the same fields in
//! both.

use ptc_lisp::{pr_str, to_json};
use ptc_turn::{Step, StepOutcome};

/// Adds how `step` ended to a JSON report: `outcome`, and `value` and `value_clojure`, or
/// `failure` and `reason`.
pub(crate) fn outcome_json(step: &Step, report: &mut serde_json::Value) {
    match &step.outcome {
        StepOutcome::Returned { value } => {
            report["outcome"] = "returned".into();
            report["value"] = to_json(value);
            report["value_clojure"] = pr_str(value).into();
        }
        StepOutcome::Failed {
            kind,
            reason,
            value,
            llm_errors,
        } => {
            report["outcome"] = "failed".into();
            report["failure"] = kind.as_str().into();
            report["reason"] = reason.as_str().into();
            if !llm_errors.is_empty() {
                report["llm_errors"] = llm_errors.clone().into();
            }
            if let Some(value) = value {
                report["value"] = to_json(value);
                report["value_clojure"] = pr_str(value).into();
            }
        }
    }
}

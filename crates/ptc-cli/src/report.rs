//! The `--json` reports of `ptc run` and `ptc exec`: how a step ended, as the same fields in
//! both, from the library's report types ([`ptc_turn::OutcomeReport`],
//! [`ptc_turn::StepReport`]) so that an embedder gets the same JSON.

use ptc_turn::{OutcomeReport, Step};

/// Adds how `step` ended to a JSON report: `outcome`, and `value` and `value_clojure`, or
/// `failure` and `reason`.
pub(crate) fn outcome_json(step: &Step, report: &mut serde_json::Value) {
    if let (Ok(serde_json::Value::Object(fields)), Some(report)) = (
        serde_json::to_value(OutcomeReport::of(step)),
        report.as_object_mut(),
    ) {
        report.extend(fields);
    }
}

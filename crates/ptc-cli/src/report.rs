//! The `--json` output of every command, one schema (version [`ptc_turn::JSON_SCHEMA`],
//! documented in docs/json.md): each object starts with `schema` and `command`, and the same
//! thing has the same name in every command (`ok`, `value`, `value_clojure`, `error`, `turns`,
//! `usage`). How a step ended comes from the library's report types
//! ([`ptc_turn::OutcomeReport`], [`ptc_turn::StepReport`]) so that an embedder gets the same
//! JSON.

use ptc_turn::{JSON_SCHEMA, OutcomeReport, Step, StepOutcome, StepReport};
use serde::Serialize;
use serde_json::{Map, Value};

/// `{"schema": 1, "command": COMMAND}` followed by `fields`, in their order.
pub(crate) fn envelope(command: &str, fields: Value) -> Value {
    let mut object = Map::new();
    object.insert("schema".into(), JSON_SCHEMA.into());
    object.insert("command".into(), command.into());
    match fields {
        Value::Object(fields) => {
            for (key, value) in fields {
                if key != "schema" {
                    object.insert(key, value);
                }
            }
        }
        Value::Null => {}
        other => {
            object.insert("data".into(), other);
        }
    }
    Value::Object(object)
}

/// The report of a step under `command`: how it ended, its turns and what it used.
pub(crate) fn step_json(command: &str, step: &Step) -> Value {
    envelope(
        command,
        serde_json::to_value(StepReport::of(step)).unwrap_or_default(),
    )
}

/// How `outcome` ended, as the fields `ok`, `value`, `value_clojure` and `error`.
pub(crate) fn outcome_fields(outcome: &StepOutcome) -> Map<String, Value> {
    match serde_json::to_value(OutcomeReport::of_outcome(outcome)) {
        Ok(Value::Object(fields)) => fields,
        _ => Map::new(),
    }
}

/// `ptc preview --json`: the request in the envelope, written from its own types so that its
/// numbers keep their precision (a `top_p` of 0.9 stays 0.9).
#[derive(Serialize)]
pub(crate) struct Preview<'a, T: Serialize> {
    command: &'static str,
    request: &'a T,
    schema: u32,
}

impl<'a, T: Serialize> Preview<'a, T> {
    /// The report of `request`.
    pub(crate) fn new(request: &'a T) -> Self {
        Preview {
            command: "preview",
            request,
            schema: JSON_SCHEMA,
        }
    }
}

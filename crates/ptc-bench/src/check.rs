//! The checker: how a mission says whether a run succeeded, as data.
//!
//! A check looks at three things: how the run ended, the value it returned, and the tool calls
//! it made (recorded by the mission's tools, failed turns included, since a side effect happens
//! whether or not the rest of the program worked). Values and arguments are compared as JSON:
//! keywords become their names, vectors, lists and sets become arrays.
//!
//! ```json
//! {
//!   "outcome": "returned",
//!   "expect": {"total": 42.5, "ids": ["a", "b"]},
//!   "tolerance": 0.01,
//!   "unordered": true,
//!   "value": [{"path": ["ids"], "count": 2}],
//!   "calls": [{"tool": "send-email", "once_each": {"arg": "to", "values": ["a@x.org"]}}]
//! }
//! ```
//!
//! Every field is optional; the full language is in `docs/benchmark.md`.

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::json_compare::{json_equal, json_equal_unordered, json_has_keys_of, lookup};
use crate::tools::CallRecord;

/// How the run must end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectedOutcome {
    /// A `(return v)` that fits the signature.
    #[default]
    Returned,
    /// A `(fail reason)`: the right answer to an impossible mission.
    Failed,
}

/// A mission's check.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// How the run must end (default: a return).
    #[serde(default)]
    pub outcome: ExpectedOutcome,
    /// The exact value expected (compared structurally).
    #[serde(default)]
    pub expect: Option<Json>,
    /// The largest difference between two numbers that still counts as equal (default 1e-6).
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Compare arrays in `expect` (at any depth) as multisets: order does not matter.
    #[serde(default)]
    pub unordered: bool,
    /// Predicates the returned value must satisfy.
    #[serde(default)]
    pub value: Vec<Predicate>,
    /// Checks over the recorded tool calls.
    #[serde(default)]
    pub calls: Vec<CallCheck>,
    /// Whether a returned map may have keys `expect` does not name: set when the mission's
    /// output signature is a record, since the agent tells the model that extra keys are fine.
    #[serde(skip)]
    pub extra_keys: bool,
}

fn default_tolerance() -> f64 {
    1e-6
}

/// One step of a path into a value: a map key or an array index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PathStep {
    /// The element at this position of an array, from 0.
    Index(usize),
    /// The value under this key of a map.
    Key(String),
}

/// A test of the value at `path` (the whole value when empty). Exactly one test per predicate.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Predicate {
    /// Where in the value the test looks, step by step; empty for the value itself.
    #[serde(default)]
    pub path: Vec<PathStep>,
    /// Structurally equal (numbers within the check's tolerance).
    #[serde(default)]
    pub equals: Option<Json>,
    /// With `equals`: arrays compared as multisets.
    #[serde(default)]
    pub unordered: bool,
    /// A map with at least these keys.
    #[serde(default)]
    pub has_keys: Option<Vec<String>>,
    /// An array, map or string of this length.
    #[serde(default)]
    pub count: Option<usize>,
    /// `nil`, `bool`, `int`, `float`, `number`, `string`, `list` or `map`.
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    /// An array with an element equal to this, or a string containing this string.
    #[serde(default)]
    pub contains: Option<Json>,
    /// A number within `[low, high]`.
    #[serde(default)]
    pub between: Option<(f64, f64)>,
    /// A string matching this regular expression (anywhere; anchor with `^...$`).
    #[serde(default)]
    pub matches: Option<String>,
    /// Equal to one of these.
    #[serde(default)]
    pub one_of: Option<Vec<Json>>,
    /// An array whose elements are all different.
    #[serde(default)]
    pub distinct: Option<bool>,
    /// An array (or map, by its values) each of whose elements satisfies all these predicates.
    #[serde(default)]
    pub every: Option<Vec<Predicate>>,
    /// An array (or map, by its values) with an element that satisfies all these predicates.
    #[serde(default)]
    pub some: Option<Vec<Predicate>>,
}

/// A check over the calls of one tool.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallCheck {
    /// The tool's name, without `tool/`.
    pub tool: String,
    /// Only calls that succeeded (`true`) or failed (`false`).
    #[serde(default)]
    pub ok: Option<bool>,
    /// Only calls whose arguments (a map of parameter name to value) satisfy these.
    #[serde(default, rename = "where")]
    pub where_: Vec<Predicate>,
    /// Exactly this many calls.
    #[serde(default)]
    pub count: Option<usize>,
    /// At least this many calls.
    #[serde(default)]
    pub min: Option<usize>,
    /// At most this many calls.
    #[serde(default)]
    pub max: Option<usize>,
    /// No two calls with the same value of this argument.
    #[serde(default)]
    pub distinct: Option<String>,
    /// Exactly one call for each of the values, and none for any other value, of an argument.
    #[serde(default)]
    pub once_each: Option<OnceEach>,
    /// Every call's arguments satisfy these.
    #[serde(default)]
    pub every: Option<Vec<Predicate>>,
    /// Exactly these calls, each once, in any order: each a map of parameter name to value
    /// (numbers within the tolerance).
    #[serde(default)]
    pub exactly: Option<Vec<Json>>,
}

/// See [`CallCheck::once_each`].
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnceEach {
    /// The argument's parameter name.
    pub arg: String,
    /// The values it must take, one call each.
    pub values: Vec<Json>,
}

/// What a run did, as the checker sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// `(return v)`, as JSON.
    Returned(Json),
    /// `(fail reason)`.
    Failed(String),
    /// Anything else that ended the run: out of turns, a model error, ... (`kind: reason`).
    Error {
        /// The failure kind, e.g. `max_turns_exceeded` or `llm_error`.
        kind: String,
        /// What happened, as the step's failure says it.
        reason: String,
    },
}

/// The checker's verdict on one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether every part of the check held.
    pub passed: bool,
    /// Why it failed: one line per failed part of the check.
    pub reasons: Vec<String>,
}

impl Check {
    /// Checks the check itself: one test per predicate, valid regular expressions, arguments
    /// that the tools declare. `params` gives a tool's parameter names, or `None` for a tool
    /// the mission does not have.
    pub fn validate<'a>(
        &self,
        params: impl Fn(&str) -> Option<&'a [String]>,
    ) -> Result<(), String> {
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return Err(format!(
                "tolerance must be a finite number >= 0, not {}",
                self.tolerance
            ));
        }
        if self.outcome == ExpectedOutcome::Failed
            && (self.expect.is_some() || !self.value.is_empty())
        {
            return Err(
                "a check whose outcome is `failed` has no returned value to compare: drop \
                 `expect` and `value`"
                    .into(),
            );
        }
        for p in &self.value {
            p.validate()?;
        }
        for c in &self.calls {
            let Some(params) = params(&c.tool) else {
                return Err(format!(
                    "the calls check names tool `{}`, which the mission's tools.json does not \
                     declare",
                    c.tool
                ));
            };
            let tests = [
                c.count.is_some(),
                c.min.is_some(),
                c.max.is_some(),
                c.distinct.is_some(),
                c.once_each.is_some(),
                c.every.is_some(),
                c.exactly.is_some(),
            ];
            if !tests.contains(&true) {
                return Err(format!(
                    "the calls check of `{}` tests nothing: give count, min, max, distinct, \
                     once_each, every or exactly",
                    c.tool
                ));
            }
            for call in c.exactly.iter().flatten() {
                let Json::Object(args) = call else {
                    return Err(format!(
                        "the calls check of `{}`: each call of `exactly` is a map of parameter \
                         name to value, not {}",
                        c.tool,
                        compact(call)
                    ));
                };
                if let Some(name) = args.keys().find(|n| arg_position(params, n).is_none()) {
                    return Err(format!(
                        "the calls check of `{}` names argument `{name}`; its params are [{}]",
                        c.tool,
                        params.join(", ")
                    ));
                }
            }
            for name in c.distinct.iter().chain(c.once_each.iter().map(|o| &o.arg)) {
                if arg_position(params, name).is_none() {
                    return Err(format!(
                        "the calls check of `{}` names argument `{name}`; its params are [{}] \
                         (or use a position: \"0\", \"1\", ...)",
                        c.tool,
                        params.join(", ")
                    ));
                }
            }
            for p in c.where_.iter().chain(c.every.iter().flatten()) {
                p.validate()?;
            }
        }
        Ok(())
    }

    /// Judges one run.
    pub fn verdict(
        &self,
        end: &RunEnd,
        calls: &[CallRecord],
        params: impl Fn(&str) -> Vec<String>,
    ) -> Verdict {
        let mut reasons = Vec::new();
        match (self.outcome, end) {
            (ExpectedOutcome::Returned, RunEnd::Returned(value)) => {
                if let Some(expected) = &self.expect {
                    let equal = if self.extra_keys {
                        json_has_keys_of(expected, value, self.tolerance, self.unordered)
                    } else if self.unordered {
                        json_equal_unordered(expected, value, self.tolerance)
                    } else {
                        json_equal(expected, value, self.tolerance)
                    };
                    if !equal {
                        reasons.push(format!(
                            "returned {}, expected {}",
                            compact(value),
                            compact(expected)
                        ));
                    }
                }
                for p in &self.value {
                    p.check(value, self.tolerance, "value", &mut reasons);
                }
            }
            (ExpectedOutcome::Failed, RunEnd::Failed(_)) => {}
            (expected, end) => reasons.push(format!(
                "expected the run to {}, but it {}",
                match expected {
                    ExpectedOutcome::Returned => "return a value",
                    ExpectedOutcome::Failed => "call (fail ...)",
                },
                describe_end(end)
            )),
        }
        for c in &self.calls {
            c.check(calls, &params(&c.tool), self.tolerance, &mut reasons);
        }
        Verdict {
            passed: reasons.is_empty(),
            reasons,
        }
    }
}

fn describe_end(end: &RunEnd) -> String {
    match end {
        RunEnd::Returned(value) => format!("returned {}", compact(value)),
        RunEnd::Failed(reason) => format!("failed: {reason}"),
        RunEnd::Error { kind, reason } => format!("ended with {kind}: {reason}"),
    }
}

/// Short JSON text for reasons.
fn compact(value: &Json) -> String {
    let text = value.to_string();
    if text.chars().count() > 160 {
        let cut: String = text.chars().take(157).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn path_text(base: &str, path: &[PathStep]) -> String {
    let mut text = base.to_string();
    for step in path {
        match step {
            PathStep::Index(i) => text.push_str(&format!("[{i}]")),
            PathStep::Key(k) => {
                text.push('.');
                text.push_str(k);
            }
        }
    }
    text
}

fn follow<'v>(value: &'v Json, path: &[PathStep]) -> Option<&'v Json> {
    path.iter().try_fold(value, |v, step| match (step, v) {
        (PathStep::Index(i), Json::Array(items)) => items.get(*i),
        (PathStep::Key(k), Json::Object(map)) => lookup(map, k),
        _ => None,
    })
}

impl Predicate {
    fn validate(&self) -> Result<(), String> {
        let tests = [
            ("equals", self.equals.is_some()),
            ("has_keys", self.has_keys.is_some()),
            ("count", self.count.is_some()),
            ("type", self.type_.is_some()),
            ("contains", self.contains.is_some()),
            ("between", self.between.is_some()),
            ("matches", self.matches.is_some()),
            ("one_of", self.one_of.is_some()),
            ("distinct", self.distinct.is_some()),
            ("every", self.every.is_some()),
            ("some", self.some.is_some()),
        ];
        let given: Vec<&str> = tests
            .iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect();
        if given.len() != 1 {
            return Err(format!(
                "a predicate needs exactly one test (equals, has_keys, count, type, contains, \
                 between, matches, one_of, distinct, every, some), this one has {}",
                if given.is_empty() {
                    "none".to_string()
                } else {
                    given.join(", ")
                }
            ));
        }
        if self.unordered && self.equals.is_none() {
            return Err("`unordered` only goes with `equals`".into());
        }
        if let Some(ty) = &self.type_
            && !TYPES.contains(&ty.as_str())
        {
            return Err(format!(
                "unknown type `{ty}`: use one of {}",
                TYPES.join(", ")
            ));
        }
        if let Some(pattern) = &self.matches {
            Regex::new(pattern).map_err(|e| format!("bad regular expression `{pattern}`: {e}"))?;
        }
        for p in self.every.iter().chain(self.some.iter()).flatten() {
            p.validate()?;
        }
        Ok(())
    }

    /// Whether `root` satisfies this predicate; otherwise adds why to `reasons`.
    fn check(&self, root: &Json, tolerance: f64, base: &str, reasons: &mut Vec<String>) -> bool {
        let at = path_text(base, &self.path);
        let Some(value) = follow(root, &self.path) else {
            reasons.push(format!("{at}: no such value in {}", compact(root)));
            return false;
        };
        let failure = self.test(value, tolerance, &at, reasons);
        match failure {
            None => true,
            Some(why) => {
                reasons.push(format!("{at}: {why}"));
                false
            }
        }
    }

    /// `None` when the value passes; otherwise why not. `every` also adds the reasons of each
    /// failing item.
    fn test(
        &self,
        value: &Json,
        tolerance: f64,
        at: &str,
        reasons: &mut Vec<String>,
    ) -> Option<String> {
        let got = || compact(value);
        if let Some(expected) = &self.equals {
            let equal = if self.unordered {
                json_equal_unordered(expected, value, tolerance)
            } else {
                json_equal(expected, value, tolerance)
            };
            return (!equal).then(|| format!("expected {}, got {}", compact(expected), got()));
        }
        if let Some(keys) = &self.has_keys {
            let Json::Object(map) = value else {
                return Some(format!("expected a map, got {}", got()));
            };
            let missing: Vec<&str> = keys
                .iter()
                .filter(|k| lookup(map, k).is_none())
                .map(String::as_str)
                .collect();
            return (!missing.is_empty()).then(|| format!("missing keys {}", missing.join(", ")));
        }
        if let Some(n) = self.count {
            let len = match value {
                Json::Array(items) => items.len(),
                Json::Object(map) => map.len(),
                Json::String(s) => s.chars().count(),
                _ => return Some(format!("expected a list, map or string, got {}", got())),
            };
            return (len != n).then(|| format!("expected {n} items, got {len}: {}", got()));
        }
        if let Some(ty) = &self.type_ {
            return (type_of(value) != ty.as_str() && !(ty == "number" && value.is_number()))
                .then(|| format!("expected type {ty}, got {}: {}", type_of(value), got()));
        }
        if let Some(needle) = &self.contains {
            let found = match (value, needle) {
                (Json::Array(items), _) => items.iter().any(|i| json_equal(needle, i, tolerance)),
                (Json::String(s), Json::String(n)) => s.contains(n.as_str()),
                _ => false,
            };
            return (!found).then(|| format!("does not contain {}: {}", compact(needle), got()));
        }
        if let Some((low, high)) = self.between {
            return match value.as_f64() {
                Some(x) if x >= low && x <= high => None,
                _ => Some(format!(
                    "expected a number in [{low}, {high}], got {}",
                    got()
                )),
            };
        }
        if let Some(pattern) = &self.matches {
            let Json::String(s) = value else {
                return Some(format!("expected a string, got {}", got()));
            };
            // Validated when the mission was loaded.
            let matched = Regex::new(pattern).is_ok_and(|re| re.is_match(s));
            return (!matched).then(|| format!("does not match /{pattern}/: {}", got()));
        }
        if let Some(options) = &self.one_of {
            let found = options.iter().any(|o| json_equal(o, value, tolerance));
            return (!found).then(|| {
                format!(
                    "expected one of {}, got {}",
                    compact(&Json::Array(options.clone())),
                    got()
                )
            });
        }
        if let Some(wanted) = self.distinct {
            let Json::Array(items) = value else {
                return Some(format!("expected a list, got {}", got()));
            };
            let duplicate = items
                .iter()
                .enumerate()
                .any(|(i, a)| items[..i].iter().any(|b| json_equal(a, b, tolerance)));
            return (duplicate == wanted).then(|| {
                if wanted {
                    format!("has duplicate items: {}", got())
                } else {
                    format!("expected duplicate items: {}", got())
                }
            });
        }
        let items: Vec<&Json> = match value {
            Json::Array(items) => items.iter().collect(),
            Json::Object(map) => map.values().collect(),
            _ => return Some(format!("expected a list or map, got {}", got())),
        };
        if let Some(all) = &self.every {
            let mut bad = 0;
            for (i, item) in items.iter().enumerate() {
                let base = format!("{at}[{i}]");
                let mut ok = true;
                for p in all {
                    ok &= p.check(item, tolerance, &base, reasons);
                }
                bad += usize::from(!ok);
            }
            return (bad > 0).then(|| format!("{bad} of {} items fail", items.len()));
        }
        if let Some(any) = &self.some {
            let found = items.iter().any(|item| {
                let mut scratch = Vec::new();
                any.iter()
                    .all(|p| p.check(item, tolerance, at, &mut scratch))
            });
            return (!found).then(|| format!("no item satisfies the predicates: {}", got()));
        }
        None
    }
}

const TYPES: [&str; 8] = [
    "nil", "bool", "int", "float", "number", "string", "list", "map",
];

fn type_of(value: &Json) -> &'static str {
    match value {
        Json::Null => "nil",
        Json::Bool(_) => "bool",
        Json::Number(n) if n.is_i64() || n.is_u64() => "int",
        Json::Number(_) => "float",
        Json::String(_) => "string",
        Json::Array(_) => "list",
        Json::Object(_) => "map",
    }
}

/// Where argument `name` is: a parameter name (`-` and `_` alike) or a position ("0", "1", ...).
fn arg_position(params: &[String], name: &str) -> Option<usize> {
    let wanted = name.replace('_', "-");
    params
        .iter()
        .position(|p| p.replace('_', "-") == wanted)
        .or_else(|| name.parse().ok())
}

/// A call's arguments as a map of parameter name to value; arguments past the declared
/// parameters are named by position.
pub fn args_map(params: &[String], args: &[Json]) -> Json {
    let map: serde_json::Map<String, Json> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let name = params.get(i).cloned().unwrap_or_else(|| i.to_string());
            (name, a.clone())
        })
        .collect();
    Json::Object(map)
}

impl CallCheck {
    fn check(
        &self,
        all: &[CallRecord],
        params: &[String],
        tolerance: f64,
        reasons: &mut Vec<String>,
    ) {
        let who = format!("tool/{}", self.tool);
        let mut scratch = Vec::new();
        let calls: Vec<&CallRecord> = all
            .iter()
            .filter(|c| c.tool == self.tool && self.ok.is_none_or(|ok| c.ok == ok))
            .filter(|c| {
                let args = args_map(params, &c.args);
                self.where_
                    .iter()
                    .all(|p| p.check(&args, tolerance, "args", &mut scratch))
            })
            .collect();
        let which = {
            let mut parts = Vec::new();
            match self.ok {
                Some(true) => parts.push("successful".to_string()),
                Some(false) => parts.push("failed".to_string()),
                None => {}
            }
            if !self.where_.is_empty() {
                parts.push("matching".to_string());
            }
            if parts.is_empty() {
                "calls".to_string()
            } else {
                format!("{} calls", parts.join(" "))
            }
        };
        let n = calls.len();
        if let Some(count) = self.count
            && n != count
        {
            reasons.push(format!("{who}: expected {count} {which}, got {n}"));
        }
        if let Some(min) = self.min
            && n < min
        {
            reasons.push(format!("{who}: expected at least {min} {which}, got {n}"));
        }
        if let Some(max) = self.max
            && n > max
        {
            reasons.push(format!("{who}: expected at most {max} {which}, got {n}"));
        }
        let arg_of = |call: &CallRecord, name: &str| -> Json {
            arg_position(params, name)
                .and_then(|i| call.args.get(i))
                .cloned()
                .unwrap_or(Json::Null)
        };
        if let Some(name) = &self.distinct {
            let values: Vec<Json> = calls.iter().map(|c| arg_of(c, name)).collect();
            let mut repeated: Vec<String> = Vec::new();
            for (i, v) in values.iter().enumerate() {
                if values[..i].iter().any(|w| json_equal(v, w, tolerance))
                    && !repeated.contains(&compact(v))
                {
                    repeated.push(compact(v));
                }
            }
            if !repeated.is_empty() {
                reasons.push(format!(
                    "{who}: called more than once with {name} = {}",
                    repeated.join(", ")
                ));
            }
        }
        if let Some(once) = &self.once_each {
            let values: Vec<Json> = calls.iter().map(|c| arg_of(c, &once.arg)).collect();
            let mut problems = Vec::new();
            for wanted in &once.values {
                let times = values
                    .iter()
                    .filter(|v| json_equal(wanted, v, tolerance))
                    .count();
                if times != 1 {
                    problems.push(format!("{} {times} times", compact(wanted)));
                }
            }
            let mut extra: Vec<String> = Vec::new();
            for v in &values {
                if !once.values.iter().any(|w| json_equal(w, v, tolerance))
                    && !extra.contains(&compact(v))
                {
                    extra.push(compact(v));
                }
            }
            if !extra.is_empty() {
                problems.push(format!("unexpected {}", extra.join(", ")));
            }
            if !problems.is_empty() {
                reasons.push(format!(
                    "{who}: expected one call per {} in {}, got {}",
                    once.arg,
                    compact(&Json::Array(once.values.clone())),
                    problems.join("; ")
                ));
            }
        }
        if let Some(expected) = &self.exactly {
            let made: Vec<Json> = calls.iter().map(|c| args_map(params, &c.args)).collect();
            let mut unmatched: Vec<&Json> = made.iter().collect();
            let mut missing: Vec<String> = Vec::new();
            for wanted in expected {
                match unmatched
                    .iter()
                    .position(|m| json_equal(wanted, m, tolerance))
                {
                    Some(i) => {
                        unmatched.remove(i);
                    }
                    None => missing.push(compact(wanted)),
                }
            }
            if !missing.is_empty() || !unmatched.is_empty() {
                let mut problems = Vec::new();
                if !missing.is_empty() {
                    problems.push(format!(
                        "{} of the {} expected calls missing: {}",
                        missing.len(),
                        expected.len(),
                        missing.join(", ")
                    ));
                }
                if !unmatched.is_empty() {
                    let extra: Vec<String> = unmatched.iter().map(|c| compact(c)).collect();
                    problems.push(format!("{} unexpected: {}", extra.len(), extra.join(", ")));
                }
                reasons.push(format!("{who}: {}", problems.join("; ")));
            }
        }
        if let Some(all_of) = &self.every {
            for (i, call) in calls.iter().enumerate() {
                let args = args_map(params, &call.args);
                let base = format!("{who} call {}", i + 1);
                for p in all_of {
                    p.check(&args, tolerance, &base, reasons);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn check(value: Json) -> Check {
        serde_json::from_value(value).unwrap()
    }

    fn call(tool: &str, args: Json, ok: bool) -> CallRecord {
        CallRecord {
            tool: tool.into(),
            args: args.as_array().cloned().unwrap_or_default(),
            ok,
        }
    }

    fn params(tool: &str) -> Vec<String> {
        match tool {
            "send-email" => vec!["to".into(), "subject".into()],
            "credit" => vec!["customer".into(), "amount".into()],
            _ => Vec::new(),
        }
    }

    fn reasons(check: &Check, end: &RunEnd, calls: &[CallRecord]) -> Vec<String> {
        check.verdict(end, calls, params).reasons
    }

    #[test]
    fn expected_values_compare_structurally_with_a_tolerance() {
        let c = check(json!({"expect": {"total": 10.0, "ids": ["a", "b"]}, "tolerance": 0.01}));
        let ok = RunEnd::Returned(json!({"total": 10.004, "ids": ["a", "b"]}));
        assert_eq!(reasons(&c, &ok, &[]), Vec::<String>::new());
        let off = RunEnd::Returned(json!({"total": 10.02, "ids": ["a", "b"]}));
        assert_eq!(
            reasons(&c, &off, &[]),
            vec![
                r#"returned {"ids":["a","b"],"total":10.02}, expected {"ids":["a","b"],"total":10.0}"#
            ]
        );
        let swapped = RunEnd::Returned(json!({"total": 10, "ids": ["b", "a"]}));
        assert_eq!(reasons(&c, &swapped, &[]).len(), 1);
        let unordered = check(json!({"expect": {"ids": [["x", 1], ["y", 2]]}, "unordered": true}));
        let ok = RunEnd::Returned(json!({"ids": [[2, "y"], [1, "x"]]}));
        assert_eq!(reasons(&unordered, &ok, &[]), Vec::<String>::new());
        // Keys: `-` and `_` alike, as in signatures.
        let keys = check(json!({"expect": {"paid-orders": 3}}));
        assert!(json_equal(&json!(1), &json!(1.0), 0.0));
        assert_eq!(
            reasons(&keys, &RunEnd::Returned(json!({"paid_orders": 3})), &[]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_outcome_must_match() {
        let returned = Check::default();
        let failed = check(json!({"outcome": "failed"}));
        let gave_up = RunEnd::Failed("no such order".into());
        let ran_out = RunEnd::Error {
            kind: "max_turns_exceeded".into(),
            reason: "no (return ...) or (fail ...) after 3 turns".into(),
        };
        assert_eq!(reasons(&failed, &gave_up, &[]), Vec::<String>::new());
        assert_eq!(
            reasons(&failed, &RunEnd::Returned(json!(1)), &[]),
            vec!["expected the run to call (fail ...), but it returned 1"]
        );
        assert_eq!(
            reasons(&returned, &ran_out, &[]),
            vec![
                "expected the run to return a value, but it ended with max_turns_exceeded: no \
                 (return ...) or (fail ...) after 3 turns"
            ]
        );
        assert_eq!(
            reasons(&returned, &gave_up, &[]),
            vec!["expected the run to return a value, but it failed: no such order"]
        );
    }

    #[test]
    fn predicates_report_what_failed_where() {
        let c = check(json!({"value": [
            {"has_keys": ["items", "total"]},
            {"path": ["items"], "count": 2},
            {"path": ["items"], "every": [{"path": ["id"], "matches": "^A-\\d+$"},
                                          {"path": ["qty"], "between": [1, 10]}]},
            {"path": ["items"], "some": [{"path": ["id"], "equals": "A-2"}]},
            {"path": ["items", 0, "qty"], "type": "int"},
            {"path": ["total"], "type": "number"},
            {"path": ["tags"], "contains": "new"},
            {"path": ["tags"], "distinct": true},
            {"path": ["note"], "contains": "late"},
            {"path": ["status"], "one_of": ["ok", "partial"]}
        ]}));
        let good = json!({"items": [{"id": "A-1", "qty": 2}, {"id": "A-2", "qty": 10}], "total": 3.5,
                          "tags": ["new", "sale"], "note": "was late", "status": "ok"});
        assert_eq!(
            reasons(&c, &RunEnd::Returned(good), &[]),
            Vec::<String>::new()
        );
        let bad = json!({"items": [{"id": "B-1", "qty": 2.5}, {"id": "A-3", "qty": 11}, {"id": "A-4"}],
                         "tags": ["sale", "sale"], "note": "on time", "status": "failed"});
        assert_eq!(
            reasons(&c, &RunEnd::Returned(bad), &[]),
            vec![
                "value: missing keys total",
                r#"value.items: expected 2 items, got 3: [{"id":"B-1","qty":2.5},{"id":"A-3","qty":11},{"id":"A-4"}]"#,
                r#"value.items[0].id: does not match /^A-\d+$/: "B-1""#,
                "value.items[1].qty: expected a number in [1, 10], got 11",
                r#"value.items[2].qty: no such value in {"id":"A-4"}"#,
                "value.items: 3 of 3 items fail",
                r#"value.items: no item satisfies the predicates: [{"id":"B-1","qty":2.5},{"id":"A-3","qty":11},{"id":"A-4"}]"#,
                "value.items[0].qty: expected type int, got float: 2.5",
                r#"value.total: no such value in {"items":[{"id":"B-1","qty":2.5},{"id":"A-3","qty":11},{"id":"A-4"}],"note":"on time","status":"failed","tags":["sale","sale"]}"#,
                r#"value.tags: does not contain "new": ["sale","sale"]"#,
                r#"value.tags: has duplicate items: ["sale","sale"]"#,
                r#"value.note: does not contain "late": "on time""#,
                r#"value.status: expected one of ["ok","partial"], got "failed""#,
            ]
        );
    }

    #[test]
    fn call_checks_count_and_compare_arguments() {
        let c = check(json!({"calls": [
            {"tool": "send-email", "once_each": {"arg": "to", "values": ["a@x", "b@x"]}},
            {"tool": "send-email", "ok": true, "count": 2},
            {"tool": "credit", "distinct": "customer"},
            {"tool": "credit", "max": 2},
            {"tool": "credit", "where": [{"path": ["customer"], "equals": "c-1"}],
             "every": [{"path": ["amount"], "equals": 10}]},
            {"tool": "credit", "min": 1, "ok": false}
        ]}));
        let good = [
            call("send-email", json!(["a@x", "hi"]), true),
            call("send-email", json!(["b@x", "hi"]), true),
            call("credit", json!(["c-1", 10]), true),
            call("credit", json!(["c-2", 5]), false),
        ];
        let end = RunEnd::Returned(json!(null));
        assert_eq!(reasons(&c, &end, &good), Vec::<String>::new());
        let bad = [
            call("send-email", json!(["a@x", "hi"]), true),
            call("send-email", json!(["a@x", "again"]), false),
            call("send-email", json!(["z@x", "hi"]), true),
            call("credit", json!(["c-1", 10]), true),
            call("credit", json!(["c-1", 12]), true),
            call("credit", json!(["c-3", 1]), true),
        ];
        assert_eq!(
            reasons(&c, &end, &bad),
            vec![
                r#"tool/send-email: expected one call per to in ["a@x","b@x"], got "a@x" 2 times; "b@x" 0 times; unexpected "z@x""#,
                r#"tool/credit: called more than once with customer = "c-1""#,
                "tool/credit: expected at most 2 calls, got 3",
                "tool/credit call 2.amount: expected 10, got 12",
                "tool/credit: expected at least 1 failed calls, got 0",
            ]
        );
    }

    #[test]
    fn invalid_checks_are_rejected_with_the_fix() {
        let tools = ["send-email".to_string(), "credit".to_string()];
        let p = ["to".to_string(), "subject".to_string()];
        let validate = |value: Json| {
            check(value).validate(|tool| tools.contains(&tool.to_string()).then_some(&p[..]))
        };
        assert_eq!(
            validate(json!({"value": [{"count": 1, "type": "list"}]})),
            Err(
                "a predicate needs exactly one test (equals, has_keys, count, type, contains, \
                 between, matches, one_of, distinct, every, some), this one has count, type"
                    .into()
            )
        );
        assert_eq!(
            validate(json!({"value": [{"type": "array"}]})),
            Err(
                "unknown type `array`: use one of nil, bool, int, float, number, string, list, map"
                    .into()
            )
        );
        assert_eq!(
            validate(json!({"calls": [{"tool": "fax", "count": 1}]})),
            Err(
                "the calls check names tool `fax`, which the mission's tools.json does not declare"
                    .into()
            )
        );
        assert_eq!(
            validate(json!({"calls": [{"tool": "credit"}]})),
            Err(
                "the calls check of `credit` tests nothing: give count, min, max, distinct, \
                 once_each, every or exactly"
                    .into()
            )
        );
        assert_eq!(
            validate(json!({"calls": [{"tool": "send-email", "distinct": "cc"}]})),
            Err(
                "the calls check of `send-email` names argument `cc`; its params are [to, \
                 subject] (or use a position: \"0\", \"1\", ...)"
                    .into()
            )
        );
        assert_eq!(
            validate(json!({"outcome": "failed", "expect": 1})),
            Err(
                "a check whose outcome is `failed` has no returned value to compare: drop \
                 `expect` and `value`"
                    .into()
            )
        );
        assert!(
            validate(json!({"value": [{"matches": "("}]}))
                .unwrap_err()
                .starts_with("bad regular expression `(`")
        );
        assert_eq!(
            validate(json!({"calls": [{"tool": "send-email", "distinct": "1"}]})),
            Ok(())
        );
    }

    #[test]
    fn exactly_these_calls_in_any_order_each_once() {
        let c = check(
            json!({"tolerance": 0.01, "calls": [{"tool": "credit", "exactly": [
            {"to": "a", "subject": 5.0}, {"to": "b", "subject": 7}]}]}),
        );
        let call = |to: &str, amount: f64| CallRecord {
            tool: "credit".into(),
            args: vec![json!(to), json!(amount)],
            ok: true,
        };
        let params = |_: &str| vec!["to".to_string(), "subject".to_string()];
        let end = RunEnd::Returned(json!(null));
        let verdict = |calls: &[CallRecord]| c.verdict(&end, calls, params).reasons;
        assert_eq!(
            verdict(&[call("b", 7.004), call("a", 5.0)]),
            Vec::<String>::new()
        );
        assert_eq!(
            verdict(&[call("a", 5.0), call("a", 5.0), call("c", 1.0)]),
            vec![
                "tool/credit: 1 of the 2 expected calls missing: {\"subject\":7,\"to\":\"b\"}; \
                 2 unexpected: {\"subject\":5.0,\"to\":\"a\"}, {\"subject\":1.0,\"to\":\"c\"}"
                    .to_string()
            ]
        );
    }
}

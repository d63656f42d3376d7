//! The tools of a mission: canned answers that may depend on the arguments or on how many times
//! the tool was called, and a log of every call for the checker.
//!
//! A mission's `tools.json` is a superset of the fixture format that
//! [`ptc_lisp::Tools::from_fixture_json`] reads, so any fixture file is a valid tools file:
//!
//! ```json
//! {
//!   "get-customer": {
//!     "description": "One customer by id",
//!     "params": ["customer-id"],
//!     "signature": "(customer-id :string) -> {id :string, email :string}",
//!     "sequence": [{"error": "503 Service Unavailable: try again"}],
//!     "cases": [
//!       {"when": {"customer-id": "c-04"}, "returns": {"id": "c-04", "email": "noor@example.com"}},
//!       {"args": ["c-99"], "error": "customer c-99 was deleted"}
//!     ],
//!     "error": "no customer with that id"
//!   },
//!   "send-email": {"description": "Send an email", "params": ["to", "subject", "body"],
//!                  "returns": {"status": "queued"}}
//! }
//! ```
//!
//! A call is answered by, in this order: the `sequence` entry for this call (the first call
//! gets the first entry; once the sequence is used up it no longer applies), the first `cases`
//! entry whose `args` equal the call's arguments or whose `when` names only arguments with
//! equal values, then the default `returns` value or `error` message. With none of them, the
//! call fails with "no answer for these arguments".

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use ptc_agent::{AsyncTool, Signature, ToolError};
use ptc_lisp::{ToolSpec, Value};
use ptc_lisp::{from_json, to_json};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::json_compare::json_equal;

/// One tool call as the checker sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The tool's name, without `tool/`.
    pub tool: String,
    /// The arguments by position. A single map argument whose keys are all parameter names is
    /// read as named arguments and put in parameter order, so `(tool/f {:a 1})` and
    /// `(tool/f 1)` record alike.
    pub args: Vec<Json>,
    /// Whether the call returned a value rather than an error.
    pub ok: bool,
}

/// Every call made to the tools of one run, in the order they were made.
#[derive(Debug, Clone, Default)]
pub struct CallLog {
    calls: Arc<Mutex<Vec<CallRecord>>>,
}

impl CallLog {
    /// An empty log.
    pub fn new() -> CallLog {
        CallLog::default()
    }

    /// The calls so far.
    pub fn calls(&self) -> Vec<CallRecord> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Records a call and returns how many calls `tool` had before it.
    fn push(&self, record: CallRecord) -> usize {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        let before = calls.iter().filter(|c| c.tool == record.tool).count();
        calls.push(record);
        before
    }

    fn set_ok(&self, index_of_tool_call: usize, tool: &str, ok: bool) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(call) = calls
            .iter_mut()
            .filter(|c| c.tool == tool)
            .nth(index_of_tool_call)
        {
            call.ok = ok;
        }
    }
}

/// A canned answer: a value or an error message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    #[serde(default)]
    returns: Option<Json>,
    #[serde(default)]
    error: Option<String>,
}

/// An answer for particular arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// All arguments, by position.
    #[serde(default)]
    args: Option<Vec<Json>>,
    /// Some arguments, by parameter name.
    #[serde(default)]
    when: Option<BTreeMap<String, Json>>,
    #[serde(default)]
    returns: Option<Json>,
    #[serde(default)]
    error: Option<String>,
}

/// The declaration of one tool in `tools.json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDecl {
    #[serde(default)]
    description: String,
    #[serde(default)]
    params: Vec<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    sequence: Vec<Answer>,
    #[serde(default)]
    cases: Vec<Case>,
    #[serde(default)]
    returns: Option<Json>,
    #[serde(default)]
    error: Option<String>,
}

/// The tools of a mission, parsed and checked.
#[derive(Debug, Clone, Default)]
pub struct ToolSet {
    decls: BTreeMap<String, Arc<ToolDecl>>,
}

impl ToolSet {
    /// Reads a tools file; `source` names it in errors.
    pub fn from_json(source: &str, text: &str) -> Result<ToolSet, String> {
        let decls: BTreeMap<String, ToolDecl> = serde_json::from_str(text).map_err(|e| {
            format!(
                "{source}: {e}; expected {{\"NAME\": {{\"description\": \"...\", \"params\": \
                 [\"a\"], \"returns\": <json>}}}} (see docs/benchmark.md for cases and sequences)"
            )
        })?;
        let mut set = ToolSet::default();
        for (name, decl) in decls {
            decl.validate(&name).map_err(|e| format!("{source}: {e}"))?;
            set.decls.insert(name, Arc::new(decl));
        }
        Ok(set)
    }

    /// Gives the declared tool `name` the answers in `answers` (the answer fields of a
    /// declaration: `sequence`, `cases`, `returns`, `error`), as a generator made them. The tool
    /// must be declared, with no answers of its own.
    pub fn set_answers(&mut self, source: &str, name: &str, answers: Json) -> Result<(), String> {
        let Some(decl) = self.decls.get(name) else {
            return Err(format!(
                "{source}: answers for tool {name}, which tools.json does not declare (declare it \
                 there with its description, params and signature)"
            ));
        };
        if decl.has_answers() {
            return Err(format!(
                "{source}: tool {name} has answers in tools.json too; give them in one place"
            ));
        }
        let answers: Answers = serde_json::from_value(answers).map_err(|e| {
            format!("{source}: the answers of tool {name}: {e} (expected sequence, cases, returns or error)")
        })?;
        let decl = ToolDecl {
            sequence: answers.sequence,
            cases: answers.cases,
            returns: answers.returns,
            error: answers.error,
            ..(**decl).clone()
        };
        decl.validate(name).map_err(|e| format!("{source}: {e}"))?;
        self.decls.insert(name.to_string(), Arc::new(decl));
        Ok(())
    }

    /// The tool names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.decls.keys().map(String::as_str).collect()
    }

    /// The parameter names of a tool (empty when it declares none or does not exist).
    pub fn params(&self, tool: &str) -> &[String] {
        self.decls.get(tool).map_or(&[], |d| d.params.as_slice())
    }

    /// The tools for one run, all writing to `log`.
    pub fn instantiate(&self, log: &CallLog) -> Vec<Arc<dyn AsyncTool>> {
        self.decls
            .iter()
            .map(|(name, decl)| {
                Arc::new(MissionTool {
                    name: name.clone(),
                    decl: decl.clone(),
                    log: log.clone(),
                }) as Arc<dyn AsyncTool>
            })
            .collect()
    }
}

/// The answer fields of a declaration, as a generator gives them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Answers {
    #[serde(default)]
    sequence: Vec<Answer>,
    #[serde(default)]
    cases: Vec<Case>,
    #[serde(default)]
    returns: Option<Json>,
    #[serde(default)]
    error: Option<String>,
}

impl ToolDecl {
    fn has_answers(&self) -> bool {
        !self.sequence.is_empty()
            || !self.cases.is_empty()
            || self.returns.is_some()
            || self.error.is_some()
    }

    fn validate(&self, name: &str) -> Result<(), String> {
        if let Some(signature) = &self.signature {
            Signature::parse(signature)
                .map_err(|e| format!("the signature of tool {name}: {e}"))?;
        }
        let both = |what: &str| {
            format!(
                "tool {name}: {what} has both `returns` and `error`; give one of them (the value \
                 returned, or the error message the call fails with)"
            )
        };
        if self.returns.is_some() && self.error.is_some() {
            return Err(both("the default answer"));
        }
        for (i, answer) in self.sequence.iter().enumerate() {
            match (&answer.returns, &answer.error) {
                (Some(_), Some(_)) => return Err(both(&format!("sequence entry {}", i + 1))),
                (None, None) => {
                    return Err(format!(
                        "tool {name}: sequence entry {} needs `returns` or `error`",
                        i + 1
                    ));
                }
                _ => {}
            }
        }
        for (i, case) in self.cases.iter().enumerate() {
            let n = i + 1;
            match (&case.returns, &case.error) {
                (Some(_), Some(_)) => return Err(both(&format!("case {n}"))),
                (None, None) => {
                    return Err(format!("tool {name}: case {n} needs `returns` or `error`"));
                }
                _ => {}
            }
            match (&case.args, &case.when) {
                (Some(_), Some(_)) | (None, None) => {
                    return Err(format!(
                        "tool {name}: case {n} needs exactly one of `args` (every argument, by \
                         position) or `when` (some arguments, by parameter name)"
                    ));
                }
                (None, Some(when)) => {
                    if let Some(unknown) = when.keys().find(|k| self.param_index(k).is_none()) {
                        return Err(format!(
                            "tool {name}: case {n} names `{unknown}`, which is not one of its \
                             params [{}]",
                            self.params.join(", ")
                        ));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn param_index(&self, name: &str) -> Option<usize> {
        let wanted = normalize_name(name);
        self.params.iter().position(|p| normalize_name(p) == wanted)
    }

    /// The arguments by position (see [`CallRecord::args`]).
    fn positional(&self, args: &[Value]) -> Vec<Json> {
        positional(&self.params, args)
    }

    fn matches(&self, case: &Case, args: &[Json]) -> bool {
        if let Some(expected) = &case.args {
            return expected.len() == args.len()
                && expected
                    .iter()
                    .zip(args)
                    .all(|(e, a)| json_equal(e, a, 0.0));
        }
        case.when.as_ref().is_some_and(|when| {
            when.iter().all(|(name, expected)| {
                self.param_index(name)
                    .and_then(|i| args.get(i))
                    .is_some_and(|actual| json_equal(expected, actual, 0.0))
            })
        })
    }

    fn answer(&self, nth_call: usize, args: &[Json]) -> Result<Json, String> {
        let picked = self
            .sequence
            .get(nth_call)
            .map(|a| (&a.returns, &a.error))
            .or_else(|| {
                self.cases
                    .iter()
                    .find(|case| self.matches(case, args))
                    .map(|c| (&c.returns, &c.error))
            });
        match picked.unwrap_or((&self.returns, &self.error)) {
            (Some(value), _) => Ok(value.clone()),
            (None, Some(error)) => Err(error.clone()),
            (None, None) => Err(format!(
                "no answer for these arguments: {}",
                Json::Array(args.to_vec())
            )),
        }
    }
}

/// `_` and `-` alike, as in signatures.
fn normalize_name(name: &str) -> String {
    name.replace('_', "-")
}

/// The arguments of a call by position: a single map argument whose keys are all parameter
/// names is put in parameter order (see [`CallRecord::args`]); other arguments as they are.
fn positional(params: &[String], args: &[Value]) -> Vec<Json> {
    let index = |name: &str| {
        let wanted = normalize_name(name);
        params.iter().position(|p| normalize_name(p) == wanted)
    };
    if let [Value::Map(map)] = args
        && !params.is_empty()
        && !map.is_empty()
    {
        let mut named: Vec<(usize, Json)> = Vec::new();
        for (key, value) in map.iter() {
            let key = match key {
                Value::Keyword(k) => k.as_str().to_string(),
                Value::Str(s) => s.to_string(),
                _ => return args.iter().map(to_json).collect(),
            };
            match index(&key) {
                Some(i) => named.push((i, to_json(value))),
                None => return args.iter().map(to_json).collect(),
            }
        }
        let len = named.iter().map(|(i, _)| i + 1).max().unwrap_or(0);
        let mut positional = vec![Json::Null; len];
        for (i, value) in named {
            positional[i] = value;
        }
        return positional;
    }
    args.iter().map(to_json).collect()
}

/// One tool of one run.
struct MissionTool {
    name: String,
    decl: Arc<ToolDecl>,
    log: CallLog,
}

#[async_trait]
impl AsyncTool for MissionTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.decl.description
    }

    fn signature(&self) -> Option<&str> {
        self.decl.signature.as_deref()
    }

    fn spec(&self) -> Result<ToolSpec, ptc_agent::SignatureError> {
        let mut spec = ToolSpec::new(&self.name, &self.decl.description)
            .with_params(self.decl.params.iter().cloned());
        if let Some(text) = &self.decl.signature {
            spec = spec.with_signature(Signature::parse(text)?.to_string());
        }
        Ok(spec)
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        let positional = self.decl.positional(&args);
        let nth = self.log.push(CallRecord {
            tool: self.name.clone(),
            args: positional.clone(),
            ok: true,
        });
        match self.decl.answer(nth, &positional) {
            Ok(value) => Ok(from_json(&value)),
            Err(message) => {
                self.log.set_ok(nth, &self.name, false);
                Err(ToolError::new(message))
            }
        }
    }
}

/// A tool of a mission's MCP server, with its calls logged for the checker as table tools'
/// are (arguments named by the tool's parameters).
pub struct LoggedTool {
    inner: Arc<dyn AsyncTool>,
    params: Vec<String>,
    log: CallLog,
}

impl LoggedTool {
    /// `inner`, with its calls recorded in `log`.
    pub fn new(inner: Arc<dyn AsyncTool>, log: &CallLog) -> LoggedTool {
        let params = inner.spec().map(|s| s.params).unwrap_or_default();
        LoggedTool {
            inner,
            params,
            log: log.clone(),
        }
    }
}

#[async_trait]
impl AsyncTool for LoggedTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn signature(&self) -> Option<&str> {
        self.inner.signature()
    }

    fn spec(&self) -> Result<ToolSpec, ptc_agent::SignatureError> {
        self.inner.spec()
    }

    fn uses_model(&self) -> bool {
        self.inner.uses_model()
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        let name = self.inner.name().to_string();
        let nth = self.log.push(CallRecord {
            tool: name.clone(),
            args: positional(&self.params, &args),
            ok: true,
        });
        let result = self.inner.call(args).await;
        if result.is_err() {
            self.log.set_ok(nth, &name, false);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::from_json(
            "tools.json",
            r#"{
              "get": {"description": "d", "params": ["id", "full"],
                      "sequence": [{"error": "busy"}],
                      "cases": [{"when": {"id": "a"}, "returns": 1},
                                {"args": ["b", true], "returns": 2},
                                {"when": {"id": "z"}, "error": "gone"}],
                      "error": "unknown id"},
              "send": {"params": ["to"], "returns": {"status": "sent"}},
              "bare": {}
            }"#,
        )
        .unwrap()
    }

    async fn call(tool: &Arc<dyn AsyncTool>, args: Vec<Value>) -> Result<Json, String> {
        tool.call(args)
            .await
            .map(|v| to_json(&v))
            .map_err(|e| e.message)
    }

    #[tokio::test]
    async fn answers_follow_sequence_then_cases_then_default() {
        let log = CallLog::new();
        let set = tools();
        let tools = set.instantiate(&log);
        let get = tools.iter().find(|t| t.name() == "get").unwrap();
        let bare = tools.iter().find(|t| t.name() == "bare").unwrap();
        let s = Value::string;
        assert_eq!(call(get, vec![s("a")]).await, Err("busy".to_string()));
        assert_eq!(call(get, vec![s("a")]).await, Ok(json!(1)));
        assert_eq!(call(get, vec![s("b")]).await, Err("unknown id".into()));
        assert_eq!(
            call(get, vec![s("b"), Value::Bool(true)]).await,
            Ok(json!(2))
        );
        assert_eq!(
            call(get, vec![s("z"), Value::Nil]).await,
            Err("gone".into())
        );
        assert_eq!(
            call(bare, vec![Value::Int(3)]).await,
            Err("no answer for these arguments: [3]".into())
        );
        let oks: Vec<(String, bool)> = log.calls().into_iter().map(|c| (c.tool, c.ok)).collect();
        assert_eq!(
            oks,
            vec![
                ("get".into(), false),
                ("get".into(), true),
                ("get".into(), false),
                ("get".into(), true),
                ("get".into(), false),
                ("bare".into(), false),
            ]
        );
    }

    #[tokio::test]
    async fn a_map_of_parameter_names_records_as_positional_arguments() {
        let log = CallLog::new();
        let tools = tools().instantiate(&log);
        let send = tools.iter().find(|t| t.name() == "send").unwrap();
        let map = ptc_lisp::from_json_str(r#"{"to": "ann@example.com"}"#).unwrap();
        assert_eq!(call(send, vec![map]).await, Ok(json!({"status": "sent"})));
        let other = ptc_lisp::from_json_str(r#"{"cc": "x"}"#).unwrap();
        assert_eq!(call(send, vec![other]).await, Ok(json!({"status": "sent"})));
        let args: Vec<Vec<Json>> = log.calls().into_iter().map(|c| c.args).collect();
        assert_eq!(
            args,
            vec![vec![json!("ann@example.com")], vec![json!({"cc": "x"})]]
        );
    }

    #[test]
    fn the_demo_fixture_file_is_a_valid_tools_file() {
        let text = include_str!("../../../examples/demo/tools.json");
        let set = ToolSet::from_json("demo", text).unwrap();
        assert_eq!(
            set.names(),
            vec!["get-credit-policy", "issue-credit", "send-email"]
        );
        assert_eq!(
            set.params("issue-credit"),
            ["customer-id", "amount", "reason"]
        );
    }

    #[test]
    fn bad_declarations_say_what_to_fix() {
        let err = |text: &str| ToolSet::from_json("t.json", text).unwrap_err();
        assert_eq!(
            err(r#"{"f": {"returns": 1, "error": "x"}}"#),
            "t.json: tool f: the default answer has both `returns` and `error`; give one of them \
             (the value returned, or the error message the call fails with)"
        );
        assert_eq!(
            err(r#"{"f": {"params": ["a"], "cases": [{"when": {"b": 1}, "returns": 1}]}}"#),
            "t.json: tool f: case 1 names `b`, which is not one of its params [a]"
        );
        assert_eq!(
            err(r#"{"f": {"cases": [{"returns": 1}]}}"#),
            "t.json: tool f: case 1 needs exactly one of `args` (every argument, by position) or \
             `when` (some arguments, by parameter name)"
        );
        assert_eq!(
            err(r#"{"f": {"sequence": [{}]}}"#),
            "t.json: tool f: sequence entry 1 needs `returns` or `error`"
        );
        assert!(err(r#"{"f": {"retrns": 1}}"#).starts_with("t.json: unknown field `retrns`"));
        assert!(
            err(r#"{"f": {"signature": "(a :nope) -> :int"}}"#)
                .starts_with("t.json: the signature of tool f: ")
        );
    }
}

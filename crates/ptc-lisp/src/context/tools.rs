//! Host tools: the `tool/` namespace.
//!
//! A host registers [`SyncTool`]s under names; a program calls them as `(tool/name arg ...)` (or by
//! the bare name, when nothing else has it). Each call is recorded as a [`ToolCallRecord`], in the
//! order the calls were made.

use crate::value::Value;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// What a tool is, for resolution and for the `tool/` section shown to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name programs call it by (`tool/<name>`).
    pub name: String,
    /// Parameter names, shown as `(tool/name a b)`.
    #[serde(default)]
    pub params: Vec<String>,
    /// An optional signature such as `(category :string) -> [{:id :int}]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// What the tool does, shown to the model.
    #[serde(default)]
    pub description: String,
}

impl ToolSpec {
    /// A tool called `name` that does what `description` says.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            params: Vec::new(),
            signature: None,
            description: description.into(),
        }
    }

    /// The parameter names, shown as `(tool/name a b)`.
    pub fn with_params<S: Into<String>>(mut self, params: impl IntoIterator<Item = S>) -> ToolSpec {
        self.params = params.into_iter().map(Into::into).collect();
        self
    }

    /// A signature such as `(category :string) -> [{:id :int}]`.
    pub fn with_signature(mut self, signature: impl Into<String>) -> ToolSpec {
        self.signature = Some(signature.into());
        self
    }
}

/// Why a tool call failed, in words the model can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong.
    pub message: String,
}

impl ToolError {
    /// A tool error saying `message`.
    pub fn new(message: impl Into<String>) -> ToolError {
        ToolError {
            message: message.into(),
        }
    }
}

/// A synchronous host function. Implementations must be thread-safe: `pmap` calls tools from
/// several threads at once. (The agent crate adapts async tools to this trait.)
pub trait SyncTool: Send + Sync {
    /// Run the tool on the arguments a program passed.
    fn call(&self, args: &[Value]) -> Result<Value, ToolError>;
}

impl<F> SyncTool for F
where
    F: Fn(&[Value]) -> Result<Value, ToolError> + Send + Sync,
{
    fn call(&self, args: &[Value]) -> Result<Value, ToolError> {
        self(args)
    }
}

/// How a tool's calls are answered.
#[derive(Clone)]
pub(crate) enum ToolHandler {
    /// By calling this function, on the thread evaluating the program.
    Sync(Arc<dyn SyncTool>),
    /// By the host, while the run is suspended (see [`Tools::insert_awaited`]).
    Awaited,
}

/// The tools available to a run, by name.
#[derive(Clone, Default)]
pub struct Tools {
    by_name: BTreeMap<String, (ToolSpec, ToolHandler)>,
}

impl Tools {
    /// No tools.
    pub fn new() -> Tools {
        Tools::default()
    }

    /// Register `tool` under `spec.name` (replacing any tool of that name).
    pub fn insert(&mut self, spec: ToolSpec, tool: impl SyncTool + 'static) {
        self.insert_arc(spec, Arc::new(tool));
    }

    /// Register a shared `tool` under `spec.name` (replacing any tool of that name).
    pub fn insert_arc(&mut self, spec: ToolSpec, tool: Arc<dyn SyncTool>) {
        self.by_name
            .insert(spec.name.clone(), (spec, ToolHandler::Sync(tool)));
    }

    /// Register a tool (replacing any tool of that name) whose calls the host answers while
    /// the run waits: a run started with [`Runtime::start`](crate::Runtime::start) suspends
    /// at each call and hands it to the host as a [`ToolRequest`], so that the host can await
    /// the answer (on an async runtime, say) without holding a thread. A run made with
    /// [`Runtime::run`](crate::Runtime::run), which cannot suspend, gets a tool error for
    /// such a call.
    ///
    /// Functions a program defines keep calling the tool by its name, so a later run answers
    /// their calls with whatever that run's host does for the name.
    pub fn insert_awaited(&mut self, spec: ToolSpec) {
        self.by_name
            .insert(spec.name.clone(), (spec, ToolHandler::Awaited));
    }

    /// [`Tools::insert`], as a builder.
    pub fn with(mut self, spec: ToolSpec, tool: impl SyncTool + 'static) -> Tools {
        self.insert(spec, tool);
        self
    }

    /// The synchronous tool called `name` (`None` for an awaited one, see
    /// [`Tools::insert_awaited`]).
    pub fn get(&self, name: &str) -> Option<&Arc<dyn SyncTool>> {
        match self.by_name.get(name) {
            Some((_, ToolHandler::Sync(tool))) => Some(tool),
            _ => None,
        }
    }

    /// How calls of the tool called `name` are answered.
    pub(crate) fn handler(&self, name: &str) -> Option<&ToolHandler> {
        self.by_name.get(name).map(|(_, handler)| handler)
    }

    /// Whether a tool is called `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Specs in name order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.by_name.values().map(|(spec, _)| spec)
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// One entry of a fixture tools file; `returns` is read separately, keeping its key order.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureTool {
    #[serde(default)]
    description: String,
    #[serde(default)]
    params: Option<Vec<String>>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default, rename = "returns")]
    _returns: serde::de::IgnoredAny,
}

impl Tools {
    /// Tools from a fixture file: `{"name": {"description": "...", "params": ["a"],
    /// "returns": <json>}}`. Each call returns its canned value (converted as data is, so a
    /// returned object keeps the key order of the file). A tool that lists its `params` must be
    /// called with exactly that many arguments; one without `params` takes any.
    ///
    /// ```
    /// use ptc_lisp::{Runtime, UserNamespace, pr_str};
    ///
    /// let tools = ptc_lisp::Tools::from_fixture_json(
    ///     r#"{"get-user": {"description": "A user", "params": ["id"], "returns": {"name": "Ann", "age": 7}}}"#,
    /// ).unwrap();
    /// let runtime = Runtime::new().with_tools(tools);
    /// let out = runtime.run_str("(tool/get-user 1)", &UserNamespace::new());
    /// assert_eq!(pr_str(out.outcome.value().unwrap()), "{:name \"Ann\", :age 7}");
    /// let out = runtime.run_str("(tool/get-user)", &UserNamespace::new());
    /// assert!(out.outcome.error().unwrap().message.contains("takes 1 argument (id), got 0"));
    /// ```
    pub fn from_fixture_json(text: &str) -> Result<Tools, crate::error::Error> {
        let fixtures: BTreeMap<String, FixtureTool> = serde_json::from_str(text).map_err(|e| {
            crate::error::Error::argument(format!(
                "invalid tools file: {e}; expected {{\"name\": {{\"description\": \"...\", \
                 \"params\": [\"a\"], \"returns\": <json>}}}}"
            ))
        })?;
        // Read again into values, which keep the order of object keys.
        let ordered = match crate::json::from_json_str(text)? {
            Value::Map(map) => map,
            _ => return Ok(Tools::new()),
        };
        let field = |map: &Value, name: &str| match map {
            Value::Map(map) => map
                .get(&Value::Keyword(crate::value::Keyword::new(name)))
                .cloned(),
            _ => None,
        };
        let mut tools = Tools::new();
        for (name, fixture) in fixtures {
            let value = ordered
                .get(&Value::Keyword(crate::value::Keyword::new(&name)))
                .and_then(|entry| field(entry, "returns"))
                .unwrap_or_default();
            let params = fixture.params.clone();
            let mut spec = ToolSpec::new(name.as_str(), fixture.description)
                .with_params(fixture.params.unwrap_or_default());
            spec.signature = fixture.signature;
            tools.insert(spec, move |args: &[Value]| {
                if let Some(params) = &params
                    && args.len() != params.len()
                {
                    return Err(ToolError::new(format!(
                        "tool/{name} takes {} argument{} ({}), got {}",
                        params.len(),
                        if params.len() == 1 { "" } else { "s" },
                        params.join(" "),
                        args.len()
                    )));
                }
                Ok(value.clone())
            });
        }
        Ok(tools)
    }
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.by_name.keys()).finish()
    }
}

/// One tool call made by a program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The tool's name.
    pub name: String,
    /// The arguments, as the program passed them.
    pub args: Vec<Value>,
    /// What the tool returned, or why it failed.
    pub result: ToolOutcome,
    /// Wall-clock time of the call, in microseconds.
    pub duration_us: u64,
}

impl ToolCallRecord {
    /// How long the call took.
    pub fn duration(&self) -> Duration {
        Duration::from_micros(self.duration_us)
    }
}

/// A tool call a suspended run waits on: the host makes it and resumes the run with a
/// [`ToolAnswer`] (see [`Runtime::start`](crate::Runtime::start)).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRequest {
    /// The tool's name (without `tool/`).
    pub name: String,
    /// The arguments, as the program passed them.
    pub args: Vec<Value>,
}

/// The host's answer to a [`ToolRequest`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// What the tool returned, or why it failed (a time-out, a panic, ...).
    pub result: Result<Value, ToolError>,
    /// How long the call took, as recorded in the run's [`ToolCallRecord`].
    pub duration: Duration,
}

impl ToolAnswer {
    /// The answer `result`, for a call that took `duration`.
    pub fn new(result: Result<Value, ToolError>, duration: Duration) -> ToolAnswer {
        ToolAnswer { result, duration }
    }
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool returned this value.
    Ok(Value),
    /// The tool failed, panicked or timed out, for this reason.
    Error(String),
}

impl ToolOutcome {
    /// The value, for a call that succeeded.
    pub fn value(&self) -> Option<&Value> {
        match self {
            ToolOutcome::Ok(v) => Some(v),
            ToolOutcome::Error(_) => None,
        }
    }
}

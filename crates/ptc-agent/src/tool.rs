//! Host tools for agents: the async [`AsyncTool`] trait, helpers that make a tool from a function or
//! an async closure with typed arguments, and the bridge to the sandbox's synchronous tools.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use ptc_lisp::{ToolSpec, Value};
use ptc_lisp::{from_json_str, to_json};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use ptc_lisp::ToolError;

use crate::signature::{Param, Signature, SignatureError, Type};
use crate::telemetry::micros;

/// A host function a program calls as `(tool/name arg ...)`.
///
/// Tools are async: a program that calls one suspends (it holds no thread while it waits) and
/// the agent awaits the call on the async runtime, so a tool may await I/O freely; the calls
/// of the items of a `pmap`/`pcalls` are awaited concurrently. A call that takes longer than
/// the sandbox's tool timeout is cancelled (its future is dropped). An error (or a panic)
/// becomes an error of the program's turn, which the model reads and can react to; it never
/// ends the run.
///
/// A tool made from a plain function ([`tool_fn`], [`value_tool`]) runs on the runtime's
/// thread when called: one that blocks (sleeps, waits on blocking I/O) holds that thread and
/// cannot be timed out, so make such tools with [`async_tool`] (and
/// `tokio::task::spawn_blocking` inside, if the work itself must block).
///
/// Most tools are easier to make with [`tool_fn`] or [`async_tool`] than by implementing this
/// trait.
#[async_trait]
pub trait AsyncTool: Send + Sync {
    /// The name in the `tool/` namespace, e.g. `get-weather`.
    fn name(&self) -> &str;

    /// What the tool does, shown to the model next to its name.
    fn description(&self) -> &str;

    /// The parameter signature, e.g. `(city :string) -> {temp :float}`: its parameter names
    /// are shown as `(tool/get-weather city)` and the whole signature next to it.
    fn signature(&self) -> Option<&str> {
        None
    }

    /// The spec shown to the model: by default the name, the description, and the parameter
    /// names and canonical form of the signature (whose parse error is reported when the agent
    /// is built).
    fn spec(&self) -> Result<ToolSpec, SignatureError> {
        let mut spec = ToolSpec::new(self.name(), self.description());
        if let Some(text) = self.signature().filter(|s| !s.trim().is_empty()) {
            let signature = Signature::parse(text)?;
            spec = spec
                .with_params(signature.params().iter().map(|p| p.name.clone()))
                .with_signature(signature.to_string());
        }
        Ok(spec)
    }

    /// Whether a call asks a model (a sub-agent, a tool that is one model call). A
    /// [compiled agent](crate::CompiledAgent) runs its program without a model, so
    /// [`Agent::compile`](crate::Agent::compile) refuses an agent with such a tool. `false`
    /// unless implemented; a tool that wraps another should forward it.
    fn uses_model(&self) -> bool {
        false
    }

    /// Runs the tool with the program's arguments.
    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError>;
}

#[async_trait]
impl<T: AsyncTool + ?Sized> AsyncTool for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn description(&self) -> &str {
        (**self).description()
    }

    fn signature(&self) -> Option<&str> {
        (**self).signature()
    }

    fn spec(&self) -> Result<ToolSpec, SignatureError> {
        (**self).spec()
    }

    fn uses_model(&self) -> bool {
        (**self).uses_model()
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        (**self).call(args).await
    }
}

type BoxFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;

/// The call of an [`FnTool`]: arguments and the signature's parameter names to a future.
type CallFn = dyn Fn(Vec<Value>, &[String]) -> BoxFuture + Send + Sync;

/// A tool made from a function or closure by [`tool_fn`], [`async_tool`] or [`value_tool`].
///
/// ```
/// use ptc_agent::{AsyncTool, ToolError, tool_fn};
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Args { a: i64, b: i64 }
///
/// let add = tool_fn("add", "Adds two integers", |args: Args| -> Result<i64, ToolError> {
///     Ok(args.a + args.b)
/// })
/// .with_signature("(a :int, b :int) -> :int");
/// assert_eq!(add.name(), "add");
/// ```
pub struct FnTool {
    name: String,
    description: String,
    signature: Option<String>,
    params: Vec<String>,
    call: Arc<CallFn>,
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .field("signature", &self.signature)
            .finish_non_exhaustive()
    }
}

impl FnTool {
    /// Declares the parameter signature, e.g. `(city :string, days :int?) -> [:map]`. Its
    /// parameter names also let a program pass the arguments positionally, `(tool/x "Oslo" 3)`,
    /// to a tool whose typed arguments are a struct. A signature that does not parse is
    /// reported when the agent is built.
    pub fn with_signature(mut self, signature: impl Into<String>) -> FnTool {
        let signature = signature.into();
        self.params = Signature::parse(&signature)
            .map(|s| s.params().iter().map(|p| p.name.clone()).collect())
            .unwrap_or_default();
        self.signature = Some(signature);
        self
    }
}

#[async_trait]
impl AsyncTool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn signature(&self) -> Option<&str> {
        self.signature.as_deref()
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        (self.call)(args, &self.params).await
    }
}

/// A tool from a plain function over typed arguments.
///
/// The arguments `A` are deserialized with serde from the program's arguments: a single
/// argument as itself (a map for a struct: `(tool/add {:a 1 :b 2})`), positional arguments by
/// the parameter names of the tool's signature (`(tool/add 1 2)` with `(a :int, b :int)`), or
/// all arguments as a sequence (for tuples and `Vec`s). Map keys are keyword names, so a field
/// `max_results` is written `:max_results` unless the struct uses
/// `#[serde(rename_all = "kebab-case")]`. The result is serialized back into a value.
pub fn tool_fn<A, R, F>(name: impl Into<String>, description: impl Into<String>, f: F) -> FnTool
where
    A: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(A) -> Result<R, ToolError> + Send + Sync + 'static,
{
    let name = name.into();
    let tool_name = name.clone();
    let f = Arc::new(f);
    make(name, description.into(), move |args, params| {
        let result = typed_args::<A>(&tool_name, &args, params).and_then(|a| f(a));
        Box::pin(async move { result.and_then(|r| to_value(&r)) })
    })
}

/// A tool from an async closure over typed arguments (deserialized as for [`tool_fn`]).
///
/// ```
/// use ptc_agent::{ToolError, async_tool};
///
/// let slow_echo = async_tool("echo", "Echoes its text", |text: String| async move {
///     Ok::<_, ToolError>(text)
/// });
/// # let _ = slow_echo;
/// ```
pub fn async_tool<A, R, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    f: F,
) -> FnTool
where
    A: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
{
    let name = name.into();
    let tool_name = name.clone();
    let f = Arc::new(f);
    make(
        name,
        description.into(),
        move |args, params| match typed_args::<A>(&tool_name, &args, params) {
            Ok(a) => {
                let future = f(a);
                Box::pin(async move { future.await.and_then(|r| to_value(&r)) })
            }
            Err(e) => Box::pin(async move { Err(e) }),
        },
    )
}

/// A tool from a plain function over the program's values, untouched.
pub fn value_tool<F>(name: impl Into<String>, description: impl Into<String>, f: F) -> FnTool
where
    F: Fn(&[Value]) -> Result<Value, ToolError> + Send + Sync + 'static,
{
    let f = Arc::new(f);
    make(name.into(), description.into(), move |args, _| {
        let result = f(&args);
        Box::pin(async move { result })
    })
}

fn make(
    name: String,
    description: String,
    call: impl Fn(Vec<Value>, &[String]) -> BoxFuture + Send + Sync + 'static,
) -> FnTool {
    FnTool {
        name,
        description,
        signature: None,
        params: Vec::new(),
        call: Arc::new(call),
    }
}

/// The result as a value, through JSON text so that struct fields keep their order.
fn to_value<R: Serialize>(result: &R) -> Result<Value, ToolError> {
    let text = serde_json::to_string(result)
        .map_err(|e| ToolError::new(format!("the tool's result could not be converted: {e}")))?;
    from_json_str(&text).map_err(|e| {
        ToolError::new(format!(
            "the tool's result could not be converted: {}",
            e.message
        ))
    })
}

/// Deserializes the arguments as `A`, trying the readings described on [`tool_fn`] in turn.
fn typed_args<A: DeserializeOwned>(
    tool: &str,
    args: &[Value],
    params: &[String],
) -> Result<A, ToolError> {
    let json: Vec<serde_json::Value> = args.iter().map(to_json).collect();
    let mut candidates: Vec<serde_json::Value> = Vec::with_capacity(3);
    // Positional arguments named by the parameters; trailing ones may be left out.
    if !json.is_empty() && json.len() <= params.len() {
        candidates.push(serde_json::Value::Object(
            params.iter().cloned().zip(json.iter().cloned()).collect(),
        ));
    }
    match json.as_slice() {
        [] => candidates.push(serde_json::Value::Null),
        [one] => candidates.push(one.clone()),
        _ => {}
    }
    candidates.push(serde_json::Value::Array(json));
    let mut first_error = None;
    for candidate in candidates {
        match serde_json::from_value::<A>(candidate) {
            Ok(a) => return Ok(a),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let detail = first_error.map_or_else(String::new, |e| format!(": {e}"));
    let shown: Vec<String> = args
        .iter()
        .map(|a| ptc_turn::preview(a, ptc_lisp::Compact::new(3, 40)))
        .collect();
    Err(ToolError::new(format!(
        "invalid arguments ({}){detail}; {}",
        shown.join(" "),
        if params.is_empty() {
            format!("check what tool/{tool} expects")
        } else {
            format!("call it as (tool/{tool} {})", params.join(" "))
        }
    )))
}

/// A sandbox tool (for example one of [`ptc_lisp::Tools::from_fixture_json`]) as an agent
/// tool. It runs synchronously when called.
pub struct SyncToolAdapter {
    spec: ToolSpec,
    tool: Arc<dyn ptc_lisp::SyncTool>,
}

impl SyncToolAdapter {
    /// `tool`, described to the model and the agent by `spec`.
    pub fn new(spec: ToolSpec, tool: Arc<dyn ptc_lisp::SyncTool>) -> SyncToolAdapter {
        SyncToolAdapter { spec, tool }
    }

    /// Every tool of a sandbox registry, in name order.
    pub fn all(tools: &ptc_lisp::Tools) -> Vec<SyncToolAdapter> {
        tools
            .specs()
            .filter_map(|spec| {
                Some(SyncToolAdapter::new(
                    spec.clone(),
                    tools.get(&spec.name)?.clone(),
                ))
            })
            .collect()
    }

    /// The spec the model sees.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }
}

#[async_trait]
impl AsyncTool for SyncToolAdapter {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn description(&self) -> &str {
        &self.spec.description
    }

    /// The spec as the registry has it (parameter names, and a signature shown as written).
    fn spec(&self) -> Result<ToolSpec, SignatureError> {
        Ok(self.spec.clone())
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        self.tool.call(&args)
    }
}

/// Agent tools as the sandbox's tools, to run programs without an agent (a REPL, a one-off
/// program): each call drives the tool's future on `handle` from the thread running the
/// program, which must not be one of the runtime's own threads. The specs are the ones an
/// agent would show, and a signature that does not parse is reported here.
///
/// ```
/// use ptc_agent::{ToolError, sandbox_tools, tool_fn};
/// use std::sync::Arc;
///
/// let runtime = tokio::runtime::Runtime::new().unwrap();
/// let double = tool_fn("double", "Twice n", |n: i64| Ok::<_, ToolError>(n * 2));
/// let tools = sandbox_tools(&[Arc::new(double)], runtime.handle()).unwrap();
/// let out = ptc_lisp::Runtime::new()
///     .with_tools(tools)
///     .run_str("(tool/double 21)", &ptc_lisp::UserNamespace::new());
/// assert_eq!(out.outcome.value(), Some(&ptc_lisp::Value::Int(42)));
/// ```
pub fn sandbox_tools(
    tools: &[Arc<dyn AsyncTool>],
    handle: &tokio::runtime::Handle,
) -> Result<ptc_lisp::Tools, SignatureError> {
    let mut sandbox = ptc_lisp::Tools::new();
    for tool in tools {
        sandbox.insert_arc(
            tool.spec()?,
            Arc::new(BlockingTool {
                tool: tool.clone(),
                handle: handle.clone(),
                parent: tracing::Span::current(),
            }),
        );
    }
    Ok(sandbox)
}

/// An agent tool as the sandbox's synchronous tool, for hosts that run programs on threads of
/// their own (a REPL, a one-off program): called on the thread running the program (or a
/// `pmap` worker), it drives the tool's future on the runtime. Each call gets a `tool_call`
/// span under `parent`. (Agents do not use it: their programs suspend at tool calls.)
pub(crate) struct BlockingTool {
    pub tool: Arc<dyn AsyncTool>,
    pub handle: tokio::runtime::Handle,
    pub parent: tracing::Span,
}

impl ptc_lisp::SyncTool for BlockingTool {
    fn call(&self, args: &[Value]) -> Result<Value, ToolError> {
        let span = tracing::info_span!(
            parent: &self.parent,
            "tool_call",
            otel.name = %format!("execute_tool {}", self.tool.name()),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = self.tool.name(),
            tool = self.tool.name(),
            args = args.len(),
            duration_us = tracing::field::Empty,
            outcome = tracing::field::Empty,
            error = tracing::field::Empty,
        );
        let started = Instant::now();
        let call = self.tool.call(args.to_vec());
        let result = span.in_scope(|| self.handle.block_on(call));
        span.record("duration_us", micros(started.elapsed()));
        match &result {
            Ok(_) => span.record("outcome", "ok"),
            Err(e) => {
                span.record("outcome", "error");
                span.record("error", e.message.as_str())
            }
        };
        result
    }
}

/// The arguments of a call of a tool whose inputs are `params`, by name: one map argument
/// gives its entries (`(tool/x {:a 1})`), unless the one input is itself a map; positional
/// arguments are named by the parameters, in order, and trailing optional ones may be left out.
pub(crate) fn named_arguments(
    params: &[Param],
    args: Vec<Value>,
) -> Result<Vec<(String, Value)>, ToolError> {
    let takes_a_map = match params {
        [param] => matches!(
            param.ty.without_optional(),
            Type::Map | Type::Record(_) | Type::Any
        ),
        _ => false,
    };
    match args.as_slice() {
        [] => Ok(Vec::new()),
        [map @ Value::Map(_)] if !takes_a_map => {
            ptc_lisp::data_entries(map).map_err(|e| ToolError::new(e.message))
        }
        _ if args.len() <= params.len()
            && params[args.len()..]
                .iter()
                .all(|p| matches!(p.ty, Type::Optional(_))) =>
        {
            Ok(params
                .iter()
                .map(|param| param.name.clone())
                .zip(args)
                .collect())
        }
        _ => Err(ToolError::new(format!(
            "expected {} argument(s) ({}) or one map of them, got {}",
            params.len(),
            params
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            args.len()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::time::Duration;

    /// Calls from several sandbox threads at once (as `pmap` workers make them) are in flight
    /// together: each waits at a barrier that opens only when all of them have arrived.
    #[test]
    fn calls_from_several_threads_run_concurrently() {
        const CALLS: usize = 4;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let barrier = Arc::new(tokio::sync::Barrier::new(CALLS));
        let tool = async_tool("meet", "Waits for the others", move |n: i64| {
            let barrier = barrier.clone();
            async move {
                // Only a guard against hanging forever if the calls were serialized.
                tokio::time::timeout(Duration::from_secs(30), barrier.wait())
                    .await
                    .map_err(|_| ToolError::new("the other calls never arrived"))?;
                Ok(n)
            }
        });
        let blocking = Arc::new(BlockingTool {
            tool: Arc::new(tool),
            handle: runtime.handle().clone(),
            parent: tracing::Span::none(),
        });
        let results: Vec<Result<Value, ToolError>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..CALLS)
                .map(|i| {
                    let blocking = blocking.clone();
                    scope.spawn(move || {
                        ptc_lisp::SyncTool::call(blocking.as_ref(), &[Value::Int(i as i64)])
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("worker"))
                .collect()
        });
        assert_eq!(
            results,
            (0..CALLS as i64)
                .map(|i| Ok(Value::Int(i)))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn positional_arguments_may_leave_out_trailing_parameters() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Args {
            a: i64,
            b: Option<i64>,
        }
        let params = ["a".to_string(), "b".to_string()];
        assert_eq!(
            typed_args::<Args>("t", &[Value::Int(1)], &params),
            Ok(Args { a: 1, b: None })
        );
        assert_eq!(
            typed_args::<Args>("t", &[Value::Int(1), Value::Int(2)], &params),
            Ok(Args { a: 1, b: Some(2) })
        );
        assert_eq!(
            typed_args::<Vec<i64>>("t", &[Value::Int(1), Value::Int(2), Value::Int(3)], &[]),
            Ok(vec![1, 2, 3])
        );
        assert_eq!(
            typed_args::<i64>("t", &[Value::string("x")], &[]).map_err(|e| e.message),
            Err(
                "invalid arguments (\"x\"): invalid type: string \"x\", expected i64; check what \
                 tool/t expects"
                    .to_string()
            )
        );
    }
}

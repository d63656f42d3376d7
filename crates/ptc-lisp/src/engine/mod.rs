//! Running programs: [`Program`], [`Runtime`], [`RunOutcome`] and the [`UserNamespace`] that
//! carries definitions from one run (turn) to the next.

mod library;
mod suspend;

pub use suspend::{Progress, SuspendedRun};

use crate::analyze::{Scope, analyze_program};
use crate::context::fiber::Suspender;
use crate::context::interrupt::Interrupt;
use crate::context::limits::Limits;
use crate::context::tools::{ToolCallRecord, Tools};
use crate::context::{Binding, Ctx, Flow};
use crate::error::{Error, ErrorKind, Result};
use crate::ir::FnRepr;
use crate::namespace::Definition;
use crate::reader::{Form, ReadLimits, read};
use crate::recent_values::RecentValues;
use crate::span::{LineIndex, Pos};
use crate::value::Value;
use crate::value::ValueShape;
use arcstr::ArcStr;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A program that has been read (parsed), ready to run any number of times.
#[derive(Debug, Clone)]
pub struct Program {
    source: Arc<str>,
    forms: Arc<[Form]>,
}

impl Program {
    /// Read `source` with the default [`ReadLimits`].
    pub fn parse(source: &str) -> Result<Program> {
        Program::parse_with(source, &ReadLimits::default())
    }

    /// Read `source` with the given bounds on program text.
    pub fn parse_with(source: &str, limits: &ReadLimits) -> Result<Program> {
        let forms = read(source, limits)?;
        Ok(Program {
            source: Arc::from(source),
            forms: Arc::from(forms),
        })
    }

    /// The program text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The top-level forms, with their spans in [`Program::source`].
    pub fn forms(&self) -> &[Form] {
        &self.forms
    }
}

/// The `user/` namespace: definitions made by earlier runs. Cheap to clone; a run never changes
/// the namespace it was given, it returns a new one.
#[derive(Clone, Default)]
pub struct UserNamespace {
    bindings: Arc<Vec<Binding>>,
    index: Arc<FxHashMap<ArcStr, u32>>,
    next_order: u64,
}

impl UserNamespace {
    /// An empty namespace: nothing defined yet.
    pub fn new() -> UserNamespace {
        UserNamespace::default()
    }

    /// The value defined as `name`, if any.
    pub fn get(&self, name: &str) -> Option<&Value> {
        let slot = *self.index.get(name)?;
        self.bindings[slot as usize].value.as_ref()
    }

    /// Number of defined names.
    pub fn len(&self) -> usize {
        self.bindings.iter().filter(|b| b.value.is_some()).count()
    }

    /// Whether nothing is defined.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every definition in the order the names were first defined, with docstrings,
    /// parameter lists and the shape each function last returned.
    pub fn definitions(&self) -> Vec<Definition> {
        let mut defined: Vec<&Binding> =
            self.bindings.iter().filter(|b| b.value.is_some()).collect();
        defined.sort_by_key(|b| b.order);
        defined
            .into_iter()
            .map(|b| {
                let value = b.value.clone().unwrap_or_default();
                let (params, last_return) = match &value {
                    Value::Fn(f) => match f.repr() {
                        FnRepr::Closure(c) => (
                            if b.params.is_empty() {
                                c.params()
                            } else {
                                b.params.clone()
                            },
                            c.last_return(),
                        ),
                        _ => (b.params.clone(), None),
                    },
                    _ => (Vec::new(), None),
                };
                Definition {
                    name: b.name.to_string(),
                    doc: b.doc.as_ref().map(|d| d.to_string()),
                    value,
                    params,
                    last_return,
                }
            })
            .collect()
    }

    /// The estimated bytes each value definition holds, in definition order, counting at most
    /// `max` bytes in all: once the total passes `max` the walk stops, and the definition it
    /// stopped in is reported as `max + 1` minus what came before it (so the sizes add up to
    /// more than `max`). Functions count as one value slot; what they capture is not walked.
    /// An estimate like the memory budget's: shared parts count wherever they are reachable.
    ///
    /// ```
    /// use ptc_lisp::{Runtime, UserNamespace};
    /// let out = Runtime::new().run_str("(def a \"abc\") (def b [1 2])", &UserNamespace::new());
    /// assert_eq!(out.namespace.estimated_sizes(1 << 20), vec![("a".into(), 19), ("b".into(), 48)]);
    /// ```
    pub fn estimated_sizes(&self, max: usize) -> Vec<(String, usize)> {
        let mut defined: Vec<&Binding> =
            self.bindings.iter().filter(|b| b.value.is_some()).collect();
        defined.sort_by_key(|b| b.order);
        let mut left = max;
        let mut sizes = Vec::new();
        for binding in defined {
            let Some(value) = &binding.value else {
                continue;
            };
            let size = value.estimated_size_up_to(left);
            sizes.push((binding.name.to_string(), size));
            if size > left {
                break;
            }
            left -= size;
        }
        sizes
    }

    /// The shape of what the function `name` last returned.
    pub fn last_return(&self, name: &str) -> Option<ValueShape> {
        match self.get(name)? {
            Value::Fn(f) => match f.repr() {
                FnRepr::Closure(c) => c.last_return(),
                _ => None,
            },
            _ => None,
        }
    }
}

impl std::fmt::Debug for UserNamespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.bindings
                    .iter()
                    .filter_map(|b| Some((b.name.as_str(), b.value.as_ref()?))),
            )
            .finish()
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The program ran to its end; this is the value of its last form.
    Value(Value),
    /// The program called `(return v)`.
    Returned(Value),
    /// The program called `(fail reason)`.
    Failed(Value),
    /// Reading, analysis or evaluation failed.
    Error(Error),
}

impl Outcome {
    /// The value for [`Outcome::Value`] and [`Outcome::Returned`].
    pub fn value(&self) -> Option<&Value> {
        match self {
            Outcome::Value(v) | Outcome::Returned(v) => Some(v),
            _ => None,
        }
    }

    /// The error for [`Outcome::Error`].
    pub fn error(&self) -> Option<&Error> {
        match self {
            Outcome::Error(e) => Some(e),
            _ => None,
        }
    }

    /// The value for [`Outcome::Value`] and [`Outcome::Returned`] as a Rust value of type
    /// `T` (see [`from_value`](crate::from_value)). The error of a run that failed is returned
    /// as it is; a `(fail reason)` becomes an [`ErrorKind::Thrown`] error that shows the reason.
    ///
    /// ```
    /// use ptc_lisp::{Runtime, UserNamespace};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Weight {
    ///     total: i64,
    ///     unit: String,
    /// }
    ///
    /// let out = Runtime::new().run_str(r#"{:total (+ 1 2) :unit "kg"}"#, &UserNamespace::new());
    /// let weight: Weight = out.outcome.value_as().unwrap();
    /// assert_eq!((weight.total, weight.unit.as_str()), (3, "kg"));
    ///
    /// let out = Runtime::new().run_str(r#"(fail "no scale")"#, &UserNamespace::new());
    /// let error = out.outcome.value_as::<Weight>().err().unwrap();
    /// assert_eq!(error.message, r#"the program failed: "no scale""#);
    /// ```
    pub fn value_as<'v, T: serde::Deserialize<'v>>(&'v self) -> Result<T> {
        match self {
            Outcome::Value(v) | Outcome::Returned(v) => crate::convert::from_value(v),
            Outcome::Error(e) => Err(e.clone()),
            Outcome::Failed(reason) => Err(Error::new(
                ErrorKind::Thrown,
                format!(
                    "the program failed: {}",
                    crate::format::message_text(reason, 10, 200, 2_000)
                ),
            )),
        }
    }

    /// Whether the run ended without an error (a `fail` is not an error of the program).
    pub fn is_ok(&self) -> bool {
        !matches!(self, Outcome::Error(_))
    }
}

/// Counters of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunStats {
    /// Evaluation steps taken (see [`Limits::max_steps`]).
    pub steps: u64,
    /// Bytes charged to the memory budget.
    pub memory_bytes: usize,
    /// Time spent analysing the program.
    pub analyze_time: Duration,
    /// Evaluation time, not counting time spent in tools.
    pub eval_time: Duration,
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// How the run ended.
    pub outcome: Outcome,
    /// Where the `(fail ...)` form that ended the run is, for [`Outcome::Failed`].
    pub failed_at: Option<Pos>,
    /// One entry per `println` call, in order.
    pub prints: Vec<String>,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// The user namespace after the run. After an error it holds what was defined before the
    /// error; callers that discard failed turns keep the namespace they passed in instead.
    pub namespace: UserNamespace,
    /// Counters of the run.
    pub stats: RunStats,
}

impl RunOutcome {
    /// The outcome of a program that could not be read: `error`, with `namespace` unchanged.
    fn unread(error: Error, namespace: &UserNamespace) -> RunOutcome {
        RunOutcome {
            outcome: Outcome::Error(error),
            failed_at: None,
            prints: Vec::new(),
            tool_calls: Vec::new(),
            namespace: namespace.clone(),
            stats: RunStats::default(),
        }
    }
}

/// Runs programs against a set of tools, input data and limits. Cheap to clone and share.
#[derive(Clone, Default)]
pub struct Runtime {
    tools: Tools,
    data: Arc<BTreeMap<String, Value>>,
    limits: Arc<Limits>,
    recent_values: Option<Arc<RecentValues>>,
    firewall: bool,
    interrupt: Option<Interrupt>,
}

impl Runtime {
    /// A runtime with no tools, no data and the default [`Limits`].
    pub fn new() -> Runtime {
        Runtime::default()
    }

    /// Use `tools` for `tool/...` calls, replacing the tools set before.
    pub fn with_tools(mut self, tools: Tools) -> Runtime {
        self.tools = tools;
        self
    }

    /// Add input data reachable as `data/<name>`.
    pub fn with_data(mut self, name: impl Into<String>, value: Value) -> Runtime {
        Arc::make_mut(&mut self.data).insert(name.into(), value);
        self
    }

    /// Input data from a map (a JSON object read with [`from_json_str`](crate::from_json_str),
    /// say): each entry becomes `data/<key>` (see [`data_entries`]).
    pub fn with_data_map(mut self, map: &Value) -> Result<Runtime> {
        let data = Arc::make_mut(&mut self.data);
        for (name, value) in data_entries(map)? {
            data.insert(name, value);
        }
        Ok(self)
    }

    /// Let programs read `*1 *2 *3 *e`, the values and the last error of earlier runs (see
    /// [`RecentValues`]). Without them these names are undefined.
    pub fn with_recent_values(mut self, recent: RecentValues) -> Runtime {
        self.recent_values = Some(Arc::new(recent));
        self
    }

    /// The former name of [`Runtime::with_recent_values`].
    #[deprecated(note = "renamed `with_recent_values`")]
    pub fn with_history(self, recent: RecentValues) -> Runtime {
        self.with_recent_values(recent)
    }

    /// Make `println`, `print`, `prn` and `pr` show the value of every map entry whose key
    /// starts with `_` as `"[hidden]"`: for output a model reads, where firewalled fields
    /// must not appear. Off by default; the values themselves are unchanged.
    pub fn with_firewalled_output(mut self, on: bool) -> Runtime {
        self.firewall = on;
        self
    }

    /// Let the host end runs from outside while they evaluate (see [`Interrupt`]).
    pub fn with_interrupt(mut self, interrupt: Interrupt) -> Runtime {
        self.interrupt = Some(interrupt);
        self
    }

    /// Run under `limits` instead of the defaults.
    pub fn with_limits(mut self, limits: Limits) -> Runtime {
        self.limits = Arc::new(limits);
        self
    }

    /// The tools programs may call.
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// The input data, by name (`data/<name>`).
    pub fn data(&self) -> &BTreeMap<String, Value> {
        &self.data
    }

    /// The limits every run gets.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Read and run `source`; a read error is reported in the outcome like any other error.
    pub fn run_str(&self, source: &str, namespace: &UserNamespace) -> RunOutcome {
        let started = Instant::now();
        // Read without building a `Program`: its shared copies of the text and forms would
        // only be dropped again.
        match read(source, &self.limits.read) {
            Ok(forms) => self.run_since(source, &forms, namespace, started, Instant::now(), None),
            Err(e) => RunOutcome::unread(e, namespace),
        }
    }

    /// Run `program` starting from the definitions in `namespace`. The timeout counts analysis
    /// and evaluation.
    pub fn run(&self, program: &Program, namespace: &UserNamespace) -> RunOutcome {
        let now = Instant::now();
        self.run_since(&program.source, &program.forms, namespace, now, now, None)
    }

    /// [`Runtime::run`] of the program `forms` read from `source`, with the timeout counted from
    /// `started`; analysis starts at `analysis_started`.
    fn run_since(
        &self,
        source: &str,
        forms: &[Form],
        namespace: &UserNamespace,
        started: Instant,
        analysis_started: Instant,
        suspender: Option<Suspender>,
    ) -> RunOutcome {
        let mut globals = namespace.bindings.clone();
        let mut index = namespace.index.clone();
        let analyzed = analyze_program(
            source,
            forms,
            Scope {
                library: &library::Builtins,
                tools: &self.tools,
                data: &self.data,
                recent_values: self.recent_values.as_deref(),
                globals: &mut globals,
                global_index: &mut index,
            },
        );
        let analyzed_at = Instant::now();
        let analyze_time = analyzed_at - analysis_started;
        let analyzed = match analyzed {
            Ok(a) => a,
            Err(e) => {
                return RunOutcome {
                    outcome: Outcome::Error(e.locate(source)),
                    failed_at: None,
                    prints: Vec::new(),
                    tool_calls: Vec::new(),
                    namespace: namespace.clone(),
                    stats: RunStats {
                        analyze_time,
                        ..RunStats::default()
                    },
                };
            }
        };
        let mut ctx = Ctx::new(
            self.limits.clone(),
            globals,
            namespace.next_order,
            analyzed_at,
            started,
        );
        ctx.firewall = self.firewall;
        ctx.interrupt = self.interrupt.clone();
        ctx.suspender = suspender;
        let meter = ctx.meter_guard();
        let mut result = ctx.run_top(&analyzed.body, analyzed.frame_size);
        // What the program hands back must be safe for the host to print and serialize.
        if let Err(e) = ctx.settle_meter() {
            result = Err(e.into());
        }
        let exported = match &result {
            Ok(v) | Err(Flow::Return(v)) => Some(v),
            Err(Flow::Fail(failed)) => Some(&failed.0),
            Err(Flow::Error(e)) => e.data.as_ref(),
            Err(Flow::Recur) => None,
        };
        if let Some(v) = exported
            && let Err(e) = ctx.check_export(v, "the result")
        {
            result = Err(e.into());
        }
        drop(meter);
        let mut failed_at = None;
        let outcome = match result {
            Ok(v) => Outcome::Value(v),
            Err(Flow::Return(v)) => Outcome::Returned(v),
            Err(Flow::Fail(failed)) => {
                let (reason, span) = *failed;
                failed_at = Some(LineIndex::new(source).pos(span.start as usize));
                Outcome::Failed(reason)
            }
            Err(Flow::Error(e)) => Outcome::Error(e.locate(source)),
            Err(Flow::Recur) => Outcome::Error(Error::new(
                ErrorKind::Syntax,
                "recur outside of a loop or function",
            )),
        };
        // Dropping the analyzed program here, not inside the timed region, keeps eval_time honest.
        let stats = RunStats {
            steps: ctx.steps(),
            memory_bytes: ctx.memory_used(),
            analyze_time,
            eval_time: ctx.eval_time(),
        };
        RunOutcome {
            outcome,
            failed_at,
            prints: std::mem::take(&mut ctx.prints),
            tool_calls: std::mem::take(&mut ctx.tool_calls),
            namespace: UserNamespace {
                bindings: ctx.globals.clone(),
                index,
                next_order: ctx.next_order,
            },
            stats,
        }
    }
}

/// The entries of a map of input data, in the map's order: each key names a `data/` value (a
/// keyword or symbol by its name, a string as it is, any other key as it prints). This is how a
/// JSON object becomes input data, wherever it comes from (a file, a struct serialized to JSON).
///
/// ```
/// use ptc_lisp::{Value, data_entries, from_json_str};
/// let data = from_json_str(r#"{"orders": [1, 2], "region": "north"}"#).unwrap();
/// let names: Vec<String> = data_entries(&data).unwrap().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["orders", "region"]);
/// assert!(data_entries(&Value::vector([])).is_err());
/// ```
pub fn data_entries(map: &Value) -> Result<Vec<(String, Value)>> {
    let Value::Map(m) = map else {
        return Err(Error::type_error(format!(
            "input data must be a map of names to values, got {}",
            map.type_name()
        )));
    };
    Ok(m.iter()
        .map(|(k, v)| {
            let name = match k {
                Value::Keyword(k) => k.as_str().to_string(),
                Value::Str(s) => s.to_string(),
                Value::Symbol(s) => s.as_str().to_string(),
                other => crate::format::pr_str(other),
            };
            (name, v.clone())
        })
        .collect())
}

/// Run `source` with no tools, no data and default limits, and return its value. A handy entry
/// point for tests and one-off evaluation.
///
/// ```
/// use ptc_lisp::{eval_str, pr_str};
/// let v = eval_str("(->> [1 2 3 4] (filter even?) (map #(* % %)))").unwrap();
/// assert_eq!(pr_str(&v), "(4 16)");
/// ```
pub fn eval_str(source: &str) -> Result<Value> {
    match Runtime::new()
        .run_str(source, &UserNamespace::new())
        .outcome
    {
        Outcome::Value(v) | Outcome::Returned(v) => Ok(v),
        Outcome::Failed(reason) => Err(Error::new(
            ErrorKind::Thrown,
            format!("the program failed: {}", crate::format::pr_str(&reason)),
        )),
        Outcome::Error(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(source: &str) -> (Outcome, Option<Pos>) {
        let out = Runtime::new().run_str(source, &UserNamespace::new());
        (out.outcome, out.failed_at)
    }

    #[test]
    fn a_failed_run_tells_where_its_fail_form_is() {
        assert_eq!(
            failed("(def x 1)\n(when x\n  (fail {:why \"none\"}))"),
            (
                Outcome::Failed(Value::map([(Value::keyword("why"), Value::string("none"))])),
                Some(Pos { line: 3, col: 3 })
            )
        );
        // From inside a parallel call, too.
        assert_eq!(
            failed("(pmap (fn [x] (fail x)) [7])"),
            (
                Outcome::Failed(Value::Int(7)),
                Some(Pos { line: 1, col: 15 })
            )
        );
        assert_eq!(
            failed("(return 1)"),
            (Outcome::Returned(Value::Int(1)), None)
        );
    }

    #[test]
    fn an_interrupt_ends_runs_and_their_workers_and_try_cannot_catch_it() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let checks = Arc::new(AtomicUsize::new(0));
        let counted = checks.clone();
        let runtime = Runtime::new().with_interrupt(Interrupt::new(move || {
            // The third look at the clock asks the run to end.
            (counted.fetch_add(1, Ordering::SeqCst) >= 2)
                .then(|| Error::new(ErrorKind::Timeout, "interrupted"))
        }));
        let endless = "(try (loop [i 0] (recur (inc i))) (catch Exception e :caught))";
        let parallel = "(pmap (fn [_] (loop [i 0] (recur (inc i)))) [1 2 3])";
        for source in [endless, parallel] {
            checks.store(0, Ordering::SeqCst);
            let out = runtime.run_str(source, &UserNamespace::new());
            let error = out.outcome.error().cloned().map(|e| (e.kind, e.message));
            assert_eq!(
                error,
                Some((ErrorKind::Timeout, "interrupted".to_string())),
                "{source}"
            );
            checks.store(0, Ordering::SeqCst);
            let Progress::Finished(out) = runtime.start(source, &UserNamespace::new()) else {
                panic!("no tool is called");
            };
            let error = out.outcome.error().cloned().map(|e| (e.kind, e.message));
            assert_eq!(
                error,
                Some((ErrorKind::Timeout, "interrupted".to_string())),
                "{source}"
            );
        }
    }
}

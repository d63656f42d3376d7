//! The resolved program the evaluator runs.
//!
//! The analyzer has already expanded every macro-like form, checked arities of special forms and
//! `recur` positions, and resolved every name: a local is a frame slot, a captured variable an
//! index into the closure's captures, a user definition a global slot, a builtin a function
//! pointer, a tool its handle, a data key its value. Nothing is looked up by string at run time.

mod function;

pub(crate) use function::{Closure, FnRepr, captured_depth, no_captures};

use crate::context::Builtin;
use crate::error::Error;
use crate::span::Span;
use crate::value::{Keyword, Value};

use arcstr::ArcStr;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64};

pub(crate) type Slot = u32;

/// Slots from here on name the running closure's arguments, read where its caller holds them
/// (`ARG_SLOT + i` is argument `i`). A closure whose body never uses `recur` cannot rebind its
/// parameters, so a call need not copy its arguments into its frame and drop them after.
pub(crate) const ARG_SLOT: Slot = 1 << 31;

pub(crate) enum Expr {
    Const(Value),
    Local(Slot),
    Capture(u32),
    /// The closure currently running (a named `fn` referring to itself).
    SelfFn,
    /// Sibling `j` of the `letfn` group the running closure belongs to.
    LetfnSibling(u32),
    /// A user definition. When it is not bound yet, `fallback` (a builtin, tool or data key of
    /// the same name) is used instead, so `(def products (filter f products))` reads the data.
    Global {
        slot: Slot,
        name: ArcStr,
        fallback: Option<Box<Expr>>,
        span: Span,
    },
    /// A name that resolves to an error when evaluated (e.g. an ambiguous reference).
    Raise(Box<Error>),
    If(Box<(Expr, Expr, Expr)>),
    Do(Box<[Expr]>),
    Let(Box<[(Slot, Expr)]>, Box<Expr>),
    Loop(Box<LoopExpr>),
    Recur(Box<[Expr]>, Box<[Slot]>),
    MakeFn(Arc<Lambda>),
    /// A `letfn` group: the closures are created together and bound to `slots`.
    Letfn(Box<LetfnExpr>),
    CallBuiltin(Box<CallBuiltin>),
    /// A call of a common numeric builtin with one or two arguments, evaluated inline for
    /// integers; other values go through `builtin`.
    Op1(Box<Op1Expr>),
    Op2(Box<Op2Expr>),
    Call(Box<CallExpr>),
    /// `(:key m)` / `(:key m default)`.
    KeywordGet(Box<KeywordGet>),
    Def(Box<DefExpr>),
    And(Box<[Expr]>),
    Or(Box<[Expr]>),
    Try(Box<TryExpr>),
    Throw(Box<Expr>, Span),
    Return(Box<Expr>),
    /// `(fail reason)`, with the span of the form.
    Fail(Box<Expr>, Span),
    Case(Box<CaseExpr>),
    Vector(Box<[Expr]>),
    Map(Box<[(Expr, Expr)]>),
    Set(Box<[Expr]>),
    For(Arc<ForExpr>),
    /// A point in a deeply nested expression where evaluation (and dropping) continues on a
    /// fresh stack segment when the thread's stack runs low. The analyzer puts one every few
    /// levels of nesting, so macro expansions that nest deeply (`->` with many steps, `cond`
    /// with many clauses) cannot exhaust the stack, while ordinary code never meets one.
    Deep(Deep),
}

pub(crate) struct Deep(pub Box<Expr>);

impl Drop for Deep {
    fn drop(&mut self) {
        // Dropping a nested expression recurses as deeply as evaluating it does.
        let inner = std::mem::replace(&mut *self.0, Expr::Const(Value::Nil));
        crate::stack::with_stack_room(move || drop(inner));
    }
}

pub(crate) struct LoopExpr {
    pub slots: Box<[Slot]>,
    pub inits: Box<[Expr]>,
    /// Bindings destructured from the loop slots at the start of every iteration.
    pub body: Expr,
    pub span: Span,
}

pub(crate) struct CallBuiltin {
    pub builtin: &'static Builtin,
    pub args: Box<[Expr]>,
    pub span: Span,
}

#[derive(Clone, Copy)]
pub(crate) enum Op1 {
    Inc,
    Dec,
    Zero,
}

#[derive(Clone, Copy)]
pub(crate) enum Op2 {
    Add,
    Sub,
    Mul,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
}

pub(crate) struct Op1Expr {
    pub op: Op1,
    pub arg: Expr,
    pub builtin: &'static Builtin,
    pub span: Span,
}

pub(crate) struct Op2Expr {
    pub op: Op2,
    pub left: Expr,
    pub right: Expr,
    pub builtin: &'static Builtin,
    pub span: Span,
}

impl Op1 {
    pub fn of(name: &str) -> Option<Op1> {
        Some(match name {
            "inc" => Op1::Inc,
            "dec" => Op1::Dec,
            "zero?" => Op1::Zero,
            _ => return None,
        })
    }
}

impl Op2 {
    pub fn of(name: &str) -> Option<Op2> {
        Some(match name {
            "+" => Op2::Add,
            "-" => Op2::Sub,
            "*" => Op2::Mul,
            "<" => Op2::Lt,
            ">" => Op2::Gt,
            "<=" => Op2::Le,
            ">=" => Op2::Ge,
            "=" => Op2::Eq,
            _ => return None,
        })
    }
}

pub(crate) struct KeywordGet {
    /// The keyword, as a value so a lookup needs no clone.
    pub key: Value,
    pub target: Expr,
    pub default: Option<Expr>,
    pub span: Span,
    /// Where the key was found in the last small map looked up here: records of one data set
    /// share their key order, so this is usually a single comparison.
    pub hint: AtomicU8,
}

impl KeywordGet {
    pub fn new(key: Keyword, target: Expr, default: Option<Expr>, span: Span) -> KeywordGet {
        KeywordGet {
            key: Value::Keyword(key),
            target,
            default,
            span,
            hint: AtomicU8::new(0),
        }
    }
}

pub(crate) struct CallExpr {
    pub callee: Expr,
    pub args: Box<[Expr]>,
    pub span: Span,
}

pub(crate) struct DefExpr {
    pub slot: Slot,
    pub name: ArcStr,
    pub doc: Option<ArcStr>,
    /// Parameter vectors as written, for `defn`.
    pub params: Vec<String>,
    /// `None` for `(def x)` / `declare`: the name exists but is unbound.
    pub value: Option<Expr>,
    /// `defonce`: the value is evaluated and bound only while the name has none.
    pub once: bool,
}

pub(crate) enum CatchFilter {
    /// `Exception`, `Throwable`, `:default`: everything catchable.
    Any,
    /// `ExceptionInfo`: only `throw`n `ex-info` values.
    ExInfo,
    /// A specific error kind (`ArithmeticException` catches arithmetic errors, ...).
    Kinds(&'static [crate::error::ErrorKind]),
}

pub(crate) struct Catch {
    pub filter: CatchFilter,
    pub slot: Slot,
    pub body: Expr,
}

pub(crate) struct TryExpr {
    pub body: Expr,
    pub catches: Vec<Catch>,
    pub finally: Option<Expr>,
}

pub(crate) struct CaseExpr {
    pub subject: Expr,
    pub table: FxHashMap<Value, usize>,
    pub branches: Vec<Expr>,
    pub default: Option<Expr>,
    pub span: Span,
}

pub(crate) enum ForClause {
    /// Bind `slot` to each item of `coll`, then run `destructure`.
    Each {
        slot: Slot,
        coll: Expr,
        destructure: Box<[(Slot, Expr)]>,
    },
    Let(Box<[(Slot, Expr)]>),
    When(Expr),
    While(Expr),
}

pub(crate) struct ForExpr {
    pub clauses: Vec<ForClause>,
    pub body: Expr,
    /// `for` collects the body values into a list; `doseq` discards them.
    pub collect: bool,
}

impl ForExpr {
    /// Whether an unbounded first sequence can be consumed item by item: not when a `:while`
    /// belongs to the first binding, since that can end the sequence.
    pub fn lazy_over_first(&self) -> bool {
        !self
            .clauses
            .iter()
            .skip(1)
            .take_while(|c| !matches!(c, ForClause::Each { .. }))
            .any(|c| matches!(c, ForClause::While(_)))
    }
}

pub(crate) struct LetfnExpr {
    pub slots: Box<[Slot]>,
    pub lambdas: Arc<[Arc<Lambda>]>,
    /// Values every member of the group captures (one shared list).
    pub captures: Box<[CaptureFrom]>,
    pub body: Expr,
}

/// Where a closure takes a captured value from, in the frame that creates it.
#[derive(Clone, Copy)]
pub(crate) enum CaptureFrom {
    Local(Slot),
    Capture(u32),
    /// The closure that is creating the new one (a named fn's own name).
    SelfFn,
    /// A sibling of the letfn group the creating closure belongs to.
    LetfnSibling(u32),
}

pub(crate) struct ArityBody {
    /// Number of fixed parameters.
    pub fixed: usize,
    /// Whether a `& rest` parameter follows (bound to the remaining arguments, or nil).
    pub variadic: bool,
    /// Whether the fixed parameters are read from the caller's arguments ([`ARG_SLOT`]) rather
    /// than copied into the frame.
    pub args_in_place: bool,
    pub frame_size: u32,
    pub body: Expr,
    /// The parameter vector as written (`[x & more]`).
    pub params_text: String,
}

pub(crate) struct Lambda {
    pub name: Option<ArcStr>,
    pub arities: Vec<ArityBody>,
    pub captures: Box<[CaptureFrom]>,
    /// Shape of the most recent return value, packed by `pack_shape` (in `function.rs`)
    /// (0 = never returned). Read when the user namespace is summarized.
    pub last_return: AtomicU64,
}

/// A function body is nested without `Deep` marks up to where it starts (see the analyzer), so
/// dropping one continues where the stack can grow.
impl Drop for Lambda {
    fn drop(&mut self) {
        let arities = std::mem::take(&mut self.arities);
        crate::stack::with_stack_room(move || drop(arities));
    }
}

impl Lambda {
    pub fn arity_for(&self, argc: usize) -> Option<&ArityBody> {
        self.arities
            .iter()
            .find(|a| !a.variadic && a.fixed == argc)
            .or_else(|| self.arities.iter().find(|a| a.variadic && argc >= a.fixed))
    }

    pub fn describe_arities(&self) -> String {
        self.arities
            .iter()
            .map(|a| a.params_text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

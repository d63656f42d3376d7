//! Function values of a running program: builtins, closures and functions made by builtins.
//!
//! The value layer holds every function as an opaque [`Function`] handle; this module defines
//! what is behind the handle ([`FnRepr`]) and how the layers above get it back
//! ([`Function::repr`]).

use super::Lambda;
use crate::runtime::{Builtin, Ctx, EvalResult};
use crate::value::{FnBody, Function, Value, ValueShape, meter};
use arcstr::ArcStr;
use std::sync::Arc;
use std::sync::atomic::Ordering as AtomicOrdering;

/// What is behind a [`Function`] handle.
pub(crate) enum FnRepr {
    /// A function from the builtin registry.
    Builtin(&'static Builtin),
    /// A `fn`/`defn` closure.
    Closure(Closure),
    /// A function built by a builtin (`comp`, `partial`, `memoize`, ...) or a host tool.
    Native(NativeFn),
    /// A function read back from its printed form (`#fn[...]`): it can be shown, not called.
    ReadBack,
}

/// What [`Function::repr`] gives for a function read back from its printed form.
static READ_BACK: FnRepr = FnRepr::ReadBack;

impl FnBody for FnRepr {
    fn name(&self) -> &str {
        match self {
            FnRepr::Builtin(b) => b.name,
            FnRepr::Closure(c) => c.name().unwrap_or("fn"),
            FnRepr::Native(n) => &n.name,
            FnRepr::ReadBack => "fn",
        }
    }
}

impl Function {
    /// What the function is, to call it.
    #[inline(always)]
    pub(crate) fn repr(&self) -> &FnRepr {
        self.body::<FnRepr>().unwrap_or(&READ_BACK)
    }

    /// The function value of a builtin.
    pub(crate) fn builtin(b: &'static Builtin) -> Function {
        Function::new(FnRepr::Builtin(b), 0)
    }

    /// A closure of `lambda` over `captures`, in the `letfn` group `group` if any, holding values
    /// nested `depth` deep (see [`captured_depth`]).
    pub(crate) fn closure(
        lambda: Arc<Lambda>,
        captures: Arc<[Value]>,
        group: Option<Arc<[Arc<Lambda>]>>,
        depth: u32,
    ) -> Function {
        Function::new(
            FnRepr::Closure(Closure {
                lambda,
                captures,
                group,
                own: meter::own(CLOSURE_SLOTS),
            }),
            depth,
        )
    }

    /// A function value implemented in Rust that holds no values.
    pub(crate) fn native(
        name: &str,
        f: impl Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync + 'static,
    ) -> Function {
        Function::new(
            FnRepr::Native(NativeFn {
                name: ArcStr::from(name),
                f: Box::new(f),
            }),
            0,
        )
    }

    /// A function value implemented in Rust whose body holds the `captured` values, e.g. the
    /// result of `(partial f 1)` holds `f` and `1`. Naming them lets the evaluator bound how
    /// deeply functions nest inside functions, as it does for collections.
    pub(crate) fn native_capturing<'a>(
        name: &str,
        captured: impl IntoIterator<Item = &'a Value>,
        f: impl Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync + 'static,
    ) -> Function {
        Function::new(
            FnRepr::Native(NativeFn {
                name: ArcStr::from(name),
                f: Box::new(f),
            }),
            captured_depth(captured),
        )
    }
}

/// A `fn`/`defn` closure: its code and the values it captured.
pub(crate) struct Closure {
    pub(crate) lambda: Arc<Lambda>,
    pub(crate) captures: Arc<[Value]>,
    /// The `letfn` group the closure belongs to, so it can reach its siblings.
    pub(crate) group: Option<Arc<[Arc<Lambda>]>>,
    /// Slots charged to the memory budget of a run for the closure's own allocation (its `Arc`
    /// and the array of its captures), given back when it is dropped: a program keeping many
    /// closures pays for them, a loop making one closure per step does not pay for each.
    pub(crate) own: u32,
}

/// Slots a closure's own allocations are charged as: its shared cell, its representation and
/// the header of its captures. A fixed number, so that what a program is charged does not
/// depend on how these types happen to be laid out.
const CLOSURE_SLOTS: usize = 6;

impl Drop for Closure {
    fn drop(&mut self) {
        if self.own > 0 {
            meter::note_free(self.own as usize);
        }
        // Captured values may hold closures holding closures ...: drop them where the stack
        // can grow.
        let captures = std::mem::replace(&mut self.captures, no_captures().clone());
        crate::stack::with_stack_room(move || drop(captures));
    }
}

/// The captures of code outside any closure: one shared empty array.
pub(crate) fn no_captures() -> &'static Arc<[Value]> {
    static NO_CAPTURES: std::sync::OnceLock<Arc<[Value]>> = std::sync::OnceLock::new();
    NO_CAPTURES.get_or_init(|| Arc::from(Vec::new()))
}

/// The nesting depth of a function holding `captured` values: closures that capture closures
/// nest like collections do.
pub(crate) fn captured_depth<'a>(captured: impl IntoIterator<Item = &'a Value>) -> u32 {
    1 + captured.into_iter().map(Value::depth).max().unwrap_or(0)
}

impl Closure {
    /// The `defn` or `fn` name, if the closure has one.
    pub(crate) fn name(&self) -> Option<&str> {
        self.lambda.name.as_deref()
    }

    /// Each arity's parameter vector as written (`["[x]", "[x y]"]`).
    pub(crate) fn params(&self) -> Vec<String> {
        self.lambda
            .arities
            .iter()
            .map(|a| a.params_text.clone())
            .collect()
    }

    /// The shape of the value this closure most recently returned.
    pub(crate) fn last_return(&self) -> Option<ValueShape> {
        unpack_shape(self.lambda.last_return.load(AtomicOrdering::Relaxed))
    }

    /// Remember the shape of what one of the closure's arities just returned.
    pub(crate) fn note_return(&self, value: &Value) {
        self.lambda
            .last_return
            .store(pack_shape(ValueShape::of(value)), AtomicOrdering::Relaxed);
    }
}

/// The body of a function made by a builtin (`comp`, `partial`, ...).
pub(crate) type NativeBody = dyn Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync;

/// A function made by a builtin or standing for a host tool.
pub(crate) struct NativeFn {
    pub(crate) name: ArcStr,
    pub(crate) f: Box<NativeBody>,
}

impl Drop for NativeFn {
    fn drop(&mut self) {
        // The body may hold functions holding functions ... (a memoization cache, a `comp`
        // chain): drop it where the stack can grow.
        let body = std::mem::replace(
            &mut self.f,
            Box::new(|_: &mut Ctx, _: &[Value]| Ok(Value::Nil)),
        );
        crate::stack::with_stack_room(move || drop(body));
    }
}

/// Pack a shape into a word for an atomic store (0 means "none").
fn pack_shape(shape: ValueShape) -> u64 {
    let (tag, len): (u64, usize) = match shape {
        ValueShape::Nil => (1, 0),
        ValueShape::Boolean => (2, 0),
        ValueShape::Integer => (3, 0),
        ValueShape::Float => (4, 0),
        ValueShape::String => (5, 0),
        ValueShape::Char => (6, 0),
        ValueShape::Keyword => (7, 0),
        ValueShape::Symbol => (8, 0),
        ValueShape::List(n) => (9, n),
        ValueShape::Map(n) => (10, n),
        ValueShape::Set(n) => (11, n),
        ValueShape::Function => (12, 0),
        ValueShape::Regex => (13, 0),
        ValueShape::Var => (14, 0),
        ValueShape::LazySeq => (15, 0),
        ValueShape::Date => (16, 0),
        ValueShape::Ratio => (17, 0),
        ValueShape::Decimal => (18, 0),
        ValueShape::Uuid => (19, 0),
        ValueShape::TaggedLiteral => (20, 0),
    };
    (tag << 56) | (len as u64 & ((1 << 56) - 1))
}

fn unpack_shape(word: u64) -> Option<ValueShape> {
    let len = (word & ((1 << 56) - 1)) as usize;
    Some(match word >> 56 {
        1 => ValueShape::Nil,
        2 => ValueShape::Boolean,
        3 => ValueShape::Integer,
        4 => ValueShape::Float,
        5 => ValueShape::String,
        6 => ValueShape::Char,
        7 => ValueShape::Keyword,
        8 => ValueShape::Symbol,
        9 => ValueShape::List(len),
        10 => ValueShape::Map(len),
        11 => ValueShape::Set(len),
        12 => ValueShape::Function,
        13 => ValueShape::Regex,
        14 => ValueShape::Var,
        15 => ValueShape::LazySeq,
        16 => ValueShape::Date,
        17 => ValueShape::Ratio,
        18 => ValueShape::Decimal,
        19 => ValueShape::Uuid,
        20 => ValueShape::TaggedLiteral,
        _ => return None,
    })
}

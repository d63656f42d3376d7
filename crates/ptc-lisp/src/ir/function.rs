//! Function values of a running program: builtins, closures and functions made by builtins.
//!
//! The value layer holds every function as an opaque [`Function`] handle; this module defines
//! what is behind the handle ([`FnRepr`]) and how the layers above get it back
//! ([`Function::repr`]).

use super::Lambda;
use crate::context::{Builtin, Ctx, EvalResult};
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
        Function::native_at_depth(name, f, 0)
    }

    /// A function value implemented in Rust whose body holds the `captured` values, e.g. the
    /// result of `(partial f 1)` holds `f` and `1`. Naming them lets the evaluator bound how
    /// deeply functions nest inside functions, as it does for collections.
    pub(crate) fn native_capturing<'a>(
        name: &str,
        captured: impl IntoIterator<Item = &'a Value>,
        f: impl Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync + 'static,
    ) -> Function {
        Function::native_at_depth(name, f, captured_depth(captured))
    }

    fn native_at_depth(
        name: &str,
        f: impl Fn(&mut Ctx, &[Value]) -> EvalResult + Send + Sync + 'static,
        depth: u32,
    ) -> Function {
        Function::new(
            FnRepr::Native(NativeFn {
                name: ArcStr::from(name),
                f: Box::new(f),
            }),
            depth,
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

/// The bits of a packed shape that hold a collection's length; the tag is above them.
const LEN_MASK: u64 = (1 << 56) - 1;

/// A shape's length in `shape_tags!`: the bound name, or 0 for a shape without one.
macro_rules! length_or_zero {
    () => {
        0
    };
    ($len:ident) => {
        $len
    };
}

/// `pack_shape` and `unpack_shape` from one table of tags (0 is left for "none"), so that
/// packing and unpacking cannot disagree.
macro_rules! shape_tags {
    ($($tag:literal: $shape:ident $(($len:ident))?,)*) => {
        /// Pack a shape into a word for an atomic store (0 means "none").
        fn pack_shape(shape: ValueShape) -> u64 {
            let (tag, len): (u64, usize) = match shape {
                $(ValueShape::$shape $(($len))? => ($tag, length_or_zero!($($len)?)),)*
            };
            (tag << 56) | (len as u64 & LEN_MASK)
        }

        fn unpack_shape(word: u64) -> Option<ValueShape> {
            let len = (word & LEN_MASK) as usize;
            Some(match word >> 56 {
                $($tag => ValueShape::$shape $(({ let $len = len; $len }))?,)*
                _ => return None,
            })
        }
    };
}

shape_tags! {
    1: Nil,
    2: Boolean,
    3: Integer,
    4: Float,
    5: String,
    6: Char,
    7: Keyword,
    8: Symbol,
    9: List(n),
    10: Map(n),
    11: Set(n),
    12: Function,
    13: Regex,
    14: Var,
    15: LazySeq,
    16: Date,
    17: Ratio,
    18: Decimal,
    19: Uuid,
    20: TaggedLiteral,
}

#[cfg(test)]
mod tests {
    use super::{pack_shape, unpack_shape};
    use crate::value::ValueShape::{self, *};

    #[test]
    fn every_shape_unpacks_to_what_was_packed() {
        let shapes: [ValueShape; 22] = [
            Nil,
            Boolean,
            Integer,
            Float,
            String,
            Char,
            Keyword,
            Symbol,
            List(0),
            List(12),
            Map(3),
            Set(1),
            Function,
            Regex,
            Var,
            LazySeq,
            Date,
            Ratio,
            Decimal,
            Uuid,
            TaggedLiteral,
            Map(1 << 40),
        ];
        for shape in shapes {
            assert_eq!(unpack_shape(pack_shape(shape)), Some(shape));
        }
        assert_eq!(unpack_shape(0), None, "no return yet");
    }
}

//! Typed arguments: how a builtin's implementation receives its arguments.
//!
//! An implementation declares its parameters as the type of its last argument, one parameter
//! type or a tuple of them, and receives the values already converted:
//!
//! ```text
//! fn nth(ctx: &mut Ctx, call: Call, (coll, index, not_found): (&Value, i64, Option<&Value>))
//! ```
//!
//! Each parameter is required (any [`Arg`]: `&Value`, `i64`, `&str`, [`Callable`],
//! [`Seqable`], or a family's own type), optional (`Option<T>`) or the rest of the arguments
//! (`&[Value]`). Optional parameters are filled from the left with the arguments left over once
//! every required one has its own, and the rest parameter takes what remains, wherever it
//! stands: `(Callable, Option<&Value>, Seqable)` reads `(reduce f coll)` and
//! `(reduce f init coll)`, `(Callable, &[Value], &Value)` reads `(apply f a b coll)`.
//!
//! The registry entry derives the arity from these types, checks the argument count, counts
//! the call as one step, and converts the arguments from left to right; a conversion that fails
//! is an error naming the builtin (`first expects a collection, got integer 5`). [`Call`] gives
//! the implementation its own name for the errors it raises itself. After inlining, reading a
//! declared parameter costs what indexing the argument slice did: the count check bounds every
//! position.

use super::{Builtin, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EvalResult, Items, unbounded_error};
use crate::value::Value;
use std::fmt;

/// 2^63: Java's long range is [-2^63, 2^63).
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// The builtin being called, for the messages of the errors it raises.
#[derive(Clone, Copy)]
pub(crate) struct Call(&'static Builtin);

impl Call {
    /// `{name} expects {what}, got {value}`: a type error about one argument.
    #[cold]
    pub(crate) fn expected(self, what: &str, value: &Value) -> Error {
        Error::type_error(format!("{self} expects {what}, got {}", got(value)))
    }

    /// [`Call::expected`] followed by `hint` (which starts with its own separator).
    #[cold]
    pub(crate) fn expected_with(self, what: &str, value: &Value, hint: &str) -> Error {
        Error::type_error(format!("{self} expects {what}, got {}{hint}", got(value)))
    }

    /// [`Call::expected`] as an argument error: the value's type is one the function takes in
    /// general, but not here (Clojure throws `IllegalArgumentException`).
    #[cold]
    pub(crate) fn expected_argument(self, what: &str, value: &Value) -> Error {
        Error::argument(format!("{self} expects {what}, got {}", got(value)))
    }

    /// `{name}: {message}`.
    #[cold]
    pub(crate) fn error(self, kind: ErrorKind, message: impl fmt::Display) -> Error {
        Error::new(kind, format!("{self}: {message}"))
    }

    /// `value` read as an argument of type `T`, for an argument checked only once the body
    /// knows it matters (declared as `&Value`).
    #[inline(always)]
    pub(crate) fn arg<'a, T: Arg<'a>>(self, value: &'a Value) -> Result<T> {
        T::from_arg(self, value)
    }

    /// The items of `value`, which must be a collection (see [`Seqable`]).
    #[inline]
    pub(crate) fn items<'a>(self, value: &'a Value) -> Result<Items<'a>> {
        self.arg::<Seqable>(value)?.items()
    }

    /// Every item of `value`, which must be a finite collection.
    pub(crate) fn collect(self, ctx: &mut Ctx, value: &Value) -> EvalResult<Vec<Value>> {
        self.arg::<Seqable>(value)?;
        if value.is_unbounded() {
            return Err(self.unbounded(value).into());
        }
        Items::collect_all(value, ctx, self.0.name)
    }

    /// The error for realizing all of the unbounded sequence `value`.
    #[cold]
    pub(crate) fn unbounded(self, value: &Value) -> Error {
        unbounded_error(&self.to_string(), value)
    }

    /// The registry name (`clojure.string/join`), for names that are not messages.
    pub(crate) fn name(self) -> &'static str {
        self.0.name
    }

    #[cold]
    fn arity_error(self, argc: usize) -> Error {
        self.0.arity_error(argc)
    }
}

/// The name as messages show it: `clojure.string/` and `clojure.set/` are written `str/` and
/// `set/`, as programs write them.
impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.0.name;
        if let Some(local) = name.strip_prefix("clojure.string/") {
            write!(f, "str/{local}")
        } else if let Some(local) = name.strip_prefix("clojure.set/") {
            write!(f, "set/{local}")
        } else {
            f.write_str(name)
        }
    }
}

/// A value an argument is converted to.
pub(crate) trait Arg<'a>: Sized {
    fn from_arg(call: Call, value: &'a Value) -> Result<Self>;
}

impl<'a> Arg<'a> for &'a Value {
    #[inline(always)]
    fn from_arg(_: Call, value: &'a Value) -> Result<Self> {
        Ok(value)
    }
}

/// An integer; a float without a fractional part (below 2^53 in size) is accepted too.
impl Arg<'_> for i64 {
    #[inline(always)]
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Int(i) => Ok(*i),
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(*f as i64),
            other => Err(call.expected("an integer", other)),
        }
    }
}

/// A count or an index as Clojure casts one to a Java `long` (`RT.longCast`): an integer, or
/// any other number truncated toward zero (`(nth v 3/2)` is `(nth v 1)`; NaN is 0). A number
/// outside the 64-bit range is an error, as in Clojure.
#[derive(Clone, Copy)]
pub(crate) struct Truncated(pub i64);

impl Arg<'_> for Truncated {
    #[inline(always)]
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Int(i) => Ok(Truncated(*i)),
            other => truncated(call, other).map(Truncated),
        }
    }
}

#[cold]
fn truncated(call: Call, value: &Value) -> Result<i64> {
    use crate::value::BigKind;
    use num_traits::ToPrimitive;
    let out_of_range = || {
        Error::argument(format!(
            "{call} needs a count or index within 64 bits, got {}; use a smaller number",
            got(value)
        ))
    };
    match value {
        Value::Float(f) if f.is_nan() => Ok(0),
        // Java's long range is [-2^63, 2^63): 2^63 itself is out.
        Value::Float(f) if *f >= -TWO_POW_63 && *f < TWO_POW_63 => Ok(*f as i64),
        Value::Float(_) => Err(out_of_range()),
        Value::Big(b) => match b.kind() {
            BigKind::Int(i) => i.to_i64().ok_or_else(out_of_range),
            BigKind::Ratio(r) => r.to_integer().to_i64().ok_or_else(out_of_range),
            BigKind::Decimal(_) => truncated(call, &Value::Float(b.to_f64())),
        },
        other => Err(call.expected("an integer", other)),
    }
}

/// A count as Clojure's `take`, `drop`, `nthrest` and their kin use one: they count down by one
/// while the count is positive, so any number works and a fractional one counts as the next
/// integer (`(take 2.5 xs)` takes 3, `(take 1/2 xs)` takes 1); zero, a negative count and NaN
/// take nothing, and a count beyond 64 bits (or infinite) takes everything.
#[derive(Clone, Copy)]
pub(crate) struct CountDown(pub i64);

impl Arg<'_> for CountDown {
    #[inline(always)]
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Int(i) => Ok(CountDown(*i)),
            other => count_down(call, other).map(CountDown),
        }
    }
}

#[cold]
fn count_down(call: Call, value: &Value) -> Result<i64> {
    use num_traits::{Signed, ToPrimitive};
    match value {
        Value::Float(f) if f.is_nan() || *f <= 0.0 => Ok(0),
        // Saturating: a count of 2^63 or more is as good as endless.
        Value::Float(f) => Ok(f.ceil() as i64),
        Value::Big(b) => {
            let exact = b.to_rational();
            if !exact.is_positive() {
                return Ok(0);
            }
            Ok(exact.ceil().to_integer().to_i64().unwrap_or(i64::MAX))
        }
        other => Err(call.expected("a number (a count)", other)),
    }
}

impl<'a> Arg<'a> for &'a str {
    #[inline(always)]
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Str(s) => Ok(s),
            other => Err(call.expected("a string", other)),
        }
    }
}

/// Declare a string parameter type whose error says what the string is for:
/// `string_arg!(Needle, "a string to look for")`.
macro_rules! string_arg {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        struct $name<'a>(&'a str);

        impl<'a> $crate::builtins::args::Arg<'a> for $name<'a> {
            fn from_arg(
                call: $crate::builtins::args::Call,
                value: &'a $crate::value::Value,
            ) -> $crate::error::Result<Self> {
                match value {
                    $crate::value::Value::Str(s) => Ok($name(s)),
                    other => Err(call.expected($what, other)),
                }
            }
        }
    };
}
pub(crate) use string_arg;

/// A value that can be called: a function, or a keyword, symbol, map, set, vector or var used
/// as one.
pub(crate) struct Callable<'a>(&'a Value);

impl<'a> Arg<'a> for Callable<'a> {
    #[inline(always)]
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Fn(_)
            | Value::Keyword(_)
            | Value::Symbol(_)
            | Value::Map(_)
            | Value::Set(_)
            | Value::Vector(_)
            | Value::Var(_) => Ok(Callable(value)),
            other => Err(call.expected("a function", other)),
        }
    }
}

impl std::ops::Deref for Callable<'_> {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.0
    }
}

/// A value whose items can be walked: nil, a collection, a string or a lazy sequence.
pub(crate) struct Seqable<'a>(&'a Value);

impl<'a> Arg<'a> for Seqable<'a> {
    #[inline(always)]
    fn from_arg(call: Call, value: &'a Value) -> Result<Self> {
        match value {
            Value::Nil
            | Value::List(_)
            | Value::Vector(_)
            | Value::Map(_)
            | Value::Set(_)
            | Value::Str(_)
            | Value::Lazy(_) => Ok(Seqable(value)),
            other => Err(call.expected("a collection", other)),
        }
    }
}

impl<'a> Seqable<'a> {
    /// Its items, one at a time.
    pub(crate) fn items(&self) -> Result<Items<'a>> {
        Items::new(self.0)
    }

    /// The value itself, borrowed for as long as the argument.
    pub(crate) fn value(&self) -> &'a Value {
        self.0
    }
}

impl std::ops::Deref for Seqable<'_> {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.0
    }
}

/// How a parameter takes its arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Required,
    Optional,
    /// All the arguments left, at least `min` of them.
    Rest {
        min: u8,
    },
}

/// Where the next parameter's argument is, and how many arguments the optional and rest
/// parameters still share.
pub(crate) struct Cursor {
    next: usize,
    spare: usize,
}

/// One declared parameter: a required [`Arg`], an optional one (`Option<T>`), or the rest of
/// the arguments (`&[Value]`).
pub(crate) trait Param<'a>: Sized {
    const KIND: Kind;

    fn take(call: Call, args: &'a [Value], cursor: &mut Cursor) -> Result<Self>;
}

impl<'a, T: Arg<'a>> Param<'a> for T {
    const KIND: Kind = Kind::Required;

    #[inline(always)]
    fn take(call: Call, args: &'a [Value], cursor: &mut Cursor) -> Result<Self> {
        let value = args
            .get(cursor.next)
            .ok_or_else(|| call.arity_error(args.len()))?;
        cursor.next += 1;
        T::from_arg(call, value)
    }
}

impl<'a, T: Arg<'a>> Param<'a> for Option<T> {
    const KIND: Kind = Kind::Optional;

    #[inline(always)]
    fn take(call: Call, args: &'a [Value], cursor: &mut Cursor) -> Result<Self> {
        if cursor.spare == 0 {
            return Ok(None);
        }
        cursor.spare -= 1;
        T::take(call, args, cursor).map(Some)
    }
}

/// The arguments from `cursor` on that no later parameter needs: `min` of them, and all the
/// spare ones.
#[inline(always)]
fn take_rest<'a>(args: &'a [Value], cursor: &mut Cursor, min: u8) -> &'a [Value] {
    let start = cursor.next.min(args.len());
    let end = (start + min as usize + cursor.spare).min(args.len());
    cursor.next = end;
    cursor.spare = 0;
    &args[start..end]
}

impl<'a> Param<'a> for &'a [Value] {
    const KIND: Kind = Kind::Rest { min: 0 };

    #[inline(always)]
    fn take(_: Call, args: &'a [Value], cursor: &mut Cursor) -> Result<Self> {
        Ok(take_rest(args, cursor, 0))
    }
}

/// The rest of the arguments when there is at least one (`(mapv f coll & colls)`).
pub(crate) struct AtLeastOne<'a> {
    first: &'a Value,
    all: &'a [Value],
}

impl<'a> AtLeastOne<'a> {
    pub(crate) fn first(&self) -> &'a Value {
        self.first
    }
}

impl<'a> Param<'a> for AtLeastOne<'a> {
    const KIND: Kind = Kind::Rest { min: 1 };

    #[inline(always)]
    fn take(call: Call, args: &'a [Value], cursor: &mut Cursor) -> Result<Self> {
        let all = take_rest(args, cursor, 1);
        let first = all.first().ok_or_else(|| call.arity_error(args.len()))?;
        Ok(AtLeastOne { first, all })
    }
}

impl std::ops::Deref for AtLeastOne<'_> {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        self.all
    }
}

/// The parameter list of an implementation: one [`Param`] or a tuple of them.
pub(crate) trait Params<'a>: Sized {
    /// How many arguments the call needs at least, and at most (`None`: any number more).
    const ARITY: (u8, Option<u8>);

    /// Read the parameters from `args`, whose count is within [`Params::ARITY`].
    fn take_all(call: Call, args: &'a [Value]) -> Result<Self>;
}

/// The arity of a parameter list of these kinds; a compile-time error for a list whose
/// optional or rest parameters could never receive an argument.
const fn arity_of(kinds: &[Kind]) -> (u8, Option<u8>) {
    let mut required = 0u8;
    let mut rest = false;
    let mut i = 0;
    while i < kinds.len() {
        match kinds[i] {
            Kind::Required => required += 1,
            Kind::Optional => assert!(
                !rest,
                "an optional parameter after the rest is never filled"
            ),
            Kind::Rest { min } => {
                assert!(!rest, "a parameter list has one rest parameter at most");
                rest = true;
                required += min;
            }
        }
        i += 1;
    }
    (required, if rest { None } else { Some(kinds.len() as u8) })
}

impl<'a, T: Param<'a>> Params<'a> for T {
    const ARITY: (u8, Option<u8>) = arity_of(&[T::KIND]);

    #[inline(always)]
    fn take_all(call: Call, args: &'a [Value]) -> Result<Self> {
        let mut cursor = Cursor {
            next: 0,
            spare: args.len().saturating_sub(Self::ARITY.0 as usize),
        };
        T::take(call, args, &mut cursor)
    }
}

macro_rules! tuple_params {
    ($($p:ident),+) => {
        impl<'a, $($p: Param<'a>),+> Params<'a> for ($($p,)+) {
            const ARITY: (u8, Option<u8>) = arity_of(&[$($p::KIND),+]);

            #[inline(always)]
            fn take_all(call: Call, args: &'a [Value]) -> Result<Self> {
                let mut cursor = Cursor {
                    next: 0,
                    spare: args.len().saturating_sub(Self::ARITY.0 as usize),
                };
                Ok(($($p::take(call, args, &mut cursor)?,)+))
            }
        }
    };
}

/// No parameters: a builtin called with no arguments (`(newline)`).
impl Params<'_> for () {
    const ARITY: (u8, Option<u8>) = (0, Some(0));

    #[inline(always)]
    fn take_all(_: Call, _: &[Value]) -> Result<Self> {
        Ok(())
    }
}

tuple_params!(A, B);
tuple_params!(A, B, C);
tuple_params!(A, B, C, D);

/// An implementation of a builtin taking the parameters `P`.
pub(crate) type Implementation<P> = fn(&mut Ctx, Call, P) -> EvalResult;

/// The arity an implementation declares, for its registry entry.
pub(crate) const fn arity<'a, P: Params<'a>>(_: Implementation<P>) -> (u8, Option<u8>) {
    P::ARITY
}

/// Call `implementation` as the builtin `builtin` with `args`: check their count, count the
/// step, convert them, run it, and settle what it used. Each registry entry is this function
/// for its implementation.
#[inline(always)]
pub(crate) fn invoke<'a, P: Params<'a>>(
    ctx: &mut Ctx,
    builtin: &'static Builtin,
    args: &'a [Value],
    implementation: Implementation<P>,
) -> EvalResult {
    let call = Call(builtin);
    let (min, max) = P::ARITY;
    if args.len() < min as usize || max.is_some_and(|max| args.len() > max as usize) {
        return Err(call.arity_error(args.len()).into());
    }
    ctx.tick()?;
    let result = match P::take_all(call, args) {
        Ok(params) => implementation(ctx, call, params),
        Err(e) => Err(e.into()),
    };
    // A builtin that hashed, compared or printed past the walking budget got meaningless
    // answers from those walks: the run ends here, before they can matter. Copies it made of
    // shared collections are charged here too.
    ctx.settle_meter()?;
    let value = result?;
    ctx.check_depth(&value)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::builtin;
    use pretty_assertions::assert_eq;

    fn unused(_: &mut Ctx, _: Call, _: &Value) -> EvalResult {
        Ok(Value::Nil)
    }

    static EXAMPLE: Builtin =
        builtin!("clojure.string/example", unused, "(str/example x)", "", "" => "");

    fn call() -> Call {
        Call(&EXAMPLE)
    }

    fn ints(n: i64) -> Vec<Value> {
        (1..=n).map(Value::Int).collect()
    }

    /// The arguments each parameter of `P` receives from `args`, as integers.
    fn read<'a, P: Params<'a>>(args: &'a [Value]) -> P {
        match P::take_all(call(), args) {
            Ok(params) => params,
            Err(e) => panic!("{} arguments: {}", args.len(), e.message),
        }
    }

    fn int(v: &Value) -> i64 {
        v.as_int().unwrap_or(-1)
    }

    fn all(values: &[Value]) -> Vec<i64> {
        values.iter().map(int).collect()
    }

    #[test]
    fn arity_follows_from_the_parameter_kinds() {
        assert_eq!(<&Value as Params>::ARITY, (1, Some(1)));
        assert_eq!(<Option<i64> as Params>::ARITY, (0, Some(1)));
        assert_eq!(<&[Value] as Params>::ARITY, (0, None));
        assert_eq!(
            <(&Value, Option<&Value>, &Value) as Params>::ARITY,
            (2, Some(3))
        );
        assert_eq!(<(Callable, &[Value], &Value) as Params>::ARITY, (2, None));
        assert_eq!(<(&Value, AtLeastOne) as Params>::ARITY, (2, None));
        assert_eq!(
            <(i64, Option<&Value>, Option<&Value>, &Value) as Params>::ARITY,
            (2, Some(4))
        );
    }

    #[test]
    fn optional_parameters_fill_from_the_left() {
        let three = ints(3);
        let (a, b, c) = read::<(&Value, Option<&Value>, &Value)>(&three[..2]);
        assert_eq!((int(a), b.map(int), int(c)), (1, None, 2));
        let (a, b, c) = read::<(&Value, Option<&Value>, &Value)>(&three);
        assert_eq!((int(a), b.map(int), int(c)), (1, Some(2), 3));

        let four = ints(4);
        let (a, b, c, d) = read::<(i64, Option<i64>, Option<i64>, i64)>(&four[..3]);
        assert_eq!((a, b, c, d), (1, Some(2), None, 3));
    }

    #[test]
    fn the_rest_takes_what_the_others_leave_wherever_it_stands() {
        let five = ints(5);
        let (f, middle, last) = read::<(&Value, &[Value], &Value)>(&five);
        assert_eq!((int(f), all(middle), int(last)), (1, vec![2, 3, 4], 5));
        let (f, middle, last) = read::<(&Value, &[Value], &Value)>(&five[..2]);
        assert_eq!((int(f), all(middle), int(last)), (1, vec![], 2));

        let (first, rest) = read::<(Option<&Value>, &[Value])>(&five[..1]);
        assert_eq!((first.map(int), all(rest)), (Some(1), vec![]));
        let (first, rest) = read::<(Option<&Value>, &[Value])>(&[]);
        assert_eq!((first.map(int), all(rest)), (None, vec![]));

        let (f, colls) = read::<(&Value, AtLeastOne)>(&five[..3]);
        assert_eq!(
            (int(f), int(colls.first()), all(&colls)),
            (1, 2, vec![2, 3])
        );
    }

    #[test]
    fn a_conversion_that_fails_names_the_builtin_as_programs_write_it() {
        let args = [Value::string("x"), Value::Int(1)];
        let error = match <(&str, &str) as Params>::take_all(call(), &args) {
            Ok(_) => panic!("an integer is not a string"),
            Err(e) => e,
        };
        assert_eq!(error.kind, ErrorKind::Type);
        assert_eq!(error.message, "str/example expects a string, got integer 1");
        let error = call().arg::<Callable>(&Value::Nil).err().map(|e| e.message);
        assert_eq!(
            error.as_deref(),
            Some("str/example expects a function, got nil")
        );
        let error = call()
            .arg::<Seqable>(&Value::Bool(true))
            .err()
            .map(|e| e.message);
        assert_eq!(
            error.as_deref(),
            Some("str/example expects a collection, got boolean true")
        );
    }

    #[test]
    fn integers_may_be_written_as_whole_floats() {
        assert_eq!(call().arg::<i64>(&Value::Float(3.0)).ok(), Some(3));
        let error = call()
            .arg::<i64>(&Value::Float(3.5))
            .err()
            .map(|e| e.message);
        assert_eq!(
            error.as_deref(),
            Some("str/example expects an integer, got float 3.5")
        );
    }
}

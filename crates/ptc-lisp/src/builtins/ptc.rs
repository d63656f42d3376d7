//! PTC extensions: predicate builders and aggregations for records (maps) from tools and data.
//!
//! These are not Clojure; they exist because programs over JSON records filter and aggregate
//! by field all the time:
//!
//! - `(where :field op value)` builds a predicate, with `op` one of `= not= > < >= <= in
//!   includes` written bare (the analyzer quotes it). The field may be a key or a vector path
//!   (`(where [:user :role] = "admin")`); `(where :active)` tests truthiness. Numbers compare
//!   by value (`100` matches the JSON number `100.0`), and a keyword equals a string of its
//!   name (`(where :status = :active)` matches the JSON string `"active"`). Ordering comparisons are false, not
//!   errors, when the field is missing or of another type, so incomplete records are simply
//!   filtered out. Fields are found with the key leniency of
//!   `get`: `:price` also finds the JSON key `"price"` and the other way round.
//! - `all-of`, `any-of`, `none-of` combine predicates.
//! - `sum-by`, `avg-by`, `min-by`, `max-by`, `pluck` aggregate a field (a key, a vector path or
//!   any function) over a collection, skipping records where it is nil.
//! - `zip` pairs collections up by position and `entries` lists a map's `[key value]` pairs,
//!   as the original PTC-Lisp has them.

use super::args::{Call, Callable};
use super::build::list_of;
use super::number::{add, clojure_compare};
use super::{Builtin, builtin, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EvalResult, get_key, lookup, pr_str_short};
use crate::value::{Function, Value, compare_numbers};
use std::borrow::Cow;
use std::cmp::Ordering;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("where", where_fn, "(where field) (where field op value)", "A predicate on records: op is one of = not= > < >= <= in includes, field a key or a vector path; (where field) tests that the field is truthy. Numbers compare by value (100 matches 100.0) and a keyword equals the string of its name; missing fields never match an ordering test.", "(filter (where :price > 100) [{:price 50} {:price 150} {}])" => "({:price 150})"),
    builtin!("all-of", all_of, "(all-of & preds)", "A predicate that is true when every pred is truthy.", "(filter (all-of (where :a = 1) (where :b)) [{:a 1 :b true} {:a 1}])" => "({:a 1, :b true})"),
    builtin!("any-of", any_of, "(any-of & preds)", "A predicate that is true when some pred is truthy.", "(filter (any-of (where :a = 1) (where :b = 2)) [{:a 1} {:b 2} {:b 3}])" => "({:a 1} {:b 2})"),
    builtin!("none-of", none_of, "(none-of & preds)", "A predicate that is true when no pred is truthy.", "(filter (none-of (where :deleted)) [{:id 1 :deleted true} {:id 2}])" => "({:id 2})"),
    builtin!("sum-by", sum_by, "(sum-by field coll)", "The sum of the field (key, path or function) over the items, skipping nil; 0 for none.", "(sum-by :amount [{:amount 5} {:amount 7} {}])" => "12"),
    builtin!("avg-by", avg_by, "(avg-by field coll)", "The average of the field over the items that have it, as a float; nil for none.", "(avg-by :price [{:price 10} {:price 20}])" => "15.0"),
    builtin!("min-by", min_by, "(min-by field coll)", "The item with the least field value (the first on ties), skipping nil; nil for none.", "(min-by :price [{:id 1 :price 30} {:id 2 :price 10}])" => "{:id 2, :price 10}"),
    builtin!("max-by", max_by, "(max-by field coll)", "The item with the greatest field value (the first on ties), skipping nil; nil for none.", "(max-by :price [{:id 1 :price 30} {:id 2 :price 10}])" => "{:id 1, :price 30}"),
    builtin!("zip", zip, "(zip c1 c2 & colls)", "The items of the collections paired up by position, as [a b] vectors, as long as the shortest.", "(zip [1 2 3] [:a :b])" => "([1 :a] [2 :b])"),
    builtin!("entries", entries, "(entries m)", "The [key value] pairs of a map, as a list (empty for nil).", "(entries {:a 1 :b 2})" => "([:a 1] [:b 2])"),
    builtin!("pluck", pluck, "(pluck field coll)", "The field of each item, as a list (like (map field coll), also for string keys and paths).", "(pluck :name [{:name \"Ann\"} {\"name\" \"Bo\"}])" => "(\"Ann\" \"Bo\")"),
];

// ---------------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------------

/// How a record field is named: one key, a path of keys, or a function of the record.
#[derive(Clone)]
enum Field {
    Key(Value),
    Path(Vec<Value>),
    Fn(Value),
}

impl Field {
    fn parse(ctx: &mut Ctx, call: Call, v: &Value, allow_fn: bool) -> EvalResult<Field> {
        match v {
            Value::Keyword(_) | Value::Str(_) | Value::Int(_) => Ok(Field::Key(v.clone())),
            Value::Vector(_) | Value::List(_) => Ok(Field::Path(call.collect(ctx, v)?)),
            Value::Fn(_) | Value::Map(_) | Value::Set(_) if allow_fn => Ok(Field::Fn(v.clone())),
            other => Err(call
                .expected(
                    if allow_fn {
                        "a field: a keyword, a string key or a vector path (or a function)"
                    } else {
                        "a field: a keyword, a string key or a vector path"
                    },
                    other,
                )
                .into()),
        }
    }

    /// The field of `item`, nil when missing (keys found with JSON leniency); borrowed from
    /// the record where possible, since aggregations only read it.
    fn of<'v>(&self, ctx: &mut Ctx, item: &'v Value) -> EvalResult<Cow<'v, Value>> {
        const NIL: Cow<'static, Value> = Cow::Owned(Value::Nil);
        match self {
            Field::Key(k) => Ok(field_ref(item, k).unwrap_or(NIL)),
            Field::Path(path) => {
                let mut current = Cow::Borrowed(item);
                for k in path {
                    current = match current {
                        Cow::Borrowed(v) => match field_ref(v, k) {
                            Some(next) => next,
                            None => return Ok(NIL),
                        },
                        Cow::Owned(v) => match get_key(&v, k) {
                            Some(next) => Cow::Owned(next),
                            None => return Ok(NIL),
                        },
                    };
                }
                Ok(current)
            }
            Field::Fn(f) => Ok(Cow::Owned(ctx.apply1(f, item)?)),
        }
    }
}

/// `(get item key)` without copying the value out of a map or vector.
fn field_ref<'v>(item: &'v Value, key: &Value) -> Option<Cow<'v, Value>> {
    match item {
        Value::Map(m) => lookup(m, key).map(Cow::Borrowed),
        Value::Vector(items) => match key {
            Value::Int(i) => usize::try_from(*i)
                .ok()
                .and_then(|i| items.get(i))
                .map(Cow::Borrowed),
            _ => None,
        },
        other => get_key(other, key).map(Cow::Owned),
    }
}

// ---------------------------------------------------------------------------------------------
// where
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    NotEq,
    Gt,
    Lt,
    Ge,
    Le,
    In,
    Includes,
}

const OPS: &str = "= not= > < >= <= in includes";

fn op_named(text: &str) -> Option<Op> {
    Some(match text {
        "=" | "==" => Op::Eq,
        "not=" | "!=" => Op::NotEq,
        ">" => Op::Gt,
        "<" => Op::Lt,
        ">=" => Op::Ge,
        "<=" => Op::Le,
        "in" => Op::In,
        "includes" | "includes?" => Op::Includes,
        _ => return None,
    })
}

enum Test {
    Truthy,
    Op(Op, Value),
    /// Any other function, called as `(f field-value value)`.
    Call(Value, Value),
}

fn parse_test(call: Call, op: &Value, value: &Value) -> Result<Test> {
    let named = match op {
        Value::Symbol(s) => op_named(s.as_str()),
        Value::Keyword(k) => op_named(k.as_str()),
        Value::Str(s) => op_named(s),
        Value::Fn(f) => match op_named(f.name()) {
            Some(op) => Some(op),
            None => return Ok(Test::Call(op.clone(), value.clone())),
        },
        _ => None,
    };
    let Some(op) = named else {
        return Err(call.error(
            ErrorKind::Argument,
            format_args!(
                "unknown operator {}; use one of {OPS}, e.g. ({call} :price > 100)",
                pr_str_short(op)
            ),
        ));
    };
    if op == Op::In && !matches!(value, Value::List(_) | Value::Vector(_) | Value::Set(_)) {
        return Err(Error::type_error(format!(
            "({call} field in values) needs a vector or set of values, got {}",
            got(value)
        )));
    }
    Ok(Test::Op(op, value.clone()))
}

/// Equality for record fields: like `=`, except that numbers compare by value, so the JSON
/// number `100.0` matches `100`.
/// Equality of a field and a value in `where`: numbers by value, and a keyword matches a
/// string of its name (JSON data has no keywords: `(where :status = :active)` finds
/// `"active"`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            compare_numbers(a, b) == Some(Ordering::Equal)
        }
        (Value::Keyword(k), Value::Str(s)) | (Value::Str(s), Value::Keyword(k)) => {
            k.as_str() == s.as_str()
        }
        _ => a == b,
    }
}

fn member(coll: &Value, x: &Value) -> bool {
    match coll {
        Value::Set(s) => {
            s.contains(x)
                || (matches!(x, Value::Int(_) | Value::Float(_)) && s.iter().any(|y| same(x, y)))
        }
        Value::List(s) | Value::Vector(s) => s.iter().any(|y| same(x, y)),
        Value::Map(m) => m.contains_key(x),
        _ => false,
    }
}

fn ordered(a: &Value, b: &Value, accept: fn(Ordering) -> bool) -> bool {
    if a.is_nil() || b.is_nil() {
        return false;
    }
    clojure_compare(a, b).is_ok_and(accept)
}

fn check(op: Op, field: &Value, value: &Value) -> bool {
    match op {
        Op::Eq => same(field, value),
        Op::NotEq => !same(field, value),
        Op::Gt => ordered(field, value, |o| o == Ordering::Greater),
        Op::Lt => ordered(field, value, |o| o == Ordering::Less),
        Op::Ge => ordered(field, value, |o| o != Ordering::Less),
        Op::Le => ordered(field, value, |o| o != Ordering::Greater),
        Op::In => member(value, field),
        Op::Includes => match (field, value) {
            (Value::Str(s), Value::Str(part)) => s.contains(part.as_str()),
            (Value::Str(s), Value::Char(c)) => s.contains(*c),
            (Value::Str(_), _) => false,
            (coll, x) => member(coll, x),
        },
    }
}

/// `(where field)` or `(where field op value)`.
fn where_fn(
    ctx: &mut Ctx,
    call: Call,
    (field, op, value): (&Value, Option<&Value>, Option<&Value>),
) -> EvalResult {
    let field = Field::parse(ctx, call, field, false)?;
    let test = match (op, value) {
        (Some(op), Some(value)) => parse_test(call, op, value)?,
        (None, _) => Test::Truthy,
        (Some(_), None) => {
            return Err(Error::arity(format!(
                "{call} takes a field, or a field, an operator and a value: ({call} :status = \
                 \"active\"); operators: {OPS}"
            ))
            .into());
        }
    };
    Ok(Value::Fn(Function::native(
        call.name(),
        move |ctx, args| {
            let [item] = args else {
                return Err(Error::arity(format!(
                    "a {call} predicate takes one record, got {} arguments",
                    args.len()
                ))
                .into());
            };
            let v = field.of(ctx, item)?;
            Ok(Value::Bool(match &test {
                Test::Truthy => v.truthy(),
                Test::Op(op, value) => check(*op, &v, value),
                Test::Call(f, value) => ctx.apply(f, &[v.into_owned(), value.clone()])?.truthy(),
            }))
        },
    )))
}

// ---------------------------------------------------------------------------------------------
// Combinators
// ---------------------------------------------------------------------------------------------

/// A predicate over `args`: the first pred whose truthiness is `stop_on` decides the result,
/// `stopped`; when none does, the result is the opposite.
fn combine(call: Call, preds: &[Value], stop_on: bool, stopped: bool) -> EvalResult {
    for p in preds {
        call.arg::<Callable>(p)?;
    }
    let preds = preds.to_vec();
    Ok(Value::Fn(Function::native(
        call.name(),
        move |ctx, args| {
            for p in &preds {
                if ctx.apply(p, args)?.truthy() == stop_on {
                    return Ok(Value::Bool(stopped));
                }
            }
            Ok(Value::Bool(!stopped))
        },
    )))
}

fn all_of(_: &mut Ctx, call: Call, preds: &[Value]) -> EvalResult {
    combine(call, preds, false, false)
}

fn any_of(_: &mut Ctx, call: Call, preds: &[Value]) -> EvalResult {
    combine(call, preds, true, true)
}

fn none_of(_: &mut Ctx, call: Call, preds: &[Value]) -> EvalResult {
    combine(call, preds, true, false)
}

// ---------------------------------------------------------------------------------------------
// Aggregations
// ---------------------------------------------------------------------------------------------

/// Calls `each(field value, item)` for every item whose field is not nil.
fn for_each_field(
    ctx: &mut Ctx,
    call: Call,
    (field, coll): (&Value, &Value),
    mut each: impl FnMut(&mut Ctx, &Value, &Value) -> EvalResult<()>,
) -> EvalResult<()> {
    let field = Field::parse(ctx, call, field, true)?;
    let mut items = call.items(coll)?;
    if items.is_unbounded() {
        return Err(call.unbounded(coll).into());
    }
    while let Some(item) = items.next(ctx)? {
        let v = field.of(ctx, item.as_ref())?;
        if !v.is_nil() {
            each(ctx, &v, item.as_ref())?;
        }
    }
    Ok(())
}

fn expect_number(call: Call, v: &Value, item: &Value) -> Result<()> {
    match v {
        Value::Int(_) | Value::Float(_) => Ok(()),
        other => Err(Error::type_error(format!(
            "{call} adds numbers, but the field is {} in {}",
            got(other),
            pr_str_short(item)
        ))),
    }
}

fn sum_by(ctx: &mut Ctx, call: Call, args: (&Value, &Value)) -> EvalResult {
    let mut total = Value::Int(0);
    for_each_field(ctx, call, args, |_ctx, v, item| {
        expect_number(call, v, item)?;
        total = add(&total, v)?;
        Ok(())
    })?;
    Ok(total)
}

fn avg_by(ctx: &mut Ctx, call: Call, args: (&Value, &Value)) -> EvalResult {
    let mut total = Value::Int(0);
    let mut n = 0usize;
    for_each_field(ctx, call, args, |_ctx, v, item| {
        expect_number(call, v, item)?;
        // Integers are summed exactly; a float anywhere makes the sum a float.
        total = match add(&total, v) {
            Ok(sum) => sum,
            Err(_) => Value::Float(as_f64(&total) + as_f64(v)),
        };
        n += 1;
        Ok(())
    })?;
    if n == 0 {
        return Ok(Value::Nil);
    }
    Ok(Value::Float(as_f64(&total) / n as f64))
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

fn extreme_by(ctx: &mut Ctx, call: Call, args: (&Value, &Value), want: Ordering) -> EvalResult {
    let mut best: Option<(Value, Value)> = None;
    for_each_field(ctx, call, args, |_ctx, v, item| {
        let better = match &best {
            None => true,
            Some((best_v, _)) => clojure_compare(v, best_v)? == want,
        };
        if better {
            best = Some((v.clone(), item.clone()));
        }
        Ok(())
    })?;
    Ok(best.map(|(_, item)| item).unwrap_or_default())
}

fn min_by(ctx: &mut Ctx, call: Call, args: (&Value, &Value)) -> EvalResult {
    extreme_by(ctx, call, args, Ordering::Less)
}

fn max_by(ctx: &mut Ctx, call: Call, args: (&Value, &Value)) -> EvalResult {
    extreme_by(ctx, call, args, Ordering::Greater)
}

fn pluck(ctx: &mut Ctx, call: Call, (field, coll): (&Value, &Value)) -> EvalResult {
    let field = Field::parse(ctx, call, field, true)?;
    let mut items = call.items(coll)?;
    if items.is_unbounded() {
        return Err(call.unbounded(coll).into());
    }
    let mut out = Vec::with_capacity(coll.count().unwrap_or(0));
    while let Some(item) = items.next(ctx)? {
        out.push(field.of(ctx, item.as_ref())?.into_owned());
    }
    list_of(ctx, out)
}

fn zip(ctx: &mut Ctx, call: Call, (first, second, more): (&Value, &Value, &[Value])) -> EvalResult {
    let mut colls = vec![call.collect(ctx, first)?, call.collect(ctx, second)?];
    for c in more {
        colls.push(call.collect(ctx, c)?);
    }
    let n = colls.iter().map(Vec::len).min().unwrap_or(0);
    ctx.charge_items(n * (colls.len() + 1))?;
    let tuples = (0..n)
        .map(|i| Value::vector(colls.iter().map(|c| c[i].clone())))
        .collect();
    list_of(ctx, tuples)
}

fn entries(ctx: &mut Ctx, call: Call, m: &Value) -> EvalResult {
    match m {
        Value::Map(m) => {
            let pairs = m
                .iter()
                .map(|(k, v)| Value::vector([k.clone(), v.clone()]))
                .collect();
            ctx.charge_items(3 * m.len())?;
            list_of(ctx, pairs)
        }
        Value::Nil => Ok(Value::empty_list()),
        other => Err(call.expected("a map", other).into()),
    }
}

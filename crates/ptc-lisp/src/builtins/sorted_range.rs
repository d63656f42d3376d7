//! `subseq` and `rsubseq`: the items of a sorted map or set whose keys lie within bounds.

use super::args::{Call, Callable};
use super::{Builtin, builtin};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult, Items};
use crate::ir::FnRepr;
use crate::value::Value;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("subseq", subseq, "(subseq sc test key) (subseq sc start-test start-key end-test end-key)", "The items of the sorted map or set sc whose keys k pass (test k key), tests being <, <=, > or >=, in order; nil when there are none.", "(subseq (sorted-set 1 2 3 4 5) > 2)" => "(3 4 5)"),
    builtin!("rsubseq", rsubseq, "(rsubseq sc test key) (rsubseq sc start-test start-key end-test end-key)", "subseq in reverse order.", "(rsubseq (sorted-set 1 2 3 4) < 3)" => "(2 1)"),
];

/// One bound: `(test (compare k key) 0)` must be truthy for the item with key `k`.
struct Bound<'a> {
    test: Callable<'a>,
    key: &'a Value,
}

fn bounds<'a>(call: Call, first: Bound<'a>, more: &'a [Value]) -> Result<Vec<Bound<'a>>, Error> {
    match more {
        [] => Ok(vec![first]),
        [test, key] => Ok(vec![
            first,
            Bound {
                test: call.arg(test)?,
                key,
            },
        ]),
        _ => Err(Error::arity(format!(
            "{call} takes a sorted collection and one or two tests with their keys: ({call} sc > 2) or ({call} sc >= 2 < 5)"
        ))),
    }
}

type Args<'a> = (&'a Value, Callable<'a>, &'a Value, &'a [Value]);

fn within(ctx: &mut Ctx, call: Call, (sc, test, key, more): Args<'_>, reverse: bool) -> EvalResult {
    let sorted = match sc {
        Value::Map(m) => m.is_sorted(),
        Value::Set(s) => s.is_sorted(),
        _ => false,
    };
    if !sorted {
        return Err(call
            .expected("a sorted map or set (sorted-map, sorted-set)", sc)
            .into());
    }
    let test_fn: Value = (*test).clone();
    let bounds = bounds(call, Bound { test, key }, more)?;
    let compare = Value::Fn(super::lookup_function("compare").ok_or_else(|| {
        Error::new(
            crate::error::ErrorKind::UndefinedSymbol,
            "compare is missing",
        )
    })?);
    let mut items = Items::new(sc)?;
    let mut out = Vec::new();
    let mut keys = Vec::new();
    while let Some(item) = items.next(ctx)? {
        let key = match (&*item, sc) {
            (Value::Vector(entry), Value::Map(_)) => entry.get(0).cloned().unwrap_or_default(),
            (other, _) => other.clone(),
        };
        keys.push(key.clone());
        let mut keep = true;
        for bound in &bounds {
            let order = ctx.apply(&compare, &[key.clone(), bound.key.clone()])?;
            if !ctx.apply(&bound.test, &[order, Value::Int(0)])?.truthy() {
                keep = false;
                break;
            }
        }
        if keep {
            out.push(item.into_owned());
        }
    }
    // Clojure starts from the key (`seqFrom`) when the test bounds the start, and answers nil
    // when no key lies on that side of it; otherwise it walks from the first item with
    // `take-while`, which gives () when nothing passes.
    let from_key = match more {
        [] if is_builtin(&test_fn, if reverse { &["<", "<="] } else { &[">", ">="] }) => {
            if out.is_empty() {
                return Ok(Value::Nil);
            }
            None
        }
        [_, end_key] => Some(if reverse { end_key } else { bounds[0].key }),
        _ => None,
    };
    if let Some(start) = from_key {
        let mut any = false;
        for k in &keys {
            let order = super::number::clojure_compare(k, start)?;
            if (reverse && order.is_le()) || (!reverse && order.is_ge()) {
                any = true;
                break;
            }
        }
        if !any {
            return Ok(Value::Nil);
        }
    }
    if reverse {
        out.reverse();
    }
    Ok(Value::list(out))
}

/// Whether `f` is the builtin named one of `names` (`>` written in the program).
fn is_builtin(f: &Value, names: &[&str]) -> bool {
    matches!(f, Value::Fn(func) if matches!(func.repr(), FnRepr::Builtin(b) if names.contains(&b.name)))
}

fn subseq(ctx: &mut Ctx, call: Call, args: Args<'_>) -> EvalResult {
    within(ctx, call, args, false)
}

fn rsubseq(ctx: &mut Ctx, call: Call, args: Args<'_>) -> EvalResult {
    within(ctx, call, args, true)
}

//! `clojure.walk`: generic walks over nested data, and turning string keys into keywords and
//! back.

use super::args::{Call, Callable};
use super::{Builtin, builtin};
use crate::error::{Error, ErrorKind};
use crate::eval::{Ctx, EvalResult};
use crate::format::pr_str;
use crate::stack::with_stack_room;
use crate::value::{Map, Seq, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("clojure.walk/walk", walk, "(clojure.walk/walk inner outer form)", "Applies inner to each item of a collection form (to each [k v] entry of a map), rebuilds a collection of the same kind and applies outer to it; outer alone to any other form.", "(clojure.walk/walk inc #(apply + %) [1 2 3])" => "9"),
    builtin!("clojure.walk/postwalk", postwalk, "(clojure.walk/postwalk f form)", "Rebuilds form bottom-up: f applied to every nested item (map entries as [k v] vectors) after its own items.", "(clojure.walk/postwalk #(if (number? %) (inc %) %) [1 [2 {:a 3}]])" => "[2 [3 {:a 4}]]"),
    builtin!("clojure.walk/prewalk", prewalk, "(clojure.walk/prewalk f form)", "Rebuilds form top-down: f applied to each form before walking the items of what it returns.", "(clojure.walk/prewalk #(if (map? %) (dissoc % :secret) %) {:a {:secret 1 :b 2}})" => "{:a {:b 2}}"),
    builtin!("clojure.walk/keywordize-keys", keywordize_keys, "(clojure.walk/keywordize-keys form)", "Every string key of every nested map as a keyword.", "(clojure.walk/keywordize-keys {\"a\" {\"b\" 1}})" => "{:a {:b 1}}"),
    builtin!("clojure.walk/stringify-keys", stringify_keys, "(clojure.walk/stringify-keys form)", "Every keyword key of every nested map as a string (its name, without namespace).", "(clojure.walk/stringify-keys {:a {:b 1}})" => "{\"a\" {\"b\" 1}}"),
    builtin!("clojure.walk/postwalk-replace", postwalk_replace, "(clojure.walk/postwalk-replace smap form)", "Replaces every nested item that is a key of smap by its value, bottom-up.", "(clojure.walk/postwalk-replace {:a :x} [:a [:a 2]])" => "[:x [:x 2]]"),
    builtin!("clojure.walk/prewalk-replace", prewalk_replace, "(clojure.walk/prewalk-replace smap form)", "Replaces every nested item that is a key of smap by its value, top-down.", "(clojure.walk/prewalk-replace {[1 2] :pair} [[1 2] [3 [1 2]]])" => "[:pair [3 :pair]]"),
    builtin!("clojure.walk/postwalk-demo", postwalk_demo, "(clojure.walk/postwalk-demo form)", "Prints \"Walked: x\" for each item postwalk visits, in order; returns form.", "(clojure.walk/postwalk-demo [1])" => "[1]"),
    builtin!("clojure.walk/prewalk-demo", prewalk_demo, "(clojure.walk/prewalk-demo form)", "Prints \"Walked: x\" for each item prewalk visits, in order; returns form.", "(clojure.walk/prewalk-demo [1])" => "[1]"),
];

/// What a walk does at each form: call a function of the program, or a fixed rewrite.
enum Visit<'a> {
    Apply(&'a Value),
    Replace(&'a Map),
    Keywordize,
    Stringify,
    Demo,
}

impl Visit<'_> {
    fn visit(&self, ctx: &mut Ctx, form: Value) -> EvalResult {
        ctx.tick()?;
        match self {
            Visit::Apply(f) => ctx.apply1(f, &form),
            Visit::Replace(smap) => Ok(smap.get(&form).cloned().unwrap_or(form)),
            Visit::Keywordize => Ok(rekey(form, |k| match k {
                Value::Str(s) => Value::keyword(&s),
                other => other,
            })),
            Visit::Stringify => Ok(rekey(form, |k| match k {
                Value::Keyword(kw) => Value::string(kw.name()),
                other => other,
            })),
            Visit::Demo => {
                ctx.emit_print(format!("Walked: {}", pr_str(&form)))?;
                Ok(form)
            }
        }
    }
}

/// A map with each key passed through `f`; any other form unchanged.
fn rekey(form: Value, f: impl Fn(Value) -> Value) -> Value {
    match form {
        Value::Map(m) => {
            let mut out = m.empty_like();
            for (k, v) in m.iter() {
                out.assoc_mut(f(k.clone()), v.clone());
            }
            Value::Map(out)
        }
        other => other,
    }
}

/// `form`'s items passed through `inner`, rebuilt as a collection of the same kind (a lazy
/// sequence becomes a list); a form without items as it is.
fn rebuild(
    ctx: &mut Ctx,
    call: Call,
    form: &Value,
    inner: &mut dyn FnMut(&mut Ctx, Value) -> EvalResult,
) -> EvalResult {
    let items = match form {
        Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_) | Value::Lazy(_) => {
            call.collect(ctx, form)?
        }
        other => return Ok(other.clone()),
    };
    let mut walked = Vec::with_capacity(items.len());
    for item in items {
        walked.push(inner(ctx, item)?);
    }
    ctx.charge_items(walked.len())?;
    Ok(match form {
        Value::Vector(_) => Value::Vector(walked.into_iter().collect::<Seq>()),
        Value::Set(s) => {
            let mut out = s.empty_like();
            for item in walked {
                out.insert_mut(item);
            }
            Value::Set(out)
        }
        Value::Map(m) => {
            let mut out = m.empty_like();
            for entry in walked {
                match entry {
                    Value::Vector(pair) if pair.len() == 2 => {
                        out.assoc_mut(pair[0].clone(), pair[1].clone());
                    }
                    Value::Nil => {}
                    other => {
                        return Err(Error::new(
                            ErrorKind::Type,
                            format!(
                                "{call}: a map entry must stay a [key value] vector, got {}",
                                super::got(&other)
                            ),
                        )
                        .into());
                    }
                }
            }
            Value::Map(out)
        }
        _ => Value::List(walked.into_iter().collect::<Seq>()),
    })
}

fn post(ctx: &mut Ctx, call: Call, visit: &Visit<'_>, form: Value) -> EvalResult {
    with_stack_room(|| {
        let rebuilt = rebuild(ctx, call, &form, &mut |ctx, item| {
            post(ctx, call, visit, item)
        })?;
        visit.visit(ctx, rebuilt)
    })
}

fn pre(ctx: &mut Ctx, call: Call, visit: &Visit<'_>, form: Value) -> EvalResult {
    with_stack_room(|| {
        let visited = visit.visit(ctx, form)?;
        rebuild(ctx, call, &visited, &mut |ctx, item| {
            pre(ctx, call, visit, item)
        })
    })
}

fn walk(
    ctx: &mut Ctx,
    call: Call,
    (inner, outer, form): (Callable, Callable, &Value),
) -> EvalResult {
    let rebuilt = rebuild(ctx, call, form, &mut |ctx, item| ctx.apply1(&inner, &item))?;
    ctx.apply1(&outer, &rebuilt)
}

fn postwalk(ctx: &mut Ctx, call: Call, (f, form): (Callable, &Value)) -> EvalResult {
    post(ctx, call, &Visit::Apply(&f), form.clone())
}

fn prewalk(ctx: &mut Ctx, call: Call, (f, form): (Callable, &Value)) -> EvalResult {
    pre(ctx, call, &Visit::Apply(&f), form.clone())
}

fn keywordize_keys(ctx: &mut Ctx, call: Call, form: &Value) -> EvalResult {
    post(ctx, call, &Visit::Keywordize, form.clone())
}

fn stringify_keys(ctx: &mut Ctx, call: Call, form: &Value) -> EvalResult {
    post(ctx, call, &Visit::Stringify, form.clone())
}

fn replacements(call: Call, smap: &Value) -> Result<Map, Error> {
    match smap {
        Value::Map(m) => Ok(m.clone()),
        Value::Nil => Ok(Map::new()),
        other => Err(call.expected("a map of replacements", other)),
    }
}

fn postwalk_replace(ctx: &mut Ctx, call: Call, (smap, form): (&Value, &Value)) -> EvalResult {
    let smap = replacements(call, smap)?;
    post(ctx, call, &Visit::Replace(&smap), form.clone())
}

fn prewalk_replace(ctx: &mut Ctx, call: Call, (smap, form): (&Value, &Value)) -> EvalResult {
    let smap = replacements(call, smap)?;
    pre(ctx, call, &Visit::Replace(&smap), form.clone())
}

fn postwalk_demo(ctx: &mut Ctx, call: Call, form: &Value) -> EvalResult {
    post(ctx, call, &Visit::Demo, form.clone())
}

fn prewalk_demo(ctx: &mut Ctx, call: Call, form: &Value) -> EvalResult {
    pre(ctx, call, &Visit::Demo, form.clone())
}

//! Hierarchies as values: `make-hierarchy`, `derive` and `underive` on a hierarchy, and
//! `isa?`, `parents`, `ancestors`, `descendants` on one.
//!
//! Clojure also keeps one global hierarchy that `(derive tag parent)` changes in place. A
//! program has no mutable state, so here the global hierarchy is always empty: the forms that
//! would change it are refused with a hint, and the forms that read it see no derivations
//! (`(isa? x y)` is then `=`, extended to vectors item by item).

use super::args::Call;
use super::{Builtin, builtin};
use crate::error::{Error, ErrorKind};
use crate::eval::{Ctx, EvalResult};
use crate::format::pr_str;
use crate::value::{Map, Set, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("make-hierarchy", make_hierarchy, "(make-hierarchy)", "An empty hierarchy, a map of :parents, :descendants and :ancestors, for derive and isa?.", "(make-hierarchy)" => "{:parents {}, :descendants {}, :ancestors {}}"),
    builtin!("derive", derive, "(derive h tag parent)", "The hierarchy h with tag (a keyword or symbol) a child of parent.", "(isa? (derive (make-hierarchy) :dog :animal) :dog :animal)" => "true"),
    builtin!("underive", underive, "(underive h tag parent)", "The hierarchy h without tag's derivation from parent.", "(-> (make-hierarchy) (derive :dog :animal) (underive :dog :animal) (isa? :dog :animal))" => "false"),
    builtin!("isa?", isa, "(isa? child parent) (isa? h child parent)", "True if child equals parent, derives from it in h, or both are vectors whose items are isa? pairwise.", "(let [h (-> (make-hierarchy) (derive :puppy :dog) (derive :dog :animal))] (isa? h :puppy :animal))" => "true"),
    builtin!("parents", parents, "(parents tag) (parents h tag)", "The set of tag's direct parents in h, or nil.", "(parents (derive (make-hierarchy) :dog :animal) :dog)" => "#{:animal}"),
    builtin!("ancestors", ancestors, "(ancestors tag) (ancestors h tag)", "The set of everything tag derives from in h, directly or not, or nil.", "(ancestors (-> (make-hierarchy) (derive :puppy :dog) (derive :dog :animal)) :puppy)" => "#{:dog :animal}"),
    builtin!("descendants", descendants, "(descendants tag) (descendants h tag)", "The set of everything that derives from tag in h, directly or not, or nil.", "(descendants (derive (make-hierarchy) :dog :animal) :animal)" => "#{:dog}"),
];

const PARENTS: &str = "parents";
const DESCENDANTS: &str = "descendants";
const ANCESTORS: &str = "ancestors";

fn empty_hierarchy() -> Map {
    let mut h = Map::new();
    for part in [PARENTS, DESCENDANTS, ANCESTORS] {
        h.assoc_mut(Value::keyword(part), Value::Map(Map::new()));
    }
    h
}

fn make_hierarchy(_: &mut Ctx, _: Call, (): ()) -> EvalResult {
    Ok(Value::Map(empty_hierarchy()))
}

/// One of the three maps of a hierarchy.
fn part(h: &Map, name: &str) -> Map {
    match h.get(&Value::keyword(name)) {
        Some(Value::Map(m)) => m.clone(),
        _ => Map::new(),
    }
}

/// The set `m` holds for `k`, or an empty one.
fn set_of(m: &Map, k: &Value) -> Set {
    match m.get(k) {
        Some(Value::Set(s)) => s.clone(),
        _ => Set::new(),
    }
}

fn hierarchy(call: Call, h: &Value) -> Result<Map, Error> {
    match h {
        Value::Map(m) => Ok(m.clone()),
        other => Err(call.expected("a hierarchy from make-hierarchy", other)),
    }
}

fn global_refused(call: Call) -> Error {
    Error::new(
        ErrorKind::Unsupported,
        format!(
            "{call} on the global hierarchy is not supported: it would change state every later \
             call sees; build a hierarchy value with (-> (make-hierarchy) (derive :dog :animal)) \
             and pass it to isa?, parents, ancestors and descendants"
        ),
    )
}

fn named(call: Call, what: &str, x: &Value) -> Result<(), Error> {
    match x {
        Value::Keyword(_) | Value::Symbol(_) => Ok(()),
        other => Err(call.expected_argument(&format!("a keyword or symbol as {what}"), other)),
    }
}

/// Clojure's `derive` on a hierarchy value.
fn derive_in(call: Call, h: &Map, tag: &Value, parent: &Value) -> Result<Map, Error> {
    named(call, "the tag", tag)?;
    named(call, "the parent", parent)?;
    if tag == parent {
        return Err(call.error(
            ErrorKind::Argument,
            format!("{} cannot derive from itself", pr_str(tag)),
        ));
    }
    let (tp, td, ta) = (part(h, PARENTS), part(h, DESCENDANTS), part(h, ANCESTORS));
    if set_of(&tp, tag).contains(parent) {
        return Ok(h.clone());
    }
    if set_of(&ta, tag).contains(parent) {
        return Err(call.error(
            ErrorKind::Argument,
            format!("{} already has {} as ancestor", pr_str(tag), pr_str(parent)),
        ));
    }
    if set_of(&ta, parent).contains(tag) {
        return Err(call.error(
            ErrorKind::Argument,
            format!(
                "cyclic derivation: {} has {} as ancestor",
                pr_str(parent),
                pr_str(tag)
            ),
        ));
    }
    let mut parents = tp.clone();
    let mut tag_parents = set_of(&tp, tag);
    tag_parents.insert_mut(parent.clone());
    parents.assoc_mut(tag.clone(), Value::Set(tag_parents));
    // Everything at or below tag gains parent and its ancestors; everything at or above parent
    // gains tag and its descendants.
    let spread = |into: &Map, sources: &Map, source: &Value, targets: &Map, target: &Value| {
        let mut out = into.clone();
        let mut gained = vec![target.clone()];
        gained.extend(set_of(targets, target).iter().cloned());
        let mut keys = vec![source.clone()];
        keys.extend(set_of(sources, source).iter().cloned());
        for k in keys {
            let mut s = set_of(&out, &k);
            for g in &gained {
                s.insert_mut(g.clone());
            }
            out.assoc_mut(k, Value::Set(s));
        }
        out
    };
    let ancestors = spread(&ta, &td, tag, &ta, parent);
    let descendants = spread(&td, &ta, parent, &td, tag);
    let mut out = h.clone();
    out.assoc_mut(Value::keyword(PARENTS), Value::Map(parents));
    out.assoc_mut(Value::keyword(ANCESTORS), Value::Map(ancestors));
    out.assoc_mut(Value::keyword(DESCENDANTS), Value::Map(descendants));
    Ok(out)
}

/// The hierarchy and parent of `(derive h tag parent)` or `(underive h tag parent)`; the
/// two-argument forms would change the global hierarchy, and are refused.
fn explicit<'v>(
    call: Call,
    h: &Value,
    parent: Option<&'v Value>,
) -> Result<(Map, &'v Value), Error> {
    match parent {
        Some(parent) => Ok((hierarchy(call, h)?, parent)),
        None => Err(global_refused(call)),
    }
}

fn derive(
    ctx: &mut Ctx,
    call: Call,
    (h, tag, parent): (&Value, &Value, Option<&Value>),
) -> EvalResult {
    let (h, parent) = explicit(call, h, parent)?;
    ctx.charge_items(2 * h.len())?;
    Ok(Value::Map(derive_in(call, &h, tag, parent)?))
}

fn underive(
    ctx: &mut Ctx,
    call: Call,
    (h, tag, parent): (&Value, &Value, Option<&Value>),
) -> EvalResult {
    let (hv, parent) = explicit(call, h, parent)?;
    let parents = part(&hv, PARENTS);
    if !set_of(&parents, tag).contains(parent) {
        return Ok(h.clone());
    }
    // As Clojure does: derive every remaining pair again into a fresh hierarchy.
    let mut out = empty_hierarchy();
    for (child, ps) in parents.iter() {
        let Value::Set(ps) = ps else { continue };
        for p in ps.iter() {
            if child == tag && p == parent {
                continue;
            }
            ctx.tick()?;
            out = derive_in(call, &out, child, p)?;
        }
    }
    Ok(Value::Map(out))
}

/// `isa?` in `h` (`None`: the global hierarchy, always empty).
fn isa_in(ctx: &mut Ctx, h: Option<&Map>, child: &Value, parent: &Value) -> EvalResult<bool> {
    ctx.tick()?;
    if child == parent {
        return Ok(true);
    }
    if let Some(h) = h
        && set_of(&part(h, ANCESTORS), child).contains(parent)
    {
        return Ok(true);
    }
    if let (Value::Vector(c), Value::Vector(p)) = (child, parent)
        && c.len() == p.len()
    {
        for (c, p) in c.iter().zip(p.iter()) {
            if !isa_in(ctx, h, c, p)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    Ok(false)
}

fn isa(ctx: &mut Ctx, call: Call, (a, b, c): (&Value, &Value, Option<&Value>)) -> EvalResult {
    let result = match c {
        None => isa_in(ctx, None, a, b)?,
        Some(parent) => {
            let h = hierarchy(call, a)?;
            isa_in(ctx, Some(&h), b, parent)?
        }
    };
    Ok(Value::Bool(result))
}

/// What `(parents h tag)` and its kin give: the set in one part of the hierarchy, or nil.
fn lookup_part(call: Call, name: &str, a: &Value, b: Option<&Value>) -> EvalResult {
    let Some(tag) = b else {
        return Ok(Value::Nil);
    };
    let h = hierarchy(call, a)?;
    let found = set_of(&part(&h, name), tag);
    Ok(if found.is_empty() {
        Value::Nil
    } else {
        Value::Set(found)
    })
}

fn parents(_: &mut Ctx, call: Call, (a, b): (&Value, Option<&Value>)) -> EvalResult {
    lookup_part(call, PARENTS, a, b)
}

fn ancestors(_: &mut Ctx, call: Call, (a, b): (&Value, Option<&Value>)) -> EvalResult {
    lookup_part(call, ANCESTORS, a, b)
}

fn descendants(_: &mut Ctx, call: Call, (a, b): (&Value, Option<&Value>)) -> EvalResult {
    lookup_part(call, DESCENDANTS, a, b)
}

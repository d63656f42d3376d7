//! Small public helpers of `clojure.core` that Clojure itself uses (the printer's character
//! tables, destructuring's keyword-arguments map, the map-entry test) and two old conveniences
//! kept for the programs that still write them (`replicate`, `xml-seq`).

use super::args::{Call, Seqable, Truncated};
use super::{Builtin, builtin};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult};
use crate::value::{Map, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("map-entry?", map_entry_p, "(map-entry? x)", "True for a map entry: a map's entries are two-item vectors, so for any vector of two items.", "(map-entry? (first {:a 1}))" => "true"),
    builtin!("char-escape-string", char_escape_string, "(char-escape-string c)", "How a string literal writes the character c (\"\\\\n\" for a newline), or nil if it needs no escape.", "(char-escape-string \\tab)" => "\"\\\\t\""),
    builtin!("char-name-string", char_name_string, "(char-name-string c)", "The name a character literal uses for c (\"space\" for \\space), or nil if it has none.", "(char-name-string \\newline)" => "\"newline\""),
    builtin!("seq-to-map-for-destructuring", seq_to_map, "(seq-to-map-for-destructuring s)", "The map keyword arguments destructure from: the pairs of s, or its only item.", "(seq-to-map-for-destructuring [:a 1 :b 2])" => "{:a 1, :b 2}"),
    builtin!("replicate", replicate, "(replicate n x)", "A list of n copies of x (an old name for (repeat n x)).", "(replicate 2 :a)" => "(:a :a)"),
    builtin!("xml-seq", xml_seq, "(xml-seq root)", "Every node of an XML tree of {:tag :attrs :content} maps, depth first, strings included.", "(map :tag (xml-seq {:tag :a :content [{:tag :b}]}))" => "(:a :b)"),
];

fn map_entry_p(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(matches!(x, Value::Vector(v) if v.len() == 2)))
}

fn char_escape_string(_: &mut Ctx, _: Call, c: &Value) -> EvalResult {
    let escape = match c {
        Value::Char('\n') => "\\n",
        Value::Char('\t') => "\\t",
        Value::Char('\r') => "\\r",
        Value::Char('"') => "\\\"",
        Value::Char('\\') => "\\\\",
        Value::Char('\u{c}') => "\\f",
        Value::Char('\u{8}') => "\\b",
        _ => return Ok(Value::Nil),
    };
    Ok(Value::string(escape))
}

fn char_name_string(_: &mut Ctx, _: Call, c: &Value) -> EvalResult {
    let name = match c {
        Value::Char('\n') => "newline",
        Value::Char('\t') => "tab",
        Value::Char(' ') => "space",
        Value::Char('\u{8}') => "backspace",
        Value::Char('\u{c}') => "formfeed",
        Value::Char('\r') => "return",
        _ => return Ok(Value::Nil),
    };
    Ok(Value::string(name))
}

fn seq_to_map(ctx: &mut Ctx, call: Call, s: Seqable) -> EvalResult {
    let items = call.collect(ctx, &s)?;
    match items.as_slice() {
        [] => Ok(Value::Map(Map::new())),
        [only] => Ok(only.clone()),
        _ if !items.len().is_multiple_of(2) => Err(Error::argument(format!(
            "{call}: no value supplied for key {}",
            crate::eval::pr_str_short(&items[items.len() - 1])
        ))
        .into()),
        _ => Ok(Value::map(
            items
                .chunks_exact(2)
                .map(|kv| (kv[0].clone(), kv[1].clone())),
        )),
    }
}

fn replicate(ctx: &mut Ctx, _: Call, (Truncated(n), x): (Truncated, &Value)) -> EvalResult {
    let n = usize::try_from(n).unwrap_or(0);
    ctx.charge_items(n)?;
    Ok(Value::list(std::iter::repeat_n(x.clone(), n)))
}

/// The nodes of an XML tree in document order: a node is a branch unless it is a string, and
/// its children are its `:content`.
fn xml_seq(ctx: &mut Ctx, call: Call, root: &Value) -> EvalResult {
    let content = Value::keyword("content");
    let mut out = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(node) = pending.pop() {
        ctx.tick()?;
        ctx.charge_items(1)?;
        if !matches!(node, Value::Str(_)) {
            let children = crate::eval::get_key(&node, &content).unwrap_or_default();
            let children = call.collect(ctx, &children)?;
            pending.extend(children.into_iter().rev());
        }
        out.push(node);
    }
    Ok(Value::list(out))
}

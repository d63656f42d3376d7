//! UUIDs and tagged literals: `uuid?`, `parse-uuid`, `tagged-literal`, `tagged-literal?`.

use super::args::Call;
use super::{Builtin, builtin};
use crate::eval::{Ctx, EvalResult};
use crate::value::{Symbol, TaggedLiteral, Uuid, Value};

fn is_uuid(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(matches!(x, Value::Uuid(_))))
}

fn parse_uuid(_: &mut Ctx, call: Call, text: &Value) -> EvalResult {
    match text {
        Value::Str(s) => Ok(Uuid::parse(s).map_or(Value::Nil, Value::Uuid)),
        other => Err(call.expected("a string", other).into()),
    }
}

fn tagged_literal(ctx: &mut Ctx, call: Call, (tag, form): (&Value, &Value)) -> EvalResult {
    let Value::Symbol(tag) = tag else {
        return Err(call.expected("a symbol as the tag", tag).into());
    };
    let out = Value::Tagged(TaggedLiteral::new(Symbol::new(tag.as_str()), form.clone()));
    ctx.check_depth(&out)?;
    ctx.charge_items(2)?;
    Ok(out)
}

fn is_tagged_literal(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(matches!(x, Value::Tagged(_))))
}

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("uuid?", is_uuid, "(uuid? x)", "True for a UUID, written #uuid \"...\" or made by parse-uuid (a string is not one).", "[(uuid? #uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\") (uuid? \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\")]" => "[true false]"),
    builtin!("parse-uuid", parse_uuid, "(parse-uuid s)", "The UUID written in s (either case), or nil when s is not one; str gives its text back and JSON receives the text.", "[(parse-uuid \"F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6\") (parse-uuid \"nope\")]" => "[#uuid \"f81d4fae-7dec-11d0-a765-00a0c91e6bf6\" nil]"),
    builtin!("tagged-literal", tagged_literal, "(tagged-literal tag form)", "A tagged literal kept as data, printed #tag form; (:tag t) and (:form t) give its parts.", "(let [t (tagged-literal 'point [1 2])] [t (:tag t) (:form t)])" => "[#point [1 2] point [1 2]]"),
    builtin!("tagged-literal?", is_tagged_literal, "(tagged-literal? x)", "True for a value made by tagged-literal (#inst and #uuid are read as dates and UUIDs instead).", "[(tagged-literal? (tagged-literal 'x 1)) (tagged-literal? #inst \"2024-01-01\")]" => "[true false]"),
];

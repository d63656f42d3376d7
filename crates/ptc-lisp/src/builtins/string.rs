//! Strings.

use super::{Builtin, builtin, expect_int, expect_str};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult};
use crate::format::{Rendering, render_within};
use crate::value::Value;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("str", [0..], str, "(str & xs)", "Concatenates the values as text: strings as they are, nil as nothing, others as printed.", "(str \"a\" 1 nil :b)" => "\"a1:b\""),
    builtin!("subs", [2..=3], subs, "(subs s start) (subs s start end)", "The characters of s from start up to, not including, end.", "(subs \"hello\" 1 3)" => "\"el\""),
];

fn str(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    // Refuse before building: the text may not be larger than what the memory budget has left.
    let room = ctx.memory_left();
    let mut out = String::new();
    for a in args {
        match a {
            Value::Str(s) if out.len().saturating_add(s.len()) <= room => out.push_str(s),
            Value::Str(_) => return Err(ctx.memory_limit_error().into()),
            other => match render_within(other, Rendering::Str, room - out.len()) {
                Ok(text) if out.len() + text.len() <= room => out.push_str(&text),
                _ => return Err(ctx.memory_limit_error().into()),
            },
        }
    }
    ctx.charge(out.len() + 16)?;
    Ok(Value::from(out))
}

fn subs(ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let s = expect_str("subs", &args[0])?;
    let len = s.chars().count();
    let start = expect_int("subs", &args[1])?;
    let end = match args.get(2) {
        Some(e) => expect_int("subs", e)?,
        None => len as i64,
    };
    if start < 0 || end < start || end as usize > len {
        return Err(Error::index(format!(
            "subs: range {start}..{end} is out of bounds for a string of {len} characters"
        ))
        .into());
    }
    let out: String = s
        .chars()
        .skip(start as usize)
        .take((end - start) as usize)
        .collect();
    ctx.charge(out.len() + 16)?;
    Ok(Value::from(out))
}

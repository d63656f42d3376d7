//! Type predicates and logic.

use super::{Builtin, builtin};
use crate::eval::{Ctx, EvalResult};
use crate::value::Value;

macro_rules! type_predicate {
    ($fn_name:ident, $pattern:pat) => {
        fn $fn_name(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
            Ok(Value::Bool(matches!(&args[0], $pattern)))
        }
    };
}

type_predicate!(is_nil, Value::Nil);
type_predicate!(
    is_some,
    Value::Bool(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Str(_)
        | Value::Char(_)
        | Value::Keyword(_)
        | Value::Symbol(_)
        | Value::List(_)
        | Value::Vector(_)
        | Value::Map(_)
        | Value::Set(_)
        | Value::Fn(_)
        | Value::Regex(_)
        | Value::Var(_)
        | Value::Lazy(_)
);
type_predicate!(is_true, Value::Bool(true));
type_predicate!(is_false, Value::Bool(false));
type_predicate!(is_boolean, Value::Bool(_));
type_predicate!(is_number, Value::Int(_) | Value::Float(_));
type_predicate!(is_integer, Value::Int(_));
type_predicate!(is_float, Value::Float(_));
type_predicate!(is_string, Value::Str(_));
type_predicate!(is_char, Value::Char(_));
type_predicate!(is_keyword, Value::Keyword(_));
type_predicate!(is_symbol, Value::Symbol(_));
type_predicate!(is_map, Value::Map(_));
type_predicate!(is_vector, Value::Vector(_));
type_predicate!(is_list, Value::List(_));
type_predicate!(is_set, Value::Set(_));
type_predicate!(
    is_coll,
    Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_) | Value::Lazy(_)
);
type_predicate!(is_seq, Value::List(_) | Value::Lazy(_));
type_predicate!(
    is_sequential,
    Value::List(_) | Value::Vector(_) | Value::Lazy(_)
);
type_predicate!(is_fn, Value::Fn(_));

fn not(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(!args[0].truthy()))
}

fn identity(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(args[0].clone())
}

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("nil?", [1], is_nil, "(nil? x)", "True if x is nil.", "(nil? nil)" => "true"),
    builtin!("some?", [1], is_some, "(some? x)", "True if x is not nil.", "(some? false)" => "true"),
    builtin!("true?", [1], is_true, "(true? x)", "True if x is the value true.", "(true? 1)" => "false"),
    builtin!("false?", [1], is_false, "(false? x)", "True if x is the value false.", "(false? false)" => "true"),
    builtin!("boolean?", [1], is_boolean, "(boolean? x)", "True if x is true or false.", "(boolean? nil)" => "false"),
    builtin!("number?", [1], is_number, "(number? x)", "True if x is an integer or a float.", "(number? 1.5)" => "true"),
    builtin!("integer?", [1], is_integer, "(integer? x)", "True if x is an integer.", "(integer? 1.0)" => "false"),
    builtin!("int?", [1], is_integer, "(int? x)", "True if x is an integer.", "(int? 42)" => "true"),
    builtin!("float?", [1], is_float, "(float? x)", "True if x is a float.", "(float? 1.0)" => "true"),
    builtin!("double?", [1], is_float, "(double? x)", "True if x is a float.", "(double? 1)" => "false"),
    builtin!("string?", [1], is_string, "(string? x)", "True if x is a string.", "(string? \"a\")" => "true"),
    builtin!("char?", [1], is_char, "(char? x)", "True if x is a character.", "(char? \\a)" => "true"),
    builtin!("keyword?", [1], is_keyword, "(keyword? x)", "True if x is a keyword.", "(keyword? :a)" => "true"),
    builtin!("symbol?", [1], is_symbol, "(symbol? x)", "True if x is a symbol.", "(symbol? 'a)" => "true"),
    builtin!("map?", [1], is_map, "(map? x)", "True if x is a map.", "(map? {:a 1})" => "true"),
    builtin!("vector?", [1], is_vector, "(vector? x)", "True if x is a vector.", "(vector? '(1))" => "false"),
    builtin!("list?", [1], is_list, "(list? x)", "True if x is a list or realized sequence.", "(list? '(1 2))" => "true"),
    builtin!("set?", [1], is_set, "(set? x)", "True if x is a set.", "(set? #{1})" => "true"),
    builtin!("coll?", [1], is_coll, "(coll? x)", "True if x is a list, vector, map or set.", "(coll? \"abc\")" => "false"),
    builtin!("seq?", [1], is_seq, "(seq? x)", "True if x is a list or sequence (not a vector).", "(seq? [1])" => "false"),
    builtin!("sequential?", [1], is_sequential, "(sequential? x)", "True if x is a list, vector or sequence.", "(sequential? [1])" => "true"),
    builtin!("fn?", [1], is_fn, "(fn? x)", "True if x is a function.", "(fn? inc)" => "true"),
    builtin!("not", [1], not, "(not x)", "True if x is nil or false, else false.", "(not nil)" => "true"),
    builtin!("fnil", [2..=4], fnil, "(fnil f default) (fnil f d1 d2) (fnil f d1 d2 d3)", "A function like f that replaces nil first arguments with the defaults.", "((fnil inc 0) nil)" => "1"),
    builtin!("identity", [1], identity, "(identity x)", "Returns x.", "(identity 7)" => "7"),
];

fn fnil(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    super::expect_fn("fnil", &args[0])?;
    let f = args[0].clone();
    let defaults: Vec<Value> = args[1..].to_vec();
    Ok(Value::Fn(crate::value::Function::native_capturing(
        "fnil",
        args,
        move |ctx, call_args| {
            let patched: Vec<Value> = call_args
                .iter()
                .enumerate()
                .map(|(i, a)| match (a, defaults.get(i)) {
                    (Value::Nil, Some(d)) => d.clone(),
                    _ => a.clone(),
                })
                .collect();
            ctx.apply(&f, &patched)
        },
    )))
}

//! Type predicates, logic and names (`name`, `keyword`, `symbol`, `type`).

use super::args::Call;
use super::{Builtin, builtin};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult};
use crate::value::{Keyword, Symbol, Value};

macro_rules! type_predicate {
    ($fn_name:ident, $pattern:pat) => {
        fn $fn_name(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
            Ok(Value::Bool(matches!(x, $pattern)))
        }
    };
}

type_predicate!(is_nil, Value::Nil);
fn is_some(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(!x.is_nil()))
}
type_predicate!(is_true, Value::Bool(true));
type_predicate!(is_false, Value::Bool(false));
type_predicate!(is_boolean, Value::Bool(_));
type_predicate!(is_number, Value::Int(_) | Value::Float(_) | Value::Big(_));
fn is_integer(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(crate::value::to_bigint(x).is_some()))
}
type_predicate!(is_int, Value::Int(_));
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
/// A delay is a function value of its own kind, which is not a function.
fn is_fn(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(
        matches!(x, Value::Fn(f) if !super::delay::is_delay(f)),
    ))
}

fn not(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(!x.truthy()))
}

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("nil?", is_nil, "(nil? x)", "True if x is nil.", "(nil? nil)" => "true"),
    builtin!("some?", is_some, "(some? x)", "True if x is not nil.", "(some? false)" => "true"),
    builtin!("true?", is_true, "(true? x)", "True if x is the value true.", "(true? 1)" => "false"),
    builtin!("false?", is_false, "(false? x)", "True if x is the value false.", "(false? false)" => "true"),
    builtin!("boolean?", is_boolean, "(boolean? x)", "True if x is true or false.", "(boolean? nil)" => "false"),
    builtin!("number?", is_number, "(number? x)", "True if x is a number (integer, float, ratio or decimal).", "(number? 1.5)" => "true"),
    builtin!("integer?", is_integer, "(integer? x)", "True if x is an integer (big integers too).", "(integer? 1.0)" => "false"),
    builtin!("int?", is_int, "(int? x)", "True if x is a 64-bit integer.", "(int? 42)" => "true"),
    builtin!("float?", is_float, "(float? x)", "True if x is a float.", "(float? 1.0)" => "true"),
    builtin!("double?", is_float, "(double? x)", "True if x is a float.", "(double? 1)" => "false"),
    builtin!("string?", is_string, "(string? x)", "True if x is a string.", "(string? \"a\")" => "true"),
    builtin!("char?", is_char, "(char? x)", "True if x is a character.", "(char? \\a)" => "true"),
    builtin!("keyword?", is_keyword, "(keyword? x)", "True if x is a keyword.", "(keyword? :a)" => "true"),
    builtin!("symbol?", is_symbol, "(symbol? x)", "True if x is a symbol.", "(symbol? 'a)" => "true"),
    builtin!("map?", is_map, "(map? x)", "True if x is a map.", "(map? {:a 1})" => "true"),
    builtin!("vector?", is_vector, "(vector? x)", "True if x is a vector.", "(vector? '(1))" => "false"),
    builtin!("list?", is_list, "(list? x)", "True if x is a list or realized sequence.", "(list? '(1 2))" => "true"),
    builtin!("set?", is_set, "(set? x)", "True if x is a set.", "(set? #{1})" => "true"),
    builtin!("coll?", is_coll, "(coll? x)", "True if x is a list, vector, map or set.", "(coll? \"abc\")" => "false"),
    builtin!("seq?", is_seq, "(seq? x)", "True if x is a list or sequence (not a vector).", "(seq? [1])" => "false"),
    builtin!("sequential?", is_sequential, "(sequential? x)", "True if x is a list, vector or sequence.", "(sequential? [1])" => "true"),
    builtin!("fn?", is_fn, "(fn? x)", "True if x is a function.", "(fn? inc)" => "true"),
    builtin!("not", not, "(not x)", "True if x is nil or false, else false.", "(not nil)" => "true"),
    builtin!("boolean", boolean, "(boolean x)", "false for nil and false, true for everything else.", "[(boolean nil) (boolean 0)]" => "[false true]"),
    builtin!("name", name, "(name x)", "The name of a keyword or symbol without its namespace; a string is returned as it is.", "[(name :user/id) (name 'x) (name \"s\")]" => "[\"id\" \"x\" \"s\"]"),
    builtin!("namespace", namespace, "(namespace x)", "The namespace of a keyword or symbol, or nil.", "[(namespace :user/id) (namespace :id)]" => "[\"user\" nil]"),
    builtin!("keyword", keyword, "(keyword name) (keyword ns name)", "The keyword with that name (from a string, symbol or keyword); nil for nil and other values.", "[(keyword \"status\") (keyword \"user\" \"id\")]" => "[:status :user/id]"),
    builtin!("symbol", symbol, "(symbol name) (symbol ns name)", "The symbol with that name (from a string, keyword or symbol).", "(symbol \"abc\")" => "abc"),
    builtin!("type", type_of, "(type x)", "The type of x as a keyword: :integer :float :string :char :boolean :keyword :symbol :list :vector :map :set :function :regex :var or :lazy-seq; nil for nil (Clojure returns Java classes).", "[(type 1) (type \"a\") (type [1]) (type nil)]" => "[:integer :string :vector nil]"),
];

fn boolean(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(x.truthy()))
}

fn name(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    match x {
        Value::Keyword(k) => Ok(Value::string(k.name())),
        Value::Symbol(s) => Ok(Value::string(s.name())),
        Value::Str(_) => Ok(x.clone()),
        other => Err(call.expected("a keyword, symbol or string", other).into()),
    }
}

fn namespace(_: &mut Ctx, call: Call, x: &Value) -> EvalResult {
    let ns = match x {
        Value::Keyword(k) => k.namespace(),
        Value::Symbol(s) => s.namespace(),
        other => return Err(call.expected("a keyword or symbol", other).into()),
    };
    Ok(ns.map(Value::string).unwrap_or_default())
}

/// The text a keyword or symbol is made of, for `keyword`/`symbol`.
fn name_text(v: &Value) -> Option<&str> {
    match v {
        Value::Str(s) => Some(s),
        Value::Keyword(k) => Some(k.as_str()),
        Value::Symbol(s) => Some(s.as_str()),
        _ => None,
    }
}

/// `ns/name` for the two-argument forms (a nil namespace gives a plain name).
fn qualified(call: Call, ns: &Value, name: &Value) -> Result<String, Error> {
    let part = |v: &Value| -> Result<Option<String>, Error> {
        match v {
            Value::Nil => Ok(None),
            Value::Str(s) => Ok(Some(s.to_string())),
            other => Err(Error::type_error(format!(
                "({call} ns name) expects strings, got {}",
                super::got(other)
            ))),
        }
    };
    let name = part(name)?.ok_or_else(|| {
        Error::type_error(format!("({call} ns name) needs a name string, got nil"))
    })?;
    Ok(match part(ns)? {
        Some(ns) => format!("{ns}/{name}"),
        None => name,
    })
}

fn keyword(_: &mut Ctx, call: Call, (x, name): (&Value, Option<&Value>)) -> EvalResult {
    match (x, name) {
        (ns, Some(name)) => Ok(Value::Keyword(Keyword::new(&qualified(call, ns, name)?))),
        (Value::Keyword(_), None) => Ok(x.clone()),
        (x, None) => Ok(name_text(x)
            .map(|t| Value::Keyword(Keyword::new(t)))
            .unwrap_or_default()),
    }
}

fn symbol(_: &mut Ctx, call: Call, (x, name): (&Value, Option<&Value>)) -> EvalResult {
    match (x, name) {
        (ns, Some(name)) => Ok(Value::Symbol(Symbol::new(&qualified(call, ns, name)?))),
        (Value::Symbol(_), None) => Ok(x.clone()),
        (x, None) => match name_text(x) {
            Some(t) => Ok(Value::Symbol(Symbol::new(t))),
            None => Err(call.expected("a string, keyword or symbol", x).into()),
        },
    }
}

fn type_of(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    let name = match x {
        Value::Nil => return Ok(Value::Nil),
        Value::Bool(_) => "boolean",
        Value::Int(_) => "integer",
        Value::Float(_) => "float",
        Value::Str(_) => "string",
        Value::Char(_) => "char",
        Value::Keyword(_) => "keyword",
        Value::Symbol(_) => "symbol",
        Value::List(_) => "list",
        Value::Vector(_) => "vector",
        Value::Map(_) => "map",
        Value::Set(_) => "set",
        Value::Fn(_) => "function",
        Value::Regex(_) => "regex",
        Value::Var(_) => "var",
        Value::Lazy(_) => "lazy-seq",
        Value::Date(d) => match d.kind() {
            crate::value::DateKind::Day(_) => "local-date",
            crate::value::DateKind::Instant(_) => "instant",
        },
        Value::Big(b) => match b.kind() {
            crate::value::BigKind::Int(_) => "integer",
            crate::value::BigKind::Ratio(_) => "ratio",
            crate::value::BigKind::Decimal(_) => "decimal",
        },
        Value::Uuid(_) => "uuid",
        Value::Tagged(_) => "tagged-literal",
    };
    Ok(Value::keyword(name))
}

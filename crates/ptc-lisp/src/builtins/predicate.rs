//! Type predicates, logic and names (`name`, `keyword`, `symbol`, `type`).

use super::{Builtin, builtin, got};
use crate::error::Error;
use crate::eval::{Ctx, EvalResult};
use crate::value::{Keyword, Symbol, Value};

macro_rules! type_predicate {
    ($fn_name:ident, $pattern:pat) => {
        fn $fn_name(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
            Ok(Value::Bool(matches!(&args[0], $pattern)))
        }
    };
}

type_predicate!(is_nil, Value::Nil);
fn is_some(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(!args[0].is_nil()))
}
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
    builtin!("boolean", [1], boolean, "(boolean x)", "false for nil and false, true for everything else.", "[(boolean nil) (boolean 0)]" => "[false true]"),
    builtin!("name", [1], name, "(name x)", "The name of a keyword or symbol without its namespace; a string is returned as it is.", "[(name :user/id) (name 'x) (name \"s\")]" => "[\"id\" \"x\" \"s\"]"),
    builtin!("namespace", [1], namespace, "(namespace x)", "The namespace of a keyword or symbol, or nil.", "[(namespace :user/id) (namespace :id)]" => "[\"user\" nil]"),
    builtin!("keyword", [1..=2], keyword, "(keyword name) (keyword ns name)", "The keyword with that name (from a string, symbol or keyword); nil for nil and other values.", "[(keyword \"status\") (keyword \"user\" \"id\")]" => "[:status :user/id]"),
    builtin!("symbol", [1..=2], symbol, "(symbol name) (symbol ns name)", "The symbol with that name (from a string, keyword or symbol).", "(symbol \"abc\")" => "abc"),
    builtin!("type", [1], type_of, "(type x)", "The type of x as a keyword: :integer :float :string :char :boolean :keyword :symbol :list :vector :map :set :function :regex :var or :lazy-seq; nil for nil (Clojure returns Java classes).", "[(type 1) (type \"a\") (type [1]) (type nil)]" => "[:integer :string :vector nil]"),
];

fn boolean(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(args[0].truthy()))
}

fn name(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match &args[0] {
        Value::Keyword(k) => Ok(Value::string(k.name())),
        Value::Symbol(s) => Ok(Value::string(s.name())),
        Value::Str(_) => Ok(args[0].clone()),
        other => Err(Error::type_error(format!(
            "name expects a keyword, symbol or string, got {}",
            got(other)
        ))
        .into()),
    }
}

fn namespace(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let ns = match &args[0] {
        Value::Keyword(k) => k.namespace(),
        Value::Symbol(s) => s.namespace(),
        other => {
            return Err(Error::type_error(format!(
                "namespace expects a keyword or symbol, got {}",
                got(other)
            ))
            .into());
        }
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
fn qualified(fname: &str, ns: &Value, name: &Value) -> Result<String, Error> {
    let part = |v: &Value| -> Result<Option<String>, Error> {
        match v {
            Value::Nil => Ok(None),
            Value::Str(s) => Ok(Some(s.to_string())),
            other => Err(Error::type_error(format!(
                "({fname} ns name) expects strings, got {}",
                got(other)
            ))),
        }
    };
    let name = part(name)?.ok_or_else(|| {
        Error::type_error(format!("({fname} ns name) needs a name string, got nil"))
    })?;
    Ok(match part(ns)? {
        Some(ns) => format!("{ns}/{name}"),
        None => name,
    })
}

fn keyword(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match args {
        [Value::Keyword(_)] => Ok(args[0].clone()),
        [x] => Ok(name_text(x)
            .map(|t| Value::Keyword(Keyword::new(t)))
            .unwrap_or_default()),
        [ns, name] => Ok(Value::Keyword(Keyword::new(&qualified(
            "keyword", ns, name,
        )?))),
        _ => unreachable!("arity checked"),
    }
}

fn symbol(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match args {
        [Value::Symbol(_)] => Ok(args[0].clone()),
        [x] => match name_text(x) {
            Some(t) => Ok(Value::Symbol(Symbol::new(t))),
            None => Err(Error::type_error(format!(
                "symbol expects a string, keyword or symbol, got {}",
                got(x)
            ))
            .into()),
        },
        [ns, name] => Ok(Value::Symbol(Symbol::new(&qualified("symbol", ns, name)?))),
        _ => unreachable!("arity checked"),
    }
}

fn type_of(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let name = match &args[0] {
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
    };
    Ok(Value::keyword(name))
}

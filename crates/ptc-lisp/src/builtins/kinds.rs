//! Predicates on what a value can do (`ifn?`, `seqable?`, `counted?`, ...), on names
//! (`ident?`, `qualified-keyword?`, ...) and on identity (`identical?`), and the predicates of
//! kinds of value PTC-Lisp has none of (`record?`, `uri?`, ...), which are false for every value.

use super::args::Call;
use super::{Builtin, builtin};
use crate::eval::{Ctx, EvalResult};
use crate::value::Value;

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("any?", any, "(any? x)", "True for any value, nil included.", "(any? nil)" => "true"),
    builtin!("associative?", associative, "(associative? x)", "True for maps and vectors, which assoc works on by key or index.", "[(associative? {}) (associative? [1]) (associative? '(1))]" => "[true true false]"),
    builtin!("counted?", counted, "(counted? x)", "True for collections that know their size without walking (not lazy sequences or strings).", "[(counted? [1 2]) (counted? \"ab\")]" => "[true false]"),
    builtin!("seqable?", seqable, "(seqable? x)", "True for what seq accepts: nil, collections, strings and lazy sequences.", "[(seqable? nil) (seqable? \"ab\") (seqable? 1)]" => "[true true false]"),
    builtin!("ifn?", ifn, "(ifn? x)", "True for what can be called: functions, keywords, symbols, maps, sets, vectors and #'vars.", "[(ifn? :a) (ifn? {}) (ifn? \"a\")]" => "[true true false]"),
    builtin!("indexed?", indexed, "(indexed? x)", "True for vectors, which nth reaches in constant time.", "[(indexed? [1]) (indexed? '(1))]" => "[true false]"),
    builtin!("reversible?", reversible, "(reversible? x)", "True for vectors, sorted maps and sorted sets, which rseq reverses.", "[(reversible? [1]) (reversible? (sorted-set 1)) (reversible? #{1})]" => "[true true false]"),
    builtin!("sorted?", sorted, "(sorted? x)", "True for sorted maps and sorted sets.", "[(sorted? (sorted-map :a 1)) (sorted? {:a 1})]" => "[true false]"),
    builtin!("var?", var, "(var? x)", "True for #'name, a reference to a user definition.", "(do (def x 1) [(var? #'x) (var? 'x)])" => "[true false]"),
    builtin!("ident?", ident, "(ident? x)", "True for keywords and symbols.", "[(ident? :a) (ident? 'a/b) (ident? \"a\")]" => "[true true false]"),
    builtin!("simple-ident?", simple_ident, "(simple-ident? x)", "True for keywords and symbols without a namespace.", "[(simple-ident? :a) (simple-ident? :a/b)]" => "[true false]"),
    builtin!("qualified-ident?", qualified_ident, "(qualified-ident? x)", "True for keywords and symbols with a namespace.", "[(qualified-ident? 'a/b) (qualified-ident? 'b)]" => "[true false]"),
    builtin!("simple-keyword?", simple_keyword, "(simple-keyword? x)", "True for keywords without a namespace.", "[(simple-keyword? :a) (simple-keyword? :a/b)]" => "[true false]"),
    builtin!("qualified-keyword?", qualified_keyword, "(qualified-keyword? x)", "True for keywords with a namespace.", "[(qualified-keyword? :user/id) (qualified-keyword? :id)]" => "[true false]"),
    builtin!("simple-symbol?", simple_symbol, "(simple-symbol? x)", "True for symbols without a namespace.", "[(simple-symbol? 'a) (simple-symbol? 'a/b)]" => "[true false]"),
    builtin!("qualified-symbol?", qualified_symbol, "(qualified-symbol? x)", "True for symbols with a namespace.", "[(qualified-symbol? 'a/b) (qualified-symbol? :a/b)]" => "[true false]"),
    builtin!("special-symbol?", special_symbol, "(special-symbol? x)", "True for the symbols Clojure's compiler treats as special forms (if, do, let*, fn*, quote, ...).", "[(special-symbol? 'if) (special-symbol? 'when)]" => "[true false]"),
    builtin!("identical?", identical, "(identical? x y)", "True if x and y are the same object: equal nil, booleans, keywords and small integers, or one collection, string or function held twice.", "(let [v [1 2]] [(identical? v v) (identical? v [1 2])])" => "[true false]"),
    builtin!("record?", never, "(record? x)", "False: PTC-Lisp has no records (use maps).", "(record? {:a 1})" => "false"),
    builtin!("uri?", never, "(uri? x)", "False: PTC-Lisp has no URI values (use strings).", "(uri? \"https://example.com\")" => "false"),
    builtin!("bytes?", never, "(bytes? x)", "False: PTC-Lisp has no byte arrays.", "(bytes? [1 2])" => "false"),
];

macro_rules! predicate {
    ($fn_name:ident, $x:ident => $test:expr) => {
        fn $fn_name(_: &mut Ctx, _: Call, $x: &Value) -> EvalResult {
            Ok(Value::Bool($test))
        }
    };
}

predicate!(any, _x => true);
predicate!(never, _x => false);
predicate!(associative, x => matches!(x, Value::Map(_) | Value::Vector(_)));
predicate!(counted, x => matches!(x, Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_)));
predicate!(seqable, x => matches!(
    x,
    Value::Nil | Value::Str(_) | Value::List(_) | Value::Vector(_) | Value::Map(_) | Value::Set(_) | Value::Lazy(_)
));
predicate!(ifn, x => matches!(x, Value::Fn(f) if !super::delay::is_delay(f)) || matches!(
    x,
    Value::Keyword(_) | Value::Symbol(_) | Value::Map(_) | Value::Set(_) | Value::Vector(_) | Value::Var(_)
));
predicate!(indexed, x => matches!(x, Value::Vector(_)));
predicate!(reversible, x => match x {
    Value::Vector(_) => true,
    Value::Map(m) => m.is_sorted(),
    Value::Set(s) => s.is_sorted(),
    _ => false,
});
predicate!(sorted, x => match x {
    Value::Map(m) => m.is_sorted(),
    Value::Set(s) => s.is_sorted(),
    _ => false,
});
predicate!(var, x => matches!(x, Value::Var(_)));
predicate!(ident, x => matches!(x, Value::Keyword(_) | Value::Symbol(_)));
predicate!(simple_ident, x => ident_namespace(x) == Some(false));
predicate!(qualified_ident, x => ident_namespace(x) == Some(true));
predicate!(simple_keyword, x => matches!(x, Value::Keyword(k) if k.namespace().is_none()));
predicate!(qualified_keyword, x => matches!(x, Value::Keyword(k) if k.namespace().is_some()));
predicate!(simple_symbol, x => matches!(x, Value::Symbol(s) if s.namespace().is_none()));
predicate!(qualified_symbol, x => matches!(x, Value::Symbol(s) if s.namespace().is_some()));
predicate!(special_symbol, x => matches!(x, Value::Symbol(s) if crate::analyze::CLOJURE_SPECIAL_FORMS.contains(&s.as_str())));

/// Whether a keyword or symbol has a namespace; `None` for any other value.
fn ident_namespace(x: &Value) -> Option<bool> {
    match x {
        Value::Keyword(k) => Some(k.namespace().is_some()),
        Value::Symbol(s) => Some(s.namespace().is_some()),
        _ => None,
    }
}

fn identical(_: &mut Ctx, _: Call, (x, y): (&Value, &Value)) -> EvalResult {
    Ok(Value::Bool(match (x, y) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        // The JVM boxes integers, sharing only the small ones.
        (Value::Int(a), Value::Int(b)) => a == b && (-128..=127).contains(a),
        (Value::Char(a), Value::Char(b)) => a == b && u32::from(*a) <= 127,
        (Value::Keyword(_), Value::Keyword(_)) => x == y,
        (Value::Str(a), Value::Str(b)) => arcstr::ArcStr::ptr_eq(a, b),
        (Value::List(a), Value::List(b)) | (Value::Vector(a), Value::Vector(b)) => a.ptr_eq(b),
        (Value::Map(a), Value::Map(b)) => a.ptr_eq(b),
        (Value::Set(a), Value::Set(b)) => a.ptr_eq(b),
        (Value::Fn(a), Value::Fn(b)) => a.ptr_eq(b),
        (Value::Lazy(a), Value::Lazy(b)) => a.ptr_eq(b),
        _ => false,
    }))
}

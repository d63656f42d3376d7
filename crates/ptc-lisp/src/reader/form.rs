//! Forms: program text as data, before any meaning is given to it.

use crate::span::Span;

/// One form of the source with the byte span it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// What the form is.
    pub kind: FormKind,
    /// Where it is in the program text.
    pub span: Span,
    /// The metadata written before it (`^:private`, `^String`, `^{:doc "..."}`), as one map
    /// form: `^:k` is `{:k true}`, `^Name` and `^"Name"` are `{:tag Name}`, and stacked
    /// prefixes are merged, the outer one winning.
    pub meta: Option<Box<Form>>,
}

/// The pattern matching the kinds of literal form: those that are the same value quoted or not
/// (see `Value::from_literal`). One list, so that a new literal kind is added everywhere at once.
macro_rules! literal_kind {
    () => {
        $crate::reader::FormKind::Nil
            | $crate::reader::FormKind::Bool(_)
            | $crate::reader::FormKind::Int(_)
            | $crate::reader::FormKind::Float(_)
            | $crate::reader::FormKind::Big(_)
            | $crate::reader::FormKind::Str(_)
            | $crate::reader::FormKind::Char(_)
            | $crate::reader::FormKind::Keyword(_)
    };
}
pub(crate) use literal_kind;

/// What a form is: a literal, a symbol, a collection of forms or a reader macro.
#[derive(Debug, Clone, PartialEq)]
pub enum FormKind {
    /// `nil`.
    Nil,
    /// `true` or `false`.
    Bool(bool),
    /// An integer literal that fits in 64 bits (`42`, `-7`, `0xFF`).
    Int(i64),
    /// A float literal (`2.5`, `1e3`, `##NaN`, `##Inf`, `##-Inf`).
    Float(f64),
    /// A big integer (`7N`), ratio (`1/3`) or big decimal (`1.5M`) literal.
    Big(crate::value::BigNumber),
    /// A string literal with escapes resolved.
    Str(String),
    /// A character literal (`\a`, `\newline`, `\space`, `\tab`, `\u00e9`).
    Char(char),
    /// A keyword without its leading colon (`:a` is `"a"`, `:a/b` is `"a/b"`).
    Keyword(String),
    /// A symbol, possibly namespaced (`x`, `tool/fetch-users`, `clojure.string/join`, `Math/floor`).
    Symbol(arcstr::ArcStr),
    /// `#"regex"`: the pattern text exactly as written between the quotes.
    Regex(String),
    /// `(...)`.
    List(Vec<Form>),
    /// `[...]`.
    Vector(Vec<Form>),
    /// `{k v ...}`: keys and values alternating (the parser checks the count is even).
    Map(Vec<Form>),
    /// `#{...}`.
    Set(Vec<Form>),
    /// `#(...)`: the forms inside the parentheses.
    AnonFn(Vec<Form>),
    /// `'form`.
    Quote(Box<Form>),
    /// `#'name`.
    Var(String),
    /// `@form`, read as `(deref form)`.
    Deref(Box<Form>),
    /// A tagged literal `#tag form` (`#inst "2024-01-01"`, `#fn[inc]`).
    Tagged(String, Box<Form>),
    /// `` `form ``: a template; symbols in it are qualified, `~x` and `~@xs` are filled in.
    SyntaxQuote(Box<Form>),
    /// `~form`, read as `(clojure.core/unquote form)`.
    Unquote(Box<Form>),
    /// `~@form`, read as `(clojure.core/unquote-splicing form)`.
    UnquoteSplicing(Box<Form>),
}

impl Form {
    pub(crate) fn new(kind: FormKind, span: Span) -> Form {
        Form {
            kind,
            span,
            meta: None,
        }
    }

    /// The name, for a symbol.
    pub fn as_symbol(&self) -> Option<&str> {
        match &self.kind {
            FormKind::Symbol(s) => Some(s),
            _ => None,
        }
    }

    /// A short description for error messages: "symbol", "vector", "integer" ...
    pub fn describe(&self) -> &'static str {
        match self.kind {
            FormKind::Nil => "nil",
            FormKind::Bool(_) => "boolean",
            FormKind::Int(_) => "integer",
            FormKind::Float(_) => "float",
            FormKind::Big(ref b) => b.type_name(),
            FormKind::Str(_) => "string",
            FormKind::Char(_) => "character",
            FormKind::Keyword(_) => "keyword",
            FormKind::Symbol(_) => "symbol",
            FormKind::Regex(_) => "regex",
            FormKind::List(_) => "list",
            FormKind::Vector(_) => "vector",
            FormKind::Map(_) => "map",
            FormKind::Set(_) => "set",
            FormKind::AnonFn(_) => "#(...) function",
            FormKind::Quote(_) => "quoted form",
            FormKind::Var(_) => "var",
            FormKind::Deref(_) => "@ form",
            FormKind::Tagged(..) => "tagged literal",
            FormKind::SyntaxQuote(_) => "syntax-quoted form",
            FormKind::Unquote(_) => "~ (unquote) form",
            FormKind::UnquoteSplicing(_) => "~@ (unquote-splicing) form",
        }
    }
}

/// "an integer", "a vector": a description with its indefinite article.
pub fn with_article(description: &str) -> String {
    match description.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => format!("an {description}"),
        _ => format!("a {description}"),
    }
}

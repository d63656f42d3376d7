//! Signatures: the shape of an agent's input and of the value it must return.
//!
//! ```text
//! (query :string, limit :int?) -> {items [{id :int, title :string}], _cursor :string?}
//! [:string]
//! ```
//!
//! A signature is either `(param :type, ...) -> OUTPUT` or just `OUTPUT`. Types are
//! `:string :int :float :bool :keyword :any :map`, `[T]` (a list or vector of `T`),
//! `{field T, ...}` (a map with at least these fields; more are allowed) and `T?` (optional: may
//! be `nil`, and a field may be missing). Commas between parameters and fields are optional.
//! An integer is accepted where a float is expected.
//!
//! Fields whose names start with `_` are *firewalled*: the program must still return them and
//! the host receives them, but they are never shown to the model in later messages (see
//! [`Signature::redact`]).

use std::fmt::{self, Write as _};

use ptc_lisp::Compact;
use ptc_lisp::Value;
use ptc_turn::preview;

/// A type in a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// `:string`
    String,
    /// `:int`
    Int,
    /// `:float` (integers are accepted too)
    Float,
    /// `:bool`
    Bool,
    /// `:keyword`
    Keyword,
    /// `:any`: any value, `nil` included.
    Any,
    /// `:map`: any map.
    Map,
    /// `[T]`: a list or vector whose items are all `T`.
    List(Box<Type>),
    /// `{field T, ...}`: a map with these fields (and possibly others).
    Record(Vec<Field>),
    /// `T?`: `T` or `nil`; as a field, also a missing field.
    Optional(Box<Type>),
}

/// A field of a [`Type::Record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The field's name, as written (a keyword of the map, without `:`).
    pub name: String,
    /// The type its value must have.
    pub ty: Type,
}

impl Field {
    /// Whether the field is firewalled (its name starts with `_`): returned to the host, never
    /// shown to the model.
    pub fn is_firewalled(&self) -> bool {
        self.name.starts_with('_')
    }
}

/// A parameter of a signature: one input the agent expects in its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The name of the input, as `data/NAME` reads it.
    pub name: String,
    /// The type the input must have.
    pub ty: Type,
}

/// A parsed signature. Build one with [`Signature::parse`].
///
/// ```
/// use ptc_run::Signature;
/// use ptc_lisp::eval_str;
///
/// let sig = Signature::parse("(city :string) -> {temp :float, _station :string}").unwrap();
/// assert_eq!(sig.params()[0].name, "city");
/// let ok = eval_str(r#"{:temp 21 :_station "OSL-3"}"#).unwrap();
/// assert!(sig.validate(&ok).is_ok());
/// let bad = eval_str(r#"{:temp "warm"}"#).unwrap();
/// let problems = sig.validate(&bad).unwrap_err();
/// assert_eq!(problems[0].to_string(), "temp: expected float, got string \"warm\"");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    source: String,
    params: Vec<Param>,
    output: Type,
}

/// A signature that could not be parsed, with the place of the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid signature at line {line}, column {col}: {message}\n{excerpt}")]
pub struct SignatureError {
    /// What is wrong and what to write instead.
    pub message: String,
    /// 1-based line of the problem.
    pub line: u32,
    /// 1-based column (in characters) of the problem.
    pub col: u32,
    /// The offending line with a caret under the problem.
    pub excerpt: String,
}

/// One way a value does not match a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Where in the value: empty for the value itself, else like `items[2].price`.
    pub path: String,
    /// What the signature asks for there, e.g. `float` or `field items`.
    pub expected: String,
    /// What the value has there, e.g. `string "12"` or `nothing`.
    pub got: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "the value"
        } else {
            &self.path
        };
        write!(f, "{path}: expected {}, got {}", self.expected, self.got)
    }
}

/// Most mismatches reported for one value; a model fixes the first few and tries again.
const MAX_MISMATCHES: usize = 8;

/// How much of a value is quoted in a mismatch.
const QUOTE_ITEMS: usize = 3;
const QUOTE_CHARS: usize = 40;

/// The text shown for firewalled fields when a value is shown to the model.
pub const FIREWALLED: &str = "[hidden]";

impl Signature {
    /// Parses a signature; errors carry the line and column of the problem.
    ///
    /// ```
    /// use ptc_run::Signature;
    /// let err = Signature::parse("{name :str}").unwrap_err();
    /// assert_eq!((err.line, err.col), (1, 7));
    /// assert!(err.message.starts_with("unknown type :str"));
    /// ```
    pub fn parse(text: &str) -> Result<Signature, SignatureError> {
        let mut parser = Parser { text, pos: 0 };
        let signature = parser.signature()?;
        Ok(Signature {
            source: text.trim().to_string(),
            ..signature
        })
    }

    /// The signature as written (trimmed).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The inputs, in order (empty for an output-only signature).
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The type of the value the agent must return.
    pub fn output(&self) -> &Type {
        &self.output
    }

    /// Checks a returned value against the output type.
    pub fn validate(&self, value: &Value) -> Result<(), Vec<Mismatch>> {
        let mut mismatches = Vec::new();
        check(&self.output, value, &mut String::new(), &mut mismatches);
        if mismatches.is_empty() {
            Ok(())
        } else {
            Err(mismatches)
        }
    }

    /// Checks input data against the parameters: each parameter must be present (unless
    /// optional) with a value of its type. `lookup` finds a data value by name.
    pub fn validate_input<'v>(
        &self,
        lookup: impl Fn(&str) -> Option<&'v Value>,
    ) -> Result<(), Vec<Mismatch>> {
        self.check_input(lookup, true)
    }

    /// Like [`validate_input`](Self::validate_input), but parameters that are missing are not
    /// reported (they may still be given later, e.g. when the agent runs).
    pub fn validate_given_input<'v>(
        &self,
        lookup: impl Fn(&str) -> Option<&'v Value>,
    ) -> Result<(), Vec<Mismatch>> {
        self.check_input(lookup, false)
    }

    fn check_input<'v>(
        &self,
        lookup: impl Fn(&str) -> Option<&'v Value>,
        require_all: bool,
    ) -> Result<(), Vec<Mismatch>> {
        let mut mismatches = Vec::new();
        for param in &self.params {
            let mut path = format!("data/{}", param.name);
            match lookup(&param.name) {
                Some(value) => check(&param.ty, value, &mut path, &mut mismatches),
                None if !require_all || matches!(param.ty, Type::Optional(_) | Type::Any) => {}
                None => mismatches.push(Mismatch {
                    path,
                    expected: param.ty.describe(),
                    got: "nothing (it is missing from the input data)".into(),
                }),
            }
        }
        if mismatches.is_empty() {
            Ok(())
        } else {
            Err(mismatches)
        }
    }

    /// The value with every firewalled field's value replaced by [`FIREWALLED`], for showing to
    /// the model. Fields are matched as in validation (keyword or string keys).
    pub fn redact(&self, value: &Value) -> Value {
        redact(&self.output, value)
    }

    /// The field `name` of the output map (`-` and `_` alike, as in validation), if the
    /// output is a map with such a field.
    pub fn output_field(&self, name: &str) -> Option<&Field> {
        let Type::Record(fields) = self.output.without_optional() else {
            return None;
        };
        let spelled = |n: &str| n.replace('-', "_");
        fields.iter().find(|f| spelled(&f.name) == spelled(name))
    }

    /// Whether the output type has firewalled fields anywhere.
    pub fn has_firewalled_fields(&self) -> bool {
        has_firewalled(&self.output)
    }

    /// The parameters as the JSON Schema of one object, a property per parameter, the ones
    /// that are not optional required: how a native function tool takes them.
    ///
    /// ```
    /// use ptc_run::Signature;
    /// use serde_json::json;
    ///
    /// let sig = Signature::parse("(id :string, limit :int?) -> :any").unwrap();
    /// assert_eq!(sig.params_json_schema(), json!({
    ///     "type": "object",
    ///     "properties": {"id": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
    ///     "required": ["id"],
    /// }));
    /// ```
    pub fn params_json_schema(&self) -> serde_json::Value {
        object_schema(self.params.iter().map(|p| (p.name.as_str(), &p.ty)))
    }
}

/// The JSON Schema of an object with these fields; the ones not optional (nor `:any`) are
/// required.
fn object_schema<'t>(fields: impl Iterator<Item = (&'t str, &'t Type)>) -> serde_json::Value {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (name, ty) in fields {
        if !matches!(ty, Type::Optional(_) | Type::Any) {
            required.push(serde_json::Value::from(name));
        }
        properties.insert(name.to_string(), ty.json_schema());
    }
    serde_json::json!({"type": "object", "properties": properties, "required": required})
}

impl fmt::Display for Signature {
    /// The canonical form: `(a :int, b [:string]) -> {x :float?}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.params.is_empty() {
            f.write_char('(')?;
            for (i, param) in self.params.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{} {}", param.name, param.ty)?;
            }
            f.write_str(") -> ")?;
        }
        write!(f, "{}", self.output)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::String => f.write_str(":string"),
            Type::Int => f.write_str(":int"),
            Type::Float => f.write_str(":float"),
            Type::Bool => f.write_str(":bool"),
            Type::Keyword => f.write_str(":keyword"),
            Type::Any => f.write_str(":any"),
            Type::Map => f.write_str(":map"),
            Type::List(item) => write!(f, "[{item}]"),
            Type::Record(fields) => {
                f.write_char('{')?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{} {}", field.name, field.ty)?;
                }
                f.write_char('}')
            }
            Type::Optional(inner) => write!(f, "{inner}?"),
        }
    }
}

impl Type {
    /// The type as JSON Schema, for tools that take or give values of it as JSON: keywords are
    /// strings, `:float` any number, `:any` any value, `T?` the type or `null`.
    ///
    /// ```
    /// use ptc_run::Signature;
    /// use serde_json::json;
    ///
    /// let sig = Signature::parse("[{sku :string, qty :int}]").unwrap();
    /// assert_eq!(sig.output().json_schema(), json!({
    ///     "type": "array",
    ///     "items": {
    ///         "type": "object",
    ///         "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
    ///         "required": ["sku", "qty"],
    ///     },
    /// }));
    /// ```
    pub fn json_schema(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Type::String | Type::Keyword => json!({"type": "string"}),
            Type::Int => json!({"type": "integer"}),
            Type::Float => json!({"type": "number"}),
            Type::Bool => json!({"type": "boolean"}),
            Type::Any => json!({}),
            Type::Map => json!({"type": "object"}),
            Type::List(item) => json!({"type": "array", "items": item.json_schema()}),
            Type::Record(fields) => object_schema(fields.iter().map(|f| (f.name.as_str(), &f.ty))),
            Type::Optional(inner) => {
                let mut schema = inner.json_schema();
                match schema.get("type").cloned() {
                    Some(serde_json::Value::String(name)) => {
                        schema["type"] = json!([name, "null"]);
                        schema
                    }
                    // `:any?` is any value already.
                    _ if schema == json!({}) => schema,
                    _ => json!({"anyOf": [schema, {"type": "null"}]}),
                }
            }
        }
    }

    /// The type inside an optional one, or the type itself.
    pub fn without_optional(&self) -> &Type {
        match self {
            Type::Optional(inner) => inner.without_optional(),
            other => other,
        }
    }

    /// The type's name in a mismatch: `float`, `list`, `map`, ...
    fn describe(&self) -> String {
        match self {
            Type::String => "string".into(),
            Type::Int => "int".into(),
            Type::Float => "float".into(),
            Type::Bool => "bool".into(),
            Type::Keyword => "keyword".into(),
            Type::Any => "any value".into(),
            Type::Map | Type::Record(_) => "map".into(),
            Type::List(_) => "list".into(),
            Type::Optional(inner) => format!("{} or nil", inner.describe()),
        }
    }
}

fn has_firewalled(ty: &Type) -> bool {
    match ty {
        Type::List(item) | Type::Optional(item) => has_firewalled(item),
        Type::Record(fields) => fields
            .iter()
            .any(|f| f.is_firewalled() || has_firewalled(&f.ty)),
        _ => false,
    }
}

/// `string "warm"`, `nil`, `vector [1 2 3 ...] (5 items, showing first 3)`.
fn got(value: &Value) -> String {
    match value {
        Value::Nil => "nil".into(),
        _ => {
            let text = preview(value, Compact::new(QUOTE_ITEMS, QUOTE_CHARS));
            format!("{} {text}", value.type_name())
        }
    }
}

/// The entry of field `name` in `map`: a keyword or string key, written with `-` or `_` alike
/// (a leading `_`, which marks a firewalled field, stays as written).
fn field_entry<'m>(map: &'m ptc_lisp::Map, name: &str) -> Option<(&'m Value, &'m Value)> {
    let lookup = |key: &str| {
        map.get_entry(&Value::keyword(key))
            .or_else(|| map.get_entry(&Value::string(key)))
    };
    lookup(name).or_else(|| {
        let (lead, body) = match name.strip_prefix('_') {
            Some(body) => ("_", body),
            None => ("", name),
        };
        let swapped: String = body
            .chars()
            .map(|c| match c {
                '-' => '_',
                '_' => '-',
                c => c,
            })
            .collect();
        (swapped != body)
            .then(|| lookup(&format!("{lead}{swapped}")))
            .flatten()
    })
}

fn check(ty: &Type, value: &Value, path: &mut String, out: &mut Vec<Mismatch>) {
    if out.len() >= MAX_MISMATCHES {
        return;
    }
    let mismatch = |out: &mut Vec<Mismatch>, path: &str| {
        out.push(Mismatch {
            path: path.to_string(),
            expected: ty.describe(),
            got: got(value),
        })
    };
    match (ty, value) {
        (Type::Any, _) => {}
        (Type::Optional(_), Value::Nil) => {}
        (Type::Optional(inner), _) => {
            let before = out.len();
            check(inner, value, path, out);
            // The value itself is wrong (not something inside it): nil would have done too.
            for mismatch in &mut out[before..] {
                if mismatch.path == *path {
                    mismatch.expected = ty.describe();
                }
            }
        }
        (Type::String, Value::Str(_))
        | (Type::Int, Value::Int(_))
        // A ratio or a decimal is a float to the caller, who gets JSON.
        | (Type::Float, Value::Float(_) | Value::Int(_) | Value::Big(_))
        | (Type::Bool, Value::Bool(_))
        | (Type::Keyword, Value::Keyword(_))
        | (Type::Map, Value::Map(_)) => {}
        (Type::Int, Value::Big(b)) if b.to_i64().is_some() => {}
        (Type::List(item), Value::List(items) | Value::Vector(items)) => {
            for (i, element) in items.iter().enumerate() {
                let len = path.len();
                let _ = write!(path, "[{i}]");
                check(item, element, path, out);
                path.truncate(len);
                if out.len() >= MAX_MISMATCHES {
                    return;
                }
            }
        }
        (Type::Record(fields), Value::Map(map)) => {
            for field in fields {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&field.name);
                match field_entry(map, &field.name) {
                    Some((_, v)) => check(&field.ty, v, path, out),
                    None if matches!(field.ty, Type::Optional(_) | Type::Any) => {}
                    None => out.push(Mismatch {
                        path: path.clone(),
                        expected: field.ty.describe(),
                        got: "nothing (the field is missing)".into(),
                    }),
                }
                path.truncate(len);
                if out.len() >= MAX_MISMATCHES {
                    return;
                }
            }
        }
        _ => mismatch(out, path),
    }
}

fn redact(ty: &Type, value: &Value) -> Value {
    match (ty, value) {
        (Type::Optional(inner), _) => redact(inner, value),
        (Type::List(item), Value::List(items)) if has_firewalled(item) => {
            Value::list(items.iter().map(|v| redact(item, v)))
        }
        (Type::List(item), Value::Vector(items)) if has_firewalled(item) => {
            Value::vector(items.iter().map(|v| redact(item, v)))
        }
        (Type::Record(fields), Value::Map(map)) if has_firewalled(ty) => {
            let mut out = map.clone();
            for field in fields {
                let Some((key, v)) = field_entry(map, &field.name) else {
                    continue;
                };
                let replacement = if field.is_firewalled() {
                    Value::string(FIREWALLED)
                } else {
                    redact(&field.ty, v)
                };
                out = out.assoc(key.clone(), replacement);
            }
            Value::Map(out)
        }
        _ => value.clone(),
    }
}

/// The type names a signature may use, for error messages.
const TYPE_NAMES: &str = ":string :int :float :bool :keyword :any :map";

struct Parser<'t> {
    text: &'t str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, at: usize, message: impl Into<String>) -> SignatureError {
        let at = at.min(self.text.len());
        let before = &self.text[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line_end = self.text[at..]
            .find('\n')
            .map_or(self.text.len(), |i| at + i);
        let line = before.matches('\n').count() + 1;
        let col = self.text[line_start..at].chars().count() + 1;
        let excerpt = format!(
            "  {}\n  {}^",
            &self.text[line_start..line_end],
            " ".repeat(col - 1)
        );
        SignatureError {
            message: message.into(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col).unwrap_or(u32::MAX),
            excerpt,
        }
    }

    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_ws(&mut self) {
        let trimmed = self.rest().trim_start();
        self.pos = self.text.len() - trimmed.len();
    }

    /// Whitespace and at most one comma.
    fn skip_separator(&mut self) {
        self.skip_ws();
        if self.peek() == Some(',') {
            self.pos += 1;
            self.skip_ws();
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            None => "the end of the signature".into(),
            Some(_) => {
                let token: String = self
                    .rest()
                    .chars()
                    .take_while(|c| !c.is_whitespace())
                    .take(20)
                    .collect();
                format!("`{token}`")
            }
        }
    }

    fn signature(&mut self) -> Result<Signature, SignatureError> {
        self.skip_ws();
        if self.peek().is_none() {
            return Err(self.error(
                self.pos,
                format!(
                    "the signature is empty; write an output type such as {{total :float}} or \
                     (param :type) -> OUTPUT (types: {TYPE_NAMES}, [T], {{field T}})"
                ),
            ));
        }
        let params = if self.peek() == Some('(') {
            let params = self.params()?;
            self.skip_ws();
            if !self.rest().starts_with("->") {
                return Err(self.error(
                    self.pos,
                    format!(
                        "expected `->` and the output type after the parameters, found {}",
                        self.found()
                    ),
                ));
            }
            self.pos += 2;
            self.skip_ws();
            params
        } else {
            Vec::new()
        };
        let output = self.ty()?;
        self.skip_ws();
        if self.peek().is_some() {
            return Err(self.error(
                self.pos,
                format!(
                    "unexpected {} after the output type; a signature has one output type",
                    self.found()
                ),
            ));
        }
        Ok(Signature {
            source: String::new(),
            params,
            output,
        })
    }

    fn params(&mut self) -> Result<Vec<Param>, SignatureError> {
        let open = self.pos;
        self.pos += 1; // `(`
        let mut params: Vec<Param> = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some(')') => {
                    self.pos += 1;
                    return Ok(params);
                }
                None => {
                    return Err(self.error(
                        open,
                        "this `(` is never closed; end the parameters with `)`",
                    ));
                }
                _ if self.rest().starts_with("->") => {
                    return Err(self.error(
                        self.pos,
                        "the parameters are not closed: write `)` before `->`",
                    ));
                }
                _ => {}
            }
            let at = self.pos;
            let name = self.identifier("a parameter name")?;
            if params.iter().any(|p| p.name == name) {
                return Err(self.error(at, format!("the parameter {name} is declared twice")));
            }
            self.skip_ws();
            let ty = self.ty()?;
            params.push(Param { name, ty });
            self.skip_separator();
        }
    }

    fn identifier(&mut self, what: &str) -> Result<String, SignatureError> {
        let start = self.pos;
        let rest = self.rest();
        let body = rest.strip_prefix(':').unwrap_or(rest);
        let skipped = rest.len() - body.len();
        let len: usize = body
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '?' | '!' | '*'))
            .map(char::len_utf8)
            .sum();
        let name = body[..len].to_string();
        if name.is_empty() || !name.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            return Err(self.error(start, format!("expected {what}, found {}", self.found())));
        }
        self.pos += skipped + len;
        Ok(name)
    }

    fn ty(&mut self) -> Result<Type, SignatureError> {
        let start = self.pos;
        let base = match self.peek() {
            Some(':') => {
                let rest = &self.rest()[1..];
                let len: usize = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_'))
                    .map(char::len_utf8)
                    .sum();
                let ty = match &rest[..len] {
                    "string" => Type::String,
                    "int" => Type::Int,
                    "float" => Type::Float,
                    "bool" => Type::Bool,
                    "keyword" => Type::Keyword,
                    "any" => Type::Any,
                    "map" => Type::Map,
                    other => {
                        let hint = match other {
                            "str" | "text" => " (did you mean :string?)",
                            "integer" | "long" | "number" => " (did you mean :int or :float?)",
                            "double" | "num" => " (did you mean :float?)",
                            "boolean" => " (did you mean :bool?)",
                            "list" | "vector" | "seq" => " (write a list as [T], e.g. [:string])",
                            "object" | "dict" => " (write a map as {field T} or :map)",
                            _ => "",
                        };
                        return Err(self.error(
                            start,
                            format!("unknown type :{other}{hint}; the types are {TYPE_NAMES}, [T] and {{field T}}"),
                        ));
                    }
                };
                self.pos += 1 + len;
                ty
            }
            Some('[') => {
                self.pos += 1;
                self.skip_ws();
                if self.peek() == Some(']') {
                    return Err(self.error(
                        self.pos,
                        "a list type needs its item type, e.g. [:string] or [:any]",
                    ));
                }
                let item = self.ty()?;
                self.skip_ws();
                if self.peek() != Some(']') {
                    return Err(self.error(
                        self.pos,
                        format!(
                            "expected `]` after the item type of the list, found {}; a list type \
                             has one item type, e.g. [:int]",
                            self.found()
                        ),
                    ));
                }
                self.pos += 1;
                Type::List(Box::new(item))
            }
            Some('{') => self.record()?,
            _ => {
                return Err(self.error(
                    start,
                    format!(
                        "expected a type, found {}; the types are {TYPE_NAMES}, [T] and {{field T}}",
                        self.found()
                    ),
                ));
            }
        };
        if self.peek() == Some('?') {
            self.pos += 1;
            if self.peek() == Some('?') {
                return Err(self.error(self.pos, "a type is optional once: write T?, not T??"));
            }
            return Ok(Type::Optional(Box::new(base)));
        }
        Ok(base)
    }

    fn record(&mut self) -> Result<Type, SignatureError> {
        let open = self.pos;
        self.pos += 1; // `{`
        let mut fields: Vec<Field> = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                Some('}') => {
                    self.pos += 1;
                    return Ok(Type::Record(fields));
                }
                None => {
                    return Err(
                        self.error(open, "this `{` is never closed; end the fields with `}`")
                    );
                }
                _ => {}
            }
            let at = self.pos;
            let name = self.identifier("a field name")?;
            if fields.iter().any(|f| f.name == name) {
                return Err(self.error(at, format!("the field {name} is declared twice")));
            }
            self.skip_ws();
            let ty = self.ty()?;
            fields.push(Field { name, ty });
            self.skip_separator();
        }
    }
}

//! A tool's JSON Schemas as a PTC signature, and a program's arguments as the JSON object the
//! tool's `inputSchema` asks for, checked before the call.
//!
//! | JSON Schema | signature |
//! |---|---|
//! | `string` (with or without `enum`) | `:string` |
//! | `integer` / `number` | `:int` / `:float` |
//! | `boolean` | `:bool` |
//! | `array` of `items` | `[T]` (`[:any]` without `items`) |
//! | `object` with `properties` | `{field T, ...}`, fields not `required` optional (`T?`) |
//! | `object` without `properties` | `:map` |
//! | a `type` list with `null`, or `anyOf`/`oneOf` of one type and `null` | `T?` |
//! | anything else (`$ref`, unions, no `type`) | `:any` |

use ptc_agent::Signature;
use ptc_agent::signature::{Field, Type};
use ptc_lisp::Value;
use ptc_lisp::{from_json, to_json};
use serde_json::{Map, Value as Json};

/// How deep nested schemas are turned into types; deeper ones are `:any`.
const MAX_DEPTH: usize = 6;

/// One top-level property of a tool's input.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Param {
    pub name: String,
    pub ty: Type,
    pub required: bool,
    /// The values an `enum` allows (empty when any value of the type is allowed).
    pub choices: Vec<Json>,
}

/// What a tool takes and returns, derived from its schemas.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    /// In the schema's order when it is known, else required ones first.
    pub params: Vec<Param>,
    /// `additionalProperties: false`: other argument names are refused before the call.
    pub closed: bool,
    pub has_output_schema: bool,
    /// The signature text, or `None` when a property name cannot be written in one.
    pub signature: Option<String>,
    /// The parameters as a record type, to check arguments against.
    check: Option<Signature>,
}

/// Whether `name` can be written as a parameter or field name of a signature.
fn is_identifier(name: &str) -> bool {
    name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '?' | '!' | '*'))
}

/// The type a schema describes (see the module docs).
pub(crate) fn type_of(schema: &Json, depth: usize) -> Type {
    let Some(schema) = schema.as_object() else {
        return Type::Any;
    };
    if depth > MAX_DEPTH {
        return Type::Any;
    }
    if let Some(options) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Json::as_array)
    {
        let non_null: Vec<&Json> = options
            .iter()
            .filter(|o| o.get("type").and_then(Json::as_str) != Some("null"))
            .collect();
        return match non_null.as_slice() {
            [one] if non_null.len() < options.len() => optional(type_of(one, depth + 1)),
            [one] => type_of(one, depth + 1),
            _ => Type::Any,
        };
    }
    let (name, nullable) = match schema.get("type") {
        Some(Json::String(name)) => (Some(name.as_str()), false),
        Some(Json::Array(names)) => {
            let names: Vec<&str> = names.iter().filter_map(Json::as_str).collect();
            let non_null: Vec<&str> = names.iter().copied().filter(|n| *n != "null").collect();
            match non_null.as_slice() {
                [one] => (Some(*one), non_null.len() < names.len()),
                _ => (None, false),
            }
        }
        _ if schema.contains_key("properties") => (Some("object"), false),
        _ => match schema.get("enum").and_then(Json::as_array) {
            Some(values) if values.iter().all(Json::is_string) => (Some("string"), false),
            _ => (None, false),
        },
    };
    let ty = match name {
        Some("string") => Type::String,
        Some("integer") => Type::Int,
        Some("number") => Type::Float,
        Some("boolean") => Type::Bool,
        Some("array") => Type::List(Box::new(
            schema
                .get("items")
                .map_or(Type::Any, |items| type_of(items, depth + 1)),
        )),
        Some("object") => record(schema, &[], depth),
        _ => Type::Any,
    };
    if nullable { optional(ty) } else { ty }
}

fn optional(ty: Type) -> Type {
    match ty {
        Type::Any | Type::Optional(_) => ty,
        other => Type::Optional(Box::new(other)),
    }
}

fn required_names(schema: &Map<String, Json>) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default()
}

/// The properties of an object schema, in `order` where it names them, then required ones,
/// then the rest.
fn ordered_properties<'s>(
    schema: &'s Map<String, Json>,
    order: &[String],
) -> Vec<(&'s String, &'s Json)> {
    let Some(properties) = schema.get("properties").and_then(Json::as_object) else {
        return Vec::new();
    };
    let required = required_names(schema);
    let rank = |name: &str| -> (usize, usize) {
        if let Some(i) = order.iter().position(|o| o == name) {
            (0, i)
        } else if let Some(i) = required.iter().position(|r| *r == name) {
            (1, i)
        } else {
            (2, 0)
        }
    };
    let mut props: Vec<(&String, &Json)> = properties.iter().collect();
    props.sort_by_key(|(name, _)| rank(name));
    props
}

/// `{field T, ...}` for an object schema with identifier-named properties, else `:map`.
fn record(schema: &Map<String, Json>, order: &[String], depth: usize) -> Type {
    let props = ordered_properties(schema, order);
    if props.is_empty() || props.iter().any(|(name, _)| !is_identifier(name)) {
        return Type::Map;
    }
    let required = required_names(schema);
    Type::Record(
        props
            .into_iter()
            .map(|(name, prop)| {
                let ty = type_of(prop, depth + 1);
                Field {
                    name: name.clone(),
                    ty: if required.contains(&name.as_str()) {
                        ty
                    } else {
                        optional(ty)
                    },
                }
            })
            .collect(),
    )
}

impl Shape {
    /// The shape of a tool with these schemas; `input_order` and `output_order` are the
    /// properties' order as written, when known.
    pub fn new(
        input: &Map<String, Json>,
        output: Option<&Map<String, Json>>,
        input_order: &[String],
        output_order: &[String],
    ) -> Shape {
        let required = required_names(input);
        let params: Vec<Param> = ordered_properties(input, input_order)
            .into_iter()
            .map(|(name, prop)| Param {
                name: name.clone(),
                ty: type_of(prop, 1),
                required: required.contains(&name.as_str()),
                choices: prop
                    .get("enum")
                    .and_then(Json::as_array)
                    .cloned()
                    .unwrap_or_default(),
            })
            .collect();
        let closed = input.get("additionalProperties") == Some(&Json::Bool(false));
        let output_type = output.map_or(Type::Any, |o| match o.get("type") {
            Some(Json::String(t)) if t == "object" => record(o, output_order, 0),
            None if o.contains_key("properties") => record(o, output_order, 0),
            _ => type_of(&Json::Object(o.clone()), 0),
        });
        let typed = params.iter().all(|p| is_identifier(&p.name));
        let param_text = |p: &Param| {
            let ty = if p.required {
                p.ty.clone()
            } else {
                optional(p.ty.clone())
            };
            format!("{} {ty}", p.name)
        };
        let signature = typed.then(|| {
            let list: Vec<String> = params.iter().map(param_text).collect();
            format!("({}) -> {output_type}", list.join(", "))
        });
        let check = (typed && !params.is_empty())
            .then(|| {
                let fields: Vec<String> = params.iter().map(param_text).collect();
                Signature::parse(&format!("{{{}}}", fields.join(", "))).ok()
            })
            .flatten();
        Shape {
            params,
            closed,
            has_output_schema: output.is_some(),
            signature: signature.filter(|s| Signature::parse(s).is_ok()),
            check,
        }
    }

    /// The parameter names, in order.
    pub fn param_names(&self) -> Vec<String> {
        self.params.iter().map(|p| p.name.clone()).collect()
    }

    /// The allowed values of enum parameters, for the tool's description: `location: "New
    /// York" | "Chicago"`.
    pub fn choices_note(&self) -> Option<String> {
        let notes: Vec<String> = self
            .params
            .iter()
            .filter(|p| !p.choices.is_empty())
            .map(|p| {
                let values: Vec<String> = p.choices.iter().map(Json::to_string).collect();
                format!("{}: {}", p.name, values.join(" | "))
            })
            .collect();
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    /// How to call the tool, for error messages.
    pub fn usage(&self, tool: &str) -> String {
        if self.params.is_empty() {
            return format!("call it as (tool/{tool})");
        }
        let names: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
        let keys: Vec<String> = self
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| format!(":{} ...", p.name))
            .collect();
        let mut text = format!(
            "call it as (tool/{tool} {{{}}}) or (tool/{tool} {})",
            keys.join(" "),
            names.join(" ")
        );
        if let Some(signature) = &self.signature {
            text.push_str(&format!(", with {signature}"));
        }
        text
    }

    /// The JSON object of arguments for a call with `args`: one map of named arguments, or
    /// positional arguments in parameter order. Checked against the schema's parameter types,
    /// required names, enums and (when it says so) closed set of names.
    pub fn arguments(&self, tool: &str, args: &[Value]) -> Result<Map<String, Json>, String> {
        let fail = |problem: String| Err(format!("tool/{tool}: {problem}; {}", self.usage(tool)));
        let object = match args {
            [] => Map::new(),
            [Value::Map(_)] if self.takes_map_as_named(&args[0]) => {
                let Json::Object(given) = to_json(&args[0]) else {
                    return fail("the arguments map could not be read".into());
                };
                let mut object = Map::new();
                for (key, value) in given {
                    match self.param_named(&key) {
                        Some(name) => {
                            object.insert(name.to_string(), value);
                        }
                        None if self.closed => {
                            return fail(format!("it has no argument {key}"));
                        }
                        None => {
                            object.insert(key, value);
                        }
                    }
                }
                object
            }
            _ if args.len() > self.params.len() => {
                return fail(format!(
                    "it takes at most {} argument{}, got {}",
                    self.params.len(),
                    if self.params.len() == 1 { "" } else { "s" },
                    args.len()
                ));
            }
            _ => self
                .params
                .iter()
                .zip(args)
                .filter(|(_, value)| !matches!(value, Value::Nil))
                .map(|(param, value)| (param.name.clone(), to_json(value)))
                .collect(),
        };
        let missing: Vec<String> = self
            .params
            .iter()
            .filter(|p| p.required && !object.contains_key(&p.name))
            .map(|p| format!("{} ({})", p.name, p.ty))
            .collect();
        if !missing.is_empty() {
            return fail(format!("missing argument {}", missing.join(", ")));
        }
        if let Some(check) = &self.check
            && let Err(mismatches) = check.validate(&from_json(&Json::Object(object.clone())))
        {
            let shown: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
            return fail(shown.join("; "));
        }
        for param in self.params.iter().filter(|p| !p.choices.is_empty()) {
            if let Some(value) = object.get(&param.name)
                && !param.choices.contains(value)
            {
                let allowed: Vec<String> = param.choices.iter().map(Json::to_string).collect();
                return fail(format!(
                    "{}: expected one of {}, got {value}",
                    param.name,
                    allowed.join(", ")
                ));
            }
        }
        Ok(object)
    }

    /// The parameter a map key names: the same name, or the same with `-` and `_` swapped.
    fn param_named(&self, key: &str) -> Option<&str> {
        let alike = |a: &str, b: &str| a == b || a.replace('-', "_") == b.replace('-', "_");
        self.params
            .iter()
            .find(|p| p.name == key)
            .or_else(|| self.params.iter().find(|p| alike(&p.name, key)))
            .map(|p| p.name.as_str())
    }

    /// Whether a single map argument holds named arguments, rather than being the value of a
    /// one-parameter tool's parameter.
    fn takes_map_as_named(&self, map: &Value) -> bool {
        let Value::Map(map) = map else {
            return false;
        };
        match self.params.as_slice() {
            [only]
                if matches!(
                    only.ty.without_optional(),
                    Type::Map | Type::Record(_) | Type::Any
                ) =>
            {
                map.iter()
                    .all(|(key, _)| key_text(key).is_some_and(|k| self.param_named(&k).is_some()))
            }
            _ => true,
        }
    }
}

fn key_text(key: &Value) -> Option<String> {
    match key {
        Value::Keyword(k) => Some(k.as_str().to_string()),
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn shape(input: Json, output: Option<Json>) -> Shape {
        let output = output.map(|o| o.as_object().unwrap().clone());
        Shape::new(input.as_object().unwrap(), output.as_ref(), &[], &[])
    }

    fn read_file() -> Shape {
        let input = json!({"type": "object", "properties": {
            "head": {"type": "number"}, "path": {"type": "string"}, "tail": {"type": "number"}},
            "required": ["path"], "additionalProperties": false});
        let output = json!({"type": "object", "properties": {"content": {"type": "string"}},
                            "required": ["content"]});
        let input = input.as_object().unwrap().clone();
        let output = output.as_object().unwrap().clone();
        let order = ["path".to_string(), "tail".into(), "head".into()];
        Shape::new(&input, Some(&output), &order, &[])
    }

    #[test]
    fn schemas_become_signatures() {
        assert_eq!(
            read_file().signature.as_deref(),
            Some("(path :string, tail :float?, head :float?) -> {content :string}")
        );
        let s = shape(
            json!({"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": ["integer", "null"]},
                "filter": {"type": "object", "properties": {"since": {"type": "string"}}},
                "any": {"anyOf": [{"type": "string"}, {"type": "number"}]},
                "opt": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
                "raw": {"type": "object"},
                "color": {"enum": ["red", "blue"]},
                "ref": {"$ref": "#/defs/x"}},
              "required": ["tags", "limit", "raw"]}),
            Some(json!({"type": "array", "items": {"type": "integer"}})),
        );
        assert_eq!(
            s.signature.as_deref(),
            Some(
                "(tags [:string], limit :int?, raw :map, any :any, color :string?, \
                 filter {since :string?}?, opt :bool?, ref :any) -> [:int]"
            )
        );
        assert_eq!(
            s.choices_note().as_deref(),
            Some("color: \"red\" | \"blue\"")
        );
        let odd = shape(
            json!({"properties": {"user.name": {"type": "string"}}}),
            None,
        );
        assert_eq!(odd.signature, None);
        assert_eq!(odd.param_names(), vec!["user.name"]);
    }

    #[test]
    fn arguments_by_name_or_position() {
        let s = read_file();
        let call = |args: &[Value]| s.arguments("read", args).map(Json::Object);
        let kw = |k: &str| Value::keyword(k);
        assert_eq!(
            call(&[Value::string("a.txt")]),
            Ok(json!({"path": "a.txt"}))
        );
        assert_eq!(
            call(&[Value::string("a.txt"), Value::Nil, Value::Int(2)]),
            Ok(json!({"path": "a.txt", "head": 2}))
        );
        assert_eq!(
            call(&[Value::map([
                (kw("path"), Value::string("a")),
                (kw("head"), Value::Int(1))
            ])]),
            Ok(json!({"path": "a", "head": 1}))
        );
        let usage = "call it as (tool/read {:path ...}) or (tool/read path tail head), with \
                     (path :string, tail :float?, head :float?) -> {content :string}";
        assert_eq!(
            call(&[]),
            Err(format!(
                "tool/read: missing argument path (:string); {usage}"
            ))
        );
        assert_eq!(
            call(&[Value::Int(3)]),
            Err(format!(
                "tool/read: path: expected string, got integer 3; {usage}"
            ))
        );
        assert_eq!(
            call(&[Value::map([
                (kw("path"), Value::string("a")),
                (kw("mode"), Value::Int(1))
            ])]),
            Err(format!("tool/read: it has no argument mode; {usage}"))
        );
        assert_eq!(
            call(&[Value::Nil, Value::Nil, Value::Nil, Value::Nil]),
            Err(format!(
                "tool/read: it takes at most 3 arguments, got 4; {usage}"
            ))
        );
    }

    #[test]
    fn enums_and_single_map_parameters() {
        let s = shape(
            json!({"type": "object", "properties": {
                "location": {"type": "string", "enum": ["New York", "Chicago"]}},
              "required": ["location"]}),
            None,
        );
        assert_eq!(
            s.arguments("weather", &[Value::string("Paris")]),
            Err(
                "tool/weather: location: expected one of \"New York\", \"Chicago\", got \
                 \"Paris\"; call it as (tool/weather {:location ...}) or (tool/weather \
                 location), with (location :string) -> :any"
                    .to_string()
            )
        );
        let s = shape(
            json!({"type": "object", "properties": {"filter": {"type": "object"}}}),
            None,
        );
        let map = Value::map([(Value::keyword("since"), Value::string("x"))]);
        assert_eq!(
            s.arguments("find", &[map]).map(Json::Object),
            Ok(json!({"filter": {"since": "x"}}))
        );
    }
}

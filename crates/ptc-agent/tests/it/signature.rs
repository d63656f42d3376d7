//! Signatures: parsing (with error positions), validation and firewalled fields.

use pretty_assertions::assert_eq;
use ptc_agent::signature::{Field, Param, Type};
use ptc_agent::{Agent, BuildError, ScriptedLlm, Signature, tool_fn};
use ptc_lisp::Value;

fn parse(text: &str) -> Signature {
    Signature::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn value(text: &str) -> Value {
    ptc_lisp::eval_str(text).expect("a valid value")
}

fn problems(signature: &str, returned: &str) -> Vec<String> {
    match parse(signature).validate(&value(returned)) {
        Ok(()) => Vec::new(),
        Err(mismatches) => mismatches.iter().map(ToString::to_string).collect(),
    }
}

fn error(text: &str) -> (u32, u32, String) {
    let e = Signature::parse(text).expect_err(text);
    (e.line, e.col, e.message)
}

#[test]
fn output_only_and_full_signatures_parse() {
    let sig = parse(":int");
    assert_eq!((sig.params(), sig.output()), (&[][..], &Type::Int));
    let sig = parse("(query :string, limit :int?) -> [{id :int, title :string}]");
    assert_eq!(
        sig.params(),
        &[
            Param {
                name: "query".into(),
                ty: Type::String
            },
            Param {
                name: "limit".into(),
                ty: Type::Optional(Box::new(Type::Int))
            },
        ]
    );
    assert_eq!(
        sig.output(),
        &Type::List(Box::new(Type::Record(vec![
            Field {
                name: "id".into(),
                ty: Type::Int
            },
            Field {
                name: "title".into(),
                ty: Type::String
            },
        ])))
    );
    assert_eq!(
        sig.to_string(),
        "(query :string, limit :int?) -> [{id :int, title :string}]"
    );
}

#[test]
fn every_type_name_and_lenient_spelling() {
    let sig = parse(
        "{ :a :string  b :int c :float, d :bool, e :keyword, f :any, g :map, h [:any]?, \
         total-count :int, _secret :string }",
    );
    assert_eq!(
        sig.to_string(),
        "{a :string, b :int, c :float, d :bool, e :keyword, f :any, g :map, h [:any]?, \
         total-count :int, _secret :string}"
    );
    assert_eq!(parse("()->:bool").to_string(), ":bool");
    assert_eq!(
        parse("  (\n  x :int\n) ->\n {y :int}  ").source(),
        "(\n  x :int\n) ->\n {y :int}"
    );
}

#[test]
fn parse_errors_name_the_place_and_what_to_write() {
    assert_eq!(
        error("{name :str}"),
        (
            1,
            7,
            "unknown type :str (did you mean :string?); the types are :string :int :float \
             :bool :keyword :any :map, [T] and {field T}"
                .into()
        )
    );
    assert_eq!(
        error("(a :int) {x :int}"),
        (
            1,
            10,
            "expected `->` and the output type after the parameters, found `{x`".into()
        )
    );
    assert_eq!(
        error("(a :int,\n b :integer) -> :int"),
        (
            2,
            4,
            "unknown type :integer (did you mean :int or :float?); the types are :string :int \
             :float :bool :keyword :any :map, [T] and {field T}"
                .into()
        )
    );
    assert_eq!(
        error("[:int :string]"),
        (
            1,
            7,
            "expected `]` after the item type of the list, found `:string]`; a list type has \
             one item type, e.g. [:int]"
                .into()
        )
    );
    assert_eq!(
        error("{a :int, a :string}"),
        (1, 10, "the field a is declared twice".into())
    );
    assert_eq!(
        error("{a :int"),
        (
            1,
            1,
            "this `{` is never closed; end the fields with `}`".into()
        )
    );
    assert_eq!(
        error(":int :int").2,
        "unexpected `:int` after the output type; a signature has one output type"
    );
    assert_eq!(
        error("[]").2,
        "a list type needs its item type, e.g. [:string] or [:any]"
    );
    assert_eq!(
        error(":int??").2,
        "a type is optional once: write T?, not T??"
    );
    assert_eq!((error("{1x :int}").0, error("{1x :int}").1), (1, 2));
    assert!(error("   ").2.starts_with("the signature is empty"));
    let rendered = Signature::parse("{name :str}")
        .expect_err("bad")
        .to_string();
    assert_eq!(
        rendered,
        "invalid signature at line 1, column 7: unknown type :str (did you mean :string?); the \
         types are :string :int :float :bool :keyword :any :map, [T] and {field T}\n  \
         {name :str}\n        ^"
    );
}

#[test]
fn primitive_values() {
    assert_eq!(problems(":string", "\"hi\""), Vec::<String>::new());
    assert_eq!(problems(":int", "3"), Vec::<String>::new());
    assert_eq!(problems(":bool", "false"), Vec::<String>::new());
    assert_eq!(problems(":keyword", ":done"), Vec::<String>::new());
    assert_eq!(problems(":map", "{:a 1}"), Vec::<String>::new());
    assert_eq!(problems(":any", "nil"), Vec::<String>::new());
    assert_eq!(
        problems(":int", "3.5"),
        vec!["the value: expected int, got float 3.5"]
    );
    assert_eq!(
        problems(":string", "nil"),
        vec!["the value: expected string, got nil"]
    );
    assert_eq!(
        problems(":bool", "\"true\""),
        vec!["the value: expected bool, got string \"true\""]
    );
    assert_eq!(
        problems(":keyword", "\"done\""),
        vec!["the value: expected keyword, got string \"done\""]
    );
    assert_eq!(
        problems(":map", "[1]"),
        vec!["the value: expected map, got vector [1]"]
    );
}

#[test]
fn an_integer_is_accepted_where_a_float_is_expected() {
    assert_eq!(problems(":float", "3"), Vec::<String>::new());
    assert_eq!(problems(":float", "3.25"), Vec::<String>::new());
    assert_eq!(
        problems("{price :float}", "{:price 10}"),
        Vec::<String>::new()
    );
    assert_eq!(
        problems(":float", "\"3\""),
        vec!["the value: expected float, got string \"3\""]
    );
}

#[test]
fn lists_check_every_item_with_its_index() {
    assert_eq!(problems("[:int]", "[1 2 3]"), Vec::<String>::new());
    assert_eq!(problems("[:int]", "'(1 2)"), Vec::<String>::new());
    assert_eq!(problems("[:int]", "[]"), Vec::<String>::new());
    assert_eq!(
        problems("[:int]", "[1 \"2\" 3 :four]"),
        vec![
            "[1]: expected int, got string \"2\"",
            "[3]: expected int, got keyword :four"
        ]
    );
    assert_eq!(
        problems("[:int]", "#{1}"),
        vec!["the value: expected list, got set #{1}"]
    );
}

#[test]
fn maps_need_their_fields_and_may_have_more() {
    let sig = "{name :string, tags [:keyword], address {city :string}}";
    assert_eq!(
        problems(
            sig,
            "{:name \"Ada\" :tags [:x] :address {:city \"Oslo\"} :extra 1}"
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        problems(sig, "{:tags [:x \"y\"] :address {:town \"Oslo\"}}"),
        vec![
            "name: expected string, got nothing (the field is missing)",
            "tags[1]: expected keyword, got string \"y\"",
            "address.city: expected string, got nothing (the field is missing)",
        ]
    );
    // String keys and - / _ spellings are accepted.
    assert_eq!(
        problems(
            "{total_count :int, max-size :int}",
            "{\"total_count\" 1 :max_size 2}"
        ),
        Vec::<String>::new()
    );
}

#[test]
fn optional_types_accept_nil_and_missing_fields() {
    let sig = "{name :string, note :string?, tags [:string]?}";
    assert_eq!(problems(sig, "{:name \"a\"}"), Vec::<String>::new());
    assert_eq!(
        problems(sig, "{:name \"a\" :note nil :tags nil}"),
        Vec::<String>::new()
    );
    assert_eq!(
        problems(sig, "{:name \"a\" :note 5}"),
        vec!["note: expected string or nil, got integer 5"]
    );
    assert_eq!(
        problems(":int?", "\"x\""),
        vec!["the value: expected int or nil, got string \"x\""]
    );
}

#[test]
fn long_values_are_quoted_short_and_problems_are_capped() {
    let many = format!(
        "[{}]",
        (0..20)
            .map(|i| format!("\"{i}\""))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let found = problems("[:int]", &many);
    assert_eq!(found.len(), 8);
    assert_eq!(
        problems("{a :int}", "{:a [1 2 3 4 5]}"),
        vec!["a: expected int, got vector [1 2 3 ...] (5 items, showing first 3)"]
    );
}

#[test]
fn firewalled_fields_are_hidden_when_shown() {
    let sig = parse("{user {name :string, _token :string}, items [{id :int, _cost :float}]}");
    assert!(sig.has_firewalled_fields());
    let returned = value(
        "{:user {:name \"Ada\" :_token \"t-1\"} :items [{:id 1 :_cost 2.5} {:id 2}] :other 3}",
    );
    assert_eq!(
        sig.validate(&returned),
        Err(vec![ptc_agent::Mismatch {
            path: "items[1]._cost".into(),
            expected: "float".into(),
            got: "nothing (the field is missing)".into(),
        }])
    );
    assert_eq!(
        ptc_lisp::pr_str(&sig.redact(&returned)),
        "{:user {:name \"Ada\", :_token \"[hidden]\"}, :items [{:id 1, :_cost \"[hidden]\"} {:id \
         2}], :other 3}"
    );
    assert!(!parse("{a :int}").has_firewalled_fields());
    // Without firewalled fields the value is shown as it is.
    let plain = value("{:a 1}");
    assert_eq!(parse("{a :int}").redact(&plain), plain);
}

#[test]
fn input_data_is_checked_against_the_parameters() {
    let sig = parse("(city :string, days :int?) -> :any");
    let data = [("city", Value::Int(3))];
    let lookup = |name: &str| data.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
    assert_eq!(
        sig.validate_input(lookup)
            .map_err(|m| m.iter().map(ToString::to_string).collect::<Vec<_>>()),
        Err(vec![
            "data/city: expected string, got integer 3".to_string()
        ])
    );
    assert_eq!(
        sig.validate_input(|_| None)
            .map_err(|m| m.iter().map(ToString::to_string).collect::<Vec<_>>()),
        Err(vec![
            "data/city: expected string, got nothing (it is missing from the input data)"
                .to_string()
        ])
    );
}

#[test]
fn signature_errors_are_reported_when_the_agent_is_built() {
    let llm = ScriptedLlm::new(Vec::<String>::new());
    let built = Agent::builder("x")
        .llm(llm.clone())
        .signature("{a :nope}")
        .build();
    match built {
        Err(BuildError::Signature(e)) => assert_eq!((e.line, e.col), (1, 4)),
        other => panic!("expected a signature error, got {other:?}"),
    }
    let tool = tool_fn("t", "A tool", |x: i64| Ok::<_, ptc_agent::ToolError>(x))
        .with_signature("(x :int -> :int");
    let built = Agent::builder("x").llm(llm.clone()).tool(tool).build();
    match built {
        Err(BuildError::ToolSignature { tool, error }) => {
            assert_eq!(tool, "t");
            assert_eq!(
                (error.col, error.message.as_str()),
                (9, "the parameters are not closed: write `)` before `->`")
            );
        }
        other => panic!("expected a tool signature error, got {other:?}"),
    }
    let built = Agent::builder("x")
        .llm(llm)
        .signature("(n :int) -> :int")
        .data(&serde_json::json!({"n": "five"}))
        .build();
    assert_eq!(
        built.map(|_| ()).map_err(|e| e.to_string()),
        Err(
            "the input data does not match the signature's parameters: data/n: expected int, \
             got string \"five\""
                .to_string()
        )
    );
}

//! Small builders for turn histories, shared by the integration tests and the bench.

#![allow(dead_code)]

use ptc_lisp::value::{FnRepr, Function};
use ptc_lisp::{Definition, ToolCallRecord, ToolOutcome, ToolSpec, Value, ValueShape};
use ptc_turn::{Turn, TurnError};
use std::collections::BTreeMap;
use std::sync::Arc;

pub fn kw(name: &str) -> Value {
    Value::keyword(name)
}

pub fn s(text: &str) -> Value {
    Value::string(text)
}

pub fn map(pairs: &[(&str, Value)]) -> Value {
    Value::map(pairs.iter().map(|(k, v)| (kw(k), v.clone())))
}

pub fn ints(range: std::ops::RangeInclusive<i64>) -> Value {
    Value::vector(range.map(Value::Int))
}

/// A function value as read back from JSON.
pub fn function(name: &str) -> Value {
    Value::Fn(Function(Arc::new(FnRepr::Opaque(
        format!("#fn[{name}]").as_str().into(),
    ))))
}

pub fn value_def(name: &str, value: Value) -> Definition {
    Definition {
        name: name.into(),
        doc: None,
        value,
        params: Vec::new(),
        last_return: None,
    }
}

pub fn documented(mut def: Definition, doc: &str) -> Definition {
    def.doc = Some(doc.into());
    def
}

pub fn fn_def(name: &str, params: &[&str], last_return: Option<ValueShape>) -> Definition {
    Definition {
        name: name.into(),
        doc: None,
        value: function(name),
        params: params.iter().map(|p| p.to_string()).collect(),
        last_return,
    }
}

pub fn call(name: &str, args: Vec<Value>, result: Value) -> ToolCallRecord {
    ToolCallRecord {
        name: name.into(),
        args,
        result: ToolOutcome::Ok(result),
        duration_us: 1500,
    }
}

pub fn failed_call(name: &str, args: Vec<Value>, error: &str) -> ToolCallRecord {
    ToolCallRecord {
        name: name.into(),
        args,
        result: ToolOutcome::Error(error.into()),
        duration_us: 700,
    }
}

/// A successful turn whose raw response is the program in a code fence with a line of prose.
pub fn ok(number: u32, program: &str, value: Value) -> Turn {
    Turn::success(number, program, value).with_raw_response(format!(
        "Next I will do this.\n\n```clojure\n{program}\n```"
    ))
}

pub fn failed(number: u32, program: &str, error: TurnError) -> Turn {
    Turn::failure(number, program, error)
        .with_raw_response(format!("Trying:\n```clojure\n{program}\n```"))
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "search-reviews",
            "Review summaries for one product category",
        )
        .with_params(["category"])
        .with_signature("(category :string) -> :string"),
        ToolSpec::new("get-inventory", "Warehouse inventory report").with_signature("-> :string"),
        ToolSpec::new("send-email", "Send an email\nto one recipient").with_params(["message"]),
    ]
}

pub fn products() -> Value {
    let product = |name: &str, price: i64, category: &str| {
        map(&[
            ("name", s(name)),
            ("price", Value::Int(price)),
            ("category", s(category)),
        ])
    };
    Value::vector([
        product("Laptop", 1200, "Electronics"),
        product("Mouse", 25, "Electronics"),
        product("Desk", 300, "Furniture"),
        product("Monitor", 400, "Electronics"),
        product("Keyboard", 80, "Electronics"),
    ])
}

pub fn data() -> BTreeMap<String, Value> {
    BTreeMap::from([
        ("products".to_string(), products()),
        ("min-rating".to_string(), Value::Float(4.0)),
    ])
}

pub const MISSION: &str = "Find well-reviewed products that are in stock.";
pub const SYSTEM: &str = "You write PTC-Lisp programs.";

pub const REVIEWS: &str = "Customer Review Summary for Electronics: Laptop 4.5/5, Mouse 3.2/5, \
                           Monitor 4.8/5, Keyboard 4.1/5";

fn electronics() -> Value {
    let Value::Vector(items) = products() else {
        unreachable!("products() is a vector")
    };
    Value::vector(
        items
            .iter()
            .filter(|p| {
                p.as_map()
                    .and_then(|m| m.get(&kw("category")).cloned())
                    .is_some_and(|c| c == s("Electronics"))
            })
            .cloned(),
    )
}

/// Turn 1: exploration without printing (samples and tool results are shown).
pub fn turn1() -> Turn {
    ok(
        1,
        "(def electronics (filter #(= (:category %) \"Electronics\") data/products))\n\
         (def reviews (tool/search-reviews \"Electronics\"))",
        s(REVIEWS),
    )
    .with_tool_calls(vec![call(
        "search-reviews",
        vec![s("Electronics")],
        s(REVIEWS),
    )])
    .with_memory(memory1())
}

pub fn memory1() -> Vec<Definition> {
    vec![
        value_def("electronics", electronics()),
        documented(value_def("reviews", s(REVIEWS)), "Review text from the API"),
    ]
}

/// Turn 2: a documented function, an inventory call, and printing.
pub fn turn2() -> Turn {
    ok(
        2,
        "(defn rated \"Rating of a product name from the reviews\" [product-name] ...)\n\
         (def inventory (tool/get-inventory))\n\
         (println \"Inventory:\" inventory)\n\
         (println (rated \"Laptop\"))",
        Value::Nil,
    )
    .with_tool_calls(vec![call(
        "get-inventory",
        vec![],
        s("Laptop: 23 in stock\nMouse: OUT OF STOCK\nMonitor: 4 in stock"),
    )])
    .with_prints(vec![
        "Inventory: Laptop: 23 in stock\nMouse: OUT OF STOCK\nMonitor: 4 in stock".into(),
        "4.5".into(),
    ])
    .with_memory(memory2())
}

pub fn memory2() -> Vec<Definition> {
    let mut memory = memory1();
    memory.push(documented(
        fn_def("rated", &["[product-name]"], Some(ValueShape::Float)),
        "Rating of a product name from the reviews",
    ));
    memory.push(value_def(
        "inventory",
        s("Laptop: 23 in stock\nMouse: OUT OF STOCK\nMonitor: 4 in stock"),
    ));
    memory
}

/// Turn 3: fails on an undefined symbol.
pub fn turn3() -> Turn {
    failed(
        3,
        "(def in-stock (filter in-stock? electronics))",
        TurnError::new(
            "undefined_symbol",
            "in-stock? is not defined: define it with defn, or use a tool/ or data/ name",
        )
        .at(1, 26),
    )
    .with_memory(memory2())
}

/// Turn 4: recovers, with an uncalled helper and a tool call that failed but was caught.
pub fn turn4() -> Turn {
    ok(
        4,
        "(defn in-stock? [p] ...)\n(def picks [\"Laptop\" \"Monitor\"])\n\
         (try (tool/send-email {:to \"ops\" :subject \"picks\"}) (catch e nil))",
        Value::Nil,
    )
    .with_tool_calls(vec![failed_call(
        "send-email",
        vec![map(&[("to", s("ops")), ("subject", s("picks"))])],
        "mail server unavailable",
    )])
    .with_memory(memory4())
}

pub fn memory4() -> Vec<Definition> {
    let mut memory = memory2();
    memory.push(fn_def("in-stock?", &["[p]"], None));
    memory.push(value_def(
        "picks",
        Value::vector([s("Laptop"), s("Monitor")]),
    ));
    memory
}

pub fn history() -> Vec<Turn> {
    vec![turn1(), turn2(), turn3(), turn4()]
}

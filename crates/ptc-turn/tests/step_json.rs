//! A serialized step holds everything needed to inspect or re-render a run, and reads back
//! exactly (DBG-001, DBG-003, DBG-005; ARC-007: the turns are the record, there is no separate
//! trace). Values travel as their printed Clojure text, so these tests read values back through
//! the PTC-Lisp reader.

use pretty_assertions::assert_eq;
use ptc_lisp::Function;
use ptc_lisp::{Definition, ToolCallRecord, ToolOutcome, ToolSpec, Value, ValueShape};
use ptc_turn::{
    FailureKind, Message, Step, StepOutcome, Task, TokenUsage, Turn, TurnError, Turns, Usage,
};
use std::collections::BTreeMap;

fn usage(input: u64) -> Usage {
    Usage {
        tokens: TokenUsage {
            input_tokens: input,
            output_tokens: 40,
            cache_read_tokens: 900,
            cache_write_tokens: 0,
        },
        llm_requests: 1,
        llm_duration_us: 812_000,
        eval_duration_us: 1_250,
        duration_us: 815_000,
    }
}

fn step() -> Step {
    let users = Value::vector([
        Value::map([
            (Value::keyword("name"), Value::string("Ada")),
            (Value::keyword("age"), Value::Int(36)),
        ]),
        Value::map([
            (
                Value::keyword("name"),
                Value::string("Grace \"Amazing\"\nHopper"),
            ),
            (Value::keyword("age"), Value::Float(85.5)),
        ]),
    ]);
    let adults = Value::Fn(Function::read_back("#fn[adults]"));
    let memory = vec![
        Definition {
            name: "users".into(),
            doc: Some("Users from the API".into()),
            value: users.clone(),
            params: Vec::new(),
            last_return: None,
        },
        Definition {
            name: "adults".into(),
            doc: None,
            value: adults,
            params: vec!["[xs]".into()],
            last_return: Some(ValueShape::List(2)),
        },
    ];
    let mut turns = Turns::new();
    let program1 = "(def users \"Users from the API\" (tool/fetch-users :all))\n\
                    (defn adults [xs] (filter #(> (:age %) 18) xs))\n(println (count (adults users)))";
    turns
        .push(
            Turn::success(1, program1, Value::Nil)
                .with_raw_response(format!("Fetching.\n```clojure\n{program1}\n```"))
                .with_prints(vec!["2".into()])
                .with_tool_calls(vec![ToolCallRecord {
                    name: "fetch-users".into(),
                    args: vec![Value::keyword("all")],
                    result: ToolOutcome::Ok(users),
                    duration_us: 3_100,
                }])
                .with_memory(memory.clone())
                .with_messages(vec![Message::system("sys"), Message::user("Count adults")])
                .with_usage(usage(120)),
        )
        .expect("turn 1");
    turns
        .push(
            Turn::failure(
                2,
                "(return (count (adult users)))",
                TurnError::new("undefined_symbol", "adult is not defined").at(1, 16),
            )
            .with_raw_response("```clojure\n(return (count (adult users)))\n```")
            .with_tool_calls(vec![ToolCallRecord {
                name: "audit".into(),
                args: vec![Value::set([Value::Int(1)]), Value::Nil],
                result: ToolOutcome::Error("audit log is read-only".into()),
                duration_us: 90,
            }])
            .with_memory(memory),
        )
        .expect("turn 2");
    turns
        .push(
            Turn::success(3, "(return (count (adults users)))", Value::Int(2))
                .with_usage(usage(200)),
        )
        .expect("turn 3");
    let total = Usage::sum(turns.iter().map(Turn::usage));
    Step {
        outcome: StepOutcome::Returned {
            value: Value::Int(2),
        },
        task: Task {
            mission: "Count the adult users".into(),
            system_prompt: "You write PTC-Lisp.".into(),
            tools: vec![
                ToolSpec::new("fetch-users", "All users")
                    .with_params(["filter"])
                    .with_signature("(filter :keyword) -> [{:name :string}]"),
            ],
            data: BTreeMap::from([
                ("limit".to_string(), Value::Int(10)),
                ("tags".to_string(), Value::set([Value::keyword("vip")])),
            ]),
            data_descriptions: BTreeMap::from([("limit".to_string(), "At most this many".into())]),
            signature: Some("{count :int}".into()),
            field_descriptions: BTreeMap::from([("count".to_string(), "Adults only".into())]),
            max_turns: 4,
        },
        turns,
        usage: total,
    }
}

// DBG-003: serialize, read back, serialize again: the same JSON, the same step.
#[test]
fn step_json_round_trip_is_lossless() {
    let step = step();
    let json = serde_json::to_string_pretty(&step).expect("serialize");
    let back: Step = serde_json::from_str(&json).expect("the step reads back");
    assert_eq!(
        serde_json::to_string_pretty(&back).expect("serialize"),
        json
    );
    assert_eq!(back.turns.len(), 3);
    assert_eq!(back.value(), Some(&Value::Int(2)));
    assert_eq!(back.task, step.task);
    assert_eq!(back.usage, step.usage);
    // Every turn, field by field: programs, results, prints, tool calls, memory, messages.
    for (read, written) in back.turns.iter().zip(step.turns.iter()) {
        assert_eq!(read, written);
    }
    assert_eq!(back, step);
}

// DBG-003: a step whose values include lazy sequences (a definition `(def naturals (range))`, a
// range too long to realize, a turn result) reads back: each prints as `#lazy-seq[...]` and
// reads back as a value that prints the same and stands for the sequence that was printed.
#[test]
fn a_step_holding_lazy_sequences_reads_back_equal() {
    let naturals = ptc_lisp::eval_str("(range)").expect("an unbounded range");
    let big = ptc_lisp::eval_str("(range 100000000000)").expect("a long range");
    let squares = ptc_lisp::eval_str("(map #(* % %) (range))").expect("a lazy map");
    let memory = vec![
        Definition {
            name: "naturals".into(),
            doc: None,
            value: naturals.clone(),
            params: Vec::new(),
            last_return: None,
        },
        Definition {
            name: "big".into(),
            doc: Some("All ids".into()),
            value: big,
            params: Vec::new(),
            last_return: None,
        },
    ];
    let mut step = step();
    let mut turns = Turns::new();
    turns
        .push(
            Turn::success(
                1,
                "(def naturals (range))\n(def big (range 100000000000))",
                squares,
            )
            .with_prints(vec!["#lazy-seq[range]".into()])
            .with_tool_calls(vec![ToolCallRecord {
                name: "fetch-users".into(),
                args: vec![naturals],
                result: ToolOutcome::Ok(Value::Nil),
                duration_us: 10,
            }])
            .with_memory(memory),
        )
        .expect("turn 1");
    step.turns = turns;
    let json = serde_json::to_string(&step).expect("serialize");
    assert!(
        json.contains(r##""value":"#lazy-seq[range]""##),
        "the definition is stored as printed: {json}"
    );
    assert!(
        json.contains(r##""result":{"value":"#lazy-seq[map]"}"##),
        "the turn result is stored as printed: {json}"
    );
    let back: Step = serde_json::from_str(&json).expect("a step with lazy values reads back");
    assert_eq!(serde_json::to_string(&back).expect("serialize"), json);
    assert_eq!(back.turns.len(), 1);
    for (read, written) in back.turns.iter().zip(step.turns.iter()) {
        assert_eq!(read, written);
    }
    assert_eq!(back, step);
    let Some(Value::Lazy(lazy)) = back.turns.iter().next().and_then(|t| {
        t.memory()
            .iter()
            .find(|d| d.name == "naturals")
            .map(|d| d.value.clone())
    }) else {
        panic!("naturals reads back as a lazy sequence");
    };
    assert!(lazy.is_unrealized());
}

// DBG-001, DBG-005: the full program of every turn is in the step, and no summary is.
#[test]
fn step_json_holds_full_programs_and_no_summaries() {
    let step = step();
    let json = serde_json::to_value(&step).expect("serialize");
    let programs: Vec<&str> = json["turns"]
        .as_array()
        .expect("turns")
        .iter()
        .map(|t| t["program"].as_str().expect("program"))
        .collect();
    assert_eq!(
        programs,
        step.turns.iter().map(Turn::program).collect::<Vec<_>>()
    );
    let text = json.to_string();
    assert!(!text.contains(";; ==="), "a rendered summary was stored");
    assert_eq!(
        json["turns"][1]["result"]["error"]["kind"],
        "undefined_symbol"
    );
    assert_eq!(json["outcome"]["returned"]["value"], "2");
}

#[test]
fn failure_outcomes_round_trip() {
    let outcome = StepOutcome::Failed {
        kind: FailureKind::Failed,
        reason: "no adults".into(),
        value: Some(Value::map([(Value::keyword("code"), Value::Int(4))])),
        llm_errors: Vec::new(),
    };
    let json = serde_json::to_string(&outcome).expect("serialize");
    assert_eq!(
        json,
        r#"{"failed":{"kind":"failed","reason":"no adults","value":"{:code 4}"}}"#
    );
    let back: StepOutcome = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, outcome);
}

// A step written before turns recorded the stop reason, and failures the error of each model
// request, still loads; both fields round trip when present.
#[test]
fn steps_without_the_newer_fields_still_load() {
    let old = r#"{
      "outcome": {"failed": {"kind": "llm_error", "reason": "gave up after 2 attempts: boom"}},
      "task": {"mission": "Go", "system_prompt": "", "max_turns": 3},
      "turns": [{"number": 1, "program": "(+ 1 2)", "result": {"value": "3"},
                 "raw_response": "(+ 1 2)"}]
    }"#;
    let step: Step = serde_json::from_str(old).expect("an old step loads");
    assert_eq!(step.turns[0].stop_reason(), None);
    assert!(!step.turns[0].reply_cut_off());
    let StepOutcome::Failed { llm_errors, .. } = &step.outcome else {
        panic!("failed outcome");
    };
    assert!(llm_errors.is_empty());

    let mut turns = Turns::new();
    turns
        .push(
            Turn::failure(1, "", TurnError::new("reply_cut_off", "cut off"))
                .with_raw_response("Let me think")
                .with_stop_reason("length"),
        )
        .expect("turn 1");
    let new = Step {
        outcome: StepOutcome::Failed {
            kind: FailureKind::LlmError,
            reason: "gave up after 2 attempts".into(),
            value: None,
            llm_errors: vec!["connection closed".into(), "connection refused".into()],
        },
        turns,
        ..step
    };
    let json = serde_json::to_string(&new).expect("serialize");
    assert_eq!(
        json,
        r#"{"outcome":{"failed":{"kind":"llm_error","reason":"gave up after 2 attempts","llm_errors":["connection closed","connection refused"]}},"task":{"mission":"Go","system_prompt":"","max_turns":3},"turns":[{"number":1,"result":{"error":{"kind":"reply_cut_off","message":"cut off"}},"raw_response":"Let me think","stop_reason":"length"}]}"#
    );
    let back: Step = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, new);
    assert!(back.turns[0].reply_cut_off());
}

//! Missions whose data is generated: a mission at scale (thousands of records, tool results of
//! tens of kilobytes) keeps a program that makes its data instead of megabytes of JSON.
//!
//! `generate.clj` is a PTC-Lisp program run once when the mission loads, with no tools and no
//! input. Its value is a map:
//!
//! ```clojure
//! {:data  {:orders [...] :customers [...]}          ; each key becomes data/<key>
//!  :tools {:get-price {:cases [{:args ["sku-1"] :returns {:price 12.5}} ...]
//!                      :error "no such sku"}}}        ; answers of tools declared in tools.json
//! ```
//!
//! The language has no randomness (a program gives the same result every time), so a generator
//! makes its own numbers, e.g. with a linear congruential generator from a fixed seed: the data
//! is the same on every machine and every run, and the mission's checks can name exact answers.
//! A tool's description, parameters and signature stay in `tools.json`; the generator only
//! answers for it.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use ptc_lisp::{Limits, Outcome, Runtime, UserNamespace, Value, to_json};

use crate::tools::ToolSet;

/// What a generator may use: far more than a model's program, since it builds a whole
/// mission's data once.
fn generator_limits() -> Limits {
    Limits {
        timeout: Duration::from_secs(120),
        max_steps: 2_000_000_000,
        max_memory_bytes: 2 << 30,
        max_output_bytes: 1 << 20,
        ..Limits::default()
    }
}

/// What a generator made: the inputs, and each tool's answers as `tools.json` writes them.
#[derive(Debug, Clone)]
struct Generated {
    data: Vec<(String, Value)>,
    tools: Vec<(String, serde_json::Value)>,
}

/// Runs the generator `program` (from `source`, for errors) and adds what it made to the
/// mission's `data` and `tools`. A generated input may not also be in `data.json`. A program
/// runs once per process: the missions are loaded many times over (each evaluation, each
/// test), and the same program makes the same data.
pub fn apply(
    source: &str,
    program: &str,
    data: &mut BTreeMap<String, Value>,
    tools: &mut ToolSet,
) -> Result<(), String> {
    let generated = generate_once(source, program)?;
    for (name, input) in &generated.data {
        if data.insert(name.clone(), input.clone()).is_some() {
            return Err(format!(
                "{source}: data/{name} is both in data.json and generated"
            ));
        }
    }
    for (name, answers) in &generated.tools {
        tools.set_answers(source, name, answers.clone())?;
    }
    Ok(())
}

type Made = Result<Arc<Generated>, String>;

fn generate_once(source: &str, program: &str) -> Made {
    static MADE: OnceLock<Mutex<HashMap<(String, String), Made>>> = OnceLock::new();
    let key = (source.to_string(), program.to_string());
    let made = MADE.get_or_init(Mutex::default);
    if let Some(found) = made
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return found.clone();
    }
    // Not under the lock: generators of different missions run at once.
    let result = generate(source, program).map(Arc::new);
    made.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, result.clone());
    result
}

fn generate(source: &str, program: &str) -> Result<Generated, String> {
    let runtime = Runtime::new().with_limits(generator_limits());
    let value = match runtime.run_str(program, &UserNamespace::new()).outcome {
        Outcome::Value(value) | Outcome::Returned(value) => value,
        Outcome::Failed(reason) => {
            return Err(format!("{source}: the generator called fail: {reason}"));
        }
        Outcome::Error(e) => return Err(format!("{source}: the generator failed: {e}")),
    };
    let Value::Map(made) = &value else {
        return Err(format!(
            "{source}: the generator must return a map {{:data {{...}} :tools {{...}}}}, not {}",
            value.type_name()
        ));
    };
    let mut generated = Generated {
        data: Vec::new(),
        tools: Vec::new(),
    };
    for (key, part) in made.iter() {
        let key = key_name(key).ok_or_else(|| {
            format!("{source}: the generator's map has a key {key} that is not a keyword")
        })?;
        let Value::Map(entries) = part else {
            return Err(format!(
                "{source}: :{key} must be a map of names to values, not {}",
                part.type_name()
            ));
        };
        let target = match key.as_str() {
            "data" => None,
            "tools" => Some(()),
            other => {
                return Err(format!(
                    "{source}: the generator's map has :{other}; only :data and :tools mean \
                     something"
                ));
            }
        };
        for (name, value) in entries.iter() {
            let name = key_name(name).ok_or_else(|| {
                format!("{source}: the name {name} under :{key} is not a keyword or a string")
            })?;
            match target {
                None => generated.data.push((name, value.clone())),
                Some(()) => generated.tools.push((name, to_json(value))),
            }
        }
    }
    Ok(generated)
}

/// A keyword's or a string's name.
fn key_name(value: &Value) -> Option<String> {
    match value {
        Value::Keyword(k) => Some(k.as_str().to_string()),
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn tools() -> ToolSet {
        ToolSet::from_json(
            "tools.json",
            r#"{"price": {"description": "A price", "params": ["sku"]}}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_generator_adds_data_and_tool_answers() {
        let program = r#"
            (def seeds (take 3 (iterate #(mod (+ (* % 1103515245) 12345) 2147483648) 7)))
            {:data {:skus (mapv #(str "sku-" (mod % 100)) seeds)}
             :tools {:price {:cases (mapv (fn [s] {:args [(str "sku-" (mod s 100))]
                                                   :returns (mod s 50)}) seeds)
                             :error "no such sku"}}}"#;
        let mut data = BTreeMap::new();
        let mut tools = tools();
        apply("generate.clj", program, &mut data, &mut tools).unwrap();
        assert_eq!(
            to_json(&data["skus"]),
            serde_json::json!(["sku-7", "sku-16", "sku-33"])
        );
        let log = crate::tools::CallLog::new();
        let tool = tools.instantiate(&log).remove(0);
        let answer = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(tool.call(vec![Value::string("sku-16")]));
        assert_eq!(answer.map(|v| to_json(&v)), Ok(serde_json::json!(16)));
    }

    #[test]
    fn a_generator_that_does_not_fit_is_refused_with_its_reason() {
        let cases = [
            (
                "[1 2]",
                "generate.clj: the generator must return a map {:data {...} :tools {...}}, not vector",
            ),
            (
                "{:rows []}",
                "generate.clj: :rows must be a map of names to values, not vector",
            ),
            (
                "{:extra {}}",
                "generate.clj: the generator's map has :extra; only :data and :tools mean something",
            ),
            (
                "{:tools {:send {:returns 1}}}",
                "generate.clj: answers for tool send, which tools.json does not declare (declare it there with its description, params and signature)",
            ),
            (
                "{:tools {:price {:returns 1 :error \"x\"}}}",
                "generate.clj: tool price: the default answer has both `returns` and `error`; give one of them (the value returned, or the error message the call fails with)",
            ),
        ];
        for (program, expected) in cases {
            let error =
                apply("generate.clj", program, &mut BTreeMap::new(), &mut tools()).unwrap_err();
            assert_eq!(error, expected, "{program}");
        }
    }
}

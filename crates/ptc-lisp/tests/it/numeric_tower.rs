//! The numeric tower through every builtin that takes numbers, against Clojure 1.11: the
//! generated cases of `tests/numeric_tower/generated.cases` (written by
//! `cargo xtask conformance --numeric` from a fixed seed, with Clojure's results) must print
//! exactly what Clojure printed, or fail where Clojure threw, or, for an intended deviation,
//! give what the case's `;; ptc` line states (a refusal is an error of the stated kind whose
//! message names the type and what to write instead). A silent wrong answer fails the test.
//!
//! `NUMERIC_FILTER=name-part cargo test -p ptc-lisp --test it numeric_tower` runs only matching
//! cases.

use crate::cases::{Case, Item, Outcome, PtcOutcome, parse_cases};
use ptc_lisp::{Outcome as RunResult, Runtime, UserNamespace, Value, pr_str, read_value};
use std::path::Path;

const FILE: &str = "tests/numeric_tower/generated.cases";

/// Whether two values are the same to the bit: the same kinds of numbers (1 is not 1N, 1.0M is
/// not 1.00M), floats of the same bits (NaN matches NaN), lists and vectors of such items. Only
/// the text of a float may differ: Java 17 prints some floats with a digit more than the
/// shortest text that reads back as the same float (-9.2233720368547763E17).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Value::List(x), Value::List(y)) | (Value::Vector(x), Value::Vector(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(p, q))
        }
        _ => pr_str(a) == pr_str(b),
    }
}

/// Whether PTC-Lisp gives exactly the case's result; what it gave instead, when not.
fn check(case: &Case) -> Result<(), String> {
    let outcome = case
        .outcome
        .as_ref()
        .ok_or("the case has no result; run `cargo xtask conformance --numeric`")?;
    let run = Runtime::new()
        .run_str(&case.program_text(), &UserNamespace::new())
        .outcome;
    let actual = match &run {
        RunResult::Value(v) | RunResult::Returned(v) => Ok(pr_str(v)),
        RunResult::Failed(v) => Ok(format!("(fail {})", pr_str(v))),
        RunResult::Error(e) => Err(e),
    };
    match (&case.ptc, outcome, actual) {
        (Some(PtcOutcome::Error(kind)), _, Err(e)) if e.kind.as_str() == kind => Ok(()),
        (Some(PtcOutcome::Value(text)), _, Ok(v)) | (None, Outcome::Value(text), Ok(v))
            if v == *text
                || matches!((&run, read_value(text)), (RunResult::Value(got), Ok(expected)) if same(got, &expected)) =>
        {
            Ok(())
        }
        (None, Outcome::Error { .. }, Err(e)) => match e.kind {
            ptc_lisp::ErrorKind::UndefinedSymbol | ptc_lisp::ErrorKind::Parse => {
                Err(format!("Clojure throws; PTC-Lisp: {}", e.render()))
            }
            _ => Ok(()),
        },
        (ptc, outcome, actual) => Err(format!(
            "expected {}, got {}",
            ptc.as_ref()
                .map_or_else(|| outcome.shown(), PtcOutcome::shown),
            match actual {
                Ok(v) => v,
                Err(e) => e.render().replace('\n', " "),
            }
        )),
    }
}

#[test]
fn numeric_tower_matches_clojure() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(manifest.join(FILE)).expect("the generated cases exist");
    let filter = std::env::var("NUMERIC_FILTER").unwrap_or_default();
    let cases: Vec<Case> = parse_cases(FILE, &text)
        .unwrap_or_else(|errors| panic!("{}", errors.join("\n")))
        .into_iter()
        .filter_map(|item| match item {
            Item::Case(case) if case.name.contains(&filter) => Some(case),
            _ => None,
        })
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = cases.len().div_ceil(threads).max(1);
    let problems: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = cases
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .filter_map(|case| {
                            check(case)
                                .err()
                                .map(|why| format!("{} {}: {why}", case.name, case.program_text()))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a checking thread panicked"))
            .collect()
    });
    assert!(
        problems.is_empty(),
        "{} of {} generated numeric cases differ from Clojure:\n{}",
        problems.len(),
        cases.len(),
        problems.join("\n")
    );
    if filter.is_empty() {
        assert!(cases.len() >= 5000, "only {} generated cases", cases.len());
    }
}

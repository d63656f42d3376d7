//! PTC-Lisp against real Clojure: every case of `tests/conformance/*.cases` must give the value
//! Clojure gave (compared structurally), or fail where Clojure threw, or, for an intended
//! deviation, give the result its `;; ptc` line states.
//!
//! `CONFORMANCE_FILTER=name-part cargo test --test conformance` runs only matching cases.

#[allow(dead_code)]
#[path = "../../../xtask/src/cases.rs"]
mod cases;

use cases::{Item, Outcome, PtcOutcome, parse_cases};
use ptc_lisp::pr_str;
use ptc_lisp::read_value;
use ptc_lisp::{Outcome as RunResult, Runtime, UserNamespace, Value};

/// Equality for comparing with Clojure's printed results: like `=`, except that lists and
/// vectors must be the same kind (they print differently), floats match when within a relative
/// 1e-12, and NaN matches NaN.
fn conforms(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Float(a), Value::Float(b)) => {
            (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
        }
        (Value::List(a), Value::List(b)) | (Value::Vector(a), Value::Vector(b)) => {
            a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| conforms(x, y))
        }
        (Value::Map(a), Value::Map(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, v)| {
                    b.get_entry(k).is_some_and(|(_, w)| conforms(v, w))
                        || b.iter().any(|(k2, w)| conforms(k, k2) && conforms(v, w))
                })
        }
        (Value::Set(a), Value::Set(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|x| b.contains(x) || b.iter().any(|y| conforms(x, y)))
        }
        (Value::Regex(a), Value::Regex(b)) => a.as_str() == b.as_str(),
        _ => actual == expected,
    }
}

enum Verdict {
    Pass,
    Fail(String),
}

fn check(program: &str, outcome: &Outcome, ptc: Option<&PtcOutcome>) -> Verdict {
    let run = Runtime::new()
        .run_str(program, &UserNamespace::new())
        .outcome;
    let actual = match &run {
        RunResult::Value(v) | RunResult::Returned(v) => Ok(v),
        RunResult::Failed(v) => return Verdict::Fail(format!("called fail with {}", pr_str(v))),
        RunResult::Error(e) => Err(e),
    };
    match (ptc, outcome, actual) {
        (Some(PtcOutcome::Error(kind)), _, Err(e)) if e.kind.as_str() == kind => Verdict::Pass,
        (Some(PtcOutcome::Error(kind)), _, Err(e)) => {
            Verdict::Fail(format!("expected error[{kind}], got {}", e.render()))
        }
        (Some(PtcOutcome::Error(kind)), _, Ok(v)) => {
            Verdict::Fail(format!("expected error[{kind}], got {}", pr_str(v)))
        }
        (Some(PtcOutcome::Value(text)), _, actual) | (None, Outcome::Value(text), actual) => {
            match actual {
                // Some printed values cannot be read back (`:two words`); compare the text.
                Ok(v) if pr_str(v) == *text => Verdict::Pass,
                Ok(v) if read_value(text).is_ok_and(|expected| conforms(v, &expected)) => {
                    Verdict::Pass
                }
                Ok(v) => Verdict::Fail(format!("expected {text}, got {}", pr_str(v))),
                Err(e) => Verdict::Fail(format!("expected {text}, got {}", e.render())),
            }
        }
        (None, Outcome::Error { .. }, Err(_)) => Verdict::Pass,
        (None, Outcome::Error { class, .. }, Ok(v)) => Verdict::Fail(format!(
            "Clojure throws {class}, PTC-Lisp returned {}",
            pr_str(v)
        )),
    }
}

#[test]
fn conformance_with_clojure() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let filter = std::env::var("CONFORMANCE_FILTER").unwrap_or_default();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("the corpus directory exists")
        .map(|e| e.expect("readable directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cases"))
        .collect();
    paths.sort();
    let (mut passed, mut failures) = (0usize, Vec::new());
    for path in paths {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).expect("readable case file");
        let items =
            parse_cases(&file, &text).unwrap_or_else(|errors| panic!("{}", errors.join("\n")));
        for item in items {
            let Item::Case(case) = item else { continue };
            if !case.name.contains(&filter) {
                continue;
            }
            let outcome = case
                .outcome
                .as_ref()
                .unwrap_or_else(|| panic!("{file}:{} {} has no result line", case.line, case.name));
            match check(&case.program_text(), outcome, case.ptc.as_ref()) {
                Verdict::Pass => passed += 1,
                Verdict::Fail(why) => {
                    failures.push(format!("{file}:{} {}: {why}", case.line, case.name))
                }
            }
        }
    }
    println!("{passed} conformance cases pass, {} fail", failures.len());
    assert!(
        failures.is_empty(),
        "{passed} cases pass, {} fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
    if filter.is_empty() {
        assert!(passed >= 500, "only {passed} conformance cases ran");
    }
}

//! PTC-Lisp against real Clojure: every case of `tests/conformance/*.cases` must give the value
//! Clojure gave (compared structurally), or fail where Clojure threw (for the right reason: not
//! an unknown name or unreadable text that Clojure reads), or, for an intended deviation, give
//! the result its `;; ptc` line states. Cases listed in `tests/conformance/pending.txt` are known
//! to fail; they must still fail, so the list only shrinks.
//!
//! `CONFORMANCE_FILTER=name-part cargo test -p ptc-lisp --test it conformance` runs only matching cases.

use crate::cases::{Case, Item, parse_cases};
use crate::pending::{PENDING_PATH, parse_pending};
use crate::verdict::{Failure, check_case};
use std::collections::HashMap;
use std::path::Path;

/// Every case of the corpus, with the file it comes from.
fn corpus(dir: &Path) -> Vec<(String, Case)> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("the corpus directory exists")
        .map(|e| e.expect("readable directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cases"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).expect("readable case file");
        let items =
            parse_cases(&file, &text).unwrap_or_else(|errors| panic!("{}", errors.join("\n")));
        for item in items {
            if let Item::Case(case) = item {
                out.push((file.clone(), case));
            }
        }
    }
    out
}

/// Check the cases on every core: the corpus runs thousands of small programs.
fn check_all(cases: &[(String, Case)]) -> Vec<Result<(), Failure>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = cases.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = cases
            .chunks(chunk)
            .map(|part| scope.spawn(|| part.iter().map(|(_, c)| check_case(c)).collect::<Vec<_>>()))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a checking thread panicked"))
            .collect()
    })
}

#[test]
fn conformance_with_clojure() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let filter = std::env::var("CONFORMANCE_FILTER").unwrap_or_default();
    let pending_text = std::fs::read_to_string(manifest.join("../..").join(PENDING_PATH))
        .expect("the pending list exists");
    let pending: HashMap<String, Failure> = parse_pending(&pending_text)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .map(|p| (p.name, p.failure))
        .collect();
    let all = corpus(&manifest.join("tests/conformance"));
    let known: std::collections::HashSet<&str> = all.iter().map(|(_, c)| c.name.as_str()).collect();
    let mut problems: Vec<String> = pending
        .keys()
        .filter(|name| !known.contains(name.as_str()))
        .map(|name| {
            format!("{name} is in {PENDING_PATH} but no case has that name; rewrite the list")
        })
        .collect();
    let selected: Vec<(String, Case)> = all
        .into_iter()
        .filter(|(_, c)| c.name.contains(&filter))
        .collect();
    let (mut passed, mut still_pending) = (0usize, 0usize);
    for ((file, case), verdict) in selected.iter().zip(check_all(&selected)) {
        let at = format!("{file}:{} {}", case.line, case.name);
        match (verdict, pending.contains_key(&case.name)) {
            (Ok(()), false) => passed += 1,
            (Ok(()), true) => problems.push(format!(
                "{at}: passes now; run `cargo xtask conformance --pending` to take it off \
                 the pending list"
            )),
            (Err(_), true) => still_pending += 1,
            (Err(failure), false) => problems.push(format!("{at}: {failure}")),
        }
    }
    println!(
        "{passed} conformance cases pass, {still_pending} pending (listed in {PENDING_PATH}), \
         {} problem(s)",
        problems.len()
    );
    assert!(
        problems.is_empty(),
        "{passed} cases pass, {still_pending} pending, {} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    if filter.is_empty() {
        assert!(passed >= 500, "only {passed} conformance cases ran");
    }
}

// The deliberate differences a system prompt lists (`ptc_lisp::reference::DIFFERENCES`, and the
// refusals) are exactly those the corpus marks: every `;; deviation:` line belongs to one entry,
// and every entry has a case. A difference added to the corpus without an entry, or an entry
// whose case was removed, fails here.
#[test]
fn the_listed_differences_are_the_corpus_deviations() {
    use ptc_lisp::reference::{DIFFERENCES, REFUSAL_DEVIATIONS};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let deviations: Vec<(String, String)> = corpus(&dir)
        .into_iter()
        .filter_map(|(file, case)| {
            case.deviation
                .map(|d| (format!("{file}: {}", case.name), d))
        })
        .collect();
    let prefixes: Vec<&str> = DIFFERENCES
        .iter()
        .map(|d| d.deviation)
        .chain(REFUSAL_DEVIATIONS.iter().copied())
        .collect();
    let unlisted: Vec<String> = deviations
        .iter()
        .filter(|(_, text)| !prefixes.iter().any(|p| text.starts_with(p)))
        .map(|(case, text)| format!("{case}: {text}"))
        .collect();
    assert_eq!(unlisted, Vec::<String>::new(), "deviations no entry lists");
    let unused: Vec<&str> = prefixes
        .iter()
        .copied()
        .filter(|p| !deviations.iter().any(|(_, text)| text.starts_with(p)))
        .collect();
    assert_eq!(unused, Vec::<&str>::new(), "entries no case has");
}

//! `cargo xtask conformance`: the corpus of small programs that pins PTC-Lisp to Clojure 1.11,
//! the table of Clojure's vars and the list of cases PTC-Lisp does not pass yet.
//!
//! Each `<family>.cases` file under [`CASES_DIR`] holds cases of this shape:
//!
//! ```text
//! ;; ==== unique-case-name
//! (program text, one or more top-level forms, may span lines)
//! ;; => <pr-str of the value of the last form, one line>
//! ```
//!
//! When Clojure throws, the result line is `;; !! <ExceptionClass>: <message>` instead. A case where
//! PTC-Lisp differs on purpose carries two more lines right after the result line:
//! `;; deviation: <reason>` and `;; ptc => <value>` (or `;; ptc !! <error kind>`). Comments and
//! blank lines before the first case and after a case's result are kept as they are.
//!
//! - `cargo xtask conformance` checks that every file parses and every case has a result, that
//!   `docs/clojure-differences.md` is current (its var table is recomputed from what PTC-Lisp
//!   offers), and prints counts per family.
//! - `cargo xtask conformance --regenerate` runs every program in one Clojure process (the
//!   [`oracle`]), rewrites the result lines in place, rewrites the list of Clojure's vars and the
//!   differences document.
//! - `cargo xtask conformance --docs` rewrites only the differences document (no Clojure needed).
//! - `cargo xtask conformance --pending` runs every case in PTC-Lisp and rewrites the pending
//!   list (no Clojure needed).
//! - `cargo xtask conformance --numeric` rewrites the generated numeric-tower cases (see
//!   [`numeric`]) with their results from Clojure.

mod differences;
mod numeric;
mod oracle;
mod vars;

use crate::cases::*;
use crate::pending::{PENDING_PATH, failing_cases, parse_pending, render_pending};
use crate::verdict::FailureKind;
use differences::{DOC_PATH, render_doc};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use vars::{REFUSALS_PATH, VARS_PATH, VarRow};

/// Where the case files live, relative to the workspace root.
const CASES_DIR: &str = "crates/ptc-lisp/tests/conformance";

/// What the command does besides checking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Check,
    Regenerate,
    Docs,
    Pending,
    Numeric,
}

const USAGE: &str =
    "usage: cargo xtask conformance [--regenerate | --docs | --pending | --numeric]";

fn parse_mode(args: &[String]) -> Result<Option<Mode>, String> {
    let mut mode = Mode::Check;
    for arg in args {
        let next = match arg.as_str() {
            "--regenerate" => Mode::Regenerate,
            "--docs" => Mode::Docs,
            "--pending" => Mode::Pending,
            "--numeric" => Mode::Numeric,
            "-h" | "--help" => {
                println!(
                    "{USAGE}\n\n\
                     without options: check that {CASES_DIR}/*.cases parse, that every case has \
                     a result and that {DOC_PATH} is current; print counts per family\n\
                     --regenerate: rerun every program in Clojure {}, rewrite the result lines, \
                     {VARS_PATH} and {DOC_PATH}\n\
                     --docs: rewrite {DOC_PATH} only\n\
                     --pending: run every case in PTC-Lisp and rewrite {PENDING_PATH}\n\
                     --numeric: generate the numeric-tower programs from seed {} and rewrite \
                     {} with their results from Clojure",
                    oracle::EXPECTED_CLOJURE,
                    numeric::SEED,
                    numeric::NUMERIC_PATH
                );
                return Ok(None);
            }
            other => {
                return Err(format!(
                    "unknown option `{other}` for `cargo xtask conformance`\n{USAGE}"
                ));
            }
        };
        if mode != Mode::Check && mode != next {
            return Err(format!("pass only one option\n{USAGE}"));
        }
        mode = next;
    }
    Ok(Some(mode))
}

/// Entry point of `cargo xtask conformance`.
pub fn run(args: &[String]) -> Result<(), String> {
    let Some(mode) = parse_mode(args)? else {
        return Ok(());
    };
    if matches!(mode, Mode::Regenerate | Mode::Numeric) {
        oracle::find_clojure()?;
    }
    let root = workspace_root();
    if mode == Mode::Numeric {
        return numeric::regenerate(&root);
    }
    let mut files = load_case_files(&root.join(CASES_DIR))?;
    check_unique_names(&files)?;
    if mode == Mode::Regenerate {
        oracle::regenerate_results(&root, &mut files)?;
        oracle::regenerate_vars(&root)?;
    }
    let mut complaints = validate(&files);
    let (clojure, rows, mut var_complaints) = var_table(&root)?;
    complaints.append(&mut var_complaints);
    if mode == Mode::Pending && complaints.is_empty() {
        write_pending(&root, &files)?;
    }
    let doc_path = root.join(DOC_PATH);
    let current = std::fs::read_to_string(&doc_path).unwrap_or_default();
    let doc = render_doc(&current, &files, &clojure, &rows);
    if matches!(mode, Mode::Regenerate | Mode::Docs) && doc != current {
        std::fs::write(&doc_path, &doc)
            .map_err(|e| format!("cannot write {}: {e}", doc_path.display()))?;
        println!("wrote {DOC_PATH}");
    }
    print_counts(&files, &pending_names(&root)?);
    print_var_counts(&rows);
    if !complaints.is_empty() {
        return Err(format!(
            "{} problem(s) in the conformance corpus:\n  {}",
            complaints.len(),
            complaints.join("\n  ")
        ));
    }
    if matches!(mode, Mode::Check | Mode::Pending) && doc != current {
        return Err(format!(
            "{DOC_PATH} is not current (the cases, {VARS_PATH}, {REFUSALS_PATH} or what \
             PTC-Lisp offers changed); run `cargo xtask conformance --docs` and commit the result"
        ));
    }
    Ok(())
}

/// The Clojure version of the var list, the table's rows and what makes the table incomplete.
fn var_table(root: &Path) -> Result<(String, Vec<VarRow>, Vec<String>), String> {
    let read = |rel: &str| {
        std::fs::read_to_string(root.join(rel)).map_err(|e| {
            format!(
                "cannot read {rel}: {e}; `cargo xtask conformance --regenerate` writes the var list"
            )
        })
    };
    let (clojure, vars) = vars::parse_var_list(&read(VARS_PATH)?)?;
    let refusals = vars::parse_refusals(&read(REFUSALS_PATH)?)?;
    let (rows, complaints) = vars::classify(&vars, &refusals, vars::probe);
    Ok((clojure, rows, complaints))
}

fn write_pending(root: &Path, files: &[CaseFile]) -> Result<(), String> {
    let groups = failing_cases(files);
    let path = root.join(PENDING_PATH);
    std::fs::write(&path, render_pending(&groups))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let total: usize = groups.iter().map(|(_, cases)| cases.len()).sum();
    println!("{total} case(s) pending; wrote {PENDING_PATH}");
    for kind in FailureKind::ALL {
        let n = groups
            .iter()
            .flat_map(|(_, cases)| cases)
            .filter(|c| c.failure.kind == kind)
            .count();
        println!("  {n:>5} {}", kind.description());
    }
    Ok(())
}

/// The names on the pending list (empty when there is no list yet).
fn pending_names(root: &Path) -> Result<Vec<String>, String> {
    match std::fs::read_to_string(root.join(PENDING_PATH)) {
        Ok(text) => Ok(parse_pending(&text)?.into_iter().map(|p| p.name).collect()),
        Err(_) => Ok(Vec::new()),
    }
}

fn print_var_counts(rows: &[VarRow]) {
    let count = |f: fn(&vars::Status) -> bool| rows.iter().filter(|r| f(&r.status)).count();
    println!(
        "Clojure vars: {} implemented, {} refused by design, {} not yet ({} in all)",
        count(|s| matches!(s, vars::Status::Implemented)),
        count(|s| matches!(s, vars::Status::Refused { .. })),
        count(|s| matches!(s, vars::Status::NotYet)),
        rows.len()
    );
}

fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn load_case_files(dir: &Path) -> Result<Vec<CaseFile>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the case directory {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext == "cases"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(format!("no .cases files in {}", dir.display()));
    }
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let shown = display_path(&path);
        match parse_cases(&shown, &text) {
            Ok(items) => files.push(CaseFile {
                family: path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path,
                items,
            }),
            Err(mut errs) => errors.append(&mut errs),
        }
    }
    if errors.is_empty() {
        Ok(files)
    } else {
        Err(format!("malformed case files:\n  {}", errors.join("\n  ")))
    }
}

/// The path relative to the workspace root when possible, so messages stay short.
fn display_path(path: &Path) -> String {
    let root = workspace_root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn check_unique_names(files: &[CaseFile]) -> Result<(), String> {
    let mut seen: HashMap<&str, String> = HashMap::new();
    let mut errors = Vec::new();
    for file in files {
        for case in file.cases() {
            let here = format!("{}:{}", display_path(&file.path), case.line);
            if let Some(first) = seen.get(case.name.as_str()) {
                errors.push(format!(
                    "{here}: case name `{}` is already used at {first}; names must be unique",
                    case.name
                ));
            } else {
                seen.insert(&case.name, here);
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("duplicate case names:\n  {}", errors.join("\n  ")))
    }
}

/// Problems that regeneration cannot fix by itself.
fn validate(files: &[CaseFile]) -> Vec<String> {
    let mut out = Vec::new();
    for file in files {
        let shown = display_path(&file.path);
        for case in file.cases() {
            let at = format!("{shown}:{} (`{}`)", case.line, case.name);
            if case.outcome.is_none() {
                out.push(format!(
                    "{at}: no `;; =>` or `;; !!` result line; \
                     run `cargo xtask conformance --regenerate`"
                ));
            }
            match (&case.deviation, &case.ptc) {
                (Some(_), None) => out.push(format!(
                    "{at}: a `;; deviation:` line needs a `;; ptc => ...` or `;; ptc !! <kind>` line"
                )),
                (None, Some(_)) => out.push(format!(
                    "{at}: a `;; ptc` line needs a `;; deviation: <reason>` line"
                )),
                _ => {}
            }
        }
    }
    out
}

fn print_counts(files: &[CaseFile], pending: &[String]) {
    let pending: std::collections::HashSet<&str> = pending.iter().map(String::as_str).collect();
    let width = files
        .iter()
        .map(|f| f.family.len())
        .max()
        .unwrap_or(6)
        .max(6);
    println!(
        "{:<width$} {:>6} {:>7} {:>11} {:>8}",
        "family", "cases", "errors", "deviations", "pending"
    );
    let mut totals = [0usize; 4];
    for file in files {
        let counts = [
            file.cases().count(),
            file.cases()
                .filter(|c| matches!(c.outcome, Some(Outcome::Error { .. })))
                .count(),
            file.cases().filter(|c| c.deviation.is_some()).count(),
            file.cases()
                .filter(|c| pending.contains(c.name.as_str()))
                .count(),
        ];
        let [c, e, d, p] = counts;
        println!("{:<width$} {c:>6} {e:>7} {d:>11} {p:>8}", file.family);
        for (total, n) in totals.iter_mut().zip(counts) {
            *total += n;
        }
    }
    let [c, e, d, p] = totals;
    println!("{:<width$} {c:>6} {e:>7} {d:>11} {p:>8}", "total");
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const SAMPLE: &str = "\
;; Leading comment, kept.

;; ==== add
(+ 1 2)
;; => 3

;; ==== two-forms
(def x 2)
;; a comment inside the program
(* x
   x)
;; => 4
;; trailing comment, kept

;; ==== ratio
(/ 7 2)
;; => 7/2
;; deviation: no ratios
;; ptc => 3.5

;; ==== boom
(throw (ex-info \"boom\" {}))
;; !! clojure.lang.ExceptionInfo: boom
";

    fn parse(text: &str) -> Vec<Item> {
        match parse_cases("t.cases", text) {
            Ok(items) => items,
            Err(errors) => panic!("unexpected parse errors: {errors:?}"),
        }
    }

    fn cases(items: &[Item]) -> Vec<&Case> {
        items
            .iter()
            .filter_map(|i| match i {
                Item::Case(c) => Some(c),
                Item::Text(_) => None,
            })
            .collect()
    }

    #[test]
    fn render_reproduces_a_well_formed_file() {
        assert_eq!(render_cases(&parse(SAMPLE)), SAMPLE);
    }

    #[test]
    fn parse_reads_programs_results_and_deviations() {
        let items = parse(SAMPLE);
        let cases = cases(&items);
        let case = |name: &str, line, program: &[&str], outcome, trailing: &[&str]| Case {
            name: name.to_string(),
            line,
            program: program.iter().map(|l| l.to_string()).collect(),
            outcome: Some(outcome),
            deviation: None,
            ptc: None,
            trailing: trailing.iter().map(|l| l.to_string()).collect(),
        };
        let mut ratio = case(
            "ratio",
            15,
            &["(/ 7 2)"],
            Outcome::Value("7/2".into()),
            &[""],
        );
        ratio.deviation = Some("no ratios".into());
        ratio.ptc = Some(PtcOutcome::Value("3.5".into()));
        let expected = vec![
            case("add", 3, &["(+ 1 2)"], Outcome::Value("3".into()), &[""]),
            case(
                "two-forms",
                7,
                &[
                    "(def x 2)",
                    ";; a comment inside the program",
                    "(* x",
                    "   x)",
                ],
                Outcome::Value("4".into()),
                &[";; trailing comment, kept", ""],
            ),
            ratio,
            case(
                "boom",
                21,
                &["(throw (ex-info \"boom\" {}))"],
                Outcome::Error {
                    class: "clojure.lang.ExceptionInfo".into(),
                    message: "boom".into(),
                },
                &[],
            ),
        ];
        assert_eq!(cases.into_iter().cloned().collect::<Vec<Case>>(), expected);
    }

    #[test]
    fn a_new_case_gets_its_result_before_the_blank_lines_that_follow_it() {
        let text = ";; ==== new\n(inc 1)\n\n;; ==== next\n(dec 1)\n;; => 0\n";
        let mut items = parse(text);
        for item in &mut items {
            if let Item::Case(case) = item
                && case.name == "new"
            {
                case.outcome = Some(Outcome::Value("2".into()));
            }
        }
        assert_eq!(
            render_cases(&items),
            ";; ==== new\n(inc 1)\n;; => 2\n\n;; ==== next\n(dec 1)\n;; => 0\n"
        );
    }

    #[test]
    fn a_deviation_written_before_the_first_regeneration_keeps_its_place() {
        let text = ";; ==== r\n(/ 1 2)\n;; deviation: no ratios\n;; ptc => 0.5\n";
        let mut items = parse(text);
        if let Some(Item::Case(case)) = items.first_mut() {
            case.outcome = Some(Outcome::Value("1/2".into()));
        }
        assert_eq!(
            render_cases(&items),
            ";; ==== r\n(/ 1 2)\n;; => 1/2\n;; deviation: no ratios\n;; ptc => 0.5\n"
        );
    }

    #[test]
    fn malformed_lines_are_reported_with_file_and_line() {
        let text = "(oops)\n;; ==== \n(+ 1 2)\n;; => 3\n(stray)\n;; ==== e\n;; => 1\n\
                    ;; ==== p\n1\n;; => 1\n;; ptc !! Not-A-Kind\n;; ==== q\n1\n;; !!\n";
        assert_eq!(
            parse_cases("f.cases", text),
            Err(vec![
                "f.cases:1: code before the first case; start a case with `;; ==== <name>`"
                    .to_string(),
                "f.cases:2: a case header is `;; ==== <name>` with a name without spaces, \
                 found `;; ==== `"
                    .to_string(),
                "f.cases:5: code after the result of case ``; start a new case with \
                 `;; ==== <name>` or move the code above the result line"
                    .to_string(),
                "f.cases:6: case `e` has no program".to_string(),
                "f.cases:11: `;; ptc !!` needs one error kind in snake_case after it \
                 (e.g. `unsupported`), found `Not-A-Kind`"
                    .to_string(),
                "f.cases:14: `;; !!` needs the exception class after it, as \
                 `;; !! Class: message`"
                    .to_string(),
            ])
        );
    }

    #[test]
    fn deviation_lines_must_follow_the_result_directly() {
        let text = ";; ==== a\n1\n;; => 1\n\n;; deviation: late\n";
        assert_eq!(
            parse_cases("f.cases", text),
            Err(vec![
                "f.cases:5: deviation lines of case `a` must directly follow its result line"
                    .to_string()
            ])
        );
    }

    #[test]
    fn validate_reports_missing_results_and_half_deviations() {
        let text = ";; ==== a\n1\n;; ==== b\n2\n;; => 2\n;; deviation: why\n";
        let files = vec![CaseFile {
            path: PathBuf::from("x.cases"),
            family: "x".into(),
            items: parse(text),
        }];
        assert_eq!(
            validate(&files),
            vec![
                "x.cases:1 (`a`): no `;; =>` or `;; !!` result line; \
                 run `cargo xtask conformance --regenerate`"
                    .to_string(),
                "x.cases:3 (`b`): a `;; deviation:` line needs a `;; ptc => ...` or \
                 `;; ptc !! <kind>` line"
                    .to_string(),
            ]
        );
    }
}

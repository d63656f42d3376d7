//! The corpus of reply shapes in `tests/extract/replies.txt`: each reply, the program
//! `extract_program` must take out of it, and whether that program parses.

use pretty_assertions::assert_eq;
use ptc_agent::extract_program;

/// What a case expects.
#[derive(Debug, PartialEq)]
enum Expected {
    /// This program, which the reader accepts.
    Program(String),
    /// This program, which the reader rejects.
    Broken(String),
    None,
}

struct Case {
    name: String,
    reply: String,
    expected: Expected,
}

fn cases() -> Vec<Case> {
    let text = include_str!("../extract/replies.txt");
    let mut cases = Vec::new();
    let mut lines = text.lines().peekable();
    // The comments before the first case.
    while lines.peek().is_some_and(|l| !l.starts_with("=== case")) {
        lines.next();
    }
    while let Some(header) = lines.next() {
        let (crlf, name) = if let Some(name) = header.strip_prefix("=== case (crlf): ") {
            (true, name)
        } else if let Some(name) = header.strip_prefix("=== case: ") {
            (false, name)
        } else {
            panic!("expected `=== case: NAME`, found {header:?}");
        };
        let mut reply = Vec::new();
        let marker = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("case {name:?} has no `=== program` or `=== none`"));
            if line.starts_with("=== ") {
                break line;
            }
            reply.push(line);
        };
        let mut body = Vec::new();
        while lines.peek().is_some_and(|l| !l.starts_with("=== case")) {
            body.push(lines.next().unwrap_or_default());
        }
        let program = body.join("\n").trim_end().to_string();
        let expected = match marker {
            "=== program" => Expected::Program(program),
            "=== program (broken)" => Expected::Broken(program),
            "=== none" => {
                assert!(program.is_empty(), "case {name:?}: text after `=== none`");
                Expected::None
            }
            other => panic!("case {name:?}: unknown marker {other:?}"),
        };
        let reply = reply.join(if crlf { "\r\n" } else { "\n" });
        cases.push(Case {
            name: name.to_string(),
            reply,
            expected,
        });
    }
    cases
}

fn parses(program: &str) -> bool {
    ptc_lisp::Program::parse(program).is_ok()
}

#[test]
fn every_reply_gives_its_program() {
    let cases = cases();
    assert!(cases.len() >= 20, "only {} cases read", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let found = extract_program(&case.reply);
        let wanted = match &case.expected {
            Expected::Program(p) | Expected::Broken(p) => Some(p.clone()),
            Expected::None => None,
        };
        if found != wanted {
            failures.push(format!(
                "case {:?}\n  reply:    {:?}\n  expected: {wanted:?}\n  found:    {found:?}",
                case.name, case.reply
            ));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}

#[test]
fn expected_programs_parse_unless_marked_broken() {
    let mut wrong = Vec::new();
    for case in cases() {
        match &case.expected {
            Expected::Program(p) if !parses(p) => wrong.push(format!(
                "{}: does not parse: {:?}",
                case.name,
                ptc_lisp::Program::parse(p).err()
            )),
            Expected::Broken(p) if parses(p) => {
                wrong.push(format!("{}: marked broken but parses", case.name))
            }
            _ => {}
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

/// Every reply of the recorded SmolLM2 runs (`benchmarks/transcripts-smollm2-135m/`), with the
/// file it is in.
fn recorded_replies() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../benchmarks/transcripts-smollm2-135m");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut replies = Vec::new();
    for file in files {
        let name = file
            .strip_prefix(&root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let text = std::fs::read_to_string(&file).expect("a transcript");
        for (i, line) in text.lines().enumerate() {
            let entry: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{name} line {}: {e}", i + 1));
            let content = entry["content"]
                .as_str()
                .unwrap_or_else(|| panic!("{name} line {}: no content", i + 1));
            replies.push((format!("{name} line {}", i + 1), content.to_string()));
        }
    }
    replies
}

/// A recorded reply whose extracted program parses is run, as it should be. Any other reply
/// (no program found, or one the reader rejects) must be a case of the corpus, so that a person
/// has checked it holds no valid program the rules missed. A failure prints the missing cases
/// in the corpus's format, to be checked and added.
#[test]
fn every_recorded_smollm2_reply_runs_its_program_or_is_a_checked_case() {
    let replies = recorded_replies();
    assert!(
        replies.len() >= 40,
        "only {} recorded replies",
        replies.len()
    );
    let mut checked: Vec<String> = cases()
        .into_iter()
        .map(|case| case.reply.trim_end().to_string())
        .collect();
    let mut unchecked = String::new();
    for (place, reply) in &replies {
        let reply = reply.trim_end();
        let program = extract_program(reply);
        if program.as_deref().is_some_and(parses) || checked.iter().any(|c| c == reply) {
            continue;
        }
        let expected = match &program {
            Some(program) => format!("=== program (broken)\n{program}"),
            None => "=== none".to_string(),
        };
        unchecked.push_str(&format!(
            "=== case: smollm2 {place}\n{reply}\n{expected}\n\n"
        ));
        checked.push(reply.to_string());
    }
    assert!(
        unchecked.is_empty(),
        "recorded replies without a program that parses, not yet in the corpus; check that \
         none holds a valid program the rules miss, then add them to tests/extract/replies.txt:\n\n\
         {unchecked}"
    );
}

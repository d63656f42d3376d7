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
    let text = include_str!("extract/replies.txt");
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

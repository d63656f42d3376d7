//! The `.cases` file format of the Clojure conformance corpus: parsed and rendered here, in one
//! place, for `cargo xtask conformance` and for the engine's conformance test (which includes
//! this file with `#[path]`).

use std::path::PathBuf;

/// One `.cases` file: its family name (the file stem) and its lines, grouped into cases.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseFile {
    pub path: PathBuf,
    pub family: String,
    pub items: Vec<Item>,
}

impl CaseFile {
    pub fn cases(&self) -> impl Iterator<Item = &Case> {
        self.items.iter().filter_map(|item| match item {
            Item::Case(case) => Some(case),
            Item::Text(_) => None,
        })
    }
}

/// A line outside any case (the file's leading comments), or a whole case.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Text(String),
    Case(Case),
}

/// One program with the result Clojure gives and, when PTC-Lisp differs on purpose, why.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub name: String,
    /// 1-based line of the `;; ====` header.
    pub line: usize,
    pub program: Vec<String>,
    pub outcome: Option<Outcome>,
    pub deviation: Option<String>,
    pub ptc: Option<PtcOutcome>,
    /// Blank and comment lines after the case, up to the next header.
    pub trailing: Vec<String>,
}

impl Case {
    pub fn program_text(&self) -> String {
        self.program.join("\n")
    }
}

/// What Clojure does with a program.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// `pr-str` of the last form's value.
    Value(String),
    /// The exception thrown (or `Timeout` when the program did not finish).
    Error { class: String, message: String },
}

impl Outcome {
    pub fn line(&self) -> String {
        match self {
            Outcome::Value(v) => format!(";; => {v}"),
            Outcome::Error { class, message } if message.is_empty() => format!(";; !! {class}"),
            Outcome::Error { class, message } => format!(";; !! {class}: {message}"),
        }
    }

    pub fn shown(&self) -> String {
        match self {
            Outcome::Value(v) => v.clone(),
            Outcome::Error { class, message } if message.is_empty() => format!("throws {class}"),
            Outcome::Error { class, message } => format!("throws {class}: {message}"),
        }
    }
}

/// What PTC-Lisp does instead, for a case that deviates.
#[derive(Debug, Clone, PartialEq)]
pub enum PtcOutcome {
    Value(String),
    /// An error of this kind (`arithmetic`, `unsupported`, ...).
    Error(String),
}

impl PtcOutcome {
    pub fn line(&self) -> String {
        match self {
            PtcOutcome::Value(v) => format!(";; ptc => {v}"),
            PtcOutcome::Error(kind) => format!(";; ptc !! {kind}"),
        }
    }

    pub fn shown(&self) -> String {
        match self {
            PtcOutcome::Value(v) => v.clone(),
            PtcOutcome::Error(kind) => format!("error[{kind}]"),
        }
    }
}

const HEADER: &str = ";; ====";
const VALUE: &str = ";; =>";
const ERROR: &str = ";; !!";
const DEVIATION: &str = ";; deviation:";
const PTC_VALUE: &str = ";; ptc =>";
const PTC_ERROR: &str = ";; ptc !!";

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with(';')
}

/// Where the parser is inside the current case.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Program,
    /// After the result line (or a deviation line): deviation lines may follow.
    Annotations,
    /// Blank and comment lines after the case.
    Trailing,
}

/// Parse a case file. Errors name `file:line` and say how to fix the line.
pub fn parse_cases(file: &str, text: &str) -> Result<Vec<Item>, Vec<String>> {
    let mut items = Vec::new();
    let mut errors = Vec::new();
    let mut current: Option<(Case, Phase)> = None;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.trim_end_matches('\r');
        let at = |msg: String| format!("{file}:{line_no}: {msg}");
        if let Some(rest) = line.strip_prefix(HEADER) {
            if let Some((case, _)) = current.take() {
                finish_case(file, case, &mut items, &mut errors);
            }
            let name = rest.trim();
            if name.is_empty() || name.chars().any(char::is_whitespace) {
                errors.push(at(format!(
                    "a case header is `{HEADER} <name>` with a name without spaces, found `{line}`"
                )));
            }
            current = Some((
                Case {
                    name: name.to_string(),
                    line: line_no,
                    program: Vec::new(),
                    outcome: None,
                    deviation: None,
                    ptc: None,
                    trailing: Vec::new(),
                },
                Phase::Program,
            ));
            continue;
        }
        let Some((case, phase)) = current.as_mut() else {
            if !is_blank_or_comment(line) {
                errors.push(at(
                    "code before the first case; start a case with `;; ==== <name>`".into(),
                ));
            }
            items.push(Item::Text(line.to_string()));
            continue;
        };
        let annotation = parse_annotation(line);
        match (annotation, *phase) {
            (Ok(Some(Annotation::Outcome(outcome))), Phase::Program) => {
                case.outcome = Some(outcome);
                *phase = Phase::Annotations;
            }
            (Ok(Some(Annotation::Outcome(_))), _) => errors.push(at(format!(
                "a second result line for case `{}`; a case has exactly one",
                case.name
            ))),
            (Ok(Some(Annotation::Deviation(reason))), Phase::Program | Phase::Annotations) => {
                if case.deviation.is_some() {
                    errors.push(at(format!(
                        "case `{}` already has a `;; deviation:` line",
                        case.name
                    )));
                }
                case.deviation = Some(reason);
                *phase = Phase::Annotations;
            }
            (Ok(Some(Annotation::Ptc(ptc))), Phase::Program | Phase::Annotations) => {
                if case.ptc.is_some() {
                    errors.push(at(format!(
                        "case `{}` already has a `;; ptc` line",
                        case.name
                    )));
                }
                case.ptc = Some(ptc);
                *phase = Phase::Annotations;
            }
            (Ok(Some(_)), Phase::Trailing) => errors.push(at(format!(
                "deviation lines of case `{}` must directly follow its result line",
                case.name
            ))),
            (Err(msg), _) => errors.push(at(msg)),
            (Ok(None), Phase::Program) => case.program.push(line.to_string()),
            (Ok(None), Phase::Annotations | Phase::Trailing) => {
                if !is_blank_or_comment(line) {
                    errors.push(at(format!(
                        "code after the result of case `{}`; start a new case with \
                         `;; ==== <name>` or move the code above the result line",
                        case.name
                    )));
                }
                case.trailing.push(line.to_string());
                *phase = Phase::Trailing;
            }
        }
    }
    if let Some((case, _)) = current.take() {
        finish_case(file, case, &mut items, &mut errors);
    }
    if errors.is_empty() {
        Ok(items)
    } else {
        Err(errors)
    }
}

fn finish_case(file: &str, mut case: Case, items: &mut Vec<Item>, errors: &mut Vec<String>) {
    // Blank lines that end a program without a result yet separate it from the next case; keep
    // them after the result line that regeneration will insert.
    if case.outcome.is_none() && case.deviation.is_none() && case.ptc.is_none() {
        while case.program.last().is_some_and(|l| l.trim().is_empty()) {
            if let Some(line) = case.program.pop() {
                case.trailing.insert(0, line);
            }
        }
    }
    if case.program.iter().all(|l| is_blank_or_comment(l)) {
        errors.push(format!(
            "{file}:{}: case `{}` has no program",
            case.line, case.name
        ));
    }
    items.push(Item::Case(case));
}

enum Annotation {
    Outcome(Outcome),
    Deviation(String),
    Ptc(PtcOutcome),
}

/// Recognise the special comment lines; `Ok(None)` for any other line.
fn parse_annotation(line: &str) -> Result<Option<Annotation>, String> {
    if let Some(rest) = line.strip_prefix(VALUE) {
        let value = rest.trim();
        if value.is_empty() {
            return Err(format!("`{VALUE}` needs the printed value after it"));
        }
        return Ok(Some(Annotation::Outcome(Outcome::Value(value.to_string()))));
    }
    if let Some(rest) = line.strip_prefix(ERROR) {
        let rest = rest.trim();
        let (class, message) = rest.split_once(": ").unwrap_or((rest, ""));
        let class = class.trim_end_matches(':').trim();
        if class.is_empty() {
            return Err(format!(
                "`{ERROR}` needs the exception class after it, as `{ERROR} Class: message`"
            ));
        }
        return Ok(Some(Annotation::Outcome(Outcome::Error {
            class: class.to_string(),
            message: message.trim().to_string(),
        })));
    }
    if let Some(rest) = line.strip_prefix(DEVIATION) {
        let reason = rest.trim();
        if reason.is_empty() {
            return Err(format!("`{DEVIATION}` needs a one-line reason after it"));
        }
        return Ok(Some(Annotation::Deviation(reason.to_string())));
    }
    if let Some(rest) = line.strip_prefix(PTC_VALUE) {
        let value = rest.trim();
        if value.is_empty() {
            return Err(format!(
                "`{PTC_VALUE}` needs the value PTC-Lisp gives after it"
            ));
        }
        return Ok(Some(Annotation::Ptc(PtcOutcome::Value(value.to_string()))));
    }
    if let Some(rest) = line.strip_prefix(PTC_ERROR) {
        let kind = rest.trim();
        if kind.is_empty() || !kind.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
            return Err(format!(
                "`{PTC_ERROR}` needs one error kind in snake_case after it (e.g. `unsupported`), \
                 found `{kind}`"
            ));
        }
        return Ok(Some(Annotation::Ptc(PtcOutcome::Error(kind.to_string()))));
    }
    if line.starts_with(";; ptc") {
        return Err("a PTC-Lisp result line is `;; ptc => <value>` or `;; ptc !! <kind>`".into());
    }
    Ok(None)
}

/// The file text for `items`; `render_cases(parse_cases(t)) == t` for every well-formed `t`
/// that ends with a newline.
pub fn render_cases(items: &[Item]) -> String {
    let mut out = String::new();
    let mut push = |line: &str| {
        out.push_str(line);
        out.push('\n');
    };
    for item in items {
        match item {
            Item::Text(line) => push(line),
            Item::Case(case) => {
                push(&format!("{HEADER} {}", case.name));
                for line in &case.program {
                    push(line);
                }
                if let Some(outcome) = &case.outcome {
                    push(&outcome.line());
                }
                if let Some(reason) = &case.deviation {
                    push(&format!("{DEVIATION} {reason}"));
                }
                if let Some(ptc) = &case.ptc {
                    push(&ptc.line());
                }
                for line in &case.trailing {
                    push(line);
                }
            }
        }
    }
    out
}

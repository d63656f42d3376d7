//! `ptc repl`: an interactive PTC-Lisp session.
//!
//! Each input runs like one turn: definitions carry over to the next input, an input that fails
//! leaves the definitions as they were, and what the program printed is shown before its value.
//! An input may span several lines; the REPL keeps reading until its brackets and strings are
//! closed. [`Session`] and [`InputBuffer`] are the whole behaviour; the terminal loop around
//! them only reads lines and prints what they return.
//!
//! Ctrl-C while an input evaluates ends that evaluation (through [`Runtime::with_interrupt`]),
//! as a failed input: the definitions and the history stay. Ctrl-C at the prompt drops a
//! partial input; Ctrl-D (or `:quit`) saves the history and leaves.

use crate::config_file::Config;
use crate::diagnostic;
use crate::eval::runtime_from_files;
use crate::exit;
use crate::mcp::{McpSession, resolve, with_servers};
use crate::options::{InputOptions, LimitOptions, McpOptions};
use clap::Args;
use ptc_lisp::pr_str;
use ptc_lisp::{ErrorKind, Outcome, Program, Runtime, UserNamespace, Value, reference};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by SIGINT (Ctrl-C) while an input evaluates; the runtime's interrupt reads it.
static CTRL_C: AtomicBool = AtomicBool::new(false);

/// The message of an evaluation that Ctrl-C ended.
const INTERRUPTED: &str = "interrupted by Ctrl-C; the definitions made before this input are kept";

/// An interrupt that ends the evaluation once `flag` is set (by Ctrl-C), with a limit error
/// that `try` cannot catch.
fn ctrl_c_interrupt(flag: &'static AtomicBool) -> ptc_lisp::Interrupt {
    ptc_lisp::Interrupt::new(move || {
        flag.load(Ordering::Relaxed)
            .then(|| ptc_lisp::Error::new(ErrorKind::Timeout, INTERRUPTED))
    })
}

/// Make SIGINT set [`CTRL_C`] instead of ending the process. The line editor reads Ctrl-C at
/// the prompt as a key (the terminal is in raw mode then), so this only decides what Ctrl-C
/// does while an input evaluates.
#[cfg(unix)]
fn catch_ctrl_c() {
    extern "C" fn on_sigint(_: libc::c_int) {
        CTRL_C.store(true, Ordering::Relaxed);
    }
    let handler: extern "C" fn(libc::c_int) = on_sigint;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

#[cfg(not(unix))]
fn catch_ctrl_c() {}

#[derive(Debug, Args)]
pub struct ReplArgs {
    #[command(flatten)]
    pub input: InputOptions,
    #[command(flatten)]
    pub limits: LimitOptions,
    #[command(flatten)]
    pub mcp: McpOptions,
}

/// The names under which the REPL keeps its last results and its last error.
const RECENT: [&str; 4] = ["*1", "*2", "*3", "*e"];

const HELP: &str = "\
Type PTC-Lisp forms; an input may span several lines. Definitions (def, defn) last from one
input to the next; an input that fails leaves them as they were.

*1, *2 and *3 are the last three values, *e the last error (a map of :kind, :message, :line
and :column).

Commands:
  :help        this text
  :doc NAME    documentation of a function, special form or definition (also (doc NAME))
  :data        the input data (data/...)
  :tools       the tools (tool/...)
  :defs        the definitions made so far
  :reset       forget every definition
  :quit        leave (or Ctrl-D), saving the history

Ctrl-C stops an evaluation (the definitions stay) or drops a partial input.";

/// The state of a REPL: the runtime (tools, data, limits), the definitions made so far, and
/// the recent values (`*1`, `*2`, `*3`) and error (`*e`).
pub struct Session {
    runtime: Runtime,
    /// Set when Ctrl-C should end the evaluation under way.
    interrupted: &'static AtomicBool,
    memory: UserNamespace,
    values: [Value; 3],
    error: Value,
}

/// What the REPL should do after an input.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// Show this text (possibly empty) and read the next input.
    Show(String),
    /// Leave the REPL.
    Quit,
}

impl Session {
    /// A session whose evaluations Ctrl-C ends.
    pub fn new(runtime: Runtime) -> Session {
        Session::interrupted_by(runtime, &CTRL_C)
    }

    /// A session whose evaluations end when `flag` is set.
    fn interrupted_by(runtime: Runtime, flag: &'static AtomicBool) -> Session {
        Session {
            runtime: runtime.with_interrupt(ctrl_c_interrupt(flag)),
            interrupted: flag,
            memory: UserNamespace::new(),
            values: [Value::Nil, Value::Nil, Value::Nil],
            error: Value::Nil,
        }
    }

    /// Handle one complete input: a command or a program.
    pub fn handle(&mut self, input: &str) -> Reply {
        let trimmed = input.trim();
        let (word, rest) = trimmed
            .split_once(char::is_whitespace)
            .map_or((trimmed, ""), |(w, r)| (w, r.trim()));
        if let Some(name) = doc_form(trimmed) {
            return Reply::Show(self.doc(name));
        }
        // A command is one of these words; any other input, `:foo` included, is a program.
        Reply::Show(match word {
            ":help" | ":h" | ":?" => HELP.to_string(),
            ":quit" | ":q" | ":exit" => return Reply::Quit,
            ":doc" if rest.is_empty() => "usage: :doc NAME (for example :doc map)".to_string(),
            ":doc" => self.doc(rest),
            ":data" => self.data(),
            ":tools" => self.tools(),
            ":defs" => self.defs(),
            ":reset" => {
                self.memory = UserNamespace::new();
                "all definitions forgotten".to_string()
            }
            _ => self.run(input),
        })
    }

    fn run(&mut self, source: &str) -> String {
        let mut runtime = self.runtime.clone();
        for (name, value) in RECENT.iter().zip(self.values.iter().chain([&self.error])) {
            runtime = runtime.with_data(*name, value.clone());
        }
        // A Ctrl-C pressed before this input (at a prompt that is not a terminal) is not for it.
        self.interrupted.store(false, Ordering::Relaxed);
        let out = runtime.run_str(source, &self.memory);
        let mut lines = out.prints.clone();
        match &out.outcome {
            Outcome::Value(v) | Outcome::Returned(v) => {
                lines.push(pr_str(v));
                self.memory = out.namespace;
                self.values.rotate_right(1);
                self.values[0] = v.clone();
            }
            Outcome::Failed(reason) => {
                lines.push(format!("failed: {}", pr_str(reason)));
                self.error = error_value(
                    ptc_turn::ErrorKind::FAILED.as_str(),
                    &pr_str(reason),
                    out.failed_at,
                );
            }
            Outcome::Error(e) => {
                lines.push(diagnostic::program_error(source, "<repl>", e));
                self.error = error_value(e.kind.as_str(), &e.message, e.pos);
            }
        }
        lines.join("\n")
    }

    fn tools(&self) -> String {
        let specs: Vec<String> = self
            .runtime
            .tools()
            .specs()
            .map(|spec| {
                let call = std::iter::once(format!("tool/{}", spec.name))
                    .chain(spec.params.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ");
                let mut text = format!("({call})");
                if let Some(signature) = &spec.signature {
                    text.push_str(&format!("  {signature}"));
                }
                if !spec.description.is_empty() {
                    text.push_str(&format!("\n  {}", spec.description));
                }
                text
            })
            .collect();
        if specs.is_empty() {
            return "no tools (start the REPL with --tools FILE.json)".to_string();
        }
        specs.join("\n")
    }

    fn doc(&self, name: &str) -> String {
        if let Some(e) = reference::lookup(name) {
            return format!(
                "{}\n  {}\n  {}\n  ;; => {}",
                e.signature, e.doc, e.example, e.expected
            );
        }
        let local = name.strip_prefix("user/").unwrap_or(name);
        if let Some(d) = self
            .memory
            .definitions()
            .into_iter()
            .find(|d| d.name == local)
        {
            let mut text = format!("user/{}", d.name);
            if !d.params.is_empty() {
                text.push(' ');
                text.push_str(&d.params.join(" "));
            }
            match &d.doc {
                Some(doc) => text.push_str(&format!("\n  {doc}")),
                None if !d.is_function() => {
                    text.push_str(&format!("\n  = {}", short(&d.value)));
                }
                None => {}
            }
            return text;
        }
        format!("no documentation for {name}: it is not a function, special form or definition")
    }

    fn data(&self) -> String {
        // The recent values are not input data; they are added to each input's runtime only.
        let data = self.runtime.data();
        if data.is_empty() {
            return "no input data (start the REPL with --data FILE.json)".to_string();
        }
        data.iter()
            .map(|(name, value)| format!("data/{name}  {}", describe(value)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn defs(&self) -> String {
        let defs = self.memory.definitions();
        if defs.is_empty() {
            return "no definitions yet".to_string();
        }
        defs.iter()
            .map(|d| {
                if d.is_function() {
                    format!("user/{} {}", d.name, d.params.join(" "))
                } else {
                    format!("user/{} = {}", d.name, short(&d.value))
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `NAME` of an input that is `(doc NAME)`.
fn doc_form(input: &str) -> Option<&str> {
    let inner = input.strip_prefix('(')?.strip_suffix(')')?.trim();
    let name = inner.strip_prefix("doc")?;
    let name = name.strip_prefix(char::is_whitespace)?.trim();
    (!name.is_empty() && !name.contains(|c: char| c.is_whitespace() || "()[]{}\"".contains(c)))
        .then_some(name)
}

/// An error as the value `*e` holds.
fn error_value(kind: &str, message: &str, at: Option<ptc_lisp::Pos>) -> Value {
    let key = |name: &str| Value::Keyword(ptc_lisp::Keyword::new(name));
    Value::map([
        (key("kind"), Value::string(kind)),
        (key("message"), Value::string(message)),
        (
            key("line"),
            at.map_or(Value::Nil, |p| Value::Int(p.line.into())),
        ),
        (
            key("column"),
            at.map_or(Value::Nil, |p| Value::Int(p.col.into())),
        ),
    ])
}

/// A value cut to a line.
fn short(value: &Value) -> String {
    ptc_turn::preview(value, ptc_lisp::Compact::new(8, 60))
}

/// `vector of 3 items: [...]`, for `:data`.
fn describe(value: &Value) -> String {
    match value.count() {
        Some(n) if !matches!(value, Value::Str(_) | Value::Nil) => format!(
            "{} of {n} item{}: {}",
            value.type_name(),
            if n == 1 { "" } else { "s" },
            short(value)
        ),
        _ => format!("{}: {}", value.type_name(), short(value)),
    }
}

/// Collects input lines until they form complete input.
#[derive(Default)]
pub struct InputBuffer {
    text: String,
}

impl InputBuffer {
    /// Whether a partial input is waiting for more lines.
    pub fn is_pending(&self) -> bool {
        !self.text.is_empty()
    }

    /// Add a line; the whole input once its forms are complete, `None` while more is needed.
    pub fn push(&mut self, line: &str) -> Option<String> {
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(line);
        if self.text.trim().is_empty() {
            self.text.clear();
            return None;
        }
        if needs_more(&self.text) {
            return None;
        }
        Some(std::mem::take(&mut self.text))
    }

    /// Drop a partial input (Ctrl-C).
    pub fn clear(&mut self) {
        self.text.clear();
    }
}

/// Whether `text` stops in the middle of a form: a bracket or string still open. Other read
/// errors are complete input; running it reports them.
pub fn needs_more(text: &str) -> bool {
    match Program::parse(text) {
        Ok(_) => false,
        Err(e) => {
            e.kind == ErrorKind::Parse
                && (e.message.starts_with("unclosed ")
                    || e.message.starts_with("unterminated ")
                    || e.message.ends_with("found end of input"))
        }
    }
}

/// Where the history is kept: `$XDG_DATA_HOME/ptc/repl_history`, else
/// `~/.local/share/ptc/repl_history`.
fn history_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => std::env::home_dir()?.join(".local").join("share"),
    };
    Some(base.join("ptc").join("repl_history"))
}

pub fn run(args: &ReplArgs, config: &Config) -> ExitCode {
    let mcp = resolve(&args.mcp, config);
    with_servers(&mcp, |mcp| repl(args, config, mcp))
}

fn repl(args: &ReplArgs, config: &Config, mcp: Option<&McpSession>) -> ExitCode {
    let input = args.input.clone().or(config.input.clone());
    let limits = args.limits.clone().or(config.limits.clone()).limits();
    let runtime = match runtime_from_files(&input, mcp) {
        Ok(runtime) => runtime.with_limits(limits),
        Err(message) => {
            eprintln!("error: {message}");
            return exit::code(exit::USAGE);
        }
    };
    let mut editor = match rustyline::DefaultEditor::new() {
        Ok(editor) => editor,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return exit::code(exit::USAGE);
        }
    };
    let history = history_path();
    if let Some(path) = &history {
        // A first run has no history yet; that is not worth a message.
        let _ = editor.load_history(path);
    }
    catch_ctrl_c();
    println!("PTC-Lisp REPL. :help for commands, Ctrl-C to stop an evaluation, Ctrl-D to leave.");
    let mut session = Session::new(runtime);
    let mut buffer = InputBuffer::default();
    loop {
        let prompt = if buffer.is_pending() {
            "  #_=> "
        } else {
            "user=> "
        };
        match editor.readline(prompt) {
            Ok(line) => {
                let Some(input) = buffer.push(&line) else {
                    continue;
                };
                let _ = editor.add_history_entry(input.as_str());
                match session.handle(&input) {
                    Reply::Show(text) if text.is_empty() => {}
                    Reply::Show(text) => println!("{text}"),
                    Reply::Quit => break,
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => buffer.clear(),
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    if let Some(path) = &history {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.save_history(path);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn show(session: &mut Session, input: &str) -> String {
        match session.handle(input) {
            Reply::Show(text) => text,
            Reply::Quit => "<quit>".to_string(),
        }
    }

    #[test]
    fn prints_come_before_the_value() {
        let mut s = Session::new(Runtime::new());
        assert_eq!(
            show(&mut s, "(println \"hi\" 1) (prn \"x\") (+ 1 2)"),
            "hi 1\n\"x\"\n3"
        );
        assert_eq!(show(&mut s, ":foo"), ":foo");
        assert_eq!(show(&mut s, "(fail {:why 1})"), "failed: {:why 1}");
    }

    #[test]
    fn definitions_last_and_failed_inputs_keep_the_old_ones() {
        let mut s = Session::new(Runtime::new());
        assert_eq!(show(&mut s, "(def rate 1)"), "#'user/rate");
        assert_eq!(
            show(&mut s, "(defn f \"adds rate\" [y] (+ rate y))"),
            "#'user/f"
        );
        assert_eq!(show(&mut s, "(f 10)"), "11");
        // The def runs, then the program fails: the namespace stays as it was.
        assert_eq!(
            show(&mut s, "(def rate 100) (undefined-thing)"),
            "error[undefined_symbol]: undefined symbol undefined-thing\n --> <repl>:1:17\n  |\n\
             1 | (def rate 100) (undefined-thing)\n  |                 ^^^^^^^^^^^^^^^"
        );
        assert_eq!(show(&mut s, "rate"), "1");
        assert_eq!(show(&mut s, ":defs"), "user/rate = 1\nuser/f [y]");
        assert_eq!(show(&mut s, ":doc f"), "user/f [y]\n  adds rate");
        assert_eq!(show(&mut s, ":doc rate"), "user/rate\n  = 1");
        assert_eq!(show(&mut s, ":reset"), "all definitions forgotten");
        assert_eq!(
            show(&mut s, "rate"),
            "error[undefined_symbol]: undefined symbol rate\n --> <repl>:1:1\n  |\n1 | rate\n  \
             | ^^^^"
        );
        assert_eq!(show(&mut s, ":defs"), "no definitions yet");
    }

    #[test]
    fn doc_covers_builtins_aliases_and_special_forms() {
        let s = Session::new(Runtime::new());
        assert_eq!(
            s.doc("str/upper-case"),
            "(str/upper-case s)\n  s in upper case.\n  (str/upper-case \"straße\")\n  ;; => \
             \"STRASSE\""
        );
        assert!(
            s.doc("when-let")
                .starts_with("(when-let [name test] body ...)\n")
        );
        assert_eq!(
            s.doc("nope"),
            "no documentation for nope: it is not a function, special form or definition"
        );
    }

    #[test]
    fn data_lists_the_inputs() {
        let data = ptc_lisp::from_json_str(r#"{"users": [{"id": 1}, {"id": 2}], "n": 5}"#).unwrap();
        let mut s = Session::new(Runtime::new().with_data_map(&data).unwrap());
        assert_eq!(
            show(&mut s, ":data"),
            "data/n  integer: 5\ndata/users  vector of 2 items: [{:id 1} {:id 2}]"
        );
        assert_eq!(show(&mut s, "(count data/users)"), "2");
        let mut empty = Session::new(Runtime::new());
        assert_eq!(
            show(&mut empty, ":data"),
            "no input data (start the REPL with --data FILE.json)"
        );
    }

    #[test]
    fn recent_values_and_the_last_error_have_names() {
        let mut s = Session::new(Runtime::new());
        assert_eq!(show(&mut s, "(+ 1 2)"), "3");
        assert_eq!(show(&mut s, "[*1]"), "[3]");
        assert_eq!(show(&mut s, "(str *1 *2 *3)"), "\"[3]3\"");
        assert_eq!(show(&mut s, "*e"), "nil");
        show(&mut s, "(/ 1 0)");
        assert_eq!(
            show(&mut s, "*e"),
            "{:kind \"arithmetic\", :message \"Divide by zero\", :line 1, :column 1}"
        );
        assert_eq!(show(&mut s, "(fail :no) *e"), "failed: :no");
        assert_eq!(show(&mut s, "(:kind *e)"), "\"failed\"");
        // They are not input data.
        assert_eq!(
            show(&mut s, ":data"),
            "no input data (start the REPL with --data FILE.json)"
        );
    }

    #[test]
    fn doc_forms_and_tools() {
        let tools = ptc_lisp::Tools::from_fixture_json(
            r#"{"get-user": {"description": "A user by id", "params": ["id"], "returns": 1}}"#,
        )
        .unwrap();
        let mut s = Session::new(Runtime::new().with_tools(tools));
        assert_eq!(
            show(&mut s, "(doc str/upper-case)"),
            s.doc("str/upper-case")
        );
        assert_eq!(show(&mut s, " ( doc   map ) "), s.doc("map"));
        assert_eq!(show(&mut s, ":tools"), "(tool/get-user id)\n  A user by id");
        assert_eq!(
            show(&mut Session::new(Runtime::new()), ":tools"),
            "no tools (start the REPL with --tools FILE.json)"
        );
        assert_eq!(doc_form("(doc)"), None);
        assert_eq!(doc_form("(doc a b)"), None);
        assert_eq!(doc_form("(docs a)"), None);
    }

    #[test]
    fn ctrl_c_ends_an_evaluation_and_keeps_the_definitions() {
        let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let limits = ptc_lisp::Limits {
            timeout: std::time::Duration::from_secs(600),
            max_steps: u64::MAX,
            ..ptc_lisp::Limits::default()
        };
        let mut s = Session::interrupted_by(Runtime::new().with_limits(limits), flag);
        assert_eq!(show(&mut s, "(def x 41)"), "#'user/x");
        // A Ctrl-C at the prompt is not for the next input.
        flag.store(true, Ordering::Relaxed);
        assert_eq!(show(&mut s, "(inc x)"), "42");
        let presser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            flag.store(true, Ordering::Relaxed);
        });
        assert_eq!(
            show(
                &mut s,
                "(def y 1) (try (loop [] (recur)) (catch Exception e :caught))"
            ),
            format!(
                "error[timeout]: {INTERRUPTED}\n --> <repl>:1:16\n  |\n1 | (def y 1) (try (loop [] \
                 (recur)) (catch Exception e :caught))\n  |                ^^^^^^^^^^^^^^^^^"
            )
        );
        presser.join().unwrap();
        assert_eq!(show(&mut s, "(inc x)"), "42");
        assert_eq!(show(&mut s, ":defs"), "user/x = 41");
        assert_eq!(show(&mut s, "(:message *e)"), format!("\"{INTERRUPTED}\""));
    }

    #[test]
    fn commands() {
        let mut s = Session::new(Runtime::new());
        assert_eq!(show(&mut s, ":quit"), "<quit>");
        assert_eq!(show(&mut s, ":help"), HELP);
        assert_eq!(
            show(&mut s, ":doc"),
            "usage: :doc NAME (for example :doc map)"
        );
    }

    #[test]
    fn input_continues_until_forms_are_closed() {
        let mut b = InputBuffer::default();
        assert_eq!(b.push("(defn f [x]"), None);
        assert!(b.is_pending());
        assert_eq!(b.push("  (str \"a"), None);
        assert_eq!(
            b.push("b\" x))"),
            Some("(defn f [x]\n  (str \"a\nb\" x))".to_string())
        );
        assert!(!b.is_pending());
        assert_eq!(b.push(""), None);
        assert!(!b.is_pending());
        // A read error that more lines cannot fix is complete input: running it reports it.
        assert_eq!(b.push("(+ 1))"), Some("(+ 1))".to_string()));
        assert_eq!(b.push("'"), None);
        b.clear();
        assert_eq!(b.push("1"), Some("1".to_string()));
    }
}

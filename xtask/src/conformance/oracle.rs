//! The oracle: real Clojure 1.11, run as one `clojure` process, gives every case its result
//! and lists the public vars of the namespaces PTC-Lisp follows.
//!
//! Clojure is found as `$PTC_CLOJURE` when that is set, else as `clojure1.11` or `clojure` on
//! `PATH` (Debian's `clojure` package installs both). When it is missing, or is another version,
//! the command fails and says how to install it: checking the committed results never needs it.

use super::display_path;
use super::vars::{NAMESPACES, VARS_PATH, render_var_list};
use crate::cases::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long the oracle lets one program run.
const CASE_TIMEOUT: Duration = Duration::from_secs(5);
/// Clojure version whose behaviour the corpus records.
pub const EXPECTED_CLOJURE: &str = "1.11";
/// The command that installs the oracle on the Debian-based machines the project runs on.
pub const INSTALL_COMMAND: &str = "apt-get update && apt-get install -y clojure";
/// Names the launcher may have, in the order they are tried.
const LAUNCHERS: [&str; 2] = ["clojure1.11", "clojure"];

/// Evaluates every program of an input file in a fresh `user` namespace, one thread per program,
/// and writes one tab-separated line per program. Fields are Clojure string literals so that they
/// stay on one line whatever they contain.
const RUNNER: &str = r#"
(ns conformance-runner
  (:require [clojure.edn :as edn]
            [clojure.string]
            [clojure.set])
  (:import [java.io StringReader StringWriter]
           [clojure.lang LineNumberingPushbackReader Compiler$CompilerException]))

;; `format` and `upper-case` follow the default locale; pin it so results do not depend on the host.
(java.util.Locale/setDefault java.util.Locale/US)

(defn- unwrap [^Throwable e]
  ;; The compiler wraps what a form throws; the interesting exception is the cause.
  (if (and (instance? Compiler$CompilerException e) (.getCause e))
    (recur (.getCause e))
    e))

(defn- tidy [s]
  ;; Generated class names carry counters that change whenever a case is added; drop them so a
  ;; regeneration only changes what really changed.
  (let [s (-> (str s)
              (clojure.string/replace #"\s+" " ")
              (clojure.string/replace #"eval\d+" "eval")
              (clojure.string/replace #"(--|__)\d+" "$1")
              (clojure.string/replace #"0x[0-9a-f]+" "0x")
              (clojure.string/replace #"@[0-9a-f]{5,}" "@")
              ;; JVM module details of ClassCastException say nothing about the program.
              (clojure.string/replace #" \([^()]* (module|loader) [^()]*\)" "")
              (clojure.string/trim))]
    (if (> (count s) 300) (str (subs s 0 300) "...") s)))

(defn- message [^Throwable e]
  ;; The JVM computes NullPointerException details only for some frames, so they vary from run to
  ;; run; the class says enough.
  (if (instance? NullPointerException e) "" (tidy (.getMessage e))))

(defn- eval-program [src]
  (remove-ns 'user)
  (let [case-ns (create-ns 'user)]
    (binding [*ns* case-ns
              *out* (StringWriter.)
              *err* (StringWriter.)
              *print-length* nil
              *print-level* nil
              *print-meta* false
              *print-dup* false
              *print-readably* true
              *print-namespace-maps* false
              *unchecked-math* false
              *warn-on-reflection* false]
      (refer-clojure)
      (alias 'str 'clojure.string)
      (alias 'string 'clojure.string)
      (alias 'set 'clojure.set)
      (let [rdr (LineNumberingPushbackReader. (StringReader. src))
            eof (Object.)]
        (loop [value nil]
          (let [form (read rdr false eof)]
            (if (identical? form eof)
              (pr-str value)
              (recur (eval form)))))))))

(defn- run-case [src timeout-ms]
  (let [result (promise)
        worker (Thread. ^Runnable
                        (fn []
                          (deliver result
                                   (try [:ok (eval-program src)]
                                        (catch Throwable e [:error (unwrap e)])))))]
    (.setDaemon worker true)
    (.start worker)
    (let [r (deref result timeout-ms ::timeout)]
      (if (= r ::timeout)
        (do (try (.stop worker) (catch Throwable _ nil))
            [:timeout])
        r))))

(defn- lit [s] (pr-str (str s)))

(let [[out-path in-path timeout-ms] *command-line-args*
      timeout-ms (Long/parseLong timeout-ms)
      programs (edn/read-string (slurp in-path :encoding "UTF-8"))
      total (count programs)
      out (StringBuilder.)]
  (.append out (str "version\t" (lit (clojure-version)) "\n"))
  (doseq [[i src] (map-indexed vector programs)]
    (let [[status x] (run-case src timeout-ms)]
      (.append out
               (case status
                 :ok (str i "\tok\t" (lit x) "\n")
                 :error (str i "\terror\t" (lit (.getName (class x))) "\t" (lit (message x)) "\n")
                 :timeout (str i "\ttimeout\n"))))
    (when (zero? (mod (inc i) 100))
      (println (str "  " (inc i) "/" total " programs"))
      (flush)))
  (spit out-path (str out) :encoding "UTF-8")
  (shutdown-agents)
  (System/exit 0))
"#;

/// One line of the runner's output.
#[derive(Debug, Clone, PartialEq)]
enum OracleResult {
    Value(String),
    Error { class: String, message: String },
    Timeout,
}

/// Prints every public var of [`NAMESPACES`] as `namespace/name kind`, after a version line.
const VAR_LISTER: &str = r#"
(require 'clojure.string 'clojure.set 'clojure.walk 'clojure.edn)
(let [[out-path & namespaces] *command-line-args*
      kind (fn [v]
             (let [m (meta v)]
               (cond (:macro m) "macro"
                     (.isDynamic ^clojure.lang.Var v) "dynamic"
                     (instance? clojure.lang.MultiFn @v) "multimethod"
                     (fn? @v) "function"
                     :else "value")))
      lines (for [ns (map symbol namespaces)
                  [sym v] (sort-by (comp str key) (ns-publics ns))]
              (str ns "/" sym " " (kind v)))]
  (spit out-path (str "version\t" (pr-str (clojure-version)) "\n"
                      (apply str (map #(str % "\n") lines)))
        :encoding "UTF-8")
  (shutdown-agents)
  (System/exit 0))
"#;

/// The Clojure launcher to run, or how to install one.
pub fn find_clojure() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("PTC_CLOJURE") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "PTC_CLOJURE names {}, which is not a file; point it at a Clojure \
                 {EXPECTED_CLOJURE} launcher or unset it",
                path.display()
            ))
        };
    }
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    LAUNCHERS
        .iter()
        .flat_map(|name| dirs.iter().map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            format!(
                "Clojure {EXPECTED_CLOJURE}, the oracle of the conformance corpus, is not \
                 installed (no `clojure1.11` or `clojure` on PATH). Install it with\n\n    \
                 {INSTALL_COMMAND}\n\n(as root or with sudo; Debian 12 packages Clojure \
                 1.11.1), or set PTC_CLOJURE to a Clojure {EXPECTED_CLOJURE} launcher. Checking the committed \
                 results does not need it: `cargo xtask conformance`"
            )
        })
}

/// Run `script` with `args` in the Clojure launcher and return what it wrote to the output file
/// (its path is the script's first argument), after checking the version line it starts with.
fn run_clojure(
    root: &Path,
    script: &str,
    input: Option<&str>,
    args: &[String],
) -> Result<String, String> {
    let launcher = find_clojure()?;
    let work = std::env::temp_dir().join(format!("ptc-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let result = run_in(&launcher, &work, root, script, input, args);
    let _ = std::fs::remove_dir_all(&work);
    let text = result?;
    let (version, rest) = text
        .split_once('\n')
        .and_then(|(first, rest)| Some((first.strip_prefix("version\t")?, rest)))
        .ok_or("the Clojure script's output does not start with its version")?;
    let version = read_string_literal(version)?;
    if !version.starts_with(EXPECTED_CLOJURE) {
        return Err(format!(
            "`{}` is Clojure {version}, but the corpus records Clojure {EXPECTED_CLOJURE}: \
             install it with `{INSTALL_COMMAND}` or set PTC_CLOJURE to a {EXPECTED_CLOJURE} \
             launcher",
            launcher.display()
        ));
    }
    Ok(format!("version\t\"{version}\"\n{rest}"))
}

fn run_in(
    launcher: &Path,
    work: &Path,
    root: &Path,
    script: &str,
    input: Option<&str>,
    args: &[String],
) -> Result<String, String> {
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let script_path = work.join("script.clj");
    let output = work.join("output.txt");
    write(&script_path, script)?;
    let mut command = Command::new(launcher);
    command.arg(&script_path).arg(&output);
    if let Some(input) = input {
        let input_path = work.join("input.edn");
        write(&input_path, input)?;
        command.arg(&input_path);
    }
    // After an exception has been thrown often enough from the same compiled code, HotSpot
    // throws a preallocated one without a message; keep every message, whatever ran before.
    let mut java_options = std::env::var("JAVA_TOOL_OPTIONS").unwrap_or_default();
    java_options.push_str(" -XX:-OmitStackTraceInFastThrow");
    command.env("JAVA_TOOL_OPTIONS", java_options.trim_start());
    let status = command
        .args(args)
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot start `{}`: {e}", launcher.display()))?;
    if !status.success() {
        return Err(format!(
            "the Clojure script failed ({status}); its output is above"
        ));
    }
    std::fs::read_to_string(&output).map_err(|e| format!("the Clojure script wrote nothing: {e}"))
}

/// Rewrite [`VARS_PATH`] from Clojure's own list of public vars.
pub fn regenerate_vars(root: &Path) -> Result<(), String> {
    let namespaces: Vec<String> = NAMESPACES.iter().map(|n| n.to_string()).collect();
    let text = run_clojure(root, VAR_LISTER, None, &namespaces)?;
    let mut lines = text.lines();
    let version = lines
        .next()
        .and_then(|l| l.strip_prefix("version\t"))
        .map(read_string_literal)
        .transpose()?
        .unwrap_or_default();
    let lines: Vec<String> = lines.map(str::to_string).collect();
    let path = root.join(VARS_PATH);
    std::fs::write(&path, render_var_list(&version, &lines))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!(
        "Clojure {version} lists {} public vars; wrote {VARS_PATH}",
        lines.len()
    );
    Ok(())
}

/// Run every case's program in Clojure and rewrite the result lines of `files`.
pub fn regenerate_results(root: &Path, files: &mut [CaseFile]) -> Result<(), String> {
    let programs: Vec<String> = files
        .iter()
        .flat_map(|f| f.cases().map(Case::program_text))
        .collect();
    println!(
        "running {} programs in Clojure (one JVM, {} s limit per program)...",
        programs.len(),
        CASE_TIMEOUT.as_secs()
    );
    let started = Instant::now();
    let text = run_clojure(
        root,
        RUNNER,
        Some(&edn_string_vector(&programs)),
        &[CASE_TIMEOUT.as_millis().to_string()],
    )?;
    let (version, results) = parse_oracle_output(&text, programs.len())?;
    println!(
        "Clojure {version} ran {} programs in {:.1} s",
        programs.len(),
        started.elapsed().as_secs_f64()
    );
    apply_results(files, &results)
}

/// Install the oracle's results and report what changed and what looks wrong.
fn apply_results(files: &mut [CaseFile], results: &[OracleResult]) -> Result<(), String> {
    let mut next = results.iter();
    let mut changed = Vec::new();
    let mut suspicious = Vec::new();
    for file in files.iter_mut() {
        let shown = display_path(&file.path);
        for item in &mut file.items {
            let Item::Case(case) = item else { continue };
            let Some(result) = next.next() else {
                return Err("the runner returned fewer results than programs".into());
            };
            let at = format!("{shown}:{} `{}`", case.line, case.name);
            let outcome = match result {
                OracleResult::Value(v) if v.contains('\n') => {
                    suspicious.push(format!(
                        "{at}: the printed value spans lines; make the case return a value \
                         that prints on one line"
                    ));
                    Outcome::Value(v.replace('\n', "\\n"))
                }
                OracleResult::Value(v) => {
                    if v.contains("#object[") || v.contains("#function[") {
                        suspicious.push(format!(
                            "{at}: the value prints an object identity ({v}); \
                             return something comparable instead"
                        ));
                    }
                    Outcome::Value(v.clone())
                }
                OracleResult::Error { class, message } => Outcome::Error {
                    class: class.clone(),
                    message: message.clone(),
                },
                OracleResult::Timeout => Outcome::Error {
                    class: "Timeout".into(),
                    message: format!(
                        "no result within {} s (the program does not terminate)",
                        CASE_TIMEOUT.as_secs()
                    ),
                },
            };
            if case.outcome.as_ref() != Some(&outcome) {
                let before = case
                    .outcome
                    .as_ref()
                    .map_or_else(|| "(none)".to_string(), Outcome::shown);
                changed.push(format!("{at}: {before}  ->  {}", outcome.shown()));
            }
            if let (Outcome::Value(v), Some(PtcOutcome::Value(p))) = (&outcome, &case.ptc)
                && v == p
            {
                suspicious.push(format!(
                    "{at}: marked as a deviation but Clojure gives the same value {v}"
                ));
            }
            case.outcome = Some(outcome);
        }
        let text = render_cases(&file.items);
        let old = std::fs::read_to_string(&file.path).unwrap_or_default();
        if text != old {
            std::fs::write(&file.path, text)
                .map_err(|e| format!("cannot write {}: {e}", file.path.display()))?;
        }
    }
    if next.next().is_some() {
        return Err("the runner returned more results than programs".into());
    }
    if changed.is_empty() {
        println!("no result changed");
    } else {
        println!("{} result(s) changed:", changed.len());
        for line in &changed {
            println!("  {line}");
        }
    }
    for line in &suspicious {
        eprintln!("warning: {line}");
    }
    Ok(())
}

/// The programs as an EDN vector of strings, which the runner reads with `clojure.edn`.
fn edn_string_vector(programs: &[String]) -> String {
    let mut out = String::from("[\n");
    for program in programs {
        out.push('"');
        for c in program.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c => out.push(c),
            }
        }
        out.push_str("\"\n");
    }
    out.push(']');
    out.push('\n');
    out
}

fn parse_oracle_output(text: &str, expected: usize) -> Result<(String, Vec<OracleResult>), String> {
    let mut lines = text.lines();
    let version = lines
        .next()
        .and_then(|l| l.strip_prefix("version\t"))
        .ok_or("the runner output does not start with its Clojure version")?;
    let version = read_string_literal(version)?;
    let mut results = Vec::with_capacity(expected);
    for (n, line) in lines.enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        let bad = || format!("unexpected runner output line {}: {line}", n + 2);
        if fields.first().and_then(|f| f.parse::<usize>().ok()) != Some(n) {
            return Err(bad());
        }
        let result = match fields[1..] {
            ["ok", value] => OracleResult::Value(read_string_literal(value)?),
            ["error", class, message] => OracleResult::Error {
                class: read_string_literal(class)?,
                message: read_string_literal(message)?,
            },
            ["timeout"] => OracleResult::Timeout,
            _ => return Err(bad()),
        };
        results.push(result);
    }
    if results.len() != expected {
        return Err(format!(
            "the runner returned {} results for {expected} programs",
            results.len()
        ));
    }
    Ok((version, results))
}

/// Read a string literal as Clojure's `pr-str` prints it.
fn read_string_literal(text: &str) -> Result<String, String> {
    let bad = |why: &str| format!("bad string literal from the runner ({why}): {text}");
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or_else(|| bad("not quoted"))?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16).map_err(|_| bad("bad \\u escape"))?;
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            _ => return Err(bad("unknown escape")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn oracle_output_is_decoded() {
        let text = "version\t\"1.11.1\"\n0\tok\t\"[1 \\\"a\\\\n\\\"]\"\n\
                    1\terror\t\"java.lang.ArithmeticException\"\t\"Divide by zero\"\n2\ttimeout\n";
        assert_eq!(
            parse_oracle_output(text, 3),
            Ok((
                "1.11.1".to_string(),
                vec![
                    OracleResult::Value("[1 \"a\\n\"]".into()),
                    OracleResult::Error {
                        class: "java.lang.ArithmeticException".into(),
                        message: "Divide by zero".into()
                    },
                    OracleResult::Timeout,
                ]
            ))
        );
        assert_eq!(
            parse_oracle_output(text, 4),
            Err("the runner returned 3 results for 4 programs".to_string())
        );
        assert_eq!(read_string_literal("\"\\u00e9\\t\""), Ok("é\t".to_string()));
    }

    #[test]
    fn programs_are_passed_as_edn_strings() {
        assert_eq!(
            edn_string_vector(&["(str \"a\\b\")".to_string(), "1\n2".to_string()]),
            "[\n\"(str \\\"a\\\\b\\\")\"\n\"1\n2\"\n]\n"
        );
    }
}

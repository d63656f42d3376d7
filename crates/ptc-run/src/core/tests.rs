//! The run core as data: each file of `tests/golden/` gives an agent (mission, settings,
//! its depth in a tree of runs, what its intent log held when it started) and what the world
//! answers (the model's replies, the tools' answers, a deadline that passes), and below
//! `=== actions` the actions the core answered with, one per line.
//! `UPDATE_GOLDEN=1` rewrites the actions after a deliberate change (then review the diff).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ptc_compression::CompressionConfig;
use ptc_lisp::{ToolAnswer, ToolError, ToolOutcome, ToolSpec, Value, pr_str};
use ptc_turn::{DEFAULT_MAX_TURNS, Step, StepOutcome, Task, Usage};

use super::{
    Action, CallPlan, Event, ModelTurns, RecordedIntents, RunCore, Source, Start, restore_namespace,
};
use crate::intent_log::{IdempotencyKey, RecordedCall};
use crate::model::{LlmError, LlmResponse};
use crate::outcome::Rules;
use crate::sandbox::runtime_for;
use crate::settings::RunSettings;
use crate::signature::Signature;

const ACTIONS: &str = "=== actions";

/// What the world answers, in order.
#[derive(Debug)]
enum Answer {
    Reply {
        text: String,
        cut_off: bool,
    },
    ModelError(String),
    Tool(Result<Value, String>),
    Deadline,
    Stop,
    /// The run stops (its process dies) while the model is asked, and is resumed after its
    /// last recorded turn.
    Resume,
}

/// A run of a case: its task, how it renders and checks, and the world's answers.
struct Case {
    task: Task,
    signature: Option<Signature>,
    compression: CompressionConfig,
    history_policy: bool,
    /// The turns the run's tree has left.
    turn_budget: Option<u32>,
    /// The run's deadline.
    deadline: Option<Duration>,
    /// The programs of a compiled agent, one per turn (then no model is asked).
    stages: Vec<String>,
    /// The run's depth below its top run, and how deep runs may go.
    depth: Option<(u32, u32)>,
    /// What the run's intent log held when it started, when it keeps one; a run whose log
    /// held a call or a reply is resumed after a crash in its first turn.
    intents: Option<RecordedIntents>,
    answers: Vec<Answer>,
}

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The agent and the answers of a case file's part above `=== actions`.
fn parse(script: &str) -> Case {
    let mission = script
        .lines()
        .find_map(|line| line.strip_prefix("mission:"))
        .expect("a mission")
        .trim();
    let mut task = Task {
        mission: mission.to_string(),
        system_prompt: String::new(),
        tools: Vec::new(),
        data: Default::default(),
        data_descriptions: Default::default(),
        signature: None,
        field_descriptions: Default::default(),
        max_turns: DEFAULT_MAX_TURNS,
    };
    let mut compression = CompressionConfig::default();
    let mut history_policy = false;
    let mut turn_budget = None;
    let mut deadline = None;
    let mut stages = Vec::new();
    let mut depth = None;
    let mut intents: Option<RecordedIntents> = None;
    let mut answers = Vec::new();
    let mut lines = script.lines().filter(|l| !l.starts_with('#')).peekable();
    while let Some(line) = lines.next() {
        let (key, rest) = line.split_once(':').unwrap_or((line, ""));
        let rest = rest.trim();
        match key {
            "" | "mission" => {}
            "max_turns" => task.max_turns = rest.parse().expect("a number"),
            "signature" => task.signature = Some(rest.to_string()),
            "compression" => compression = CompressionConfig::parse(rest).expect("a strategy"),
            // The driver applies the policy; the case answers with the messages unchanged.
            "history_max_messages" => history_policy = true,
            "turn_budget" => turn_budget = Some(rest.parse().expect("a number")),
            "deadline_secs" => {
                deadline = Some(Duration::from_secs(rest.parse().expect("a number")));
            }
            "data" => {
                let json: serde_json::Value = serde_json::from_str(rest).expect("JSON data");
                let serde_json::Value::Object(map) = json else {
                    panic!("data is a JSON object")
                };
                for (name, value) in map {
                    task.data.insert(name, ptc_lisp::from_json(&value));
                }
            }
            "tools" => {
                for name in rest.split(',').map(str::trim) {
                    // The world's answers come from the case, never from a tool.
                    task.tools.push(ToolSpec::new(name, "A tool of the case"));
                }
            }
            "depth" => {
                let (at, max) = rest.split_once(" of ").expect("`depth: N of MAX`");
                depth = Some((
                    at.parse().expect("a number"),
                    max.parse().expect("a number"),
                ));
            }
            "intent log" => intents = Some(RecordedIntents::new(rest)),
            "recorded call" => {
                let log = intents.as_mut().expect("an `intent log:` line first");
                log.calls.push(recorded_call(&log.run_id, rest));
            }
            "reply" | "reply cut off" | "stage" | "recorded reply" => {
                let mut text = Vec::new();
                while let Some(next) = lines.peek() {
                    if is_answer(next) {
                        break;
                    }
                    text.push(lines.next().unwrap_or_default());
                }
                let text = text.join("\n").trim_end().to_string();
                if key == "stage" {
                    stages.push(text);
                } else if key == "recorded reply" {
                    let log = intents.as_mut().expect("an `intent log:` line first");
                    log.reply = Some(LlmResponse::text(text));
                } else {
                    answers.push(Answer::Reply {
                        text,
                        cut_off: key == "reply cut off",
                    });
                }
            }
            "answer" => answers.push(Answer::Tool(Ok(
                ptc_lisp::eval_str(rest).expect("a value to answer with")
            ))),
            "tool error" => answers.push(Answer::Tool(Err(rest.to_string()))),
            "model error" => answers.push(Answer::ModelError(rest.to_string())),
            "deadline passes" => answers.push(Answer::Deadline),
            "stopped" => answers.push(Answer::Stop),
            "resumed" => answers.push(Answer::Resume),
            other => panic!("unknown line {other:?}"),
        }
    }
    let signature = task
        .signature
        .as_deref()
        .map(|text| Signature::parse(text).expect("a signature"));
    Case {
        task,
        signature,
        compression,
        history_policy,
        turn_budget,
        deadline,
        stages,
        depth,
        intents,
        answers,
    }
}

/// A call of an intent log: `TURN:CALL TOOL [ARGS...]`, then ` => VALUE` or
/// ` => error: MESSAGE` when it completed.
fn recorded_call(run_id: &str, text: &str) -> RecordedCall {
    let (call, outcome) = match text.split_once(" => ") {
        Some((call, outcome)) => (call, Some(outcome)),
        None => (text, None),
    };
    let (key, rest) = call.split_once(' ').expect("a key and a call");
    let (tool, args) = rest.split_once(' ').expect("a tool and its arguments");
    let key = IdempotencyKey::parse(&format!("{run_id}:{key}")).expect("TURN:CALL");
    let Value::Vector(args) = ptc_lisp::eval_str(args).expect("arguments") else {
        panic!("the arguments as a vector")
    };
    let outcome = outcome.map(|text| match text.strip_prefix("error: ") {
        Some(message) => ToolOutcome::Error(message.to_string()),
        None => ToolOutcome::Ok(ptc_lisp::eval_str(text).expect("a value")),
    });
    RecordedCall {
        key,
        tool: tool.to_string(),
        args: args.iter().cloned().collect(),
        outcome,
    }
}

fn is_answer(line: &str) -> bool {
    let key = line.split_once(':').map_or(line, |(key, _)| key);
    matches!(
        key,
        "reply"
            | "reply cut off"
            | "answer"
            | "tool error"
            | "model error"
            | "deadline passes"
            | "stopped"
            | "resumed"
            | "stage"
            | "recorded reply"
            | "recorded call"
    )
}

/// Drives the case's core with its answers; every action as a line.
fn drive(case: Case) -> String {
    let settings = RunSettings::default();
    let task = case.task;
    let rules = Rules::for_run(case.signature.as_ref(), &settings, task.max_turns);
    let runtime = runtime_for(&settings.limits, &task);
    let source = || {
        if !case.stages.is_empty() {
            return Source::Stages {
                programs: &case.stages,
                errors: Default::default(),
            };
        }
        let strategy = if task.max_turns <= 1 {
            Box::new(ptc_compression::Uncompressed)
        } else {
            case.compression.build_for(None)
        };
        Source::Model(ModelTurns {
            settings: &settings,
            strategy,
            render_limits: case.compression.limits(),
            history_policy: case.history_policy,
            shared_turn_budget: case.turn_budget,
        })
    };
    let mut turns_left = case.turn_budget.unwrap_or(0);
    // Time stands still: the world's answers take none, and a deadline passes when the case
    // says so.
    let now = Instant::now();
    let start = Start {
        resumed: case
            .intents
            .as_ref()
            .is_some_and(|log| log.reply.is_some() || !log.calls.is_empty()),
        intents: case.intents,
        ..Start::new()
    };
    let mut core = RunCore::new(task.clone(), start, now, runtime.clone(), rules, source());
    if let Some(limit) = case.deadline {
        core = core.with_deadline(now + limit, limit);
    }
    if let Some((depth, max_depth)) = case.depth {
        core = core.with_depth(depth, max_depth);
    }
    let mut answers = case.answers.into_iter();
    let mut out = Vec::new();
    let mut event = Event::Next;
    loop {
        let action = core.advance(event, now);
        event = match action {
            Action::TakeTurn => {
                let granted = turns_left > 0;
                turns_left = turns_left.saturating_sub(1);
                out.push(format!(
                    "turn {}: take a turn of the budget: {}",
                    core.turn_number(),
                    if granted { "taken" } else { "none left" }
                ));
                Event::TurnTaken { granted }
            }
            Action::Rendered { turn, stats } => {
                let how = if stats.compressed {
                    "compressed"
                } else {
                    "in full"
                };
                out.push(format!("turn {turn}: history rendered {how}"));
                Event::Next
            }
            Action::ApplyHistory(messages) => {
                out.push(format!(
                    "turn {}: history policy applied to {} messages",
                    core.turn_number(),
                    messages.len()
                ));
                Event::HistoryApplied {
                    messages,
                    spent: Usage::default(),
                }
            }
            Action::Ask(request) => {
                let last = request.messages.last().map_or("", |m| m.content.as_str());
                let count = request.messages.len();
                out.push(format!(
                    "turn {}: ask with {count} message{}, the last one:",
                    core.turn_number(),
                    if count == 1 { "" } else { "s" }
                ));
                out.extend(last.lines().map(|line| format!("    | {line}")));
                let spent = Usage {
                    llm_requests: 1,
                    ..Usage::default()
                };
                match answers.next() {
                    Some(Answer::Reply { text, cut_off }) => Event::Replied {
                        result: Ok(LlmResponse {
                            stop_reason: cut_off.then(|| "length".to_string()),
                            ..LlmResponse::text(text)
                        }),
                        spent,
                    },
                    Some(Answer::ModelError(message)) => Event::Replied {
                        result: Err(LlmError::Configuration(message)),
                        spent,
                    },
                    Some(cut @ (Answer::Deadline | Answer::Stop)) => cut_off(&core, &cut, &mut out),
                    Some(Answer::Resume) => {
                        let stopped_at = core.turn_number();
                        let turns = core.into_step(Duration::ZERO).turns;
                        let restored = restore_namespace(&runtime, &turns).expect("restored");
                        let names: Vec<String> = restored
                            .memory
                            .definitions()
                            .iter()
                            .map(|d| d.name.clone())
                            .collect();
                        out.push(format!(
                            "turn {stopped_at}: the run stops; resumed with {} turn{}, \
                             definitions restored: [{}]",
                            turns.len(),
                            if turns.len() == 1 { "" } else { "s" },
                            names.join(" ")
                        ));
                        let start = Start {
                            turns,
                            memory: restored.memory,
                            resumed: true,
                            last_ending: restored.last_ending,
                            intents: None,
                        };
                        core = RunCore::new(
                            task.clone(),
                            start,
                            now,
                            runtime.clone(),
                            rules,
                            source(),
                        );
                        Event::Next
                    }
                    other => panic!("the model is asked, and the case answers {other:?}"),
                }
            }
            Action::CallTools { turn, calls } => {
                let mut given = Vec::new();
                let mut cut: Option<Event> = None;
                for call in &calls {
                    let request = &call.request;
                    let args: Vec<String> = request.args.iter().map(pr_str).collect();
                    let mut line = format!(
                        "turn {turn}: call tool/{} [{}]",
                        request.name,
                        args.join(" ")
                    );
                    if let Some(key) = &call.key {
                        line.push_str(&format!(" under {key}"));
                    }
                    if let CallPlan::Answered(answer) = &call.plan {
                        let answer = match &answer.result {
                            Ok(value) => pr_str(value),
                            Err(error) => format!("error: {error}"),
                        };
                        out.push(format!("{line}: answered from the log, {answer}"));
                        continue;
                    }
                    out.push(line);
                    let result = match answers.next() {
                        Some(Answer::Tool(result)) => result.map_err(ToolError::new),
                        Some(answer @ (Answer::Deadline | Answer::Stop)) => {
                            cut = Some(cut_off(&core, &answer, &mut out));
                            break;
                        }
                        other => panic!("a tool is called, and the case answers {other:?}"),
                    };
                    given.push(ToolAnswer::new(result, Duration::ZERO));
                }
                match cut.take() {
                    Some(event) => event,
                    None => Event::ToolsAnswered {
                        answers: given,
                        spent: Usage::default(),
                    },
                }
            }
            Action::Recorded => {
                let recorded = core.last_turn().expect("the recorded turn");
                let turn = recorded.number();
                let what = match (recorded.error(), recorded.value()) {
                    (Some(error), _) => format!("error[{}]:\n{}", error.kind, error.message),
                    (None, Some(value)) => format!("ok, {}", pr_str(value)),
                    (None, None) => "ok".to_string(),
                };
                let mut lines = what.lines();
                out.push(format!(
                    "turn {turn}: recorded {}",
                    lines.next().unwrap_or("")
                ));
                out.extend(lines.map(|line| format!("    | {line}")));
                Event::Next
            }
            Action::Finished => break,
        };
    }
    let left: Vec<Answer> = answers.collect();
    assert!(left.is_empty(), "answers left over: {left:?}");
    finish(core, out)
}

/// The event of a stop or a passed deadline, noted.
fn cut_off(core: &RunCore<'_>, cut: &Answer, out: &mut Vec<String>) -> Event {
    let (what, event) = match cut {
        Answer::Deadline => (
            "the deadline passes",
            Event::DeadlinePassed {
                spent: Usage::default(),
            },
        ),
        _ => (
            "stopped",
            Event::Stopped {
                spent: Usage::default(),
            },
        ),
    };
    out.push(format!("turn {}: {what}", core.turn_number()));
    event
}

fn finish(core: RunCore<'_>, mut out: Vec<String>) -> String {
    let step: Step = core.into_step(Duration::ZERO);
    out.push(match &step.outcome {
        StepOutcome::Returned { value } => format!("finished: returned {}", pr_str(value)),
        StepOutcome::Failed { kind, reason, .. } => {
            format!("finished: failed ({}) {reason}", kind.as_str())
        }
    });
    out.push(format!(
        "{} turns, {} model requests",
        step.turns.len(),
        step.usage.llm_requests
    ));
    out.join("\n") + "\n"
}

#[test]
fn each_case_answers_with_its_recorded_actions() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(case_dir())
        .expect("the cases")
        .map(|entry| entry.expect("a case").path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "the cases are missing");
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a readable case");
        let (script, expected) = match text.split_once(&format!("\n{ACTIONS}\n")) {
            Some((script, expected)) => (script.to_string(), expected.to_string()),
            None => (text.trim_end().to_string(), String::new()),
        };
        let actual = drive(parse(&script));
        if update {
            std::fs::write(&path, format!("{script}\n{ACTIONS}\n{actual}")).expect("written");
        } else {
            assert_eq!(actual, expected, "{}", path.display());
        }
    }
}

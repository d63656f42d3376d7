//! `ptc render`: the messages a compression strategy makes of a serialized step.

use crate::report;
use crate::show;
use clap::Args;
use ptc_compression::{
    BillComparison, CompressionConfig, PricingProfile, RenderOptions, Rendered, ScheduleComparison,
    transcript,
};
use ptc_turn::{Step, Turn};
use std::io::{Read, Write};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// A step serialized as JSON (`-` reads standard input).
    #[arg(long, value_name = "FILE.json")]
    pub step: PathBuf,

    /// The strategy and options, e.g. `on` (the default strategy, append-compact),
    /// `single-user-coalesced?println_limit=10`, `rolling-window`, or `off` (the full history;
    /// the default).
    #[arg(long, value_name = "SPEC", default_value = "off")]
    pub compression: CompressionConfig,

    /// Render the request for turn N (made from turns 1 to N-1) instead of the last request:
    /// the one after the last turn, or the last turn's own when that turn ended the run.
    #[arg(long, value_name = "N")]
    pub turn: Option<usize>,

    /// Print what the strategy showed and dropped, the sizes compared with the full history,
    /// the modelled bill of the run's requests up to this one beside the full history's, and
    /// what the default (`on`) bills for them beside the best compaction schedule in hindsight.
    #[arg(long)]
    pub stats: bool,

    /// The pricing profile(s) of the bill: `anthropic`, `openai`, `ideal`, optionally with
    /// prices such as `openai?read=0.25` (repeatable; all three by default).
    #[arg(long, value_name = "PROFILE")]
    pub pricing: Vec<PricingProfile>,

    /// Print the messages and stats as JSON.
    #[arg(long, conflicts_with = "stats")]
    pub json: bool,

    /// Print the requests the run sent, as the step recorded them, instead of rendering them
    /// again: every turn's under a heading, or with `--turn N` turn N's alone (in the form a
    /// rendering takes, to compare the two). With `--json`, a list of `turn` and `messages`.
    #[arg(long, conflicts_with_all = ["compression", "stats", "pricing"])]
    pub recorded: bool,
}

pub fn run(args: &RenderArgs) -> Result<(), String> {
    let text = read_input(&args.step)?;
    let step: Step = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a serialized step: {e}. Pass the JSON a run saved (its `outcome`, `task` \
             and `turns`)",
            args.step.display()
        )
    })?;
    let output = render_step(&step, args)?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(output.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("cannot write the output: {e}"))
}

fn read_input(path: &PathBuf) -> Result<String, String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the step from standard input: {e}"))?;
        return Ok(text);
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The text `ptc render` prints for `step`.
pub fn render_step(step: &Step, args: &RenderArgs) -> Result<String, String> {
    if args.recorded {
        return recorded(step, args);
    }
    let turns = select_turns(step, args.turn)?;
    let opts = RenderOptions::from_task(&step.task).with_limits(args.compression.limits());
    let memory = turns.last().map_or(&[][..], Turn::memory);
    let strategy = args.compression.build();
    let rendered = strategy.to_messages(turns, memory, &opts);
    let profiles = if args.pricing.is_empty() {
        show::default_profiles()
    } else {
        args.pricing.clone()
    };
    let bills = show::bills(&*strategy, turns, &opts, true, &profiles);
    let schedules = show::schedules(turns, &opts, true, &profiles);
    if args.json {
        return Ok(json_output(&rendered, &bills, &schedules)? + "\n");
    }
    let mut out = transcript(&rendered.messages);
    if args.stats {
        out.push_str("\n=== stats ===\n");
        out.push_str(&stats_text(&rendered));
        out.push_str(&show::bill_lines(&bills));
        out.push_str(&show::schedule_lines(&schedules));
    }
    Ok(out)
}

/// The requests `step` recorded: turn `--turn`'s, or every turn's under a heading.
fn recorded(step: &Step, args: &RenderArgs) -> Result<String, String> {
    let all = step.turns.as_slice();
    let turns = match args.turn {
        None => all,
        Some(n) if (1..=all.len()).contains(&n) => &all[n - 1..n],
        Some(n) => {
            return Err(format!(
                "--turn {n} is out of range: the step recorded {} request(s), so N must be \
                 between 1 and {}",
                all.len(),
                all.len()
            ));
        }
    };
    if args.json {
        let requests: Vec<_> = turns
            .iter()
            .map(|t| serde_json::json!({"turn": t.number(), "messages": t.messages()}))
            .collect();
        let json = report::envelope("render", serde_json::json!({ "requests": requests }));
        return serde_json::to_string_pretty(&json)
            .map(|json| json + "\n")
            .map_err(|e| format!("cannot write JSON: {e}"));
    }
    if args.turn.is_some() {
        return Ok(turns
            .first()
            .map_or(String::new(), |t| transcript(t.messages())));
    }
    let mut out = String::new();
    for (i, turn) in turns.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let count = turn.messages().len();
        if count == 0 {
            out.push_str(&format!(
                "##### turn {}: no request recorded #####\n",
                turn.number()
            ));
            continue;
        }
        out.push_str(&format!(
            "##### turn {}: the request as sent, {count} message{} #####\n",
            turn.number(),
            if count == 1 { "" } else { "s" }
        ));
        out.push_str(&transcript(turn.messages()));
    }
    Ok(out)
}

/// The turns the request for turn `turn` is made from; without `turn`, those of the last
/// request: the one after the last turn, or the last turn's own when that turn ended the run
/// (no request followed it).
fn select_turns(step: &Step, turn: Option<usize>) -> Result<&[Turn], String> {
    let all = step.turns.as_slice();
    let ended = all.last().is_some_and(Turn::ends_run);
    let requests = all.len() + usize::from(!ended);
    match turn {
        None => Ok(&all[..requests - 1]),
        Some(n) if (1..=requests).contains(&n) => Ok(&all[..n - 1]),
        Some(n) if ended => Err(format!(
            "--turn {n} is out of range: the step has {} turn(s) and the last one ended the run, \
             so N must be between 1 and {requests}",
            all.len(),
        )),
        Some(n) => Err(format!(
            "--turn {n} is out of range: the step has {} turn(s), so N must be between 1 and \
             {requests}",
            all.len(),
        )),
    }
}

fn json_output(
    rendered: &Rendered,
    bills: &[BillComparison],
    schedules: &[ScheduleComparison],
) -> Result<String, String> {
    let value = report::envelope(
        "render",
        serde_json::json!({
        "messages": rendered.messages,
        "stats": rendered.stats,
        "cache_points": rendered.cache_points,
        "bills": bills,
        "schedules": schedules,
        }),
    );
    serde_json::to_string_pretty(&value).map_err(|e| format!("cannot write JSON: {e}"))
}

fn stats_text(rendered: &Rendered) -> String {
    let s = &rendered.stats;
    let mode = if s.compressed {
        "compressed"
    } else {
        "full history"
    };
    format!(
        "strategy: {} ({mode})\n\
         turns: {} ({} summarized)\n\
         tool calls: {} shown, {} dropped\n\
         prints: {} shown, {} dropped\n\
         failed turns: {} shown, {} collapsed\n\
         size: {} messages, {} chars, ~{} tokens\n\
         full history: {} chars, ~{} tokens\n",
        s.strategy,
        s.turns,
        s.turns_compressed,
        s.tool_calls_shown,
        s.tool_calls_dropped,
        s.prints_shown,
        s.prints_dropped,
        s.failed_turns_shown,
        s.failed_turns_collapsed,
        s.messages,
        s.chars,
        s.estimated_tokens,
        s.uncompressed_chars,
        s.uncompressed_estimated_tokens,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_compression::PricingKind;
    use ptc_lisp::Value;
    use ptc_turn::{FailureKind, StepOutcome, Task, TurnError, Turns};

    fn step() -> Step {
        let mut turns = Turns::new();
        for (n, program) in [(1, "(foo)"), (2, "(bar)")] {
            turns
                .push(Turn::failure(
                    n,
                    program,
                    TurnError::new(
                        "undefined_symbol",
                        format!("{} is not defined", &program[1..4]),
                    ),
                ))
                .expect("in order");
        }
        Step {
            outcome: StepOutcome::Failed {
                kind: FailureKind::MaxTurnsExceeded,
                reason: "out of turns".into(),
                value: None,
                llm_errors: Vec::new(),
            },
            task: Task {
                system_prompt: "Write PTC-Lisp.".into(),
                max_turns: 3,
                ..Task::new("Say hello")
            },
            turns,
            usage: Default::default(),
        }
    }

    fn args(spec: &str, turn: Option<usize>) -> RenderArgs {
        RenderArgs {
            step: PathBuf::from("step.json"),
            compression: CompressionConfig::parse(spec).expect("valid spec"),
            turn,
            stats: false,
            pricing: Vec::new(),
            json: false,
            recorded: false,
        }
    }

    #[test]
    fn renders_the_request_after_the_last_turn() {
        let text = render_step(
            &step(),
            &args("single-user-coalesced?failed_turns=last", None),
        )
        .expect("renders");
        assert_eq!(
            text,
            "=== system ===\nWrite PTC-Lisp.\n\n\
             === user ===\nSay hello\n\n;; No tool calls made\n\n\
             === assistant ===\n```clojure\n(bar)\n```\n\n\
             === user ===\nError: bar is not defined\n\n\
             FINAL TURN - you must call (return result) or (fail reason) now.\n"
        );
    }

    #[test]
    fn renders_the_request_for_an_earlier_turn() {
        let text = render_step(&step(), &args("off", Some(1))).expect("renders");
        assert_eq!(
            text,
            "=== system ===\nWrite PTC-Lisp.\n\n=== user ===\nSay hello\n\nTurns left: 3\n"
        );
    }

    /// A one-request run: its only turn returned.
    fn returned_step() -> Step {
        let mut turns = Turns::new();
        turns
            .push(Turn::success(1, "(return 3)", Value::Int(3)).with_run_ended())
            .expect("in order");
        Step {
            outcome: StepOutcome::Returned {
                value: Value::Int(3),
            },
            task: Task {
                system_prompt: "Write PTC-Lisp.".into(),
                max_turns: 3,
                ..Task::new("Say hello")
            },
            turns,
            usage: Default::default(),
        }
    }

    #[test]
    fn a_run_that_returned_renders_its_last_request_and_bills_only_the_requests_sent() {
        let mut with_stats = args("off", None);
        with_stats.stats = true;
        with_stats.pricing = vec![PricingKind::Ideal.profile()];
        assert_eq!(
            render_step(&returned_step(), &with_stats).expect("renders"),
            "=== system ===\nWrite PTC-Lisp.\n\n=== user ===\nSay hello\n\nTurns left: 3\n\n\
             === stats ===\nstrategy: uncompressed (full history)\nturns: 0 (0 summarized)\n\
             tool calls: 0 shown, 0 dropped\nprints: 0 shown, 0 dropped\n\
             failed turns: 0 shown, 0 collapsed\n\
             size: 2 messages, 39 chars, ~10 tokens\n\
             full history: 39 chars, ~10 tokens\n\
             modelled bill of 1 request (billed-equivalent input tokens; token counts \
             estimated at about 4 characters a token):\n\
             \x20 ideal:      18 (18 input, 0 cache read, 0 cache write); full history \
             18: 1.00x\n\
             the default (on) against the best compaction schedule in hindsight \
             (billed-equivalent input tokens):\n\
             \x20 ideal:      on 18, best 18: 1.00x; full history 18\n"
        );
        assert_eq!(
            render_step(&returned_step(), &args("off", Some(2))),
            Err(
                "--turn 2 is out of range: the step has 1 turn(s) and the last one ended the \
                 run, so N must be between 1 and 1"
                    .to_string()
            )
        );
    }

    #[test]
    fn turn_numbers_outside_the_step_are_refused() {
        assert_eq!(
            render_step(&step(), &args("off", Some(4))),
            Err(
                "--turn 4 is out of range: the step has 2 turn(s), so N must be between 1 and 3"
                    .to_string()
            )
        );
        assert!(render_step(&step(), &args("off", Some(0))).is_err());
    }

    #[test]
    fn stats_and_json_output() {
        let mut with_stats = args("off", None);
        with_stats.stats = true;
        let text = render_step(&step(), &with_stats).expect("renders");
        assert!(
            text.ends_with(
                "=== stats ===\nstrategy: uncompressed (full history)\nturns: 2 (0 summarized)\n\
                 tool calls: 0 shown, 0 dropped\nprints: 0 shown, 0 dropped\n\
                 failed turns: 2 shown, 0 collapsed\n\
                 size: 6 messages, 180 chars, ~47 tokens\n\
                 full history: 180 chars, ~47 tokens\n\
                 modelled bill of 3 requests (billed-equivalent input tokens; token counts \
                 estimated at about 4 characters a token):\n\
                 \x20 anthropic:  127 (127 input, 0 cache read, 0 cache write); full history \
                 127: 1.00x\n\
                 \x20 openai:     127 (127 input, 0 cache read, 0 cache write); full history \
                 127: 1.00x\n\
                 \x20 ideal:      82 (77 input, 50 cache read, 0 cache write); full history \
                 82: 1.00x\n\
                 the default (on) against the best compaction schedule in hindsight \
                 (billed-equivalent input tokens):\n\
                 \x20 anthropic:  on 127, best 127: 1.00x; full history 127\n\
                 \x20 openai:     on 127, best 127: 1.00x; full history 127\n\
                 \x20 ideal:      on 82, best 82: 1.00x; full history 82\n"
            ),
            "{text}"
        );
        let mut json = args("aggressive", None);
        json.json = true;
        let text = render_step(&step(), &json).expect("renders");
        let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(value["stats"]["strategy"], "aggressive");
        assert_eq!(value["messages"][0]["role"], "system");
        assert_eq!(value["messages"].as_array().map(Vec::len), Some(4));
        let profiles: Vec<&str> = value["bills"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b["strategy"]["profile"].as_str())
            .collect();
        assert_eq!(profiles, ["anthropic", "openai", "ideal"]);
        let schedules: Vec<(&str, f64, f64, f64)> = value["schedules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| {
                Some((
                    s["default"]["profile"].as_str()?,
                    s["default"]["total"]["billed"].as_f64()?,
                    s["best"]["total"]["billed"].as_f64()?,
                    s["full_history"]["total"]["billed"].as_f64()?,
                ))
            })
            .collect();
        assert_eq!(
            schedules,
            [
                ("anthropic", 127.0, 127.0, 127.0),
                ("openai", 127.0, 127.0, 127.0),
                ("ideal", 82.0, 82.0, 82.0)
            ]
        );
    }
}

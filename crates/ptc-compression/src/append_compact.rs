//! The default strategy: a history that only grows, compacted once in a while when that is
//! cheaper than carrying it.

use crate::compression::{
    Compression, Rendered, Repeats, count_shown_turns, finish_request, render_single_shot,
    unrecovered_from,
};
use crate::cost::{Bill, PricingKind, PricingProfile, PromptRequest, price};
use crate::printed::{OutputSizes, Printed};
use crate::render::calls::tool_call_sizes;
use crate::render::definitions::{ReturnShapes, write_user};
use crate::render::feedback::{Feedback, ValueShown};
use crate::render::folded::{FailedSplit, Folded, write_history};
use crate::render::parts::{
    Counts, DefinitionStyle, Detail, NO_TOOL_CALLS, Parts, Rules, TOOL_CALLS_HEADER,
    prelude_header, shorter_text,
};
use crate::render::prefix::write_prefix;
use crate::render_options::RenderOptions;
use crate::tokenizer::HeuristicTokenizer;
use crate::tokenizer::Tokenizer;
use ptc_lisp::Definition;
use ptc_turn::{Message, Turn};
use std::collections::HashMap;

/// The default strategy: append, and compact only when it pays.
///
/// Between compactions the history only grows: each turn adds its program (without the prose
/// around it) and a short feedback message (its tool calls with their results, its output, or
/// its value, or its error with the tool calls and output that happened before it). Earlier
/// messages are never rewritten, so each request starts with the previous one and a provider's
/// prompt cache serves all of it.
///
/// Carrying the raw turns costs a cache read of them on every request; folding them into a
/// summary (the seed format: `user/` namespace, every tool call made, output) costs one write of
/// the summary. The turns are folded when the extra reads paid since the last compaction reach
/// what the write would cost (the rule of ski rental, which never pays more than about twice
/// what knowing the future would), provided the turns left could pay it back; or as soon as the
/// request would exceed `compact_above_tokens`. A compaction folds the turns up to the last
/// successful one before the newest turn: the newest turn, and unrecovered failures, stay as
/// they happened.
///
/// Whatever is folded, every tool call stays listed with its arguments and a result, so no
/// side effect is forgotten however long the run.
///
/// ```
/// use ptc_compression::{AppendCompact, Compression, RenderOptions};
/// use ptc_lisp::Value;
/// use ptc_turn::Turn;
///
/// let opts = RenderOptions::new("Add up the orders", "Write PTC-Lisp.", 5);
/// let turns = [Turn::success(1, "(+ 1 2)", Value::Int(3))];
/// let rendered = AppendCompact::default().to_messages(&turns, &[], &opts);
/// let contents: Vec<&str> = rendered.messages.iter().map(|m| m.content.as_str()).collect();
/// assert_eq!(
///     contents,
///     [
///         "Write PTC-Lisp.",
///         "Add up the orders",
///         "```clojure\n(+ 1 2)\n```",
///         ";; Result: 3\n\nThe program did not call `return`, so the run goes on. If its \
///          result answers the task, send `(return ...)` around the expression that computes \
///          it.\n\nTurns left: 4",
///     ]
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AppendCompact {
    /// The provider's caching rules and prices that decide when compacting pays.
    pub pricing: PricingKind,
    /// Compact as soon as a request is estimated above this many tokens.
    pub compact_above_tokens: Option<usize>,
}

impl Compression for AppendCompact {
    fn name(&self) -> &str {
        "append-compact"
    }

    fn to_messages(&self, turns: &[Turn], _: &[Definition], opts: &RenderOptions<'_>) -> Rendered {
        if opts.is_single_shot() {
            return render_single_shot(self.name(), turns, opts);
        }
        let folded = self.folded(turns, opts);
        self.render(turns, folded, opts)
    }
}

impl AppendCompact {
    /// How many turns each request of a run of `turns` folds into its summary, as the rule
    /// decides: one entry per request, the first (before any turn) to the one after the last
    /// turn.
    ///
    /// ```
    /// use ptc_compression::{AppendCompact, RenderOptions};
    /// let opts = RenderOptions::new("Add up the orders", "Write PTC-Lisp.", 5);
    /// assert_eq!(AppendCompact::default().schedule(&[], &opts), vec![0]);
    /// ```
    pub fn schedule(&self, turns: &[Turn], opts: &RenderOptions<'_>) -> Vec<usize> {
        (0..=turns.len())
            .map(|taken| self.folded(&turns[..taken], opts))
            .collect()
    }

    /// The compaction schedule that would have cost least under `profile`, found in hindsight,
    /// and its bill: what a strategy that knew the whole run in advance would pay, making the
    /// same choice as the rule before each request (fold the turns up to the last successful
    /// one before the newest, or carry on). The rule decides without knowing the future; this
    /// is what it is measured against. Covers the requests before each of `turns` and, when
    /// `and_next` is set, the one that would follow the last turn (as
    /// [`run_requests`](crate::run_requests) does).
    pub fn cheapest_schedule(
        &self,
        turns: &[Turn],
        opts: &RenderOptions<'_>,
        and_next: bool,
        profile: &PricingProfile,
        tokenizer: &dyn Tokenizer,
    ) -> (Vec<usize>, Bill) {
        let mut requests: HashMap<(usize, usize), PromptRequest> = HashMap::new();
        let mut request = |taken: usize, folded: usize| -> PromptRequest {
            requests
                .entry((taken, folded))
                .or_insert_with(|| {
                    let rendered = self.render(&turns[..taken], folded, opts);
                    PromptRequest::from_rendered(&rendered.messages, &rendered.cache_points)
                })
                .clone()
        };
        // For each request, the cheapest way to reach each number of folded turns: its cost so
        // far and the number folded by the request before it.
        let count = turns.len() + usize::from(and_next);
        let mut best: Vec<Vec<(usize, f64, usize)>> = Vec::with_capacity(count);
        for taken in 0..count {
            let mut here: Vec<(usize, f64, usize)> = Vec::new();
            if taken == 0 {
                let cost = price(&[request(0, 0)], profile, tokenizer).total.billed;
                here.push((0, cost, 0));
            } else {
                let target = unrecovered_from(&turns[..taken - 1]);
                for &(before, so_far, _) in &best[taken - 1] {
                    for folded in [before, target.max(before)] {
                        let pair = [request(taken - 1, before), request(taken, folded)];
                        let cost = so_far + price(&pair, profile, tokenizer).requests[1].billed;
                        match here.iter_mut().find(|(f, _, _)| *f == folded) {
                            Some(entry) if entry.1 <= cost => {}
                            Some(entry) => *entry = (folded, cost, before),
                            None => here.push((folded, cost, before)),
                        }
                    }
                }
            }
            best.push(here);
        }
        let mut schedule = Vec::with_capacity(count);
        let mut at = best
            .last()
            .and_then(|last| last.iter().min_by(|a, b| a.1.total_cmp(&b.1)))
            .map_or(0, |&(folded, _, _)| folded);
        for taken in (0..count).rev() {
            schedule.push(at);
            at = best[taken]
                .iter()
                .find(|(folded, _, _)| *folded == at)
                .map_or(0, |&(_, _, before)| before);
        }
        schedule.reverse();
        let requests: Vec<PromptRequest> = schedule
            .iter()
            .enumerate()
            .map(|(taken, &folded)| request(taken, folded))
            .collect();
        (schedule, price(&requests, profile, tokenizer))
    }

    /// The messages when the first `folded` turns are folded into the summary (the last folded
    /// turn must be a successful one) and the others follow as they happened.
    pub(crate) fn render(
        &self,
        turns: &[Turn],
        folded: usize,
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        let mut counts = Counts::default();
        let mut messages = Vec::with_capacity(2 + 2 * (turns.len() - folded));
        messages.push(Message::system(opts.system_prompt));
        messages.push(Message::user(summary(turns, folded, opts, &mut counts)));
        let shown = &turns[folded..];
        for turn in shown {
            messages.push(Message::assistant(shorter_text(turn)));
            messages.push(raw_feedback(turn, opts));
        }
        count_shown_turns(&mut counts, shown);
        counts.failed_total = turns.iter().filter(|t| !t.is_success()).count();
        finish_request(
            self.name(),
            messages,
            counts,
            turns,
            opts,
            Repeats::AllButTurnCount,
        )
    }

    /// How many turns the request after `turns` folds: the compactions the rule made at every
    /// earlier request, replayed from the turns alone (rendering stays a pure function of its
    /// input, and every request repeats the decisions of the ones before it).
    fn folded(&self, turns: &[Turn], opts: &RenderOptions<'_>) -> usize {
        let profile = self.pricing.profile();
        let (read, write) = (profile.read_multiplier, profile.write_multiplier);
        let raw: Vec<f64> = turns.iter().map(|t| raw_tokens(t, opts) as f64).collect();
        let mut raw_sums = Vec::with_capacity(raw.len() + 1);
        raw_sums.push(0.0);
        for tokens in &raw {
            raw_sums.push(raw_sums.last().copied().unwrap_or(0.0) + tokens);
        }
        let mut first = String::new();
        write_prefix(&mut Parts::new(&mut first), opts, Detail::Full);
        let prefix = HeuristicTokenizer.count_text(opts.system_prompt)
            + HeuristicTokenizer.count_text(&first);
        let mut summaries = SummarySizes::new(turns, opts);
        // The summary of the turns folded so far, measured once per compaction.
        let mut folded_tokens = 0.0;
        let mut folded = 0;
        // The extra cache reads paid since the last compaction for carrying raw turns.
        let mut rent = 0.0;
        // The turns up to the last successful one before the newest: what a compaction folds
        // (`unrecovered_from` of the turns before the newest, kept up to date turn by turn).
        let mut target = 0;
        for taken in 1..=turns.len() {
            // The newest turn is never folded: the model sees what its last program did in
            // full, its value included.
            if taken >= 2 && turns[taken - 2].is_success() {
                target = taken - 1;
            }
            if target <= folded {
                continue;
            }
            let raw_from = |from: usize| raw_sums[taken] - raw_sums[from];
            let target_tokens = summaries.tokens(target);
            let carried = folded_tokens + raw_from(folded);
            let after = target_tokens + raw_from(target);
            let over_budget = self
                .compact_above_tokens
                .is_some_and(|budget| prefix as f64 + carried > budget as f64);
            let excess = carried - after;
            if excess <= 0.0 && !over_budget {
                continue;
            }
            let newest = raw[taken - 1];
            // What compacting costs on this request beyond carrying on: the summary and the
            // turns after it are written anew, instead of reading what the cache holds and
            // writing the newest turn.
            let buy = (write * after - read * (carried - newest) - write * newest).max(0.0);
            rent += read * excess.max(0.0);
            let requests_after = (opts.max_turns as usize).saturating_sub(taken + 1) as f64;
            let pays_back = read * excess * requests_after >= buy;
            if over_budget || (rent >= buy && pays_back) {
                folded = target;
                folded_tokens = target_tokens;
                rent = 0.0;
            }
        }
        folded
    }
}

/// The first user message: the mission, `tool/`, `data/`, and the summary of the first `folded`
/// turns (their `user/` namespace, every tool call they made, their newest output).
fn summary(turns: &[Turn], folded: usize, opts: &RenderOptions<'_>, counts: &mut Counts) -> String {
    let mut text = String::new();
    let mut parts = Parts::new(&mut text);
    write_prefix(&mut parts, opts, Detail::Full);
    write_history(
        &mut parts,
        Folded::every_call(opts, &turns[..folded]).with_turns_after(folded < turns.len()),
        &FailedSplit::default(),
        counts,
    );
    text
}

/// The summary sizes (estimated tokens, the stable prefix left out) of the first turns, from
/// the sizes of their lines, measured once: a summary lists every tool call, so rendering one
/// per candidate compaction would cost time quadratic in the turns.
struct SummarySizes<'t> {
    turns: &'t [Turn],
    opts: &'t RenderOptions<'t>,
    /// Per tool call, in order: the characters of its line (and the line break before it) with
    /// the result as a type label, as a sample, and as a short result.
    calls: Vec<[usize; 3]>,
    /// The index in `calls` of each turn's first call, and the total last.
    call_start: Vec<usize>,
    /// Sums of the label-form lines of `calls[..k]`.
    label_sums: Vec<usize>,
    /// Where each turn's prints start in the list of every print.
    print_start: Vec<usize>,
    /// The sizes of output parts, found when the first summary is sized.
    output: Option<OutputSizes<'t>>,
}

impl<'t> SummarySizes<'t> {
    fn new(turns: &'t [Turn], opts: &'t RenderOptions<'t>) -> Self {
        let mut calls = Vec::new();
        let mut call_start = Vec::with_capacity(turns.len() + 1);
        let mut prints = 0;
        let mut print_start = Vec::with_capacity(turns.len() + 1);
        let mut line = String::new();
        for turn in turns {
            call_start.push(calls.len());
            print_start.push(prints);
            let failed_turn = (!turn.is_success()).then(|| turn.number());
            for call in turn.tool_calls() {
                let sizes = tool_call_sizes(call, failed_turn, &opts.limits, &mut line);
                calls.push(sizes.map(|chars| 1 + chars));
            }
            prints += turn.prints().len();
        }
        call_start.push(calls.len());
        print_start.push(prints);
        let sums = |sizes: &mut dyn Iterator<Item = usize>| {
            let mut sums = vec![0];
            for size in sizes {
                sums.push(sums.last().copied().unwrap_or(0) + size);
            }
            sums
        };
        let label_sums = sums(&mut calls.iter().map(|c| c[0]));
        SummarySizes {
            turns,
            opts,
            calls,
            call_start,
            label_sums,
            print_start,
            output: None,
        }
    }

    /// The estimated tokens of the summary of the first `folded` turns, as
    /// [`write_history`] writes it.
    fn tokens(&mut self, folded: usize) -> f64 {
        HeuristicTokenizer::tokens_for_chars(self.chars(folded)) as f64
    }

    /// The characters of the summary of the first `folded` turns.
    fn chars(&mut self, folded: usize) -> usize {
        if folded == 0 {
            return 0;
        }
        let limits = &self.opts.limits;
        let memory = self.turns[folded - 1].memory();
        let printed_count = self.print_start[folded];
        let printed = printed_count > 0;
        let mut parts: Vec<usize> = Vec::with_capacity(3);
        let mut user = String::new();
        let returns = ReturnShapes::find(memory, &self.turns[..folded]);
        let header = prelude_header(&self.turns[..folded], folded < self.turns.len());
        write_user(
            &mut user,
            &header,
            memory,
            &returns,
            DefinitionStyle {
                samples: !printed,
                detail: Detail::Full,
                rules: Rules::Default,
            },
            limits,
        );
        parts.push(char_count(&user));
        let calls = self.call_start[folded];
        parts.push(if calls == 0 {
            char_count(NO_TOOL_CALLS)
        } else {
            let recent = calls - calls.min(limits.tool_call_limit);
            let form = if printed { 2 } else { 1 };
            char_count(TOOL_CALLS_HEADER)
                + self.label_sums[recent]
                + self.calls[recent..calls]
                    .iter()
                    .map(|c| c[form])
                    .sum::<usize>()
        });
        let output = self.output.get_or_insert_with(|| {
            OutputSizes::new(Printed::new(self.turns, |_| true, self.opts), limits)
        });
        parts.push(output.chars(printed_count, memory));
        let parts: Vec<usize> = parts.into_iter().filter(|&p| p > 0).collect();
        parts.iter().sum::<usize>() + 2 * parts.len().saturating_sub(1)
    }
}

fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// The feedback on a turn that is not folded: its tool calls with their results, and its output
/// (its beginning and end when it is long) or, when it printed nothing, its value; for a failed
/// turn, the error first.
fn raw_feedback(turn: &Turn, opts: &RenderOptions<'_>) -> Message {
    Feedback {
        opts,
        defined: None,
        calls: turn.tool_calls(),
        prints: turn.prints(),
        value: ValueShown::WhenSilent,
    }
    .message(turn)
}

/// Estimated tokens a turn adds while it is not folded: its program and its feedback.
fn raw_tokens(turn: &Turn, opts: &RenderOptions<'_>) -> usize {
    HeuristicTokenizer.count_text(&shorter_text(turn))
        + HeuristicTokenizer.count_text(&raw_feedback(turn, opts).content)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptc_lisp::{ToolCallRecord, ToolOutcome, Value};
    use ptc_turn::TurnError;

    fn turn(n: u32) -> Turn {
        let call = |name: &str, result: Value| ToolCallRecord {
            name: name.into(),
            args: vec![Value::string(format!("id-{n}")), Value::Int(n.into())],
            result: ToolOutcome::Ok(result),
            duration_us: 1,
        };
        let record = Value::map([
            (Value::keyword("id"), Value::Int(n.into())),
            (
                Value::keyword("note"),
                Value::string("long text ".repeat(n as usize)),
            ),
        ]);
        let memory = (1..=n)
            .map(|k| ptc_lisp::Definition {
                name: format!("v{k}"),
                doc: None,
                value: Value::Int(k.into()),
                params: Vec::new(),
                last_return: None,
            })
            .collect();
        let calls = vec![call("get", record), call("send", Value::string("ok"))];
        let prints = if n.is_multiple_of(3) {
            vec![format!("turn {n}"), "é".repeat(n as usize)]
        } else {
            Vec::new()
        };
        if n.is_multiple_of(4) {
            Turn::failure(n, "(x)", TurnError::new("k", "boom"))
                .with_tool_calls(calls)
                .with_prints(prints)
        } else {
            Turn::success(n, "(x)", Value::Nil)
                .with_tool_calls(calls)
                .with_prints(prints)
                .with_memory(memory)
        }
    }

    /// A run whose output takes every form a summary gives it: a policy printed whole twice
    /// before it is redefined in turn 20 and once after (pointed to while its name holds it,
    /// digested or left out after), an input printed whole, a log line every turn, one-off
    /// lines of many kinds, long one-off reports, a turn printing many entries, failed turns.
    fn printing_turn(n: u32) -> Turn {
        let version = if n < 20 { 1 } else { 2 };
        let memory = vec![ptc_lisp::Definition {
            name: "policy".into(),
            doc: None,
            value: Value::string(policy(version)),
            params: Vec::new(),
            last_return: None,
        }];
        let mut program = String::from("(x)");
        let mut prints = vec![format!("audited c-{n:02}")];
        match n {
            2 | 8 | 22 => {
                program = "(println policy)".into();
                prints.push(policy(version));
            }
            5 => {
                program = "(println \"terms:\" data/terms)".into();
                prints.push(format!("terms: {}", policy(0)));
            }
            10 => prints.extend((0..20).map(|k| format!("row-{k} {}", "ü".repeat(k)))),
            _ => {}
        }
        if n.is_multiple_of(3) {
            let word = [
                "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
            ];
            prints.push(format!("{} {n}", word[n as usize % word.len()]));
        }
        if n.is_multiple_of(4) {
            // Each report a kind of its own: its first word differs in a letter.
            let letter = char::from(b'a' + (n / 4) as u8);
            let lines = "line of the report\n".repeat(n as usize);
            prints.push(format!("report-{letter}\n{lines}"));
        }
        let turn = if n.is_multiple_of(7) {
            Turn::failure(n, program, TurnError::new("k", "boom"))
        } else {
            Turn::success(n, program, Value::Nil).with_memory(memory)
        };
        turn.with_tool_calls(turn_calls(n)).with_prints(prints)
    }

    fn policy(version: u32) -> String {
        format!(
            "POLICY v{version}\n{}",
            "Refunds need a receipt and a reason.\n".repeat(6)
        )
    }

    fn turn_calls(n: u32) -> Vec<ToolCallRecord> {
        vec![ToolCallRecord {
            name: "log".into(),
            args: vec![Value::Int(n.into())],
            result: ToolOutcome::Ok(Value::Nil),
            duration_us: 1,
        }]
    }

    // The sizes the rule decides with are those of the summaries it renders.
    #[test]
    fn summary_sizes_are_those_of_the_rendered_summaries() {
        let data =
            std::collections::BTreeMap::from([("terms".to_string(), Value::string(policy(0)))]);
        let histories: [Vec<Turn>; 2] = [
            (1..=30).map(turn).collect(),
            (1..=40).map(printing_turn).collect(),
        ];
        let limits = [
            crate::RenderLimits::default(),
            crate::RenderLimits {
                tool_call_limit: 3,
                println_limit: 2,
                ..crate::RenderLimits::default()
            },
            crate::RenderLimits {
                println_limit: 0,
                ..crate::RenderLimits::default()
            },
            crate::RenderLimits {
                println_limit: 1,
                output_char_limit: 50,
                sample_printable_limit: 20,
                ..crate::RenderLimits::default()
            },
            crate::RenderLimits {
                println_limit: 40,
                output_char_limit: 0,
                ..crate::RenderLimits::default()
            },
        ];
        for (turns, limits) in histories
            .iter()
            .flat_map(|h| limits.iter().map(move |l| (h, l)))
        {
            let opts = RenderOptions::new("m", "s", 40)
                .with_limits(*limits)
                .with_data(&data);
            let mut sizes = SummarySizes::new(turns, &opts);
            // In the order the rule asks, then backwards.
            for folded in (1..=turns.len()).chain((1..=turns.len()).rev()) {
                if !turns[folded - 1].is_success() {
                    continue;
                }
                let all = turns.len();
                let turns = &turns[..folded];
                let mut text = String::new();
                write_history(
                    &mut Parts::new(&mut text),
                    Folded::every_call(&opts, turns).with_turns_after(folded < all),
                    &FailedSplit::default(),
                    &mut Counts::default(),
                );
                assert_eq!(
                    sizes.chars(folded),
                    char_count(&text),
                    "{folded} turns:\n{text}"
                );
                assert_eq!(
                    sizes.tokens(folded),
                    HeuristicTokenizer.count_text(&text) as f64,
                    "{folded} turns:\n{text}"
                );
            }
        }
    }
}

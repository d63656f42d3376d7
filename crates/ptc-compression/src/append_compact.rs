//! The default strategy: a history that only grows, compacted once in a while when that is
//! cheaper than carrying it.

use crate::cost::{Bill, PricingKind, PricingProfile, PromptRequest, price};
use crate::options::RenderOptions;
use crate::render::{
    self, CallListing, Counts, Detail, FailedSplit, Feedback, Parts, ValueShown,
    end_with_turns_left,
};
use crate::strategy::{
    Compression, Rendered, finish, growing_points, render_single_shot, unrecovered_from,
};
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
///         ";; Result: 3\n\nTurns left: 4",
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
    /// is what it is measured against. Covers the requests before each of `turns`.
    pub fn cheapest_schedule(
        &self,
        turns: &[Turn],
        opts: &RenderOptions<'_>,
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
        let mut best: Vec<Vec<(usize, f64, usize)>> = Vec::with_capacity(turns.len());
        for taken in 0..turns.len() {
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
        let mut schedule = Vec::with_capacity(turns.len());
        let mut at = best
            .last()
            .and_then(|last| last.iter().min_by(|a, b| a.1.total_cmp(&b.1)))
            .map_or(0, |&(folded, _, _)| folded);
        for taken in (0..turns.len()).rev() {
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
        let limits = &opts.limits;
        for turn in &turns[folded..] {
            messages.push(Message::assistant(render::program_text(turn)));
            let prints = newest_prints(turn, limits.println_limit);
            messages.push(raw_feedback(turn, prints, opts));
            counts.tool_calls_total += turn.tool_calls().len();
            counts.tool_calls_shown += turn.tool_calls().len();
            counts.prints_total += turn.prints().len();
            counts.prints_shown += prints.len();
            if !turn.is_success() {
                counts.failed_shown += 1;
            }
        }
        counts.failed_total = turns.iter().filter(|t| !t.is_success()).count();
        let stable = end_with_turns_left(&mut messages, opts, turns.len());
        let points = growing_points(&messages, opts, stable);
        finish(
            self.name(),
            true,
            messages,
            counts,
            turns,
            opts,
            None,
            points,
        )
    }

    /// How many turns the request after `turns` folds: the compactions the rule made at every
    /// earlier request, replayed from the turns alone (rendering stays a pure function of its
    /// input, and every request repeats the decisions of the ones before it).
    fn folded(&self, turns: &[Turn], opts: &RenderOptions<'_>) -> usize {
        let profile = self.pricing.profile();
        let (read, write) = (profile.read_multiplier, profile.write_multiplier);
        let raw: Vec<f64> = turns.iter().map(|t| raw_tokens(t, opts) as f64).collect();
        let prefix = HeuristicTokenizer.count_text(opts.system_prompt)
            + HeuristicTokenizer.count_text(&summary(&[], 0, opts, &mut Counts::default()));
        let mut summaries = SummarySizes::new(turns, opts);
        let mut folded = 0;
        // The extra cache reads paid since the last compaction for carrying raw turns.
        let mut rent = 0.0;
        for taken in 1..=turns.len() {
            // The newest turn is never folded: the model sees what its last program did in
            // full, its value included.
            let target = unrecovered_from(&turns[..taken - 1]);
            if target <= folded {
                continue;
            }
            let raw_from = |from: usize| raw[from..taken].iter().sum::<f64>();
            let carried = summaries.tokens(folded) + raw_from(folded);
            let after = summaries.tokens(target) + raw_from(target);
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
                rent = 0.0;
            }
        }
        folded
    }
}

/// The first user message: the mission, `tool/`, `data/`, and the summary of the first `folded`
/// turns (their `user/` namespace, every tool call they made, their newest output).
fn summary(turns: &[Turn], folded: usize, opts: &RenderOptions<'_>, counts: &mut Counts) -> String {
    let turns = &turns[..folded];
    let memory = turns.last().map_or(&[][..], Turn::memory);
    let mut text = String::new();
    let mut parts = Parts::new(&mut text);
    render::write_summary(
        &mut parts,
        opts,
        turns,
        memory,
        Detail::Full,
        CallListing::Every,
        &FailedSplit::default(),
        counts,
    );
    text
}

/// The summary sizes (estimated tokens, the stable prefix left out) of the turns folded so far,
/// each computed once.
struct SummarySizes<'t, 'o> {
    turns: &'t [Turn],
    opts: &'o RenderOptions<'o>,
    prefix: usize,
    known: HashMap<usize, usize>,
}

impl<'t, 'o> SummarySizes<'t, 'o> {
    fn new(turns: &'t [Turn], opts: &'o RenderOptions<'o>) -> Self {
        let prefix = HeuristicTokenizer.count_text(&summary(&[], 0, opts, &mut Counts::default()));
        SummarySizes {
            turns,
            opts,
            prefix,
            known: HashMap::new(),
        }
    }

    fn tokens(&mut self, folded: usize) -> f64 {
        if folded == 0 {
            return 0.0;
        }
        let (turns, opts, prefix) = (self.turns, self.opts, self.prefix);
        *self.known.entry(folded).or_insert_with(|| {
            let text = summary(turns, folded, opts, &mut Counts::default());
            HeuristicTokenizer.count_text(&text).saturating_sub(prefix)
        }) as f64
    }
}

fn newest_prints(turn: &Turn, limit: usize) -> &[String] {
    let prints = turn.prints();
    &prints[prints.len().saturating_sub(limit)..]
}

/// The feedback on a turn that is not folded: its tool calls with their results, and its output
/// or (when it printed nothing) its value; for a failed turn, the error first.
fn raw_feedback(turn: &Turn, prints: &[String], opts: &RenderOptions<'_>) -> Message {
    Feedback {
        opts,
        defined: None,
        calls: turn.tool_calls(),
        prints,
        value: ValueShown::WhenSilent,
    }
    .message(turn)
}

/// Estimated tokens a turn adds while it is not folded: its program and its feedback.
fn raw_tokens(turn: &Turn, opts: &RenderOptions<'_>) -> usize {
    let prints = newest_prints(turn, opts.limits.println_limit);
    HeuristicTokenizer.count_text(&render::program_text(turn))
        + HeuristicTokenizer.count_text(&raw_feedback(turn, prints, opts).content)
}

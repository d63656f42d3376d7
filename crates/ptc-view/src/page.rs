//! The whole page of a run: the summary (outcome, signature check, totals), the run's bill
//! under each pricing profile, an index of the turns, then each turn beside the request that
//! produced it.

use std::fmt::Write;

use ptc_compression::cost::token_count_text;
use ptc_compression::{CompressionConfig, PricingKind, PricingProfile};
use ptc_lisp::pr_str;
use ptc_turn::{Step, StepOutcome, Turn, TurnResult};

use crate::assets::{SCRIPT, STYLE};
use crate::escape::{bounded, html, push_html};
use crate::figures::{RunFigures, SignatureCheck};
use crate::{request, turn};

/// How a run page is made.
#[derive(Debug, Clone)]
pub struct PageOptions {
    /// The strategy the bill is modelled with (the step does not record the run's).
    pub compression: CompressionConfig,
    /// The pricing profiles the bill is shown under.
    pub profiles: Vec<PricingProfile>,
    /// The page's title; the mission's first words when not given.
    pub title: Option<String>,
}

impl Default for PageOptions {
    /// The full history's bill (compression off) under every named profile.
    fn default() -> PageOptions {
        PageOptions {
            compression: CompressionConfig::default(),
            profiles: PricingKind::ALL
                .into_iter()
                .map(PricingKind::profile)
                .collect(),
            title: None,
        }
    }
}

/// The page of `step`, one self-contained HTML document.
pub fn run_page(step: &Step, options: &PageOptions) -> String {
    let figures = RunFigures::new(step, &options.compression, &options.profiles);
    let turns = step.turns.as_slice();
    let mut out = String::with_capacity(64 * 1024 + turns.len() * 16 * 1024);
    let title = options.title.clone().unwrap_or_else(|| {
        let (start, cut) = bounded(step.task.mission.lines().next().unwrap_or(""), 70);
        format!("Run: {start}{}", if cut.is_some() { "…" } else { "" })
    });
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        html(&title)
    );
    out.push_str(
        "<div id=\"controls\" hidden><button type=\"button\" id=\"open-all\">Open all</button> <button type=\"button\" id=\"close-all\">Close all</button> <span class=\"muted\">Keys: <kbd>j</kbd>/<kbd>k</kbd> next and previous turn, <kbd>o</kbd> open all, <kbd>c</kbd> close all</span></div>\n",
    );
    let _ = writeln!(out, "<header>\n<h1>{}</h1>", html(&title));
    out.push_str("<p class=\"mission\">");
    push_html(&mut out, &step.task.mission);
    out.push_str("</p>\n</header>\n");
    summary(&mut out, step, &figures);
    run_bill(&mut out, &figures, &options.compression);
    index(&mut out, turns);
    out.push_str("<main>\n");
    let widest = figures
        .requests
        .iter()
        .map(|r| r.tokens.total())
        .max()
        .unwrap_or(0);
    for (i, t) in turns.iter().enumerate() {
        let before = i.checked_sub(1).map(|j| &turns[j]);
        let status = match t.result() {
            TurnResult::Value(_) => "<span class=\"status ok\">value</span>",
            TurnResult::Error(_) => "<span class=\"status error\">error</span>",
        };
        let _ = writeln!(
            out,
            "<section class=\"turn\" id=\"turn-{n}\" data-turn=\"{n}\" tabindex=\"-1\">\n<h2>Turn {n}: {status}</h2>\n<div class=\"cols\">\n<div>",
            n = t.number()
        );
        turn::program(&mut out, t);
        out.push_str("</div>\n<div>\n");
        turn::effects(&mut out, t, before);
        out.push_str("</div>\n</div>\n");
        if let Some(request) = figures.requests.get(i) {
            let previous = before.map_or(&[][..], Turn::messages);
            request::section(
                &mut out,
                request,
                i,
                widest,
                &figures.bills,
                t.messages(),
                previous,
            );
        }
        out.push_str("</section>\n");
    }
    out.push_str("</main>\n");
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

/// The outcome, the signature check and the run's totals.
fn summary(out: &mut String, step: &Step, figures: &RunFigures) {
    let turns = step.turns.len();
    let of = format!("after {turns} of {} turns", step.task.max_turns);
    out.push_str("<section id=\"summary\">\n<h2>Outcome</h2>\n<dl class=\"summary\">\n");
    match &step.outcome {
        StepOutcome::Returned { value } => {
            let _ = writeln!(
                out,
                "<dt>Outcome</dt><dd class=\"outcome-returned\" data-figure=\"outcome\">returned {of}</dd>"
            );
            out.push_str("<dt>Value</dt><dd><pre class=\"returned\">");
            push_html(out, &pr_str(value));
            out.push_str("</pre></dd>\n");
        }
        StepOutcome::Failed { kind, reason, .. } => {
            let _ = writeln!(
                out,
                "<dt>Outcome</dt><dd class=\"outcome-failed\" data-figure=\"outcome\">failed ({}) {of}</dd>",
                kind.as_str()
            );
            out.push_str("<dt>Reason</dt><dd><pre class=\"reason\">");
            push_html(out, reason);
            out.push_str("</pre></dd>\n");
        }
    }
    if let Some(signature) = &step.task.signature {
        out.push_str("<dt>Signature</dt><dd><code>");
        push_html(out, signature);
        out.push_str("</code>: <span data-figure=\"signature\">");
        match &figures.signature {
            SignatureCheck::Passed => out.push_str("the value matches it"),
            SignatureCheck::NoValue => out.push_str("no value returned to check"),
            SignatureCheck::Invalid(why) => {
                out.push_str("the signature does not parse: ");
                push_html(out, why);
            }
            SignatureCheck::Failed(mismatches) => {
                out.push_str("the value does not match it: ");
                push_html(out, &mismatches.join("; "));
            }
            SignatureCheck::None => {}
        }
        out.push_str("</span></dd>\n");
    }
    let usage = &step.usage;
    let t = &usage.tokens;
    let _ = writeln!(
        out,
        "<dt>Turns</dt><dd data-figure=\"turns\" data-value=\"{turns}\">{turns}</dd>\n\
         <dt>Model requests</dt><dd data-figure=\"requests\" data-value=\"{}\">{}</dd>\n\
         <dt>Tokens reported</dt><dd>input <span data-figure=\"input-tokens\" data-value=\"{}\">{}</span>, cache read <span data-figure=\"cache-read-tokens\" data-value=\"{}\">{}</span>, cache write <span data-figure=\"cache-write-tokens\" data-value=\"{}\">{}</span>, output <span data-figure=\"output-tokens\" data-value=\"{}\">{}</span></dd>\n\
         <dt>Time</dt><dd>{} (model {}, programs {})</dd>",
        usage.llm_requests,
        usage.llm_requests,
        t.input_tokens,
        token_count_text(t.input_tokens as f64),
        t.cache_read_tokens,
        token_count_text(t.cache_read_tokens as f64),
        t.cache_write_tokens,
        token_count_text(t.cache_write_tokens as f64),
        t.output_tokens,
        token_count_text(t.output_tokens as f64),
        html(&turn::micros(usage.duration_us)),
        html(&turn::micros(usage.llm_duration_us)),
        html(&turn::micros(usage.eval_duration_us)),
    );
    out.push_str("</dl>\n</section>\n");
}

/// The run's requests priced under each profile, beside the full history's.
fn run_bill(out: &mut String, figures: &RunFigures, compression: &CompressionConfig) {
    let _ = writeln!(
        out,
        "<section id=\"bill\">\n<h2>Modelled bill</h2>\n<p>The requests as <code>{}</code> renders them, priced under each profile in billed-equivalent input tokens (token counts estimated at about 4 characters a token), beside the full history's.</p>\n\
         <table class=\"run-bill\">\n<tr><th scope=\"col\">pricing</th><th scope=\"col\">requests</th><th scope=\"col\">input</th><th scope=\"col\">cache read</th><th scope=\"col\">cache write</th><th scope=\"col\">billed</th><th scope=\"col\">full history billed</th><th scope=\"col\">ratio</th></tr>",
        html(&compression.to_string())
    );
    for comparison in &figures.bills {
        let total = &comparison.strategy.total;
        let profile = comparison.strategy.profile.to_string();
        let _ = writeln!(
            out,
            "<tr data-pricing=\"{}\"><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td data-figure=\"billed\" data-value=\"{}\">{}</td><td data-figure=\"full-history-billed\" data-value=\"{}\">{}</td><td>{}</td></tr>",
            html(&profile),
            html(&profile),
            comparison.strategy.requests.len(),
            token_count_text(total.input_tokens as f64),
            token_count_text(total.cache_read_tokens as f64),
            token_count_text(total.cache_write_tokens as f64),
            total.billed,
            token_count_text(total.billed),
            comparison.full_history.billed(),
            token_count_text(comparison.full_history.billed()),
            comparison
                .ratio()
                .map_or("n/a".to_string(), |r| format!("{r:.2}x")),
        );
    }
    out.push_str("</table>\n</section>\n");
}

/// A link to each turn, marked when the turn ended in an error.
fn index(out: &mut String, turns: &[Turn]) {
    out.push_str("<nav class=\"turns\" aria-label=\"Turns\">\n<h2>Turns</h2>\n<ol>\n");
    for t in turns {
        let (class, word) = match t.result() {
            TurnResult::Value(_) => ("ok", "value"),
            TurnResult::Error(_) => ("error", "error"),
        };
        let _ = writeln!(
            out,
            "<li><a class=\"{class}\" href=\"#turn-{n}\">{n}: {word}</a></li>",
            n = t.number()
        );
    }
    out.push_str("</ol>\n</nav>\n");
}

/// The page of one program run outside an agent (`turn` holds its program, if known, its value
/// or error, prints, tool calls and definitions): the turn's part of a run page alone.
pub fn program_page(turn: &Turn) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Program run</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<section class=\"turn\" data-turn=\"{}\">\n",
        turn.number()
    );
    if !turn.program().is_empty() {
        turn::program(&mut out, turn);
    }
    turn::effects(&mut out, turn, None);
    out.push_str("</section>\n</body>\n</html>\n");
    out
}

/// `page` inside an `iframe` of `height` pixels, for a notebook's output cell: the page keeps
/// its own style and script, and the notebook's are left alone.
///
/// ```
/// let frame = ptc_view::page::notebook_frame("<p class=\"x\">a & b</p>", 300);
/// assert_eq!(
///     frame,
///     "<iframe srcdoc=\"&lt;p class=&quot;x&quot;&gt;a &amp; b&lt;/p&gt;\" \
///      sandbox=\"allow-scripts\" style=\"width:100%;height:300px;border:1px solid #d0d4d9\" \
///      title=\"ptc run\"></iframe>"
/// );
/// ```
pub fn notebook_frame(page: &str, height: u32) -> String {
    format!(
        "<iframe srcdoc=\"{}\" sandbox=\"allow-scripts\" style=\"width:100%;height:{height}px;border:1px solid #d0d4d9\" title=\"ptc run\"></iframe>",
        html(page)
    )
}

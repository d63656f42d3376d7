//! The report as Markdown (`REPORT.md`).

use std::fmt::Write;

use ptc_compression::PricingKind;
use ptc_compression::cost::token_count_text as count;

use std::collections::BTreeMap;

use super::*;

impl Report {
    /// The report as Markdown (`REPORT.md`).
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let runs = self.runs.len();
        let per: Vec<usize> = self
            .configs
            .iter()
            .flat_map(|c| c.missions.iter().map(|m| m.summary.runs))
            .collect();
        let (lo, hi) = (
            per.iter().copied().min().unwrap_or(0),
            per.iter().copied().max().unwrap_or(0),
        );
        let _ = writeln!(out, "# Benchmark report\n");
        let _ = writeln!(
            out,
            "Model `{}`; {} configuration{}; {} mission{}; {} run{} per mission and configuration; {} run{} in all.\n",
            self.llm,
            self.configs.len(),
            plural(self.configs.len()),
            self.missions,
            plural(self.missions),
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo} to {hi}")
            },
            plural(hi),
            runs,
            plural(runs),
        );
        for c in &self.comparisons {
            let _ = writeln!(out, "- {}", c.summary);
        }
        if !self.comparisons.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "## Configurations\n");
        let _ = writeln!(
            out,
            "| configuration | compression | runs | pass rate | mean turns | input tokens / run | output tokens / run | cache-read tokens / run | est. prompt tokens / run | billed / run, anthropic | billed / run, openai | billed / run, ideal | wall time / run |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for c in &self.configs {
            let s = &c.total;
            let _ = writeln!(
                out,
                "| {} | `{}` | {} |",
                c.label,
                c.compression,
                run_cells(s),
            );
        }
        for c in &self.comparisons {
            let _ = writeln!(out, "\n## `{}` against `{}`\n", c.config, c.baseline);
            let _ = writeln!(
                out,
                "Paired over the {} mission{} both ran; 95 % bootstrap intervals over missions.\n",
                c.missions,
                plural(c.missions)
            );
            let _ = writeln!(
                out,
                "| metric (mean per mission) | {} | {} | change | 95 % interval |",
                c.baseline, c.config
            );
            let _ = writeln!(out, "|---|--:|--:|--:|--:|");
            let d = &c.pass_rate;
            let _ = writeln!(
                out,
                "| pass rate | {:.1} % | {:.1} % | {} points | {} |",
                d.baseline,
                d.config,
                signed(d.difference, 1),
                interval(d.ci95, |v| signed(v, 1))
            );
            let t = &c.turns;
            let _ = writeln!(
                out,
                "| turns | {:.2} | {:.2} | {} | {} |",
                t.baseline,
                t.config,
                signed(t.difference, 2),
                interval(t.ci95, |v| signed(v, 2))
            );
            for (name, r) in [
                ("prompt tokens (input + cache, reported)", &c.prompt_tokens),
                ("output tokens (reported)", &c.output_tokens),
                ("prompt tokens (estimated)", &c.est_prompt_tokens),
                (
                    "prompt tokens less the system prompt (estimated)",
                    &c.est_history_tokens,
                ),
            ] {
                let _ = writeln!(
                    out,
                    "| {name} | {} | {} | {} | {} |",
                    count(r.baseline / c.missions.max(1) as f64),
                    count(r.config / c.missions.max(1) as f64),
                    r.change.map_or("n/a".to_string(), percent),
                    interval(r.ci95, percent)
                );
            }
            for b in &c.billed {
                let r = &b.change;
                let _ = writeln!(
                    out,
                    "| billed input, {} (modelled) | {} | {} | {} | {} |",
                    b.profile,
                    count(r.baseline / c.missions.max(1) as f64),
                    count(r.config / c.missions.max(1) as f64),
                    r.change.map_or("n/a".to_string(), percent),
                    interval(r.ci95, percent)
                );
            }
            let s = &c.sign_test;
            let _ = writeln!(
                out,
                "\nSign test on the pass rate: {} mission{} better, {} worse, {} tied; p = {:.3}.",
                s.better,
                plural(s.better),
                s.worse,
                s.ties,
                s.p_value
            );
        }
        self.write_bills(&mut out);
        self.write_versus(&mut out);
        self.write_sizes(&mut out);
        let _ = writeln!(out, "\n## By category\n");
        let _ = writeln!(
            out,
            "| category | configuration | runs | pass rate | mean turns | prompt tokens / run | est. prompt tokens / run |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|");
        for category in Category::ALL {
            for c in &self.configs {
                if let Some(cs) = c.categories.iter().find(|s| s.category == category) {
                    let s = &cs.summary;
                    let _ = writeln!(
                        out,
                        "| {category} | {} | {} | {} | {:.1} | {} | {} |",
                        c.label,
                        s.runs,
                        pass_rate(s),
                        s.mean_turns,
                        count(s.per_run(s.prompt_tokens())),
                        count(s.per_run(s.est_prompt_tokens)),
                    );
                }
            }
        }
        let _ = writeln!(out, "\n## By half\n");
        let _ = writeln!(
            out,
            "Changes to the prompt and the feedback are tuned on the `tuning` missions and judged on the `held-out` ones (each mission's `half`).\n"
        );
        let _ = writeln!(
            out,
            "| half | configuration | runs | pass rate | mean turns | billed, anthropic | billed, openai |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|");
        for half in Half::ALL {
            for c in &self.configs {
                if let Some(hs) = c.halves.iter().find(|s| s.half == half) {
                    let s = &hs.summary;
                    let _ = writeln!(
                        out,
                        "| {half} | {} | {} | {} | {:.1} | {} | {} |",
                        c.label,
                        s.runs,
                        pass_rate(s),
                        s.mean_turns,
                        count(s.per_run_f64(s.modelled(PricingKind::Anthropic).billed)),
                        count(s.per_run_f64(s.modelled(PricingKind::OpenAi).billed)),
                    );
                }
            }
        }
        let _ = writeln!(out, "\n## By mission\n");
        let _ = writeln!(
            out,
            "| mission | category | configuration | runs | pass rate | mean turns | input / run | output / run | cache read / run | est. prompt / run | billed, anthropic | billed, openai | billed, ideal | wall / run |"
        );
        let _ = writeln!(
            out,
            "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        );
        let mut names: Vec<(&str, Category)> = Vec::new();
        for c in &self.configs {
            for m in &c.missions {
                if !names.iter().any(|(n, _)| *n == m.mission) {
                    names.push((&m.mission, m.category));
                }
            }
        }
        names.sort();
        for (name, category) in names {
            for c in &self.configs {
                if let Some(m) = c.missions.iter().find(|m| m.mission == name) {
                    let s = &m.summary;
                    let _ = writeln!(
                        out,
                        "| {name} | {category} | {} | {} |",
                        c.label,
                        run_cells(s),
                    );
                }
            }
        }
        self.write_cache_section(&mut out);
        self.write_lost_turns(&mut out);
        let failed: Vec<&RunRecord> = self.runs.iter().filter(|r| !r.passed).collect();
        let _ = writeln!(out, "\n## Failed runs\n");
        if failed.is_empty() {
            let _ = writeln!(out, "None.");
        }
        for r in failed {
            let _ = writeln!(
                out,
                "- `{}` {} run {} ({}, {} turn{}): {} (transcript `{}`)",
                r.config,
                r.mission,
                r.run,
                r.outcome,
                r.turns,
                plural(r.turns as usize),
                if r.reasons.is_empty() {
                    "no reason recorded".to_string()
                } else {
                    r.reasons.join("; ").replace('|', "\\|")
                },
                r.transcript
            );
        }
        let _ = writeln!(
            out,
            "\n## Reading this report\n\n\
             - Token counts are what the provider reported (when replaying, what the transcript \
             says it reported). Prompt tokens are input + cache-read + cache-write tokens: the \
             whole prompt, however the provider split it. Estimated prompt tokens are the \
             harness's own count of every request it sent (4 characters a token, system prompt \
             included), the same for every provider.\n\
             - Billed input is modelled: every request a run sent, priced with the prompt-cache \
             rules and prices of a profile (anthropic: the breakpoints the client marks, writes \
             1.25, reads 0.1; openai: automatic prefixes from 1,024 tokens in steps of 128, \
             reads 0.5; ideal: the previous request's longest common prefix read at 0.1), in \
             input tokens at the full price, with tokens estimated at 4 characters. See \
             docs/compression.md.\n\
             - Comparisons pair missions: each mission's runs are averaged per configuration. \
             Pass rate and turns changes are means over missions of the difference; token \
             changes are the change of the total over the paired missions. Intervals are 95 % \
             percentile bootstraps over missions (10,000 resamples, fixed seed); the sign test \
             counts missions whose pass rate went up or down. See docs/benchmark.md."
        );
        out
    }
}

impl Report {
    /// What the provider reported about its prompt cache beside what the profiles model, per
    /// configuration and run.
    fn write_cache_section(&self, out: &mut String) {
        let _ = writeln!(out, "\n## Prompt cache, reported and modelled\n");
        let _ = writeln!(
            out,
            "Per run: input, cache-read and cache-write tokens as the provider reported them, \
             and as each pricing profile models the requests sent (then the billed-equivalent \
             input tokens).\n"
        );
        let _ = writeln!(
            out,
            "| configuration | source | input / run | cache read / run | cache write / run | billed / run |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|");
        for c in &self.configs {
            let s = &c.total;
            let _ = writeln!(
                out,
                "| {} | reported | {} | {} | {} | |",
                c.label,
                count(s.per_run(s.input_tokens)),
                count(s.per_run(s.cache_read_tokens)),
                count(s.per_run(s.cache_write_tokens)),
            );
            for profile in PricingKind::ALL {
                let m = s.modelled(profile);
                let _ = writeln!(
                    out,
                    "| {} | {profile} (modelled) | {} | {} | {} | {} |",
                    c.label,
                    count(s.per_run(m.input_tokens)),
                    count(s.per_run(m.cache_read_tokens)),
                    count(s.per_run(m.cache_write_tokens)),
                    count(s.per_run_f64(m.billed)),
                );
            }
        }
    }
}

impl Report {
    /// Each configuration's whole bill: input under the cache rules plus output at the
    /// profile's output price, cold and in the steady state.
    fn write_bills(&self, out: &mut String) {
        let _ = writeln!(out, "\n## Bills\n");
        let _ = writeln!(
            out,
            "Per run, in input tokens at the full price: the requests priced under each \
             profile's cache rules, plus the output tokens at its output price (anthropic 5x, \
             openai 4x, ideal 5x). Cold: every run starts with an empty cache; steady: the \
             agent's system prompt and tool definitions are cached already, as in a service \
             that runs the agent over and over.{}\n",
            if self.runs.iter().any(|r| r.usage_estimated) {
                " Output tokens of runs answered through files are estimated (4 characters a \
                 token)."
            } else {
                ""
            }
        );
        let _ = writeln!(
            out,
            "| configuration | agent | runs | pass rate | requests / run | output / run | cold, anthropic | cold, openai | steady, anthropic | steady, openai |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        for c in &self.configs {
            let s = &c.total;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.1} | {} | {} |",
                c.label,
                c.agent.as_str(),
                s.runs,
                pass_rate(s),
                s.per_run(s.llm_requests),
                count(s.per_run(s.output_tokens)),
                bill_cells(s),
            );
        }
    }

    /// Each PTC configuration against plain tool calling, overall and per size group.
    fn write_versus(&self, out: &mut String) {
        if self.versus_tool_calls.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n## Against plain tool calling\n");
        let _ = writeln!(
            out,
            "PTC's whole bill as a multiple of plain tool calling's, on the missions both ran \
             (each mission's mean per run, summed over the missions), overall and per size \
             group.\n"
        );
        let _ = writeln!(
            out,
            "| configuration | missions | size | pass rate | tool calling's | requests / run | tool calling's | steady, anthropic | steady, openai | cold, anthropic | cold, openai |"
        );
        let _ = writeln!(out, "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|");
        for v in &self.versus_tool_calls {
            let ratio = |profile: PricingKind, steady: bool| {
                v.bills
                    .iter()
                    .find(|b| b.profile == profile && b.steady == steady)
                    .and_then(VersusBill::ratio)
                    .map_or("n/a".to_string(), |r| format!("{r:.2}x"))
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} % | {:.1} % | {:.1} | {:.1} | {} | {} | {} | {} |",
                v.config,
                v.missions,
                v.size.map_or("all", Size::as_str),
                v.pass_rate * 100.0,
                v.baseline_pass_rate * 100.0,
                v.requests,
                v.baseline_requests,
                ratio(PricingKind::Anthropic, true),
                ratio(PricingKind::OpenAi, true),
                ratio(PricingKind::Anthropic, false),
                ratio(PricingKind::OpenAi, false),
            );
        }
        let _ = writeln!(
            out,
            "\nMission by mission: the geometric mean of PTC's bill divided by tool calling's, \
             and on how many of the paired missions PTC's bill is the smaller (a sum above is \
             dominated by the missions with the largest bills).\n"
        );
        let _ = writeln!(
            out,
            "| configuration | size | steady, anthropic | steady, openai | cold, anthropic | cold, openai |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|");
        for v in &self.versus_tool_calls {
            let cell = |profile: PricingKind, steady: bool| {
                v.per_mission
                    .iter()
                    .find(|r| r.profile == profile && r.steady == steady)
                    .and_then(|r| {
                        r.geometric_mean
                            .map(|g| format!("{g:.2}x, cheaper on {}/{}", r.cheaper, v.missions))
                    })
                    .unwrap_or_else(|| "n/a".to_string())
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                v.config,
                v.size.map_or("all", Size::as_str),
                cell(PricingKind::Anthropic, true),
                cell(PricingKind::OpenAi, true),
                cell(PricingKind::Anthropic, false),
                cell(PricingKind::OpenAi, false),
            );
        }
        let losses: Vec<&Versus> = self
            .versus_tool_calls
            .iter()
            .filter(|v| v.size.is_none() && !v.losses.is_empty())
            .collect();
        if !losses.is_empty() {
            let _ = writeln!(
                out,
                "\nWhere PTC costs more (steady state, anthropic) or passes less than plain tool \
                 calling:\n"
            );
            for v in losses {
                for loss in &v.losses {
                    let _ = writeln!(out, "- `{}` {loss}", v.config);
                }
            }
        }
    }

    /// Pass rate, requests and bills per size group and configuration.
    fn write_sizes(&self, out: &mut String) {
        if !self.configs.iter().any(|c| c.sizes.len() > 1) {
            return;
        }
        let _ = writeln!(out, "\n## By size\n");
        let _ = writeln!(
            out,
            "| size | configuration | runs | pass rate | requests / run | cold, anthropic | cold, openai | steady, anthropic | steady, openai |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|");
        for size in Size::ALL {
            for c in &self.configs {
                if let Some(z) = c.sizes.iter().find(|z| z.size == size) {
                    let s = &z.summary;
                    let _ = writeln!(
                        out,
                        "| {size} | {} | {} | {} | {:.1} | {} |",
                        c.label,
                        s.runs,
                        pass_rate(s),
                        s.per_run(s.llm_requests),
                        bill_cells(s),
                    );
                }
            }
        }
    }

    /// The turns that did not move their mission forward, by cause: found in the runs'
    /// programs, and found by reading the transcripts.
    fn write_lost_turns(&self, out: &mut String) {
        let mut by_cause: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
        for r in &self.runs {
            for lost in &r.lost_turns {
                by_cause
                    .entry((r.config.clone(), lost.cause.clone()))
                    .or_default()
                    .push(format!("{} run {} turn {}", r.mission, r.run, lost.turn));
            }
        }
        for a in &self.annotations {
            by_cause
                .entry((a.config.clone(), a.cause.clone()))
                .or_default()
                .push(format!(
                    "{} run {} turn {} ({})",
                    a.mission, a.run, a.turn, a.note
                ));
        }
        if by_cause.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n## Turns that did not move the mission forward\n");
        let _ = writeln!(
            out,
            "By cause: the first found in each turn's program and result (an error, no program, \
             a program repeated with the same outcome, calls that had succeeded made again, \
             output printed again), and those found by reading the transcripts. A retry after a \
             failed call, a program run again that moved on, and a last turn that gives up with \
             `fail` are not counted.\n"
        );
        let _ = writeln!(out, "| configuration | cause | turns | where |");
        let _ = writeln!(out, "|---|---|--:|---|");
        for ((config, cause), places) in &by_cause {
            let _ = writeln!(
                out,
                "| {config} | {} | {} | {} |",
                cause.replace('|', "\\|"),
                places.len(),
                places.join("; ").replace('|', "\\|")
            );
        }
    }
}

/// The whole bill per run, cold then steady, anthropic then openai, as table cells.
fn bill_cells(s: &Summary) -> String {
    [
        (PricingKind::Anthropic, false),
        (PricingKind::OpenAi, false),
        (PricingKind::Anthropic, true),
        (PricingKind::OpenAi, true),
    ]
    .into_iter()
    .map(|(profile, steady)| count(s.per_run_f64(s.bill(profile, steady))))
    .collect::<Vec<_>>()
    .join(" | ")
}

/// The cells a configuration's row and a mission's row share: runs, pass rate, mean turns,
/// tokens per run (input, output, cache read, estimated prompt), the bills and the wall time.
fn run_cells(s: &Summary) -> String {
    format!(
        "{} | {} | {:.1} | {} | {} | {} | {} | {} | {}",
        s.runs,
        pass_rate(s),
        s.mean_turns,
        count(s.per_run(s.input_tokens)),
        count(s.per_run(s.output_tokens)),
        count(s.per_run(s.cache_read_tokens)),
        count(s.per_run(s.est_prompt_tokens)),
        billed_cells(s),
        seconds(s.per_run(s.wall_ms)),
    )
}

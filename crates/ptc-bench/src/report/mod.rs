//! The report: per configuration, per category and per mission summaries of the runs, and the
//! paired comparison of each configuration with the first one (the baseline).

use std::collections::BTreeMap;

use ptc_compression::cost::token_count_text as count;
use ptc_compression::{PricingKind, RequestCost};
use serde::{Deserialize, Serialize};

use crate::harness::{AgentKind, Config, RunRecord};
use crate::lost::Annotation;
use crate::mission::{Category, Half, Mission, Size};
use crate::stats::{self, Interval, SignTest};

mod charts;
mod html;
mod markdown;
mod versus;

pub use versus::{Versus, VersusBill};

/// Totals and means of a group of runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// How many runs the group holds.
    pub runs: usize,
    /// How many of them passed their mission's check.
    pub passed: usize,
    /// `passed / runs`, from 0 to 1.
    pub pass_rate: f64,
    /// Turns per run, on average (0 without runs).
    pub mean_turns: f64,
    /// Uncached input tokens, as the provider reported them, summed over the runs.
    pub input_tokens: u64,
    /// Output tokens as reported, summed.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache, as reported, summed.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache, as reported, summed.
    pub cache_write_tokens: u64,
    /// Every request's size estimated with the heuristic tokenizer (see
    /// [`RunRecord::est_prompt_tokens`]), summed.
    pub est_prompt_tokens: u64,
    /// The system prompt's part of `est_prompt_tokens`.
    pub est_system_tokens: u64,
    /// Requests made to the model, summed.
    #[serde(default)]
    pub llm_requests: u64,
    /// The runs' requests priced under each pricing profile, summed.
    #[serde(default)]
    pub modelled: BTreeMap<String, RequestCost>,
    /// The same in the steady state (the agent's system prompt and tools already cached),
    /// summed.
    #[serde(default)]
    pub modelled_steady: BTreeMap<String, RequestCost>,
    /// Turns that did not move the mission forward, summed.
    #[serde(default)]
    pub lost_turns: u64,
    /// Wall time of the runs, in milliseconds, summed (runs made at once overlap).
    pub wall_ms: u64,
}

impl Summary {
    /// The summary of `runs`.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a RunRecord>) -> Summary {
        let mut s = Summary::default();
        let mut turns = 0u64;
        for r in runs {
            s.runs += 1;
            s.passed += usize::from(r.passed);
            turns += u64::from(r.turns);
            s.input_tokens += r.input_tokens;
            s.output_tokens += r.output_tokens;
            s.cache_read_tokens += r.cache_read_tokens;
            s.cache_write_tokens += r.cache_write_tokens;
            s.est_prompt_tokens += r.est_prompt_tokens;
            s.est_system_tokens += r.est_system_tokens;
            s.llm_requests += u64::from(r.llm_requests);
            s.lost_turns += r.lost_turns.len() as u64;
            for (profile, cost) in &r.modelled {
                *s.modelled.entry(profile.clone()).or_default() += *cost;
            }
            for (profile, cost) in &r.modelled_steady {
                *s.modelled_steady.entry(profile.clone()).or_default() += *cost;
            }
            s.wall_ms += r.wall_ms;
        }
        if s.runs > 0 {
            s.pass_rate = s.passed as f64 / s.runs as f64;
            s.mean_turns = turns as f64 / s.runs as f64;
        }
        s
    }

    /// The summary of the runs of several summaries together.
    pub fn of_summaries<'a>(parts: impl IntoIterator<Item = &'a Summary>) -> Summary {
        let mut s = Summary::default();
        let mut turns = 0.0;
        for p in parts {
            s.runs += p.runs;
            s.passed += p.passed;
            turns += p.mean_turns * p.runs as f64;
            s.input_tokens += p.input_tokens;
            s.output_tokens += p.output_tokens;
            s.cache_read_tokens += p.cache_read_tokens;
            s.cache_write_tokens += p.cache_write_tokens;
            s.est_prompt_tokens += p.est_prompt_tokens;
            s.est_system_tokens += p.est_system_tokens;
            s.llm_requests += p.llm_requests;
            s.lost_turns += p.lost_turns;
            for (profile, cost) in &p.modelled {
                *s.modelled.entry(profile.clone()).or_default() += *cost;
            }
            for (profile, cost) in &p.modelled_steady {
                *s.modelled_steady.entry(profile.clone()).or_default() += *cost;
            }
            s.wall_ms += p.wall_ms;
        }
        if s.runs > 0 {
            s.pass_rate = s.passed as f64 / s.runs as f64;
            s.mean_turns = turns / s.runs as f64;
        }
        s
    }

    /// A total divided by the number of runs.
    pub fn per_run(&self, total: u64) -> f64 {
        self.per_run_f64(total as f64)
    }

    /// A total divided by the number of runs.
    pub fn per_run_f64(&self, total: f64) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            total / self.runs as f64
        }
    }

    /// Input, cache-read and cache-write tokens.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// The modelled cost of the runs' requests under the named profile.
    pub fn modelled(&self, profile: PricingKind) -> RequestCost {
        self.modelled
            .get(profile.as_str())
            .copied()
            .unwrap_or_default()
    }

    /// The runs' whole bill under the named profile, in input tokens at the full price: the
    /// billed input (cold, or in the steady state) plus the output tokens at the profile's
    /// output price.
    pub fn bill(&self, profile: PricingKind, steady: bool) -> f64 {
        let input = if steady {
            &self.modelled_steady
        } else {
            &self.modelled
        };
        input.get(profile.as_str()).map_or(0.0, |cost| cost.billed)
            + self.output_tokens as f64 * profile.profile().output_multiplier
    }
}

/// One category's runs under one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategorySummary {
    /// The category.
    pub category: Category,
    /// Its runs.
    #[serde(flatten)]
    pub summary: Summary,
}

/// The runs of one half of the missions (tuning or held out) under one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HalfSummary {
    /// The half.
    pub half: Half,
    /// Its runs.
    #[serde(flatten)]
    pub summary: Summary,
}

/// The runs of one size group under one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeSummary {
    /// The size group.
    pub size: Size,
    /// Its runs.
    #[serde(flatten)]
    pub summary: Summary,
}

/// One mission's runs under one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissionSummary {
    /// The mission's name (its directory).
    pub mission: String,
    /// The mission's category.
    pub category: Category,
    /// Its runs.
    #[serde(flatten)]
    pub summary: Summary,
}

/// One configuration's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigReport {
    /// The configuration's label: its spec as written, made safe for a file name.
    pub label: String,
    /// The compression spec, normalized (`off` for plain tool calling, which keeps the whole
    /// conversation).
    pub compression: String,
    /// The agent that ran the missions.
    #[serde(default = "crate::harness::AgentKind::default_ptc")]
    pub agent: AgentKind,
    /// All its runs.
    pub total: Summary,
    /// Its runs by category, in the order of [`Category::ALL`], categories without runs left
    /// out.
    pub categories: Vec<CategorySummary>,
    /// Its runs by half of the missions, tuning then held out, halves without runs left out.
    pub halves: Vec<HalfSummary>,
    /// Its runs by size group, small then large, groups without runs left out.
    #[serde(default)]
    pub sizes: Vec<SizeSummary>,
    /// Its runs by mission, in the order the missions were given.
    pub missions: Vec<MissionSummary>,
}

/// A difference of means between paired missions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MeanDifference {
    /// The mean over missions in the baseline.
    pub baseline: f64,
    /// The mean over missions in the other configuration.
    pub config: f64,
    /// `config - baseline`, averaged over missions.
    pub difference: f64,
    /// The bootstrap 95 % interval of `difference`; `None` without paired missions.
    pub ci95: Option<Interval>,
}

/// A relative change of a total between paired missions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RelativeChange {
    /// The sum over missions of the mean per run, in the baseline.
    pub baseline: f64,
    /// The same sum in the other configuration.
    pub config: f64,
    /// `config / baseline - 1` (-0.6 is 60 % fewer); `None` when the baseline is 0 (a
    /// provider that reports no usage).
    pub change: Option<f64>,
    /// The bootstrap 95 % interval of `change`; `None` when it cannot be computed (no paired
    /// missions, or baselines of 0).
    pub ci95: Option<Interval>,
}

/// A configuration against the baseline, on the missions both ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The baseline's label (the first configuration).
    pub baseline: String,
    /// The other configuration's label.
    pub config: String,
    /// Missions both configurations ran.
    pub missions: usize,
    /// Pass rates in points (0 to 100).
    pub pass_rate: MeanDifference,
    /// Whether the configuration passes more missions than the baseline, mission by mission.
    pub sign_test: SignTest,
    /// Turns per run.
    pub turns: MeanDifference,
    /// Input, cache-read and cache-write tokens as reported.
    pub prompt_tokens: RelativeChange,
    /// Output tokens as reported.
    pub output_tokens: RelativeChange,
    /// Estimated prompt tokens (the heuristic tokenizer), system prompt included.
    pub est_prompt_tokens: RelativeChange,
    /// Estimated prompt tokens less the system prompt: the part compression works on.
    pub est_history_tokens: RelativeChange,
    /// Billed-equivalent input tokens under each pricing profile (modelled).
    pub billed: Vec<BilledChange>,
    /// The comparison in one sentence.
    pub summary: String,
}

/// The change of the modelled bill under one pricing profile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BilledChange {
    /// The pricing profile.
    pub profile: PricingKind,
    /// The change of the billed-equivalent input tokens under it.
    #[serde(flatten)]
    pub change: RelativeChange,
}

/// The whole report (`report.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The model, as `--llm` named it.
    pub llm: String,
    /// Missions with at least one run.
    pub missions: usize,
    /// Each configuration's summaries, in the order they were given.
    pub configs: Vec<ConfigReport>,
    /// Each configuration after the first against the first.
    pub comparisons: Vec<Comparison>,
    /// Each PTC configuration against plain tool calling, when both ran: overall and per size
    /// group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versus_tool_calls: Vec<Versus>,
    /// Lost turns found by reading the transcripts, beside those found mechanically.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<Annotation>,
    /// Every run, configuration by configuration, mission by mission.
    pub runs: Vec<RunRecord>,
}

impl Report {
    /// Summarizes the runs. Configurations and missions keep the given order.
    pub fn new(
        llm: &str,
        missions: &[Mission],
        configs: &[Config],
        runs: Vec<RunRecord>,
    ) -> Report {
        let config_reports: Vec<ConfigReport> = configs
            .iter()
            .map(|config| {
                let mine: Vec<&RunRecord> =
                    runs.iter().filter(|r| r.config == config.label).collect();
                ConfigReport {
                    label: config.label.clone(),
                    compression: match config.agent {
                        AgentKind::Ptc => config.compression.to_string(),
                        // Plain tool calling sends the whole conversation every time.
                        AgentKind::ToolCalls => "none".to_string(),
                    },
                    agent: config.agent,
                    total: Summary::of(mine.iter().copied()),
                    categories: Category::ALL
                        .into_iter()
                        .filter(|c| mine.iter().any(|r| r.category == *c))
                        .map(|category| CategorySummary {
                            category,
                            summary: Summary::of(
                                mine.iter().copied().filter(|r| r.category == category),
                            ),
                        })
                        .collect(),
                    halves: Half::ALL
                        .into_iter()
                        .filter(|h| mine.iter().any(|r| r.half == *h))
                        .map(|half| HalfSummary {
                            half,
                            summary: Summary::of(mine.iter().copied().filter(|r| r.half == half)),
                        })
                        .collect(),
                    sizes: Size::ALL
                        .into_iter()
                        .filter(|z| mine.iter().any(|r| r.size == *z))
                        .map(|size| SizeSummary {
                            size,
                            summary: Summary::of(mine.iter().copied().filter(|r| r.size == size)),
                        })
                        .collect(),
                    missions: missions
                        .iter()
                        .filter(|m| mine.iter().any(|r| r.mission == m.name))
                        .map(|m| MissionSummary {
                            mission: m.name.clone(),
                            category: m.category,
                            summary: Summary::of(
                                mine.iter().copied().filter(|r| r.mission == m.name),
                            ),
                        })
                        .collect(),
                }
            })
            .collect();
        let comparisons = match config_reports.split_first() {
            Some((baseline, others)) => others.iter().map(|o| compare(baseline, o)).collect(),
            None => Vec::new(),
        };
        let versus_tool_calls = versus::all(&config_reports, missions);
        Report {
            llm: llm.to_string(),
            missions: missions
                .iter()
                .filter(|m| runs.iter().any(|r| r.mission == m.name))
                .count(),
            configs: config_reports,
            comparisons,
            versus_tool_calls,
            annotations: Vec::new(),
            runs,
        }
    }
}

/// The billed-equivalent input tokens per run under each profile, as table cells.
fn billed_cells(s: &Summary) -> String {
    PricingKind::ALL
        .into_iter()
        .map(|profile| count(s.per_run_f64(s.modelled(profile).billed)))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The paired comparison of `other` against `baseline`.
fn compare(baseline: &ConfigReport, other: &ConfigReport) -> Comparison {
    let mut pairs: Vec<(&Summary, &Summary)> = Vec::new();
    for m in &baseline.missions {
        if let Some(o) = other.missions.iter().find(|o| o.mission == m.mission)
            && m.summary.runs > 0
            && o.summary.runs > 0
        {
            pairs.push((&m.summary, &o.summary));
        }
    }
    let extract = |f: &dyn Fn(&Summary) -> f64| -> Vec<(f64, f64)> {
        pairs.iter().map(|(a, b)| (f(a), f(b))).collect()
    };
    let mean_of = |values: &[(f64, f64)], side: usize| -> f64 {
        if values.is_empty() {
            0.0
        } else {
            values
                .iter()
                .map(|p| if side == 0 { p.0 } else { p.1 })
                .sum::<f64>()
                / values.len() as f64
        }
    };
    let difference = |values: Vec<(f64, f64)>| MeanDifference {
        baseline: mean_of(&values, 0),
        config: mean_of(&values, 1),
        difference: stats::mean_difference(&values).unwrap_or(0.0),
        ci95: stats::bootstrap(&values, stats::mean_difference),
    };
    let change = |values: Vec<(f64, f64)>| RelativeChange {
        baseline: values.iter().map(|p| p.0).sum(),
        config: values.iter().map(|p| p.1).sum(),
        change: stats::relative_change(&values),
        ci95: stats::bootstrap(&values, stats::relative_change),
    };
    let pass = extract(&|s| s.pass_rate * 100.0);
    let sign_test = stats::sign_test(&pass);
    let pass_rate = difference(pass);
    let turns = difference(extract(&|s| s.mean_turns));
    let prompt_tokens = change(extract(&|s| s.per_run(s.prompt_tokens())));
    let output_tokens = change(extract(&|s| s.per_run(s.output_tokens)));
    let est_prompt_tokens = change(extract(&|s| s.per_run(s.est_prompt_tokens)));
    let est_history_tokens = change(extract(&|s| {
        s.per_run(s.est_prompt_tokens.saturating_sub(s.est_system_tokens))
    }));
    let billed: Vec<BilledChange> = PricingKind::ALL
        .into_iter()
        .map(|profile| BilledChange {
            profile,
            change: change(extract(&|s| s.per_run_f64(s.modelled(profile).billed))),
        })
        .collect();
    let tokens_part = match (prompt_tokens.change, est_prompt_tokens.change) {
        (Some(c), _) => format!(
            "{} prompt tokens (95 % interval {})",
            percent(c),
            interval(prompt_tokens.ci95, percent)
        ),
        (None, Some(c)) => format!(
            "no reported usage; {} estimated prompt tokens (95 % interval {})",
            percent(c),
            interval(est_prompt_tokens.ci95, percent)
        ),
        (None, None) => "no token counts".to_string(),
    };
    let history_part = est_history_tokens
        .change
        .map(|c| format!(" ({} without the system prompt, estimated)", percent(c)))
        .unwrap_or_default();
    let billed_part = billed
        .iter()
        .filter_map(|b| {
            b.change
                .change
                .map(|c| format!("{} {}", percent(c), b.profile))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let billed_part = if billed_part.is_empty() {
        String::new()
    } else {
        format!("; billed input (modelled) {billed_part}")
    };
    let summary = format!(
        "`{}` against `{}` on {} paired mission{}: {}{}{}; pass rate {:.1} % -> {:.1} %, {} \
         points (95 % interval {}; sign test {} better, {} worse, p = {:.2}); turns {} per run.",
        other.label,
        baseline.label,
        pairs.len(),
        plural(pairs.len()),
        tokens_part,
        history_part,
        billed_part,
        pass_rate.baseline,
        pass_rate.config,
        signed(pass_rate.difference, 1),
        interval(pass_rate.ci95, |v| signed(v, 1)),
        sign_test.better,
        sign_test.worse,
        sign_test.p_value,
        signed(turns.difference, 2),
    );
    Comparison {
        baseline: baseline.label.clone(),
        config: other.label.clone(),
        missions: pairs.len(),
        pass_rate,
        sign_test,
        turns,
        prompt_tokens,
        output_tokens,
        est_prompt_tokens,
        est_history_tokens,
        billed,
        summary,
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn pass_rate(s: &Summary) -> String {
    format!("{:.1} % ({}/{})", s.pass_rate * 100.0, s.passed, s.runs)
}

fn seconds(ms: f64) -> String {
    format!("{:.2} s", ms / 1000.0)
}

/// `+1.5` / `-0.3` / `0.0`.
fn signed(value: f64, decimals: usize) -> String {
    let text = format!("{value:+.decimals$}");
    // "-0.0" and "+0.0" read as no change.
    if text
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches(['+', '-']).to_string()
    } else {
        text
    }
}

/// A fraction as a signed percentage: `-0.583` is `-58.3 %`.
fn percent(fraction: f64) -> String {
    format!("{} %", signed(fraction * 100.0, 1))
}

fn interval(ci: Option<Interval>, show: impl Fn(f64) -> String) -> String {
    match ci {
        Some(ci) => format!("{} to {}", show(ci.low), show(ci.high)),
        None => "n/a".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn numbers_are_formatted_for_reading() {
        assert_eq!(count(1234567.4), "1,234,567");
        assert_eq!(count(999.5), "1,000");
        assert_eq!(count(0.0), "0");
        assert_eq!(signed(-0.04, 1), "0.0");
        assert_eq!(signed(2.0, 1), "+2.0");
        assert_eq!(percent(-0.5834), "-58.3 %");
        assert_eq!(seconds(1234.0), "1.23 s");
    }
}

//! PTC against plain tool calling: the thesis of the project, measured. Each PTC configuration
//! is paired with the plain tool-calling one on the missions both ran, overall and within each
//! size group (a win on small missions never averages away a loss on large ones, nor the other
//! way round), with the whole bill (input under the cache rules plus output), cold and in the
//! steady state, and, for every mission where PTC costs more or passes less, what its runs did
//! differently.

use serde::{Deserialize, Serialize};

use ptc_compression::PricingKind;

use super::{ConfigReport, MissionSummary, Summary};
use crate::harness::AgentKind;
use crate::mission::{Mission, Size};

/// One PTC configuration against plain tool calling, on one group of missions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versus {
    /// The PTC configuration's label.
    pub config: String,
    /// The tool-calling configuration's label.
    pub baseline: String,
    /// The size group, or `None` for every mission.
    pub size: Option<Size>,
    /// Missions both ran in the group.
    pub missions: usize,
    /// PTC's pass rate over the paired missions' runs, from 0 to 1.
    pub pass_rate: f64,
    /// Tool calling's pass rate over the same missions' runs.
    pub baseline_pass_rate: f64,
    /// Model requests per run, PTC.
    pub requests: f64,
    /// Model requests per run, tool calling.
    pub baseline_requests: f64,
    /// The whole bill under each profile, cold and steady.
    pub bills: Vec<VersusBill>,
    /// The same bills mission by mission: a sum is dominated by the missions with the largest
    /// bills, so these say what is typical.
    #[serde(default)]
    pub per_mission: Vec<PerMissionRatio>,
    /// Where PTC costs more or passes less, mission by mission, with what its runs did.
    pub losses: Vec<String>,
}

/// The bills of both configurations under one profile and cache state, summed over the paired
/// missions (each mission's mean per run), in input tokens at the full price.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VersusBill {
    /// The pricing profile.
    pub profile: PricingKind,
    /// Whether the agent's system prompt and tools were cached already (the steady state).
    pub steady: bool,
    /// PTC's bill.
    pub ptc: f64,
    /// Tool calling's bill.
    pub tool_calls: f64,
}

/// PTC's bill against tool calling's, mission by mission, under one profile and cache state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PerMissionRatio {
    /// The pricing profile.
    pub profile: PricingKind,
    /// Whether the agent's system prompt and tools were cached already (the steady state).
    pub steady: bool,
    /// The geometric mean over the paired missions of PTC's bill divided by tool calling's
    /// (missions where either bill is 0 left out); `None` when no mission has both.
    pub geometric_mean: Option<f64>,
    /// Missions where PTC's bill is the smaller.
    pub cheaper: usize,
}

impl VersusBill {
    /// PTC's bill as a multiple of tool calling's; `None` when tool calling's is 0.
    pub fn ratio(&self) -> Option<f64> {
        (self.tool_calls > 0.0).then(|| self.ptc / self.tool_calls)
    }
}

/// Every PTC configuration against the tool-calling one (when there is one): over all missions,
/// then per size group that has paired missions.
pub(super) fn all(configs: &[ConfigReport], missions: &[Mission]) -> Vec<Versus> {
    let Some(baseline) = configs.iter().find(|c| c.agent == AgentKind::ToolCalls) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for config in configs.iter().filter(|c| c.agent.is_ptc()) {
        out.extend(versus(config, baseline, missions, None));
        for size in Size::ALL {
            out.extend(versus(config, baseline, missions, Some(size)));
        }
    }
    out
}

fn size_of(missions: &[Mission], name: &str) -> Size {
    missions
        .iter()
        .find(|m| m.name == name)
        .map_or(Size::Small, |m| m.size)
}

fn versus(
    config: &ConfigReport,
    baseline: &ConfigReport,
    missions: &[Mission],
    size: Option<Size>,
) -> Option<Versus> {
    let pairs: Vec<(&MissionSummary, &MissionSummary)> = config
        .missions
        .iter()
        .filter(|m| size.is_none_or(|s| size_of(missions, &m.mission) == s))
        .filter_map(|m| {
            let b = baseline.missions.iter().find(|b| b.mission == m.mission)?;
            (m.summary.runs > 0 && b.summary.runs > 0).then_some((m, b))
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let mine = Summary::of_summaries(pairs.iter().map(|(m, _)| &m.summary));
    let theirs = Summary::of_summaries(pairs.iter().map(|(_, b)| &b.summary));
    let mut bills = Vec::new();
    for steady in [false, true] {
        for profile in PricingKind::ALL {
            let per_mission = |s: &Summary| s.per_run_f64(s.bill(profile, steady));
            bills.push(VersusBill {
                profile,
                steady,
                ptc: pairs.iter().map(|(m, _)| per_mission(&m.summary)).sum(),
                tool_calls: pairs.iter().map(|(_, b)| per_mission(&b.summary)).sum(),
            });
        }
    }
    let mut per_mission = Vec::new();
    for steady in [false, true] {
        for profile in PricingKind::ALL {
            let ratios: Vec<f64> = pairs
                .iter()
                .filter_map(|(m, b)| {
                    let ptc = m.summary.per_run_f64(m.summary.bill(profile, steady));
                    let tc = b.summary.per_run_f64(b.summary.bill(profile, steady));
                    (ptc > 0.0 && tc > 0.0).then(|| ptc / tc)
                })
                .collect();
            let geometric_mean = (!ratios.is_empty())
                .then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp());
            per_mission.push(PerMissionRatio {
                profile,
                steady,
                geometric_mean,
                cheaper: ratios.iter().filter(|r| **r < 1.0).count(),
            });
        }
    }
    let losses = pairs
        .iter()
        .filter_map(|(m, b)| loss(&m.mission, &m.summary, &b.summary))
        .collect();
    Some(Versus {
        config: config.label.clone(),
        baseline: baseline.label.clone(),
        size,
        missions: pairs.len(),
        pass_rate: mine.pass_rate,
        baseline_pass_rate: theirs.pass_rate,
        requests: mine.per_run(mine.llm_requests),
        baseline_requests: theirs.per_run(theirs.llm_requests),
        bills,
        per_mission,
        losses,
    })
}

/// What a mission's PTC runs did where they cost more (steady state, Anthropic's prices) or
/// passed less than tool calling's; `None` where PTC did at least as well on both.
fn loss(mission: &str, ptc: &Summary, tool_calls: &Summary) -> Option<String> {
    let profile = PricingKind::Anthropic;
    let ptc_bill = ptc.per_run_f64(ptc.bill(profile, true));
    let tc_bill = tool_calls.per_run_f64(tool_calls.bill(profile, true));
    let passes_less = ptc.pass_rate < tool_calls.pass_rate;
    if ptc_bill <= tc_bill && !passes_less {
        return None;
    }
    let mut parts = Vec::new();
    if passes_less {
        parts.push(format!(
            "passed {:.0} % against {:.0} %",
            ptc.pass_rate * 100.0,
            tool_calls.pass_rate * 100.0
        ));
    }
    if ptc_bill > tc_bill && tc_bill > 0.0 {
        // A failed run of tool calling often stopped early: its bill is not the task's price.
        let failed = if tool_calls.pass_rate < 1.0 {
            ", tool calling's ending early as it failed"
        } else {
            ""
        };
        parts.push(format!(
            "cost {:.2}x (anthropic, steady){failed}",
            ptc_bill / tc_bill
        ));
    }
    parts.push(format!(
        "{:.1} requests against {:.1}",
        ptc.per_run(ptc.llm_requests),
        tool_calls.per_run(tool_calls.llm_requests)
    ));
    if ptc.est_prompt_tokens > 0 {
        parts.push(format!(
            "system prompt {:.0} % of its input against {:.0} %",
            share(ptc.est_system_tokens, ptc.est_prompt_tokens),
            share(tool_calls.est_system_tokens, tool_calls.est_prompt_tokens)
        ));
    }
    if tool_calls.output_tokens > 0 {
        parts.push(format!(
            "output {:.2}x",
            ptc.per_run(ptc.output_tokens) / tool_calls.per_run(tool_calls.output_tokens)
        ));
    }
    if ptc.lost_turns > 0 {
        parts.push(format!(
            "{} turn{} lost",
            ptc.lost_turns,
            if ptc.lost_turns == 1 { "" } else { "s" }
        ));
    }
    Some(format!("{mission}: {}", parts.join("; ")))
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

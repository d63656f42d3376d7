//! Running missions: every mission, N times, under each configuration, a bounded number at a
//! time, with a transcript of each run's model replies.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use indicatif::{ProgressBar, ProgressStyle};
use ptc_agent::{
    FileLlm, Llm, LlmError, LlmRequest, LlmResponse, ProviderOptions, ReplayLlm, ReplyForm,
    parse_llm_spec_with,
};
use ptc_compression::{
    CompressionConfig, HeuristicTokenizer, PricingKind, PromptRequest, RequestCost, Tokenizer,
    price, price_after,
};
use ptc_lisp::to_json;
use ptc_turn::{FailureKind, Message, StepOutcome};
use serde::{Deserialize, Serialize};

use crate::check::RunEnd;
use crate::lost::LostTurn;
use crate::mission::{Category, Half, McpRun, Mission, Size, load_missions};
use crate::tool_calling::{self, NativeTool};
use crate::tools::CallLog;

/// One configuration of the agent, named by a label that is also its transcript directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The label: the spec as written, made safe for a file name (see [`label_of`]).
    pub label: String,
    /// The history compression its runs use (PTC runs only).
    pub compression: CompressionConfig,
    /// Which agent runs the missions.
    pub agent: AgentKind,
    /// How a PTC agent's model hands over its programs.
    pub reply: ReplyForm,
}

/// The agent of a configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentKind {
    /// A PTC agent writing programs, as fenced code blocks.
    Ptc,
    /// Plain tool calling ([`crate::tool_calling`]).
    ToolCalls,
}

impl AgentKind {
    /// How the report and `config.json` name it.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Ptc => "ptc",
            AgentKind::ToolCalls => "tool-calls",
        }
    }

    /// Whether its runs are PTC runs (programs).
    pub fn is_ptc(self) -> bool {
        self != AgentKind::ToolCalls
    }

    /// [`AgentKind::Ptc`], what reports written before there were other agents ran.
    pub fn default_ptc() -> AgentKind {
        AgentKind::Ptc
    }
}

/// The label of the plain tool-calling configuration.
pub const TOOL_CALLS_LABEL: &str = "tool-calls";

impl Config {
    /// A PTC configuration from a compression spec (`off`, `on`, `rolling-window?window=3`,
    /// ...); its label is the spec as written, with characters that do not belong in a file
    /// name replaced by `_`.
    pub fn from_spec(spec: &str) -> Result<Config, String> {
        let compression =
            CompressionConfig::parse(spec).map_err(|e| format!("--compression {spec}: {e}"))?;
        Ok(Config {
            label: label_of(spec),
            compression,
            agent: AgentKind::Ptc,
            reply: ReplyForm::Fenced,
        })
    }

    /// The same PTC configuration with its programs asked for as calls of the native tool
    /// `run_program`, labelled `LABEL.tool-call`.
    pub fn with_reply(self, reply: ReplyForm) -> Config {
        match reply {
            ReplyForm::Fenced => self,
            ReplyForm::ToolCall => Config {
                label: format!("{}.tool-call", self.label),
                reply,
                ..self
            },
        }
    }

    /// The plain tool-calling configuration.
    pub fn tool_calls() -> Config {
        Config {
            label: TOOL_CALLS_LABEL.to_string(),
            compression: CompressionConfig::default(),
            agent: AgentKind::ToolCalls,
            reply: ReplyForm::Fenced,
        }
    }
}

/// A file-name-safe label for a spec.
pub fn label_of(spec: &str) -> String {
    let label: String = spec
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '=') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if label.is_empty() {
        "off".to_string()
    } else {
        label
    }
}

/// Where each run's model comes from.
#[derive(Clone)]
pub enum LlmSource {
    /// One model for every run (`openai:`, `anthropic:`, `openai-compatible:`).
    Shared(Arc<dyn Llm>),
    /// A fresh replay of one transcript for every run (`replay:FILE`).
    ReplayFile(PathBuf),
    /// Each run's own transcript, `DIR/<config>/<mission>/<run>.jsonl` (`replay-dir:DIR`).
    ReplayDir(PathBuf),
    /// Each run answered through files in its own directory, `DIR/<config>/<mission>/<run>/`
    /// (`file:DIR`, see [`ptc_agent::FileLlm`]), waiting up to the timeout for each reply.
    FileDir(PathBuf, std::time::Duration),
}

impl LlmSource {
    /// Reads `--llm`: any spec [`parse_llm_spec`](ptc_agent::parse_llm_spec) takes, or `replay-dir:DIR`; `options` set
    /// the request timeout and retries of an HTTP provider.
    pub fn parse(spec: &str, options: &ProviderOptions) -> Result<LlmSource, String> {
        let spec = spec.trim();
        if let Some(dir) = spec.strip_prefix("replay-dir:") {
            let dir = PathBuf::from(dir);
            if !dir.is_dir() {
                return Err(format!(
                    "--llm {spec}: {} is not a directory of transcripts \
                     (DIR/<config>/<mission>/<run>.jsonl)",
                    dir.display()
                ));
            }
            return Ok(LlmSource::ReplayDir(dir));
        }
        if let Some(dir) = spec.strip_prefix("file:") {
            if dir.is_empty() {
                return Err(format!("--llm {spec}: name the directory, file:DIR"));
            }
            return Ok(LlmSource::FileDir(
                PathBuf::from(dir),
                options
                    .request_timeout
                    .unwrap_or(ptc_agent::llm::FILE_REPLY_TIMEOUT),
            ));
        }
        let llm = parse_llm_spec_with(spec, options).map_err(|e| format!("--llm {spec}: {e}"))?;
        match spec.strip_prefix("replay:") {
            Some(file) => Ok(LlmSource::ReplayFile(PathBuf::from(file))),
            None => Ok(LlmSource::Shared(llm)),
        }
    }

    /// How the report names the model.
    pub fn describe(&self) -> String {
        match self {
            LlmSource::Shared(llm) => llm.describe(),
            LlmSource::ReplayFile(path) => format!("replay:{}", path.display()),
            LlmSource::ReplayDir(dir) => format!("replay-dir:{}", dir.display()),
            LlmSource::FileDir(dir, _) => format!("file:{}", dir.display()),
        }
    }
}

/// What to run and where to write.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// `--llm`.
    pub llm: String,
    /// Compression specs, one PTC configuration each; empty for `off` and `on` (or, replaying a
    /// directory, the configurations it holds).
    pub compression: Vec<String>,
    /// The agents to run, in order: [`AgentKind::Ptc`] (the PTC configurations, one per
    /// compression spec), [`AgentKind::ToolCalls`] (one plain tool-calling configuration).
    /// Empty for PTC alone. The first configuration is the baseline of the comparisons.
    pub agents: Vec<AgentKind>,
    /// How PTC agents' models hand over their programs (fenced blocks, or calls of the native
    /// tool `run_program`).
    pub reply: ReplyForm,
    /// The largest request a model takes, in tokens (estimated at 4 characters a token): a
    /// larger one fails as a provider refuses a prompt over its context window.
    pub context_tokens: usize,
    /// Runs per mission and configuration; `None` for 1 (or, replaying a directory, every run
    /// it holds).
    pub runs: Option<u32>,
    /// The directory of missions, one subdirectory each.
    pub missions_dir: PathBuf,
    /// Glob patterns of mission names; empty for all.
    pub missions: Vec<String>,
    /// Where `REPORT.md`, `report.json` and `transcripts/` go.
    pub out_dir: PathBuf,
    /// Runs at once (at least 1).
    pub jobs: usize,
    /// The sampling temperature (the provider's default otherwise).
    pub temperature: Option<f32>,
    /// The sampling seed sent with every request (OpenAI-compatible servers), for replies that
    /// repeat.
    pub seed: Option<u64>,
    /// The reply token limit of every request (the agent's default otherwise).
    pub max_tokens: Option<u32>,
    /// The request timeout and retries of an HTTP provider.
    pub provider: ProviderOptions,
    /// Show a progress bar (only ever on a terminal).
    pub progress: bool,
    /// Also write each run's whole Step (every turn's program, result, error and the messages
    /// its request sent) as `steps/<config>/<mission>/<run>.json`, to read what the model saw,
    /// and a PTC run's page beside it (`<run>.html`, `ptc-view`), which `REPORT.html` links to.
    pub write_steps: bool,
}

impl EvalOptions {
    /// Options with the defaults of the command line.
    pub fn new(llm: impl Into<String>) -> EvalOptions {
        EvalOptions {
            llm: llm.into(),
            compression: Vec::new(),
            agents: Vec::new(),
            reply: ReplyForm::Fenced,
            context_tokens: DEFAULT_CONTEXT_TOKENS,
            runs: None,
            missions_dir: PathBuf::from("benchmarks/missions"),
            missions: Vec::new(),
            out_dir: PathBuf::from("target/eval"),
            jobs: 4,
            temperature: None,
            seed: None,
            max_tokens: None,
            provider: ProviderOptions::default(),
            progress: false,
            write_steps: false,
        }
    }
}

/// The context window the harness enforces unless told otherwise: 200,000 tokens, the window
/// of the Claude models and within GPT-4.1's.
pub const DEFAULT_CONTEXT_TOKENS: usize = 200_000;

/// One run to make.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedRun {
    /// The index of its configuration in [`Plan::configs`].
    pub config: usize,
    /// The index of its mission in [`Plan::missions`].
    pub mission: usize,
    /// From 1.
    pub run: u32,
    /// The transcript to replay, when replaying a directory.
    pub transcript: Option<PathBuf>,
}

/// Everything to run.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub missions: Vec<Mission>,
    pub configs: Vec<Config>,
    pub runs: Vec<PlannedRun>,
}

/// The result of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The configuration's label.
    pub config: String,
    /// The mission's name.
    pub mission: String,
    /// The mission's category.
    pub category: Category,
    /// The half of the missions it belongs to.
    pub half: Half,
    /// The mission's size group.
    #[serde(default)]
    pub size: Size,
    /// Which run of the mission under this configuration, from 1.
    pub run: u32,
    /// Whether the mission's check accepted the run.
    pub passed: bool,
    /// The configuration's agent.
    #[serde(default = "AgentKind::default_ptc")]
    pub agent: AgentKind,
    /// Why the check failed, one line per failed part.
    pub reasons: Vec<String>,
    /// `returned`, a failure kind (`failed`, `max_turns_exceeded`, `llm_error`, ...), or
    /// `harness_error` when the run could not start.
    pub outcome: String,
    /// Turns the agent took.
    pub turns: u32,
    /// Requests made to the model, as the run's usage counts them.
    pub llm_requests: u32,
    /// Uncached input tokens as the provider reported them (from the transcript when
    /// replaying).
    pub input_tokens: u64,
    /// Output tokens as reported.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache, as reported.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache, as reported.
    pub cache_write_tokens: u64,
    /// The size of every request sent, estimated with the heuristic tokenizer (4 characters a
    /// token), system prompt included: the same for every provider, and available when a
    /// provider reports no usage.
    pub est_prompt_tokens: u64,
    /// The part of `est_prompt_tokens` that is the system prompt.
    pub est_system_tokens: u64,
    /// `est_prompt_tokens` request by request: how the prompt grew over the run.
    pub est_prompt_tokens_per_request: Vec<u64>,
    /// The requests sent, priced under each pricing profile (`anthropic`, `openai`, `ideal`):
    /// what the run's prompts would be billed with the provider's prompt cache, counted with
    /// the heuristic tokenizer.
    #[serde(default)]
    pub modelled: BTreeMap<String, RequestCost>,
    /// The same requests priced in a steady state: the agent's system prompt and tool
    /// definitions already in the prompt cache, as a service running the agent over and over
    /// has them.
    #[serde(default)]
    pub modelled_steady: BTreeMap<String, RequestCost>,
    /// Whether the token counts are the client's estimates rather than a provider's (a model
    /// answered through files).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_estimated: bool,
    /// Plain tool calling only: whether the input data was behind `read_data` rather than in
    /// the first message (too large for it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub data_behind_tool: bool,
    /// PTC only: the turns that did not move the mission forward, with their causes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost_turns: Vec<LostTurn>,
    /// Tool calls the run's programs made.
    pub tool_calls: usize,
    /// Wall time of the run, in milliseconds.
    pub wall_ms: u64,
    /// The transcript written, relative to the output directory.
    pub transcript: String,
}

impl RunRecord {
    /// A record of a run that has not happened (yet): failed, with no numbers.
    fn blank(config: &Config, mission: &Mission, run: u32) -> RunRecord {
        RunRecord {
            config: config.label.clone(),
            mission: mission.name.clone(),
            category: mission.category,
            half: mission.half,
            size: mission.size,
            run,
            passed: false,
            agent: config.agent,
            reasons: Vec::new(),
            outcome: "harness_error".into(),
            turns: 0,
            llm_requests: 0,
            input_tokens: 0,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            est_prompt_tokens: 0,
            est_system_tokens: 0,
            est_prompt_tokens_per_request: Vec::new(),
            modelled: BTreeMap::new(),
            modelled_steady: BTreeMap::new(),
            usage_estimated: false,
            data_behind_tool: false,
            lost_turns: Vec::new(),
            tool_calls: 0,
            wall_ms: 0,
            transcript: transcript_path(&config.label, &mission.name, run)
                .display()
                .to_string(),
        }
    }

    /// The billed-equivalent input tokens of the run's requests under the named profile.
    pub fn billed(&self, profile: PricingKind) -> f64 {
        self.modelled
            .get(profile.as_str())
            .map_or(0.0, |cost| cost.billed)
    }

    /// The whole bill of the run under the named profile, in input tokens at the full price:
    /// the billed input (with an empty cache, or in the steady state) plus the output tokens
    /// at the profile's output price.
    pub fn bill(&self, profile: PricingKind, steady: bool) -> f64 {
        let input = if steady {
            &self.modelled_steady
        } else {
            &self.modelled
        };
        input.get(profile.as_str()).map_or(0.0, |cost| cost.billed)
            + self.output_tokens as f64 * profile.profile().output_multiplier
    }

    /// Input, cache-read and cache-write tokens: the whole prompt, however the provider split
    /// it.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }
}

/// Loads the missions and decides the runs.
pub(crate) fn plan(options: &EvalOptions, source: &LlmSource) -> Result<Plan, String> {
    let missions = load_missions(&options.missions_dir, &options.missions)?;
    let dir = match source {
        LlmSource::ReplayDir(dir) => Some(dir),
        _ => None,
    };
    let configs = match dir {
        Some(dir) if options.compression.is_empty() && options.agents.is_empty() => {
            replay_configs(dir)?
        }
        _ => planned_configs(options)?,
    };
    let mut runs = Vec::new();
    for (c, config) in configs.iter().enumerate() {
        for (m, mission) in missions.iter().enumerate() {
            match dir {
                None => {
                    for run in 1..=options.runs.unwrap_or(1) {
                        runs.push(PlannedRun {
                            config: c,
                            mission: m,
                            run,
                            transcript: None,
                        });
                    }
                }
                Some(dir) => {
                    let mission_dir = dir.join(&config.label).join(&mission.name);
                    let mut found = transcript_runs(&mission_dir)?;
                    if let Some(limit) = options.runs {
                        found.retain(|(run, _)| *run <= limit);
                    }
                    runs.extend(found.into_iter().map(|(run, path)| PlannedRun {
                        config: c,
                        mission: m,
                        run,
                        transcript: Some(path),
                    }));
                }
            }
        }
    }
    if runs.is_empty() {
        return Err(match dir {
            Some(dir) => format!(
                "{} has no transcript for these missions and configurations (expected \
                 {}/<config>/<mission>/<run>.jsonl)",
                dir.display(),
                dir.display()
            ),
            None => "nothing to run: --runs is 0".to_string(),
        });
    }
    Ok(Plan {
        missions,
        configs,
        runs,
    })
}

/// The configurations `options` ask for: per agent, in the order given, the PTC ones once per
/// compression spec (`off` and `on` when none is given) and plain tool calling once.
fn planned_configs(options: &EvalOptions) -> Result<Vec<Config>, String> {
    let default_specs = ["off".to_string(), "on".to_string()];
    let specs = if options.compression.is_empty() {
        &default_specs[..]
    } else {
        &options.compression[..]
    };
    let agents = if options.agents.is_empty() {
        &[AgentKind::Ptc][..]
    } else {
        &options.agents[..]
    };
    let mut configs: Vec<Config> = Vec::new();
    for agent in agents {
        let made: Vec<Config> = match agent {
            AgentKind::ToolCalls => vec![Config::tool_calls()],
            AgentKind::Ptc => specs
                .iter()
                .map(|s| Config::from_spec(s).map(|c| c.with_reply(options.reply)))
                .collect::<Result<_, _>>()?,
        };
        for config in made {
            if configs.iter().any(|c| c.label == config.label) {
                return Err(format!(
                    "the configuration {} is asked for twice",
                    config.label
                ));
            }
            configs.push(config);
        }
    }
    Ok(configs)
}

/// The configurations recorded in a transcript directory: each subdirectory, with the spec in
/// its `config.json` (or its name as the spec).
pub fn replay_configs(dir: &Path) -> Result<Vec<Config>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut labels: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    labels.sort();
    // The baseline comes first: `off` when it is there.
    if let Some(i) = labels.iter().position(|l| l == "off") {
        let off = labels.remove(i);
        labels.insert(0, off);
    }
    labels
        .into_iter()
        .map(|label| {
            let meta = dir.join(&label).join("config.json");
            let file = match std::fs::read_to_string(&meta) {
                Ok(text) => serde_json::from_str::<ConfigFile>(&text)
                    .map_err(|e| format!("{}: {e}", meta.display()))?,
                Err(_) => ConfigFile {
                    compression: label.clone(),
                    agent: AgentKind::Ptc,
                    reply: ReplyForm::Fenced,
                },
            };
            let compression = CompressionConfig::parse(&file.compression)
                .map_err(|e| format!("{}: {e}", dir.join(&label).display()))?;
            Ok(Config {
                label,
                compression,
                agent: file.agent,
                reply: file.reply,
            })
        })
        .collect()
}

/// `config.json` of a transcript directory.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    compression: String,
    #[serde(default = "AgentKind::default_ptc", skip_serializing_if = "is_ptc")]
    agent: AgentKind,
    #[serde(default, skip_serializing_if = "is_fenced")]
    reply: ReplyForm,
}

fn is_fenced(reply: &ReplyForm) -> bool {
    *reply == ReplyForm::Fenced
}

fn is_ptc(agent: &AgentKind) -> bool {
    *agent == AgentKind::Ptc
}

/// The `<run>.jsonl` files of one mission's transcript directory, by run number.
pub fn transcript_runs(dir: &Path) -> Result<Vec<(u32, PathBuf)>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut runs: Vec<(u32, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter_map(|p| {
            let run = p
                .file_name()?
                .to_str()?
                .strip_suffix(".jsonl")?
                .parse()
                .ok()?;
            Some((run, p))
        })
        .collect();
    runs.sort();
    Ok(runs)
}

/// A model that keeps every reply (for the transcript), estimates every request's size, and
/// refuses a request larger than the context window, as a provider does.
#[derive(Clone)]
struct Recording {
    inner: Arc<dyn Llm>,
    context_tokens: usize,
    state: Arc<Mutex<Recorded>>,
}

#[derive(Default)]
struct Recorded {
    replies: Vec<LlmResponse>,
    est_prompt_tokens: u64,
    est_system_tokens: u64,
    per_request: Vec<u64>,
    prompts: Vec<PromptRequest>,
}

#[async_trait]
impl Llm for Recording {
    async fn complete(&self, request: &LlmRequest) -> Result<LlmResponse, LlmError> {
        // The priced prompt: native tools' definitions count, before the system prompt.
        let prompt = request.prompt();
        let system = HeuristicTokenizer.count_message(&Message::system(prompt.system.clone()));
        let rest = HeuristicTokenizer.count_messages(&prompt.messages);
        if system + rest > self.context_tokens {
            return Err(LlmError::Http {
                provider: self.inner.describe(),
                status: 400,
                message: format!(
                    "prompt is too long: {} tokens > {} maximum (the context window)",
                    system + rest,
                    self.context_tokens
                ),
            });
        }
        {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.est_system_tokens += system as u64;
            state.est_prompt_tokens += (system + rest) as u64;
            state.per_request.push((system + rest) as u64);
            state.prompts.push(prompt);
        }
        let reply = self.inner.complete(request).await?;
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .replies
            .push(reply.clone());
        Ok(reply)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn pricing(&self) -> Option<PricingKind> {
        self.inner.pricing()
    }
}

/// Where a run's transcript goes, relative to the output directory.
pub fn transcript_path(config: &str, mission: &str, run: u32) -> PathBuf {
    Path::new("transcripts")
        .join(config)
        .join(mission)
        .join(format!("{run}.jsonl"))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Makes one run and writes its transcript.
async fn run_one(
    mission: &Mission,
    config: &Config,
    planned: &PlannedRun,
    source: &LlmSource,
    options: &EvalOptions,
) -> RunRecord {
    let started = Instant::now();
    let transcript = transcript_path(&config.label, &mission.name, planned.run);
    let mut record = RunRecord::blank(config, mission, planned.run);
    let llm = match run_llm(source, planned, config, mission) {
        Ok(llm) => llm,
        Err(e) => {
            record.reasons.push(e);
            return record;
        }
    };
    let recording = Recording {
        inner: llm,
        context_tokens: options.context_tokens,
        state: Arc::default(),
    };
    let log = CallLog::new();
    let mcp = match mission
        .start_mcp(&log, &format!("{}/{}", config.label, planned.run))
        .await
    {
        Ok(mcp) => mcp,
        Err(e) => {
            record.reasons.push(e);
            record.wall_ms = millis(started.elapsed());
            return record;
        }
    };
    let ended = match config.agent {
        AgentKind::ToolCalls => {
            run_tool_calling(
                mission,
                &recording,
                &log,
                mcp.as_ref(),
                options,
                &mut record,
            )
            .await
        }
        AgentKind::Ptc => {
            run_ptc(
                mission,
                config,
                &recording,
                &log,
                mcp.as_ref(),
                options,
                &mut record,
            )
            .await
        }
    };
    if let Some(mcp) = mcp {
        mcp.servers.close().await;
    }
    // The model is done with: a file-answered run says so (`END`) when its model is dropped.
    let recorded = std::mem::take(
        &mut *recording
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    drop(recording);
    record.est_prompt_tokens = recorded.est_prompt_tokens;
    record.est_system_tokens = recorded.est_system_tokens;
    record.est_prompt_tokens_per_request = recorded.per_request;
    record.usage_estimated = recorded.replies.iter().any(|r| r.usage_estimated);
    record.modelled = price_cold(&recorded.prompts);
    record.modelled_steady = price_steady(&recorded.prompts);
    if let Err(e) = write_transcript(&options.out_dir.join(&transcript), &recorded.replies) {
        record.reasons.push(e);
    }
    let end = match ended {
        Ok(end) => end,
        Err(e) => {
            record.reasons.push(e);
            record.wall_ms = millis(started.elapsed());
            return record;
        }
    };
    let calls = log.calls();
    let params: BTreeMap<String, Vec<String>> = mission.tool_params();
    let verdict = mission.check.verdict(&end, &calls, |tool| {
        params.get(tool).cloned().unwrap_or_default()
    });
    record.passed = verdict.passed && record.reasons.is_empty();
    record.reasons.extend(verdict.reasons);
    record.tool_calls = calls.len();
    record.wall_ms = millis(started.elapsed());
    record
}

/// The model of one run: the shared one, a fresh replay of its transcript, or a directory of its
/// own to be answered through files.
fn run_llm(
    source: &LlmSource,
    planned: &PlannedRun,
    config: &Config,
    mission: &Mission,
) -> Result<Arc<dyn Llm>, String> {
    match (source, &planned.transcript) {
        (LlmSource::Shared(llm), _) => Ok(llm.clone()),
        (LlmSource::ReplayFile(path), _) | (LlmSource::ReplayDir(_), Some(path)) => Ok(Arc::new(
            ReplayLlm::from_file(path).map_err(|e| e.to_string())?,
        )),
        (LlmSource::ReplayDir(dir), None) => {
            Err(format!("no transcript for this run in {}", dir.display()))
        }
        (LlmSource::FileDir(dir, timeout), _) => {
            let dir = dir
                .join(&config.label)
                .join(&mission.name)
                .join(planned.run.to_string());
            Ok(Arc::new(
                FileLlm::new(dir)
                    .map_err(|e| e.to_string())?
                    .with_timeout(*timeout),
            ))
        }
    }
}

/// The requests of a run priced under each profile, with an empty prompt cache.
fn price_cold(prompts: &[PromptRequest]) -> BTreeMap<String, RequestCost> {
    PricingKind::ALL
        .into_iter()
        .map(|kind| {
            let bill = price(prompts, &kind.profile(), &HeuristicTokenizer);
            (kind.as_str().to_string(), bill.total)
        })
        .collect()
}

/// The requests of a run priced under each profile in a steady state: the same agent ran
/// before, so its system prompt and tool definitions (what every run of it sends first, before
/// the task) are in the prompt cache already.
fn price_steady(prompts: &[PromptRequest]) -> BTreeMap<String, RequestCost> {
    let Some(first) = prompts.first() else {
        return BTreeMap::new();
    };
    let earlier = [PromptRequest {
        system: first.system.clone(),
        messages: Vec::new(),
        cache_points: Vec::new(),
    }];
    PricingKind::ALL
        .into_iter()
        .map(|kind| {
            let bill = price_after(prompts, &earlier, &kind.profile(), &HeuristicTokenizer);
            (kind.as_str().to_string(), bill.total)
        })
        .collect()
}

/// A PTC run of the mission; fills the record's turns and usage and returns how it ended.
async fn run_ptc(
    mission: &Mission,
    config: &Config,
    llm: &Recording,
    log: &CallLog,
    mcp: Option<&McpRun>,
    options: &EvalOptions,
    record: &mut RunRecord,
) -> Result<RunEnd, String> {
    let mut builder = mission
        .builder(Arc::new(llm.clone()), log)
        .compression_config(config.compression)
        .reply_form(config.reply);
    if let Some(mcp) = mcp {
        for tool in &mcp.tools {
            builder = builder.tool_arc(tool.clone());
        }
    }
    if let Some(t) = options.temperature {
        builder = builder.temperature(t);
    }
    if let Some(seed) = options.seed {
        builder = builder.sampling(ptc_agent::Sampling {
            seed: Some(seed),
            ..ptc_agent::Sampling::default()
        });
    }
    if let Some(max_tokens) = options.max_tokens {
        builder = builder.max_tokens(max_tokens);
    }
    let step = match builder.build() {
        Ok(agent) => agent.run().await.map_err(|e| e.to_string())?,
        Err(e) => return Err(e.to_string()),
    };
    if options.write_steps {
        let path = step_path(options, config, mission, record.run);
        if let Err(e) = write_step(&path, &step) {
            record.reasons.push(e);
        }
        let page = ptc_view::run_page(
            &step,
            &ptc_view::PageOptions {
                compression: config.compression,
                title: Some(format!(
                    "{}: {}, run {}",
                    mission.name, config.label, record.run
                )),
                ..ptc_view::PageOptions::default()
            },
        );
        if let Err(e) = write_text(&path.with_extension("html"), &page) {
            record.reasons.push(e);
        }
    }
    record.outcome = match &step.outcome {
        StepOutcome::Returned { .. } => "returned".to_string(),
        StepOutcome::Failed { kind, .. } => kind.as_str().to_string(),
    };
    record.turns = u32::try_from(step.turns.len()).unwrap_or(u32::MAX);
    record.llm_requests = step.usage.llm_requests;
    set_tokens(record, step.usage.tokens);
    record.lost_turns = crate::lost::lost_turns(&step);
    Ok(match &step.outcome {
        StepOutcome::Returned { value } => RunEnd::Returned(to_json(value)),
        StepOutcome::Failed {
            kind: FailureKind::Failed,
            reason,
            ..
        } => RunEnd::Failed(reason.clone()),
        StepOutcome::Failed { kind, reason, .. } => RunEnd::Error {
            kind: kind.as_str().to_string(),
            reason: reason.clone(),
        },
    })
}

/// A plain tool-calling run of the mission; fills the record's turns and usage and returns how
/// it ended.
async fn run_tool_calling(
    mission: &Mission,
    llm: &Recording,
    log: &CallLog,
    mcp: Option<&McpRun>,
    options: &EvalOptions,
    record: &mut RunRecord,
) -> Result<RunEnd, String> {
    let mut tools: Vec<NativeTool> = mission
        .tools
        .instantiate(log)
        .into_iter()
        .map(|tool| NativeTool {
            tool,
            input_schema: None,
        })
        .collect();
    if let Some(mcp) = mcp {
        for tool in &mcp.tools {
            tools.push(NativeTool {
                input_schema: mcp.input_schema(tool.name()).cloned(),
                tool: tool.clone(),
            });
        }
    }
    let settings = tool_calling::Settings {
        max_requests: mission
            .max_turns
            .saturating_mul(TOOL_CALLING_REQUESTS_PER_TURN),
        max_tokens: options.max_tokens,
        temperature: options.temperature,
    };
    let run = tool_calling::run(mission, llm, &tools, &settings).await;
    if options.write_steps {
        let path = step_path(options, &Config::tool_calls(), mission, record.run);
        let text = serde_json::to_string_pretty(&run.messages).unwrap_or_default();
        if let Err(e) = write_text(&path, &(text + "\n")) {
            record.reasons.push(e);
        }
    }
    record.outcome = run.outcome;
    record.turns = run.requests;
    record.llm_requests = run.requests;
    record.data_behind_tool = run.data_behind_tool;
    set_tokens(record, run.usage);
    run.end
}

/// How many requests plain tool calling may make for each turn a mission allows PTC: it takes a
/// request per round of dependent calls where a program takes one turn for all of them.
pub const TOOL_CALLING_REQUESTS_PER_TURN: u32 = 5;

fn set_tokens(record: &mut RunRecord, tokens: ptc_turn::TokenUsage) {
    record.input_tokens = tokens.input_tokens;
    record.output_tokens = tokens.output_tokens;
    record.cache_read_tokens = tokens.cache_read_tokens;
    record.cache_write_tokens = tokens.cache_write_tokens;
}

fn step_path(options: &EvalOptions, config: &Config, mission: &Mission, run: u32) -> PathBuf {
    options
        .out_dir
        .join("steps")
        .join(&config.label)
        .join(&mission.name)
        .join(format!("{run}.json"))
}

/// Writes a run's Step as pretty JSON.
fn write_step(path: &Path, step: &ptc_turn::Step) -> Result<(), String> {
    let text = serde_json::to_string_pretty(step)
        .map_err(|e| format!("cannot write the step {}: {e}", path.display()))?;
    write_text(path, &(text + "\n"))
}

/// Writes `text` to `path`, making its directory first.
fn write_text(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Writes replies as a transcript [`ReplayLlm`] reads.
fn write_transcript(path: &Path, replies: &[LlmResponse]) -> Result<(), String> {
    let text = ptc_agent::llm::transcript_jsonl(replies)
        .map_err(|e| format!("cannot write the transcript {}: {e}", path.display()))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Makes every planned run, at most `options.jobs` at a time, and returns their records in
/// plan order. Must be called within a multi-threaded tokio runtime.
pub(crate) async fn execute(
    plan: &Plan,
    source: &LlmSource,
    options: &EvalOptions,
) -> Vec<RunRecord> {
    let progress = if options.progress && std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(plan.runs.len() as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:30.cyan/blue} {pos}/{len} runs {msg} [{elapsed_precise}, {eta} left]",
        ) {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };
    let plan = Arc::new(plan.clone());
    let source = Arc::new(source.clone());
    let options = Arc::new(options.clone());
    let permits = Arc::new(tokio::sync::Semaphore::new(options.jobs.max(1)));
    let passed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for index in start_order(&plan.runs) {
        // A run starts once it holds a permit, and permits are taken here in start order.
        // The semaphore is never closed, so acquiring only fails if it were.
        let permit = permits.clone().acquire_owned().await.ok();
        let (plan, source, options, progress, passed) = (
            plan.clone(),
            source.clone(),
            options.clone(),
            progress.clone(),
            passed.clone(),
        );
        tasks.spawn(async move {
            let _permit = permit;
            let planned = &plan.runs[index];
            let record = run_one(
                &plan.missions[planned.mission],
                &plan.configs[planned.config],
                planned,
                &source,
                &options,
            )
            .await;
            let so_far = passed.fetch_add(
                usize::from(record.passed),
                std::sync::atomic::Ordering::Relaxed,
            ) + usize::from(record.passed);
            progress.inc(1);
            progress.set_message(format!(
                "({so_far} passed; last: {} {})",
                record.config, record.mission
            ));
            (index, record)
        });
    }
    let mut records: Vec<Option<RunRecord>> = vec![None; plan.runs.len()];
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok((index, record)) => records[index] = Some(record),
            Err(e) => progress.println(format!("a run stopped unexpectedly: {e}")),
        }
    }
    progress.finish_and_clear();
    records
        .into_iter()
        .enumerate()
        .map(|(index, record)| {
            record.unwrap_or_else(|| {
                let planned = &plan.runs[index];
                let mut record = RunRecord::blank(
                    &plan.configs[planned.config],
                    &plan.missions[planned.mission],
                    planned.run,
                );
                record.reasons = vec!["the run panicked; see the message above".into()];
                record
            })
        })
        .collect()
}

/// The order runs start in: mission by mission, and within a mission run by run, each under
/// every configuration. Runs of one mission share their first request (the same system
/// prompt and mission), so a server that reuses the prompt prefix of the request before (a
/// local server) or caches prefixes across requests (OpenAI) evaluates it once, not once per
/// configuration.
fn start_order(runs: &[PlannedRun]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| (runs[i].mission, runs[i].run, runs[i].config));
    order
}

/// Writes `config.json` into each configuration's transcript directory, so a replay knows
/// which compression spec the transcripts were recorded with.
pub(crate) fn write_config_files(plan: &Plan, out_dir: &Path) -> Result<(), String> {
    for config in &plan.configs {
        let dir = out_dir.join("transcripts").join(&config.label);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let text = serde_json::to_string_pretty(&ConfigFile {
            compression: config.compression.to_string(),
            agent: config.agent,
            reply: config.reply,
        })
        .map_err(|e| e.to_string())?;
        let path = dir.join("config.json");
        std::fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

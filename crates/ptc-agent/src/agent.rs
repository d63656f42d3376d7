//! [`Agent`] and its builder.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ptc_compression::history::{HistoryError, HistoryManager, HistoryPolicy};
use ptc_compression::{
    Compression, CompressionConfig, CompressionOptions, CompressionSetting, PricingKind,
    StrategyKind, Uncompressed,
};
use ptc_lisp::pr_str;
use ptc_lisp::{Limits, ToolSpec, Value};
use ptc_turn::{DEFAULT_MAX_TURNS, Message, Task};

/// How many levels of sub-agents may run below a top run unless the agent says otherwise.
pub const DEFAULT_MAX_DEPTH: u32 = 3;
use serde::Serialize;

use crate::custom_strategy::CustomStrategy;
use crate::llm::{Llm, RetryPolicy, Sampling};
use crate::prompt::{self, PromptInput, SystemPrompt};
use crate::prompt_custom::PromptCustomization;
use crate::registry::LlmRegistry;
use crate::tool::{AsyncTool, SyncToolAdapter};
use ptc_run::signature::{Mismatch, Signature, SignatureError};
use ptc_run::{ModelTurns, Rules, RunCore, RunSettings, Source, Start, runtime_for};

/// An agent: a mission, tools, input data and the settings of its loop. Run it with
/// [`Agent::run`] (see the [`crate`] documentation for the loop).
///
/// `Agent` is `Send + Sync` and cheap to clone (everything is behind one `Arc`), so one agent
/// can serve many concurrent runs.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ptc_agent::{Agent, ScriptedLlm};
///
/// let llm = ScriptedLlm::new(["```clojure\n(return (count data/users))\n```"]);
/// let agent = Agent::builder("Count the users")
///     .llm(llm)
///     .data(&serde_json::json!({"users": ["ann", "bo"]}))
///     .signature(":int")
///     .build()
///     .unwrap();
/// let step = agent.run().await.unwrap();
/// assert_eq!(step.value(), Some(&ptc_lisp::Value::Int(2)));
/// # });
/// ```
#[derive(Clone)]
pub struct Agent {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// The model (also in `settings`, where a sub-agent inherits it from).
    pub llm: Arc<dyn Llm>,
    /// The mission as written, with `{{name}}` placeholders.
    pub mission: String,
    pub tools: Vec<Arc<dyn AsyncTool>>,
    /// The specs of `tools`, in the same order.
    pub specs: Vec<ToolSpec>,
    pub data: BTreeMap<String, Value>,
    pub signature: Option<Signature>,
    /// What the output fields mean, by field name.
    pub field_descriptions: BTreeMap<String, String>,
    /// What the `data/` inputs mean, by name.
    pub context_descriptions: BTreeMap<String, String>,
    pub settings: Settings,
    pub system_prompt: SystemPrompt,
    /// Whether the model is its parent's (a sub-agent not given its own), so that as a tool it
    /// asks the model of the run that calls it, as an LLM tool does.
    pub follows_caller: bool,
}

impl Inner {
    /// What this agent's runs of `task` make of their programs' outcomes.
    pub(crate) fn rules(&self, task: &Task) -> Rules<'_> {
        Rules::for_run(self.signature.as_ref(), &self.settings.run, task.max_turns)
    }

    /// The core of a run of this agent on `task` from `start` at `now`, asking a model priced
    /// as `pricing`, its turns taken from a budget of `shared_turn_budget` turns its tree of
    /// runs shares, if it has one.
    pub(crate) fn run_core(
        &self,
        task: Task,
        start: Start,
        now: Instant,
        pricing: Option<PricingKind>,
        shared_turn_budget: Option<u32>,
    ) -> RunCore<'_> {
        let settings = &self.settings;
        // SS-001: a single-shot run is never compressed.
        let strategy: Box<dyn Compression> = if task.max_turns <= 1 {
            Box::new(Uncompressed)
        } else {
            settings.strategy(pricing)
        };
        let runtime = runtime_for(&settings.run.limits, &task);
        let rules = self.rules(&task);
        let source = Source::Model(ModelTurns {
            settings: &settings.run,
            strategy,
            render_limits: settings.render_limits(),
            history_policy: settings.history.is_some(),
            shared_turn_budget,
        });
        RunCore::new(task, start, now, runtime, rules, source)
    }
}

/// The options a sub-agent inherits from its parent unless it sets them itself.
#[derive(Clone)]
pub(crate) struct Settings {
    pub llm: Option<Arc<dyn Llm>>,
    pub max_turns: u32,
    pub compression: CompressionConfig,
    /// A strategy given as an implementation; it replaces `compression` when set.
    pub custom_compression: Option<CustomStrategy>,
    /// What shapes each run's programs, requests and answer: the run crate's settings.
    pub run: RunSettings,
    pub retry: RetryPolicy,
    pub prompt: PromptCustomization,
    pub history: Option<HistoryPolicy>,
    /// Models by name, for `llm_named` here, in sub-agents and in runs.
    pub registry: LlmRegistry,
    pub deadline: Option<Duration>,
    /// How many levels of sub-agents may run below a top run.
    pub max_depth: u32,
    /// Turns shared by a top run and all its sub-agents' runs.
    pub turn_budget: Option<u32>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            llm: None,
            max_turns: DEFAULT_MAX_TURNS,
            compression: CompressionConfig::default(),
            custom_compression: None,
            run: RunSettings::default(),
            retry: RetryPolicy::none(),
            prompt: PromptCustomization::default(),
            history: None,
            registry: LlmRegistry::default(),
            deadline: None,
            max_depth: DEFAULT_MAX_DEPTH,
            turn_budget: None,
        }
    }
}

impl Settings {
    /// The strategy a multi-turn run renders its history with, for a model priced as
    /// `pricing` (which the built-in strategies that compact by cost use).
    pub(crate) fn strategy(&self, pricing: Option<PricingKind>) -> Box<dyn Compression> {
        match &self.custom_compression {
            Some(custom) => custom.build(),
            None => self.compression.build_for(pricing),
        }
    }

    /// The size limits of the rendering.
    pub(crate) fn render_limits(&self) -> ptc_compression::RenderLimits {
        match &self.custom_compression {
            Some(custom) => custom.options().limits,
            None => self.compression.limits(),
        }
    }

    /// The compression in words, for logs.
    pub(crate) fn compression_text(&self) -> String {
        match &self.custom_compression {
            Some(custom) => custom.to_string(),
            None => self.compression.to_string(),
        }
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("Agent")
            .field("mission", &inner.mission)
            .field(
                "tools",
                &inner.specs.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .field("data", &inner.data.keys().collect::<Vec<_>>())
            .field(
                "signature",
                &inner.signature.as_ref().map(Signature::source),
            )
            .field("max_turns", &inner.settings.max_turns)
            .field("compression", &inner.settings.compression_text())
            .field("llm", &inner.llm.describe())
            .finish_non_exhaustive()
    }
}

/// Why an agent could not be built. Every message says what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// No model was given.
    #[error(
        "the agent has no model; give one with .llm(...), e.g. an OpenAiCompatible, an Anthropic or a ScriptedLlm"
    )]
    NoLlm,
    /// The output signature does not parse.
    #[error("the agent's signature: {0}")]
    Signature(SignatureError),
    /// A tool's signature does not parse.
    #[error("the signature of tool/{tool}: {error}")]
    ToolSignature {
        /// The tool's name, without `tool/`.
        tool: String,
        /// What is wrong with its signature.
        error: SignatureError,
    },
    /// A tool name that programs could not call.
    #[error("invalid tool name `{0}`: use letters, digits and - _ ? ! * only, e.g. get-weather")]
    ToolName(String),
    /// Two tools with one name.
    #[error("two tools are named {0}; tool names must be unique")]
    DuplicateTool(String),
    /// The input data could not be turned into `data/` values.
    #[error("invalid input data: {0}")]
    Data(String),
    /// Input data that does not match the signature's parameters.
    #[error("the input data does not match the signature's parameters: {}", join(.0))]
    Input(Vec<Mismatch>),
    /// Placeholders of the mission that neither the data nor the signature's parameters name.
    #[error(
        "the mission uses {} but the input data has no such key; add it to the data or declare \
         it as a parameter of the signature",
        .0.iter().map(|n| format!("{{{{{n}}}}}")).collect::<Vec<_>>().join(", ")
    )]
    UnknownPlaceholders(Vec<String>),
    /// `llm_named` names no model of the registry.
    #[error("{0}")]
    UnknownLlm(String),
    /// `max_turns` of 0.
    #[error("max_turns must be at least 1 (1 means a single program, no retries)")]
    NoTurns,
    /// A history policy that cannot work with this agent's system prompt.
    #[error("the history policy cannot be applied: {0}")]
    History(HistoryError),
    /// Names that are both a tool and an input (`tool/x` and `data/x`).
    #[error(
        "{} both a tool and an input; a program (and the model reading the first message) \
         could mistake one for the other, so rename the tool or the input",
        clash_names(.0)
    )]
    NameClash(Vec<String>),
    /// Field descriptions for fields the output signature does not have.
    #[error(
        "field descriptions name {} but the output signature {} has no such field; describe \
         only the fields of the signature's output map",
        .fields.join(", "),
        .signature.as_deref().map_or_else(|| "(none given)".to_string(), |s| format!("`{s}`"))
    )]
    UnknownField {
        /// The described names the output signature lacks.
        fields: Vec<String>,
        /// The agent's output signature as written, if it has one.
        signature: Option<String>,
    },
}

/// `x is` or `x and y are`, each name written `tool/x and data/x`.
pub(crate) fn clash_names(names: &[String]) -> String {
    let each: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match each.as_slice() {
        [one] => format!("{one} is"),
        [rest @ .., last] => format!("{} and {last} are", rest.join(", ")),
        [] => "nothing is".into(),
    }
}

/// The names of `tools` that are also input names.
pub(crate) fn name_clashes<'n>(
    specs: &[ToolSpec],
    inputs: impl IntoIterator<Item = &'n String>,
) -> Vec<String> {
    let mut clashes: Vec<String> = inputs
        .into_iter()
        .filter(|name| specs.iter().any(|s| &s.name == *name))
        .cloned()
        .collect();
    clashes.sort();
    clashes.dedup();
    clashes
}

fn join(mismatches: &[Mismatch]) -> String {
    mismatches
        .iter()
        .map(Mismatch::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Builds an [`Agent`]; start with [`Agent::builder`], or [`Agent::sub_agent`] to inherit a
/// parent's settings.
#[must_use]
pub struct AgentBuilder {
    mission: String,
    tools: Vec<Arc<dyn AsyncTool>>,
    data: BTreeMap<String, Value>,
    signature: Option<String>,
    field_descriptions: BTreeMap<String, String>,
    context_descriptions: BTreeMap<String, String>,
    /// A model of the registry asked for by name, found by `build`.
    llm_name: Option<String>,
    /// Set by `sub_agent`, cleared by giving a model.
    follows_caller: bool,
    settings: Settings,
    /// The first problem found while collecting options, reported by `build`.
    deferred: Option<BuildError>,
}

impl Agent {
    /// A builder for an agent with this mission. `{{name}}` placeholders in the mission are
    /// filled from the input data when the agent runs (strings as they are, other values in
    /// Clojure syntax).
    pub fn builder(mission: impl Into<String>) -> AgentBuilder {
        AgentBuilder {
            mission: mission.into(),
            tools: Vec::new(),
            data: BTreeMap::new(),
            signature: None,
            field_descriptions: BTreeMap::new(),
            context_descriptions: BTreeMap::new(),
            llm_name: None,
            follows_caller: false,
            settings: Settings::default(),
            deferred: None,
        }
    }

    /// A builder for a sub-agent with its own mission that inherits this agent's model, retry
    /// policy, sandbox limits, turn budget, compression, history policy, system-prompt
    /// customisation, reply token limit, temperature, sampling parameters, model registry and
    /// run deadline. Each can be overridden on the builder. Tools, data and signature are the
    /// sub-agent's own. Called as a tool ([`Agent::as_tool`]), a sub-agent that was not given
    /// a model of its own asks the model of the run that calls it, as an
    /// [`LlmTool`](crate::LlmTool) does: the model a run of the parent was given instead
    /// ([`RunOptions::with_llm`](crate::RunOptions::with_llm)) reaches its sub-agents too.
    pub fn sub_agent(&self, mission: impl Into<String>) -> AgentBuilder {
        AgentBuilder {
            settings: self.inner.settings.clone(),
            follows_caller: true,
            ..Agent::builder(mission)
        }
    }

    /// The system prompt sent on every turn, with its size.
    pub fn system_prompt(&self) -> &SystemPrompt {
        &self.inner.system_prompt
    }

    /// The model the agent asks (unless a run asks another).
    pub fn llm(&self) -> &Arc<dyn Llm> {
        &self.inner.llm
    }

    /// The models it (and its sub-agents) can name.
    pub fn llm_registry(&self) -> &LlmRegistry {
        &self.inner.settings.registry
    }

    /// The mission as written (placeholders unfilled).
    pub fn mission(&self) -> &str {
        &self.inner.mission
    }

    /// The output signature, if any.
    pub fn signature(&self) -> Option<&Signature> {
        self.inner.signature.as_ref()
    }

    /// The tools, as the model sees them, in the order they were added.
    pub fn tool_specs(&self) -> &[ToolSpec] {
        &self.inner.specs
    }

    /// The turn budget.
    pub fn max_turns(&self) -> u32 {
        self.inner.settings.max_turns
    }

    /// The reply token limit sent with every request.
    pub fn max_tokens(&self) -> u32 {
        self.inner.settings.run.max_tokens
    }

    /// The compression setting (off unless set).
    pub fn compression(&self) -> &CompressionConfig {
        &self.inner.settings.compression
    }

    /// The prompt-caching rules and prices of the model's provider, when known (see
    /// [`Llm::pricing`]): the default compression strategy compacts with them.
    pub fn pricing(&self) -> Option<PricingKind> {
        self.inner.llm.pricing()
    }

    /// The sandbox limits each program runs under.
    pub fn limits(&self) -> &Limits {
        &self.inner.settings.run.limits
    }

    /// The input data given when the agent was built.
    pub fn data(&self) -> &BTreeMap<String, Value> {
        &self.inner.data
    }

    /// What the output fields mean, by field name.
    pub fn field_descriptions(&self) -> &BTreeMap<String, String> {
        &self.inner.field_descriptions
    }

    /// What the `data/` inputs mean, by name.
    pub fn context_descriptions(&self) -> &BTreeMap<String, String> {
        &self.inner.context_descriptions
    }

    /// The core of a run of this agent on `task` (see [`Agent::task_for`]) from `start`
    /// ([`Start::new`], or a resumed run's from [`Agent::resumption`]), at `now`, as the
    /// agent's own runs build it: its compression strategy (none for a single-shot agent), its
    /// sandbox, the rules that judge its programs, its deadline counted from `now`, and the
    /// turn budget it shares with its sub-agents, if it has one. For a driver of its own:
    /// [`Agent::run_with`] drives the same core on tokio.
    ///
    /// A run driven by hand, with no async runtime: the model's replies come from a list.
    ///
    /// ```
    /// use std::time::Instant;
    ///
    /// use ptc_agent::{Agent, LlmResponse, RunOptions, ScriptedLlm};
    /// use ptc_run::{Action, Event, Start};
    /// use ptc_turn::Usage;
    ///
    /// // Only describes the model here: the replies below answer the requests.
    /// let agent = Agent::builder("Add up").llm(ScriptedLlm::new(Vec::<String>::new())).build().unwrap();
    /// let task = agent.task_for(&RunOptions::new()).unwrap();
    /// let mut core = agent.run_core(task, Start::new(), Instant::now());
    /// let mut replies = ["```clojure\n(def x 40)\n```", "```clojure\n(return (+ x 2))\n```"].into_iter();
    /// let mut event = Event::Next;
    /// loop {
    ///     event = match core.advance(event, Instant::now()) {
    ///         Action::Ask(_) => Event::Replied {
    ///             result: Ok(LlmResponse::text(replies.next().unwrap())),
    ///             spent: Usage::default(),
    ///         },
    ///         Action::Finished => break,
    ///         _ => Event::Next,
    ///     };
    /// }
    /// let step = core.into_step(std::time::Duration::ZERO);
    /// assert_eq!(step.value(), Some(&ptc_lisp::Value::Int(42)));
    /// assert_eq!(step.turns.len(), 2);
    /// ```
    pub fn run_core(&self, task: Task, start: Start, now: Instant) -> RunCore<'_> {
        let inner = &self.inner;
        let settings = &inner.settings;
        let core = inner.run_core(task, start, now, inner.llm.pricing(), settings.turn_budget);
        match settings.deadline {
            Some(limit) => core.with_deadline(now + limit, limit),
            None => core,
        }
    }
}

impl AgentBuilder {
    /// The model to ask (required).
    pub fn llm(self, llm: impl Llm + 'static) -> AgentBuilder {
        self.llm_arc(Arc::new(llm))
    }

    /// The model to ask, shared.
    pub fn llm_arc(mut self, llm: Arc<dyn Llm>) -> AgentBuilder {
        self.settings.llm = Some(llm);
        self.llm_name = None;
        self.follows_caller = false;
        self
    }

    /// The model of the registry called `name` (found by `build`, which fails with
    /// [`BuildError::UnknownLlm`] if there is none). The last of `llm` and `llm_named` wins.
    pub fn llm_named(mut self, name: impl Into<String>) -> AgentBuilder {
        self.llm_name = Some(name.into());
        self.follows_caller = false;
        self
    }

    /// Names for models: `llm_named` here, in sub-agents (which inherit the registry) and in
    /// runs ([`RunOptions::with_llm_named`](crate::RunOptions::with_llm_named)) picks from it.
    pub fn llm_registry(mut self, registry: LlmRegistry) -> AgentBuilder {
        self.settings.registry = registry;
        self
    }

    /// Adds a tool.
    pub fn tool(self, tool: impl AsyncTool + 'static) -> AgentBuilder {
        self.tool_arc(Arc::new(tool))
    }

    /// Adds a shared tool.
    pub fn tool_arc(mut self, tool: Arc<dyn AsyncTool>) -> AgentBuilder {
        self.tools.push(tool);
        self
    }

    /// Adds every tool of a sandbox registry (for example fixture tools).
    pub fn lisp_tools(mut self, tools: &ptc_lisp::Tools) -> AgentBuilder {
        for tool in SyncToolAdapter::all(tools) {
            self.tools.push(Arc::new(tool));
        }
        self
    }

    /// Adds input data: anything that serializes to a JSON object, whose keys become
    /// `data/<key>`. Later keys replace earlier ones.
    pub fn data<D: Serialize + ?Sized>(mut self, data: &D) -> AgentBuilder {
        match data_from_serialize(data) {
            Ok(entries) => self.data.extend(entries),
            Err(message) => {
                self.deferred.get_or_insert(BuildError::Data(message));
            }
        }
        self
    }

    /// Adds one input value as `data/<name>`.
    pub fn data_value(mut self, name: impl Into<String>, value: Value) -> AgentBuilder {
        self.data.insert(name.into(), value);
        self
    }

    /// The output signature (`OUTPUT` or `(param :type, ...) -> OUTPUT`, see
    /// [`Signature`]): `(return v)` is checked against it, and parameters against the input.
    pub fn signature(mut self, signature: impl Into<String>) -> AgentBuilder {
        self.signature = Some(signature.into());
        self
    }

    /// Describes fields of the output map (`field -> text`, `_` and `-` spelled as in the
    /// signature): each is listed under the expected output in the system prompt, and travels
    /// with the step to an agent run after it, where it describes that input. Every field
    /// named must be a field of the signature's output map (checked by `build`).
    pub fn field_descriptions<K: Into<String>, V: Into<String>>(
        mut self,
        descriptions: impl IntoIterator<Item = (K, V)>,
    ) -> AgentBuilder {
        self.field_descriptions
            .extend(descriptions.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// Describes `data/` inputs (`name -> text`): each description ends the input's line in
    /// the first message. Inputs given only at run time may be described too.
    pub fn context_descriptions<K: Into<String>, V: Into<String>>(
        mut self,
        descriptions: impl IntoIterator<Item = (K, V)>,
    ) -> AgentBuilder {
        self.context_descriptions
            .extend(descriptions.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    /// The most turns a run may take (default 5). 1 is single-shot: one program, no
    /// retries, no compression.
    pub fn max_turns(mut self, max_turns: u32) -> AgentBuilder {
        self.settings.max_turns = max_turns;
        self
    }

    /// History compression: `true` for the default strategy, `false` for none (the
    /// default), a [`ptc_compression::StrategyKind`], or a strategy with
    /// options.
    pub fn compression(mut self, setting: impl Into<CompressionSetting>) -> AgentBuilder {
        self.settings.compression = CompressionConfig::normalize(Some(setting.into()));
        self.settings.custom_compression = None;
        self
    }

    /// History compression as a parsed configuration, e.g. from
    /// `CompressionConfig::parse("single-user-coalesced?println_limit=10")`.
    pub fn compression_config(mut self, config: CompressionConfig) -> AgentBuilder {
        self.settings.compression = config;
        self.settings.custom_compression = None;
        self
    }

    /// History compression by a strategy of your own: any [`Compression`] implementation,
    /// rendering with the default options. It replaces a built-in strategy set before, as a
    /// built-in one set after replaces it; sub-agents inherit it. Single-shot runs are never
    /// compressed.
    pub fn compression_strategy(self, strategy: impl Compression + 'static) -> AgentBuilder {
        self.compression_strategy_with(Arc::new(strategy), CompressionOptions::default())
    }

    /// History compression by a strategy of your own with options: its rendering limits
    /// (`options.limits`, in the [`RenderOptions`](ptc_compression::RenderOptions) it is given)
    /// and its activation thresholds (`activate_after_turns`, `activate_above_tokens`: the full
    /// history is sent until one is crossed). `failed_turns` and `window` belong to the
    /// built-in strategies and are not used.
    pub fn compression_strategy_with(
        mut self,
        strategy: Arc<dyn Compression>,
        options: CompressionOptions,
    ) -> AgentBuilder {
        self.settings.custom_compression = Some(CustomStrategy::new(strategy, options));
        self.settings.compression = CompressionConfig {
            strategy: None,
            options,
        };
        self
    }

    /// The sandbox limits of each program (time, steps, memory, tool calls, output).
    pub fn limits(mut self, limits: Limits) -> AgentBuilder {
        self.settings.run.limits = limits;
        self
    }

    /// How the agent retries a model call that failed transiently (none by default: the HTTP
    /// providers retry on their own; this applies to any [`Llm`]).
    pub fn retry_policy(mut self, retry: RetryPolicy) -> AgentBuilder {
        self.settings.retry = retry;
        self
    }

    /// Text appended to the generated system prompt, after a blank line.
    pub fn system_prompt_extra(mut self, text: impl Into<String>) -> AgentBuilder {
        self.settings.prompt.extra = Some(text.into());
        self
    }

    /// The most characters of the system prompt sent (none by default, so the generated
    /// prompt is sent whole). A longer prompt, after every other prompt option, is cut to its
    /// first `max_chars` characters, followed by a note saying it was cut, and a warning is
    /// logged.
    pub fn prompt_limit(mut self, limit: crate::prompt_limit::PromptLimit) -> AgentBuilder {
        self.settings.prompt.limit = Some(limit);
        self
    }

    /// Text put before the generated system prompt, followed by a blank line (a role, the
    /// house rules).
    pub fn system_prompt_prefix(mut self, text: impl Into<String>) -> AgentBuilder {
        self.settings.prompt.prefix = Some(text.into());
        self
    }

    /// The whole system prompt, used as given instead of the generated one: the prefix, the
    /// extra text and the section replacements no longer apply (a
    /// [`map_system_prompt`](Self::map_system_prompt) function still does). The prompt must
    /// then tell the model everything: the reply format, `return`/`fail`, the expected output.
    pub fn replace_system_prompt(mut self, text: impl Into<String>) -> AgentBuilder {
        self.settings.prompt.replacement = Some(text.into());
        self
    }

    /// A function from the system prompt built from the other settings to the one sent, for
    /// changes the other options cannot make (rewording a rule, removing a line). It is
    /// called once, by `build`.
    pub fn map_system_prompt(
        mut self,
        map: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> AgentBuilder {
        self.settings.prompt.map = Some(Arc::new(map));
        self
    }

    /// How the model hands over its program: in a fenced block (the default) or as a call of
    /// the native tool `run_program` ([`ReplyForm::ToolCall`](ptc_run::ReplyForm::ToolCall)),
    /// which every request then offers; the system prompt says which.
    pub fn reply_form(mut self, form: ptc_run::ReplyForm) -> AgentBuilder {
        self.settings.run.reply_form = form;
        self
    }

    /// The "Your reply" section (the reply format: one program in a ```` ```clojure ````
    /// block) replaced by `text`; an empty text leaves the section out. Start from
    /// [`default_reply_format`](crate::default_reply_format).
    pub fn reply_format_section(mut self, text: impl Into<String>) -> AgentBuilder {
        self.settings.prompt.reply_format = Some(text.into());
        self
    }

    /// The "Language reference" section replaced by `text`, e.g. a shorter one for a small
    /// context window; an empty text leaves it out. Start from
    /// [`default_language_reference`](crate::default_language_reference).
    pub fn language_reference_section(mut self, text: impl Into<String>) -> AgentBuilder {
        self.settings.prompt.language_reference = Some(text.into());
        self
    }

    /// Keeps the messages of every request within budgets (summaries, token and message
    /// limits). It applies to what the run renders: the full history when compression is off
    /// (or single-shot), the strategy's messages when it is on, so the two combine: the
    /// strategy condenses the turns, then the policy trims or summarizes its messages (e.g.
    /// the failed-turn pairs or per-turn pairs that follow its first user message). The first
    /// user message (the mission, or the strategy's summary that starts with it) is always
    /// kept, and room is reserved for it in `max_tokens`; summaries are written by
    /// the agent's model.
    pub fn history_policy(mut self, policy: HistoryPolicy) -> AgentBuilder {
        self.settings.history = Some(policy);
        self
    }

    /// The most tokens each reply may have, sent with every request (default
    /// [`DEFAULT_MAX_TOKENS`](crate::llm::DEFAULT_MAX_TOKENS), 4096). A reply that reaches it is cut off: the turn records
    /// it, and the model is told to write a shorter program. History summaries are held to it
    /// too.
    pub fn max_tokens(mut self, max_tokens: u32) -> AgentBuilder {
        self.settings.run.max_tokens = max_tokens;
        self
    }

    /// The sampling temperature (the provider's default otherwise).
    pub fn temperature(mut self, temperature: f32) -> AgentBuilder {
        self.settings.run.temperature = Some(temperature);
        self
    }

    /// The other sampling parameters of every model request (top-p, stop sequences, seed,
    /// response format, end-user id), passed to the providers that accept them; a provider
    /// that has no such parameter fails the request rather than drop it. None by default.
    pub fn sampling(mut self, sampling: Sampling) -> AgentBuilder {
        self.settings.run.sampling = sampling;
        self
    }

    /// The longest a whole run may take, wall-clock, from its start (or its resume) to its
    /// end: model requests, retries, programs and the sub-agents they call together. A run
    /// still going then ends with the failure kind `timeout`, keeping the turns completed so
    /// far; sub-agents running then end the same way. A sub-agent's own deadline can only
    /// shorten the one it inherits. None by default.
    pub fn deadline(mut self, deadline: Duration) -> AgentBuilder {
        self.settings.deadline = Some(deadline);
        self
    }

    /// How many levels of sub-agents may run below a run of this agent: 1 lets its programs
    /// call sub-agents but not theirs. A sub-agent that would run deeper fails at once with
    /// `max_depth_exceeded`, an error its caller's program reads. 3 by default; the top run's
    /// setting holds for the whole tree.
    pub fn max_depth(mut self, max_depth: u32) -> AgentBuilder {
        self.settings.max_depth = max_depth;
        self
    }

    /// The most turns a run of this agent and all the sub-agent runs below it may take
    /// together. Each turn of any of them takes one; a run that finds none left ends with
    /// `turn_budget_exhausted`. No limit by default (each run is still bounded by its
    /// `max_turns`); the top run's setting holds for the whole tree.
    pub fn turn_budget(mut self, turns: u32) -> AgentBuilder {
        self.settings.turn_budget = Some(turns);
        self
    }

    /// The most a run may keep between turns: the estimated size of its definitions (the
    /// `user/` namespace) after a turn, in bytes. A turn that would keep more fails with the
    /// error kind `memory_kept_limit` and its definitions are discarded; its feedback names
    /// the largest definitions and asks the model to keep less. 16 MiB by default. The
    /// sandbox's `Limits::max_memory_bytes` bounds what one program builds; this bounds what
    /// stays alive across the run.
    pub fn max_kept_bytes(mut self, bytes: usize) -> AgentBuilder {
        self.settings.run.max_kept_bytes = bytes;
        self
    }

    /// Rounds every float of the value a run returns (in collections too) to `digits`
    /// decimals, half away from zero, after the value is checked against the signature. The
    /// value is kept as the program computed it by default: rounding changes data the host
    /// may compute with, so it is asked for, not assumed.
    pub fn float_precision(mut self, digits: u32) -> AgentBuilder {
        self.settings.run.float_precision = Some(digits);
        self
    }

    /// Checks everything and builds the agent. Signature errors (the agent's and the tools')
    /// are reported here with their line and column, not when the agent runs.
    pub fn build(mut self) -> Result<Agent, BuildError> {
        if let Some(error) = self.deferred {
            return Err(error);
        }
        if let Some(name) = &self.llm_name {
            let llm = self
                .settings
                .registry
                .resolve(name)
                .map_err(BuildError::UnknownLlm)?;
            self.settings.llm = Some(llm);
        }
        let Some(llm) = self.settings.llm.clone() else {
            return Err(BuildError::NoLlm);
        };
        if self.settings.max_turns == 0 {
            return Err(BuildError::NoTurns);
        }
        let signature = self
            .signature
            .as_deref()
            .map(Signature::parse)
            .transpose()
            .map_err(BuildError::Signature)?;
        let mut specs: Vec<ToolSpec> = Vec::with_capacity(self.tools.len());
        for tool in &self.tools {
            let name = tool.name();
            if !valid_tool_name(name) {
                return Err(BuildError::ToolName(name.to_string()));
            }
            if specs.iter().any(|s| s.name == name) {
                return Err(BuildError::DuplicateTool(name.to_string()));
            }
            let spec = tool.spec().map_err(|error| BuildError::ToolSignature {
                tool: name.to_string(),
                error,
            })?;
            specs.push(spec);
        }
        let params = signature
            .iter()
            .flat_map(|s| s.params().iter().map(|p| &p.name));
        let clashes = name_clashes(&specs, self.data.keys().chain(params));
        if !clashes.is_empty() {
            return Err(BuildError::NameClash(clashes));
        }
        if let Some(signature) = &signature {
            // Parameters given now must have the right types; missing ones may come at run time.
            signature
                .validate_given_input(|name| self.data.get(name))
                .map_err(BuildError::Input)?;
        }
        let unknown: Vec<String> = placeholders(&self.mission)
            .into_iter()
            .filter(|name| {
                !self.data.contains_key(name)
                    && !signature
                        .as_ref()
                        .is_some_and(|s| s.params().iter().any(|p| &p.name == name))
            })
            .collect();
        if !unknown.is_empty() {
            return Err(BuildError::UnknownPlaceholders(unknown));
        }
        let unknown_fields: Vec<String> = self
            .field_descriptions
            .keys()
            .filter(|name| {
                signature
                    .as_ref()
                    .is_none_or(|s| s.output_field(name).is_none())
            })
            .cloned()
            .collect();
        if !unknown_fields.is_empty() {
            return Err(BuildError::UnknownField {
                fields: unknown_fields,
                signature: signature.as_ref().map(|s| s.source().to_string()),
            });
        }
        let system_prompt = prompt::build(&PromptInput {
            max_turns: self.settings.max_turns,
            signature: signature.as_ref(),
            field_descriptions: &self.field_descriptions,
            custom: &self.settings.prompt,
            program_by_tool_call: self.settings.run.reply_form == ptc_run::ReplyForm::ToolCall,
            compacted_history: self.settings.custom_compression.is_none()
                && matches!(
                    self.settings.compression.strategy,
                    Some(StrategyKind::SingleUserCoalesced | StrategyKind::Aggressive)
                ),
        });
        if let Some(policy) = self.settings.history {
            HistoryManager::new(policy)
                .validate(&[Message::system(&system_prompt.text)])
                .map_err(BuildError::History)?;
        }
        Ok(Agent {
            inner: Arc::new(Inner {
                llm,
                mission: self.mission,
                tools: self.tools,
                specs,
                data: self.data,
                signature,
                field_descriptions: self.field_descriptions,
                context_descriptions: self.context_descriptions,
                settings: self.settings,
                system_prompt,
                follows_caller: self.follows_caller,
            }),
        })
    }
}

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '?' | '!' | '*' | '.'))
}

/// Input data from anything serializable to a JSON object. It goes through JSON text, which
/// keeps the order of struct fields and map entries (a `serde_json::Value` has sorted keys).
pub(crate) fn data_from_serialize<D: Serialize + ?Sized>(
    data: &D,
) -> Result<Vec<(String, Value)>, String> {
    let text =
        serde_json::to_string(data).map_err(|e| format!("it could not be serialized: {e}"))?;
    let value = ptc_lisp::from_json_str(&text).map_err(|e| e.message)?;
    match value {
        Value::Map(_) => ptc_lisp::data_entries(&value).map_err(|e| e.message),
        other => Err(format!(
            "it must serialize to a JSON object whose keys name the data/ values, not to {}",
            match other {
                Value::Nil => "null",
                Value::Bool(_) => "a boolean",
                Value::Int(_) | Value::Float(_) | Value::Big(_) => "a number",
                Value::Str(_) => "a string",
                _ => "an array",
            }
        )),
    }
}

/// The names of the `{{name}}` placeholders of a mission, in order of first appearance.
pub(crate) fn placeholders(mission: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = mission;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            break;
        };
        let name = after[..close].trim();
        if is_placeholder_name(name) && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        rest = &after[close + 2..];
    }
    names
}

fn is_placeholder_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '?' | '!' | '*' | '.'))
}

/// The mission with its placeholders filled from `data`: strings as they are, other values in
/// Clojure syntax. Names without data are listed in the error.
///
/// ```
/// use ptc_lisp::Value;
/// use std::collections::BTreeMap;
/// let data = BTreeMap::from([
///     ("city".to_string(), Value::string("Oslo")),
///     ("days".to_string(), Value::Int(3)),
/// ]);
/// assert_eq!(
///     ptc_agent::expand_mission("Weather in {{city}} for {{ days }} days", &data).unwrap(),
///     "Weather in Oslo for 3 days"
/// );
/// assert_eq!(
///     ptc_agent::expand_mission("Hi {{who}}", &data).unwrap_err(),
///     vec!["who".to_string()]
/// );
/// ```
pub fn expand_mission(
    mission: &str,
    data: &BTreeMap<String, Value>,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(mission.len());
    let mut missing: Vec<String> = Vec::new();
    let mut rest = mission;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            break;
        };
        let name = after[..close].trim();
        out.push_str(&rest[..open]);
        if !is_placeholder_name(name) {
            out.push_str(&rest[open..open + 2 + close + 2]);
        } else {
            match data.get(name) {
                Some(Value::Str(s)) => out.push_str(s),
                Some(value) => out.push_str(&pr_str(value)),
                None => {
                    if !missing.iter().any(|m| m == name) {
                        missing.push(name.to_string());
                    }
                }
            }
        }
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn placeholders_are_found_once_in_order() {
        assert_eq!(
            placeholders("{{b}} and {{ a }} and {{b}}, not {{two words}} or {{"),
            vec!["b".to_string(), "a".to_string()]
        );
    }

    #[test]
    fn text_that_is_not_a_placeholder_stays() {
        let data = BTreeMap::new();
        assert_eq!(
            expand_mission("keep {{two words}} and {{ unclosed", &data),
            Ok("keep {{two words}} and {{ unclosed".to_string())
        );
    }

    #[test]
    fn non_string_values_are_written_in_clojure_syntax() {
        let data = BTreeMap::from([(
            "ids".to_string(),
            Value::vector([Value::Int(1), Value::Int(2)]),
        )]);
        assert_eq!(
            expand_mission("Fetch {{ids}}.", &data),
            Ok("Fetch [1 2].".to_string())
        );
    }

    #[test]
    fn data_must_be_an_object() {
        assert_eq!(
            data_from_serialize(&[1, 2]),
            Err(
                "it must serialize to a JSON object whose keys name the data/ values, not to an \
                 array"
                    .to_string()
            )
        );
    }
}

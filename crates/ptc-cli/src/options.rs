//! The options the subcommands share, each defined once for the command line and the
//! configuration file (`ptc.toml`).
//!
//! Every option is an `Option`: `None` means "not given here". A group from the command line
//! (flags, then environment variables, as clap reads them) is layered over the same group from
//! the configuration file with [`or`](InputOptions::or), and defaults apply to what is left.
//! Adding an option is adding a field to its group and using it where the group is applied.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ptc_agent::llm::{Llm, ProviderOptions, RetryPolicy, parse_llm_spec_with};
use ptc_agent::{AgentBuilder, HumanDuration, PromptLimit, ReplyForm, Sampling};
use ptc_compression::history::{HistoryPolicy, SummaryStrategy};
use ptc_compression::{CompressionConfig, PricingProfile};
use ptc_lisp::Limits;

/// The file looked for in the working directory when `--config` is not given.
pub const FILE_NAME: &str = "ptc.toml";
use ptc_mcp::{McpConfig, ServerConfig};
use serde::Deserialize;

/// Declares an option group (every field an `Option`) with `or`, which fills the fields not
/// given from another group of the same kind.
macro_rules! option_group {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident : Option<$ty:ty>, )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$field_meta])* pub $field: Option<$ty>, )*
        }

        impl $name {
            /// These options, with those not given taken from `lower`.
            pub fn or(self, lower: $name) -> $name {
                $name { $( $field: self.$field.or(lower.$field), )* }
            }
        }
    };
}

option_group! {
    /// The input data and the tools of a program or a run.
    #[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    pub struct InputOptions {
        /// Input data: a JSON object whose top-level keys become `data/<key>`.
        #[arg(long, value_name = "FILE.json")]
        pub data: Option<PathBuf>,
        /// Fixture tools: `{"name": {"description": "...", "params": ["a"], "returns": <json>}}`.
        #[arg(long, value_name = "FILE.json")]
        pub tools: Option<PathBuf>,
    }
}

impl InputOptions {
    /// Relative paths taken from a file in `dir` resolve against `dir`.
    pub fn relative_to(self, dir: &Path) -> InputOptions {
        InputOptions {
            data: self.data.map(|p| dir.join(p)),
            tools: self.tools.map(|p| dir.join(p)),
        }
    }
}

option_group! {
    /// The sandbox limits of each program.
    #[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    pub struct LimitOptions {
        /// Wall-clock limit for evaluating one program, in milliseconds (default 1000; a debug
        /// build runs programs several times slower than a release build).
        #[arg(long, value_name = "MS")]
        pub timeout_ms: Option<u64>,
        /// Memory budget for the values a program builds, in bytes.
        #[arg(long, value_name = "BYTES")]
        pub max_memory: Option<usize>,
        /// Evaluation step budget (function calls, loop iterations, elements processed).
        #[arg(long, value_name = "N")]
        pub max_steps: Option<u64>,
        /// The most tool calls one program may make.
        #[arg(long, value_name = "N")]
        pub max_tool_calls: Option<usize>,
        /// The most bytes one program may print.
        #[arg(long, value_name = "BYTES")]
        pub max_output: Option<usize>,
    }
}

impl LimitOptions {
    /// The default limits with the ones given here.
    pub fn limits(&self) -> Limits {
        let mut limits = Limits::default();
        if let Some(ms) = self.timeout_ms {
            limits.timeout = Duration::from_millis(ms);
        }
        if let Some(bytes) = self.max_memory {
            limits.max_memory_bytes = bytes;
        }
        if let Some(steps) = self.max_steps {
            limits.max_steps = steps;
        }
        if let Some(calls) = self.max_tool_calls {
            limits.max_tool_calls = calls;
        }
        if let Some(bytes) = self.max_output {
            limits.max_output_bytes = bytes;
        }
        limits
    }
}

/// A duration written as people write them: `500ms`, `5s`, `2m 30s`, `1h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(pub Duration);

impl FromStr for Span {
    type Err = String;

    fn from_str(text: &str) -> Result<Span, String> {
        humantime::parse_duration(text.trim())
            .map(Span)
            .map_err(|e| format!("`{text}` is not a duration ({e}); write e.g. 500ms, 30s or 2m"))
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Span, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        HumanDuration(self.0).fmt(f)
    }
}

/// A reply form read from its text form in a configuration file.
fn reply_form<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ReplyForm>, D::Error> {
    let text = String::deserialize(deserializer)?;
    text.parse().map(Some).map_err(serde::de::Error::custom)
}

/// A header for the model's requests, `NAME: VALUE` on the command line, a key of the
/// `headers` table in a configuration file. `Debug` leaves the value out: it may be a
/// credential.
#[derive(Clone, PartialEq)]
pub struct Header {
    pub name: String,
    pub value: String,
}

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Header({}: <redacted>)", self.name)
    }
}

impl std::str::FromStr for Header {
    type Err = String;

    fn from_str(text: &str) -> Result<Header, String> {
        match text.split_once(':') {
            Some((name, value)) if !name.trim().is_empty() => Ok(Header {
                name: name.trim().to_string(),
                value: value.trim().to_string(),
            }),
            _ => Err("expected 'NAME: VALUE', e.g. 'X-Title: My app'".into()),
        }
    }
}

/// The `headers` table of a configuration file: header names and their values.
fn header_table<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<Header>>, D::Error> {
    let table = std::collections::BTreeMap::<String, String>::deserialize(deserializer)?;
    Ok(Some(
        table
            .into_iter()
            .map(|(name, value)| Header { name, value })
            .collect(),
    ))
}

/// A compression setting read from its text form in a configuration file.
fn compression<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<CompressionConfig>, D::Error> {
    let text = String::deserialize(deserializer)?;
    text.parse().map(Some).map_err(serde::de::Error::custom)
}

option_group! {
    /// The model and the settings of an agent run.
    #[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    pub struct AgentOptions {
        /// The model: `openai:MODEL`, `anthropic:MODEL`, `openai-compatible:URL:MODEL` or
        /// `replay:FILE.jsonl`. Keys come from OPENAI_API_KEY, ANTHROPIC_API_KEY and
        /// OPENAI_COMPATIBLE_API_KEY; OPENAI_BASE_URL and ANTHROPIC_BASE_URL move `openai:` and
        /// `anthropic:` to another host.
        #[arg(long, value_name = "SPEC", env = "PTC_LLM")]
        pub llm: Option<String>,
        /// The longest one model request may take before it is abandoned (and retried), e.g.
        /// `30s` [default: 120s].
        #[arg(long, value_name = "DURATION", env = "PTC_REQUEST_TIMEOUT")]
        pub request_timeout: Option<Span>,
        /// A header sent with every model request, for gateways and proxies: 'NAME: VALUE'
        /// (e.g. 'api-key: ...', 'X-Title: My app'); it replaces the provider's header of the
        /// same name. Repeatable; given here, these replace the `headers` of ptc.toml.
        #[arg(long = "header", value_name = "'NAME: VALUE'")]
        #[serde(default, deserialize_with = "header_table")]
        pub headers: Option<Vec<Header>>,
        /// How many times a failed model request is sent again (timeouts, connection errors,
        /// rate limits, overloaded servers) [default: 3].
        #[arg(long, value_name = "N", env = "PTC_RETRIES")]
        pub retries: Option<u32>,
        /// Ask an OpenAI-compatible server for streamed replies, so that a request given up on
        /// (timed out, or its run stopped) stops the server's work on it instead of leaving it
        /// writing the reply for nobody; use it with local servers that serve one request at a
        /// time. Some servers report no token usage for streamed replies [default: false].
        #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", env = "PTC_STREAM")]
        pub stream: Option<bool>,
        /// The longest the whole run may take, e.g. `10m`; it then fails with `timeout`
        /// [default: none].
        #[arg(long, value_name = "DURATION", env = "PTC_DEADLINE")]
        pub deadline: Option<Span>,
        /// The most turns the run may take [default: 5].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        pub max_turns: Option<u32>,
        /// The most the run may keep between turns (its definitions), in estimated bytes; a
        /// turn that would keep more fails and is told to keep less [default: 16 MiB].
        #[arg(long, value_name = "BYTES")]
        pub max_kept_bytes: Option<usize>,
        /// Round the floats of the returned value to N decimals [default: as computed].
        #[arg(long, value_name = "N")]
        pub float_precision: Option<u32>,
        /// History compression: `off` (the default), `on` (the default strategy,
        /// append-compact), or a strategy with options such as
        /// `single-user-coalesced?println_limit=10`.
        #[arg(long, value_name = "SPEC")]
        #[serde(default, deserialize_with = "compression")]
        pub compression: Option<CompressionConfig>,
        /// The prompt-caching rules and prices the run's bill is modelled under: `anthropic`,
        /// `openai` or `ideal`, optionally with prices such as `openai?read=0.25` [default: the
        /// provider's; all three in the closing summary].
        #[arg(long, value_name = "PROFILE")]
        pub pricing: Option<PricingProfile>,
        /// The shape of the value to return, e.g. `{total :float, ids [:int]}`.
        #[arg(long, value_name = "SIG")]
        pub signature: Option<String>,
        /// The sampling temperature [default: the provider's].
        #[arg(long, value_name = "T")]
        pub temperature: Option<f32>,
        /// Nucleus sampling, above 0 and at most 1 [default: the provider's].
        #[arg(long, value_name = "P")]
        pub top_p: Option<f32>,
        /// A seed for sampling (OpenAI-compatible servers) [default: none].
        #[arg(long, value_name = "N")]
        pub seed: Option<u64>,
        /// A text that ends the model's reply; repeat for several [default: none].
        #[arg(long, value_name = "TEXT")]
        pub stop: Option<Vec<String>>,
        /// Whether the model may call several native tools in one reply (LLM tools, `--reply
        /// tool-call`); sent only with requests that offer tools [default: the provider's,
        /// true].
        #[arg(long, value_name = "BOOL")]
        pub parallel_tool_calls: Option<bool>,
        /// The most tokens each reply may have; a reply cut off there is flagged, and the model
        /// is told to write a shorter program [default: 4096].
        #[arg(
            long = "max-tokens",
            id = "reply_max_tokens",
            value_name = "N",
            value_parser = clap::value_parser!(u32).range(1..)
        )]
        pub max_tokens: Option<u32>,
        /// How the model sends its program: `fenced` (a ```clojure block in its reply) or
        /// `tool-call` (a call of the native tool `run_program`) [default: fenced].
        #[arg(long, value_name = "FORM")]
        #[serde(default, deserialize_with = "reply_form")]
        pub reply: Option<ReplyForm>,
        /// Text added to the end of the generated system prompt.
        #[arg(long, value_name = "TEXT")]
        pub system_prompt_extra: Option<String>,
        /// Text put before the generated system prompt.
        #[arg(long, value_name = "TEXT")]
        pub system_prompt_prefix: Option<String>,
        /// The most characters of the system prompt sent: a longer one is cut there and ends
        /// with a note saying so, and a warning is logged [default: none; the generated prompt
        /// is about 4,500 characters].
        #[arg(long, value_name = "CHARS")]
        pub prompt_limit: Option<usize>,
        /// A file whose text is the whole system prompt, instead of the generated one.
        #[arg(long, value_name = "FILE")]
        pub system_prompt_file: Option<PathBuf>,
        /// LLM tools, each answered by one request to the run's model:
        /// `{"name": {"signature": "(text :string) -> {label :keyword}", "prompt": "... {{text}}"}}`.
        #[arg(long, value_name = "FILE.json")]
        pub llm_tools: Option<PathBuf>,
    }
}

impl AgentOptions {
    /// The model named here (it is required), with the request timeout and retries given here.
    pub fn llm(&self) -> Result<Arc<dyn Llm>, String> {
        let Some(spec) = &self.llm else {
            return Err(
                "no model: give one with --llm SPEC (e.g. --llm anthropic:claude-sonnet-4-5), \
                 PTC_LLM, or `llm` in the [agent] table of ptc.toml"
                    .into(),
            );
        };
        let provider = ProviderOptions {
            request_timeout: self.request_timeout.map(|s| s.0),
            retry: self.retries.map(|max_retries| RetryPolicy {
                max_retries,
                ..RetryPolicy::default()
            }),
            stream: self.stream.unwrap_or(false),
            headers: self
                .headers
                .iter()
                .flatten()
                .map(|h| (h.name.clone(), h.value.clone()))
                .collect(),
        };
        parse_llm_spec_with(spec, &provider).map_err(|e| e.to_string())
    }

    /// The builder with `llm` as its model (see [`AgentOptions::llm`]) and every other option
    /// given here.
    pub fn apply(&self, builder: AgentBuilder, llm: Arc<dyn Llm>) -> Result<AgentBuilder, String> {
        self.apply_settings(builder.llm_arc(llm))
    }

    /// The builder with every option given here but the model.
    pub fn apply_settings(&self, mut builder: AgentBuilder) -> Result<AgentBuilder, String> {
        if let Some(n) = self.max_turns {
            builder = builder.max_turns(n);
        }
        if let Some(bytes) = self.max_kept_bytes {
            builder = builder.max_kept_bytes(bytes);
        }
        if let Some(digits) = self.float_precision {
            builder = builder.float_precision(digits);
        }
        if let Some(config) = self.compression {
            builder = builder.compression_config(config);
        }
        if let Some(signature) = &self.signature {
            builder = builder.signature(signature);
        }
        if let Some(t) = self.temperature {
            if !t.is_finite() {
                return Err(format!("--temperature must be a number, not {t}"));
            }
            builder = builder.temperature(t);
        }
        if self.top_p.is_some()
            || self.seed.is_some()
            || self.stop.is_some()
            || self.parallel_tool_calls.is_some()
        {
            builder = builder.sampling(Sampling {
                top_p: self.top_p,
                seed: self.seed,
                stop: self.stop.clone().unwrap_or_default(),
                parallel_tool_calls: self.parallel_tool_calls,
                ..Sampling::default()
            });
        }
        if let Some(n) = self.max_tokens {
            builder = builder.max_tokens(n);
        }
        if let Some(form) = self.reply {
            builder = builder.reply_form(form);
        }
        if let Some(text) = &self.system_prompt_extra {
            builder = builder.system_prompt_extra(text);
        }
        if let Some(text) = &self.system_prompt_prefix {
            builder = builder.system_prompt_prefix(text);
        }
        if let Some(path) = &self.system_prompt_file {
            let text = std::fs::read_to_string(path).map_err(|e| {
                format!(
                    "--system-prompt-file {}: cannot be read: {e}",
                    path.display()
                )
            })?;
            builder = builder.replace_system_prompt(text);
        }
        if let Some(max_chars) = self.prompt_limit {
            builder = builder.prompt_limit(PromptLimit { max_chars });
        }
        if let Some(deadline) = self.deadline {
            builder = builder.deadline(deadline.0);
        }
        if let Some(path) = &self.llm_tools {
            for tool in crate::llm_tools::read(path)? {
                builder = builder.tool(tool);
            }
        }
        Ok(builder)
    }
}

/// A summary strategy in words: `whole`, `last:N` (the last N messages), `chunked:N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary(pub SummaryStrategy);

impl FromStr for Summary {
    type Err = String;

    fn from_str(text: &str) -> Result<Summary, String> {
        let (name, n) = text.trim().split_once(':').unwrap_or((text.trim(), ""));
        let count = || {
            n.parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("`{text}` needs a count of messages, e.g. {name}:8"))
        };
        Ok(Summary(match name {
            "whole" if n.is_empty() => SummaryStrategy::WholeHistory,
            "last" => SummaryStrategy::FromLastNMessages(count()?),
            "chunked" => SummaryStrategy::Chunked(count()?),
            _ => {
                return Err(format!(
                    "unknown summary strategy `{text}`; use whole, last:N or chunked:N"
                ));
            }
        }))
    }
}

impl<'de> Deserialize<'de> for Summary {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Summary, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

option_group! {
    /// The budgets of the messages each request sends (a history policy).
    #[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    pub struct HistoryOptions {
        /// Keep each request within about this many tokens, dropping the oldest messages
        /// after the mission.
        #[arg(long = "history-max-tokens", value_name = "N")]
        pub max_tokens: Option<usize>,
        /// Send at most this many messages.
        #[arg(long = "history-max-messages", value_name = "N")]
        pub max_messages: Option<usize>,
        /// Replace older messages with a summary the model writes: `whole`, `last:N` or
        /// `chunked:N`.
        #[arg(long = "history-summary", value_name = "STRATEGY")]
        pub summary: Option<Summary>,
    }
}

impl HistoryOptions {
    /// The policy these options make, if any is given.
    pub fn policy(&self) -> Option<HistoryPolicy> {
        if self.max_tokens.is_none() && self.max_messages.is_none() && self.summary.is_none() {
            return None;
        }
        Some(HistoryPolicy {
            summarize: self.summary.map(|s| s.0),
            max_tokens: self.max_tokens,
            max_messages: self.max_messages,
            ..HistoryPolicy::default()
        })
    }
}

/// The variable naming `mcpServers` files when no server is given on the command line
/// (several are separated as in `PATH`).
pub const MCP_CONFIG_ENV: &str = "PTC_MCP_CONFIG";

/// The MCP servers whose tools programs call as `tool/NAME`.
///
/// Unlike the other groups, this one is layered as a whole: the set of servers is one
/// setting, so servers named on the command line replace those of `PTC_MCP_CONFIG`, which
/// replace those of the configuration file (rather than adding to them).
#[derive(Debug, Clone, Default, PartialEq, Args, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct McpOptions {
    /// An MCP server to spawn, as one string of shell words: 'COMMAND ARGS...' (e.g.
    /// 'npx -y @modelcontextprotocol/server-filesystem .'). Its tools become tool/NAME.
    /// Repeatable.
    #[arg(long = "mcp", value_name = "'COMMAND ARGS...'")]
    pub commands: Option<Vec<String>>,
    /// MCP servers from a JSON file in the `mcpServers` format of MCP hosts (`command`,
    /// `args`, `env`, `cwd`, or `url` and `headers`; `timeout` in seconds). Repeatable
    /// [env: PTC_MCP_CONFIG=].
    #[arg(long = "mcp-config", value_name = "FILE.json")]
    pub config_files: Option<Vec<PathBuf>>,
    /// Servers written in the configuration file itself, `[mcp.servers.NAME]` tables in the
    /// `mcpServers` format.
    #[arg(skip)]
    pub servers: Option<serde_json::Map<String, serde_json::Value>>,
    /// The configuration file the options were read from: relative paths of `servers` are
    /// relative to its folder, and its name prefixes their errors.
    #[arg(skip)]
    #[serde(skip)]
    pub file: Option<PathBuf>,
}

impl McpOptions {
    /// Whether any server is named here.
    pub fn is_given(&self) -> bool {
        self.commands.is_some() || self.config_files.is_some() || self.servers.is_some()
    }

    /// These servers, or those of `lower` when none is named here.
    pub fn or(self, lower: McpOptions) -> McpOptions {
        if self.is_given() { self } else { lower }
    }

    /// The servers named by [`MCP_CONFIG_ENV`].
    pub fn from_env() -> McpOptions {
        let files: Vec<PathBuf> = std::env::var_os(MCP_CONFIG_ENV)
            .map(|value| std::env::split_paths(&value).collect())
            .unwrap_or_default();
        let files: Vec<PathBuf> = files
            .into_iter()
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        McpOptions {
            config_files: (!files.is_empty()).then_some(files),
            ..McpOptions::default()
        }
    }

    /// The options of the configuration file `file`, whose relative paths resolve against
    /// its folder.
    pub fn read_from(self, file: &Path) -> McpOptions {
        let dir = file.parent().unwrap_or(Path::new(""));
        McpOptions {
            config_files: self
                .config_files
                .map(|files| files.into_iter().map(|p| dir.join(p)).collect()),
            file: Some(file.to_path_buf()),
            ..self
        }
    }

    /// Every server named here: the configuration file's own, then those of the `mcpServers`
    /// files, then the `--mcp` commands. Fields of a file that mean nothing here are named on
    /// stderr.
    pub fn servers(&self) -> Result<Vec<ServerConfig>, String> {
        let mut servers = Vec::new();
        let mut add = |origin: &Path, config: McpConfig| {
            for field in &config.ignored {
                eprintln!("note: {}: {field} has no effect here", origin.display());
            }
            servers.extend(config.servers);
        };
        if let Some(entries) = &self.servers {
            let origin = self.file.as_deref().unwrap_or(Path::new(FILE_NAME));
            let folder = origin.parent().unwrap_or(Path::new("."));
            let base = std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf());
            let config = McpConfig::from_entries(entries, &base, "mcp.servers")
                .map_err(|e| format!("{}: {e}", origin.display()))?;
            add(origin, config);
        }
        for path in self.config_files.iter().flatten() {
            add(path, McpConfig::from_file(path).map_err(|e| e.to_string())?);
        }
        let place = match &self.file {
            Some(file) => format!("{}: mcp.commands", file.display()),
            None => "--mcp".to_string(),
        };
        for line in self.commands.iter().flatten() {
            servers
                .push(ServerConfig::from_command_line(line).map_err(|e| format!("{place}: {e}"))?);
        }
        Ok(servers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn given_options_win_over_lower_layers() {
        let flags = AgentOptions {
            llm: Some("replay:a.jsonl".into()),
            retries: Some(1),
            ..AgentOptions::default()
        };
        let file = AgentOptions {
            llm: Some("anthropic:claude".into()),
            max_turns: Some(8),
            ..AgentOptions::default()
        };
        assert_eq!(
            flags.or(file),
            AgentOptions {
                llm: Some("replay:a.jsonl".into()),
                retries: Some(1),
                max_turns: Some(8),
                ..AgentOptions::default()
            }
        );
    }

    /// A set of MCP servers is one setting: servers named at a higher level replace the lower
    /// level's, whichever fields name them.
    #[test]
    fn mcp_servers_are_layered_as_a_whole() {
        let file = McpOptions {
            commands: Some(vec!["server-a".into()]),
            servers: Some(serde_json::Map::new()),
            ..McpOptions::default()
        };
        let flags = McpOptions {
            config_files: Some(vec![PathBuf::from("b.json")]),
            ..McpOptions::default()
        };
        assert_eq!(flags.clone().or(file.clone()), flags);
        assert_eq!(McpOptions::default().or(file.clone()), file);
    }

    #[test]
    fn durations_and_summaries_read_from_text() {
        assert_eq!("5s".parse(), Ok(Span(Duration::from_secs(5))));
        assert_eq!("1m 30s".parse(), Ok(Span(Duration::from_secs(90))));
        assert_eq!(
            "5".parse::<Span>(),
            Err(
                "`5` is not a duration (time unit needed, for example 5sec or 5ms); write e.g. \
                 500ms, 30s or 2m"
                    .to_string()
            )
        );
        assert_eq!(
            "last:8".parse(),
            Ok(Summary(SummaryStrategy::FromLastNMessages(8)))
        );
        assert_eq!("whole".parse(), Ok(Summary(SummaryStrategy::WholeHistory)));
        assert_eq!(
            "last".parse::<Summary>(),
            Err("`last` needs a count of messages, e.g. last:8".to_string())
        );
        assert_eq!(
            "some".parse::<Summary>(),
            Err("unknown summary strategy `some`; use whole, last:N or chunked:N".to_string())
        );
    }
}

//! Choosing a strategy: the forms a user may write, normalized to a strategy and its options,
//! and the text form used on the command line and in config files.

use crate::append_compact::AppendCompact;
use crate::compression::Compression;
use crate::cost::PricingKind;
use crate::render_options::RenderLimits;
use crate::strategy::{
    Activated, Aggressive, FailedTurns, PerTurnSummary, RollingWindow, SingleUserCoalesced,
    Uncompressed,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The built-in strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    /// The full history ([`crate::Uncompressed`]).
    Uncompressed,
    /// The default: a growing history compacted when that pays ([`crate::AppendCompact`]).
    AppendCompact,
    /// One summary user message, as the seed design has it ([`crate::SingleUserCoalesced`]).
    SingleUserCoalesced,
    /// The newest turns verbatim, older ones summarized ([`crate::RollingWindow`]).
    RollingWindow,
    /// Each turn as its program and a summary ([`crate::PerTurnSummary`]).
    PerTurnSummary,
    /// Names and type labels only ([`crate::Aggressive`]).
    Aggressive,
}

impl StrategyKind {
    /// Every built-in strategy.
    pub const ALL: [StrategyKind; 6] = [
        StrategyKind::Uncompressed,
        StrategyKind::AppendCompact,
        StrategyKind::SingleUserCoalesced,
        StrategyKind::RollingWindow,
        StrategyKind::PerTurnSummary,
        StrategyKind::Aggressive,
    ];

    /// The default strategy: what `on` and `true` mean.
    pub const DEFAULT: StrategyKind = StrategyKind::AppendCompact;

    /// The name used in compression specs.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyKind::Uncompressed => "uncompressed",
            StrategyKind::AppendCompact => "append-compact",
            StrategyKind::SingleUserCoalesced => "single-user-coalesced",
            StrategyKind::RollingWindow => "rolling-window",
            StrategyKind::PerTurnSummary => "per-turn-summary",
            StrategyKind::Aggressive => "aggressive",
        }
    }

    /// Whether `option` means something to this strategy.
    fn accepts(self, option: Opt) -> bool {
        match option {
            Opt::Limit(_) => true,
            Opt::ActivateAfterTurns | Opt::ActivateAboveTokens => {
                self != StrategyKind::Uncompressed
            }
            Opt::FailedTurns => !matches!(
                self,
                StrategyKind::Uncompressed | StrategyKind::AppendCompact
            ),
            Opt::Window => self == StrategyKind::RollingWindow,
            Opt::Pricing | Opt::CompactAboveTokens => self == StrategyKind::AppendCompact,
        }
    }
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StrategyKind {
    type Err = ConfigError;
    fn from_str(name: &str) -> Result<StrategyKind, ConfigError> {
        StrategyKind::ALL
            .into_iter()
            .find(|k| k.as_str() == name)
            .ok_or_else(|| {
                ConfigError(format!(
                    "unknown compression strategy `{name}`: expected off, on, or one of {}",
                    StrategyKind::ALL.map(StrategyKind::as_str).join(", ")
                ))
            })
    }
}

/// The options of a strategy. Limits apply to every strategy; the others to those that use
/// them (see [`CompressionConfig::parse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressionOptions {
    /// Size limits of the rendering.
    pub limits: RenderLimits,
    /// Which failed turns to keep in full; `None` for the strategy's default (`all`, or `last`
    /// for `aggressive`).
    pub failed_turns: Option<FailedTurns>,
    /// Turns `rolling-window` keeps verbatim.
    pub window: usize,
    /// Render in full until this many turns have been taken.
    pub activate_after_turns: Option<usize>,
    /// Render in full while the full rendering is estimated at no more than this many tokens.
    pub activate_above_tokens: Option<usize>,
    /// Whose caching rules and prices decide when `append-compact` compacts; `None` for the
    /// provider's (see [`CompressionConfig::build_for`]), or `anthropic` when it is unknown.
    pub pricing: Option<PricingKind>,
    /// `append-compact` compacts as soon as a request is estimated above this many tokens.
    pub compact_above_tokens: Option<usize>,
}

impl Default for CompressionOptions {
    fn default() -> CompressionOptions {
        CompressionOptions {
            limits: RenderLimits::default(),
            failed_turns: None,
            window: RollingWindow::DEFAULT_WINDOW,
            activate_after_turns: None,
            activate_above_tokens: None,
            pricing: None,
            compact_above_tokens: None,
        }
    }
}

/// The forms in which compression can be asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionSetting {
    /// `true`: the default strategy with default options; `false`: off.
    Enabled(bool),
    /// A strategy with default options.
    Strategy(StrategyKind),
    /// A strategy with options.
    WithOptions(StrategyKind, CompressionOptions),
}

impl From<bool> for CompressionSetting {
    fn from(enabled: bool) -> CompressionSetting {
        CompressionSetting::Enabled(enabled)
    }
}

impl From<StrategyKind> for CompressionSetting {
    fn from(kind: StrategyKind) -> CompressionSetting {
        CompressionSetting::Strategy(kind)
    }
}

impl From<(StrategyKind, CompressionOptions)> for CompressionSetting {
    fn from((kind, options): (StrategyKind, CompressionOptions)) -> CompressionSetting {
        CompressionSetting::WithOptions(kind, options)
    }
}

/// A normalized compression choice: a strategy (or none: compression off, the default) and its
/// options.
///
/// ```
/// use ptc_compression::{CompressionConfig, StrategyKind};
/// let config = CompressionConfig::parse("single-user-coalesced?println_limit=10").unwrap();
/// assert_eq!(config.strategy, Some(StrategyKind::SingleUserCoalesced));
/// assert_eq!(config.options.limits.println_limit, 10);
/// assert_eq!(config.to_string(), "single-user-coalesced?println_limit=10");
/// assert_eq!(CompressionConfig::parse("off").unwrap(), CompressionConfig::default());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompressionConfig {
    /// `None`: compression off; the history is rendered in full ([`Uncompressed`]).
    pub strategy: Option<StrategyKind>,
    /// The strategy's options (also meaningful when off: the limits of the full history).
    pub options: CompressionOptions,
}

impl CompressionConfig {
    /// Normalize any accepted form to a strategy and its options: absent or `false` is
    /// off, `true` the default strategy with default options, a strategy
    /// alone gets default options, a strategy with options keeps them.
    pub fn normalize(setting: Option<CompressionSetting>) -> CompressionConfig {
        match setting {
            None | Some(CompressionSetting::Enabled(false)) => CompressionConfig::default(),
            Some(CompressionSetting::Enabled(true)) => CompressionConfig {
                strategy: Some(StrategyKind::DEFAULT),
                options: CompressionOptions::default(),
            },
            Some(CompressionSetting::Strategy(kind)) => CompressionConfig {
                strategy: Some(kind),
                options: CompressionOptions::default(),
            },
            Some(CompressionSetting::WithOptions(kind, options)) => CompressionConfig {
                strategy: Some(kind),
                options,
            },
        }
    }

    /// Whether a strategy was chosen.
    pub fn is_enabled(&self) -> bool {
        self.strategy.is_some()
    }

    /// The limits to render with.
    pub fn limits(&self) -> RenderLimits {
        self.options.limits
    }

    /// The strategy to render with: [`Uncompressed`] when compression is off, wrapped in
    /// [`Activated`] when an activation threshold is set. `append-compact` decides with the
    /// pricing its options name, or `anthropic`'s.
    pub fn build(&self) -> Box<dyn Compression> {
        self.build_for(None)
    }

    /// Like [`build`](Self::build), for a run against a provider whose caching rules are
    /// `provider`'s: `append-compact` decides with them unless its options name a pricing.
    ///
    /// ```
    /// use ptc_compression::{CompressionConfig, PricingKind};
    /// let on = CompressionConfig::parse("on").unwrap();
    /// assert_eq!(on.pricing_for(Some(PricingKind::OpenAi)), PricingKind::OpenAi);
    /// assert_eq!(on.pricing_for(None), PricingKind::Anthropic);
    /// let fixed = CompressionConfig::parse("append-compact?pricing=ideal").unwrap();
    /// assert_eq!(fixed.pricing_for(Some(PricingKind::OpenAi)), PricingKind::Ideal);
    /// ```
    pub fn build_for(&self, provider: Option<PricingKind>) -> Box<dyn Compression> {
        let o = &self.options;
        let failed = |default: FailedTurns| o.failed_turns.unwrap_or(default);
        let inner: Box<dyn Compression> = match self.strategy {
            None | Some(StrategyKind::Uncompressed) => return Box::new(Uncompressed),
            Some(StrategyKind::AppendCompact) => Box::new(AppendCompact {
                pricing: self.pricing_for(provider),
                compact_above_tokens: o.compact_above_tokens,
            }),
            Some(StrategyKind::SingleUserCoalesced) => Box::new(SingleUserCoalesced {
                failed_turns: failed(FailedTurns::All),
            }),
            Some(StrategyKind::RollingWindow) => Box::new(RollingWindow {
                window: o.window,
                failed_turns: failed(FailedTurns::All),
            }),
            Some(StrategyKind::PerTurnSummary) => Box::new(PerTurnSummary {
                failed_turns: failed(FailedTurns::All),
            }),
            Some(StrategyKind::Aggressive) => Box::new(Aggressive {
                failed_turns: failed(FailedTurns::Last),
            }),
        };
        if o.activate_after_turns.is_none() && o.activate_above_tokens.is_none() {
            return inner;
        }
        Box::new(Activated {
            inner,
            after_turns: o.activate_after_turns,
            above_tokens: o.activate_above_tokens,
        })
    }

    /// The pricing `append-compact` decides with against a provider with `provider`'s caching
    /// rules: the one the options name, else the provider's, else `anthropic`.
    pub fn pricing_for(&self, provider: Option<PricingKind>) -> PricingKind {
        self.options.pricing.or(provider).unwrap_or_default()
    }

    /// Read a compression spec:
    ///
    /// - `off`, `false`, `none` or the empty string: compression off;
    /// - `on` or `true`: the default strategy with default options;
    /// - a strategy name: `uncompressed`, `append-compact` (the default), `single-user-coalesced`,
    ///   `rolling-window`, `per-turn-summary`, `aggressive`;
    /// - a strategy name with options: `rolling-window?window=3&println_limit=10`.
    ///
    /// Options: `println_limit`, `tool_call_limit`, `sample_limit`, `sample_printable_limit`,
    /// `arg_limit`, `arg_printable_limit`, `output_char_limit`, `data_inline_chars`,
    /// `tool_result_chars` (whole numbers); `failed_turns`
    /// (`all`, `unrecovered`, `last`; not for `uncompressed` and `append-compact`); `window`
    /// (rolling-window only); `pricing` (`anthropic`, `openai`, `ideal`; by default the
    /// provider's) and `compact_above_tokens` (a whole number) for append-compact only;
    /// `activate_after_turns`, `activate_above_tokens` (whole numbers; not for `uncompressed`).
    pub fn parse(spec: &str) -> Result<CompressionConfig, ConfigError> {
        let spec = spec.trim();
        let (name, query) = match spec.split_once('?') {
            Some((name, query)) => (name.trim(), Some(query)),
            None => (spec, None),
        };
        let kind = match name {
            "" | "off" | "false" | "none" if query.is_none() => {
                return Ok(CompressionConfig::default());
            }
            "on" | "true" if query.is_none() => StrategyKind::DEFAULT,
            "" | "off" | "false" | "none" | "on" | "true" => {
                return Err(ConfigError(format!(
                    "`{name}` takes no options: name a strategy to set options, \
                     e.g. `{}?println_limit=10`",
                    StrategyKind::DEFAULT
                )));
            }
            name => name.parse()?,
        };
        let mut pairs = Vec::new();
        if let Some(query) = query {
            for pair in query.split('&').filter(|p| !p.trim().is_empty()) {
                let Some((key, value)) = pair.split_once('=') else {
                    return Err(ConfigError(format!(
                        "expected key=value in compression spec, got `{pair}`"
                    )));
                };
                pairs.push((key.trim().to_string(), value.trim().to_string()));
            }
        }
        CompressionConfig::with_options(kind, pairs)
    }

    fn with_options(
        kind: StrategyKind,
        pairs: Vec<(String, String)>,
    ) -> Result<CompressionConfig, ConfigError> {
        let mut options = CompressionOptions::default();
        let mut seen = Vec::new();
        for (key, value) in pairs {
            let opt = Opt::from_key(&key).ok_or_else(|| {
                let valid: Vec<&str> = Opt::ALL
                    .into_iter()
                    .filter(|o| kind.accepts(*o))
                    .map(Opt::key)
                    .collect();
                ConfigError(format!(
                    "unknown option `{key}` for {kind}: expected one of {}",
                    valid.join(", ")
                ))
            })?;
            if !kind.accepts(opt) {
                return Err(ConfigError(match opt {
                    Opt::Window => {
                        format!("option `window` applies only to rolling-window, not {kind}")
                    }
                    Opt::Pricing | Opt::CompactAboveTokens => {
                        format!("option `{key}` applies only to append-compact, not {kind}")
                    }
                    Opt::FailedTurns if kind == StrategyKind::AppendCompact => {
                        "option `failed_turns` does not apply to append-compact, which keeps \
                         every failed turn until it is folded into a summary"
                            .to_string()
                    }
                    _ => format!("option `{key}` does not apply to {kind}, which never compresses"),
                }));
            }
            if seen.contains(&opt) {
                return Err(ConfigError(format!("option `{key}` is given twice")));
            }
            seen.push(opt);
            opt.set(&mut options, &value)?;
        }
        Ok(CompressionConfig {
            strategy: Some(kind),
            options,
        })
    }
}

impl FromStr for CompressionConfig {
    type Err = ConfigError;
    fn from_str(spec: &str) -> Result<CompressionConfig, ConfigError> {
        CompressionConfig::parse(spec)
    }
}

impl fmt::Display for CompressionConfig {
    /// The spec this configuration reads back from: `off`, a strategy name, or a strategy name
    /// with its non-default options in a fixed order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(kind) = self.strategy else {
            return f.write_str("off");
        };
        f.write_str(kind.as_str())?;
        let defaults = CompressionOptions::default();
        let mut separator = '?';
        for opt in Opt::ALL {
            if let Some(value) = opt.get(&self.options)
                && opt.get(&defaults).as_ref() != Some(&value)
            {
                write!(f, "{separator}{}={value}", opt.key())?;
                separator = '&';
            }
        }
        Ok(())
    }
}

/// The error of an unreadable compression spec, saying what would be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LimitOpt {
    Println,
    ToolCall,
    Sample,
    SamplePrintable,
    Arg,
    ArgPrintable,
    OutputChars,
    DataInlineChars,
    ToolResultChars,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opt {
    Limit(LimitOpt),
    FailedTurns,
    Window,
    Pricing,
    CompactAboveTokens,
    ActivateAfterTurns,
    ActivateAboveTokens,
}

impl Opt {
    const ALL: [Opt; 15] = [
        Opt::Limit(LimitOpt::Println),
        Opt::Limit(LimitOpt::ToolCall),
        Opt::Limit(LimitOpt::Sample),
        Opt::Limit(LimitOpt::SamplePrintable),
        Opt::Limit(LimitOpt::Arg),
        Opt::Limit(LimitOpt::ArgPrintable),
        Opt::Limit(LimitOpt::OutputChars),
        Opt::Limit(LimitOpt::DataInlineChars),
        Opt::Limit(LimitOpt::ToolResultChars),
        Opt::FailedTurns,
        Opt::Window,
        Opt::Pricing,
        Opt::CompactAboveTokens,
        Opt::ActivateAfterTurns,
        Opt::ActivateAboveTokens,
    ];

    fn key(self) -> &'static str {
        match self {
            Opt::Limit(LimitOpt::Println) => "println_limit",
            Opt::Limit(LimitOpt::ToolCall) => "tool_call_limit",
            Opt::Limit(LimitOpt::Sample) => "sample_limit",
            Opt::Limit(LimitOpt::SamplePrintable) => "sample_printable_limit",
            Opt::Limit(LimitOpt::Arg) => "arg_limit",
            Opt::Limit(LimitOpt::ArgPrintable) => "arg_printable_limit",
            Opt::Limit(LimitOpt::OutputChars) => "output_char_limit",
            Opt::Limit(LimitOpt::DataInlineChars) => "data_inline_chars",
            Opt::Limit(LimitOpt::ToolResultChars) => "tool_result_chars",
            Opt::FailedTurns => "failed_turns",
            Opt::Window => "window",
            Opt::Pricing => "pricing",
            Opt::CompactAboveTokens => "compact_above_tokens",
            Opt::ActivateAfterTurns => "activate_after_turns",
            Opt::ActivateAboveTokens => "activate_above_tokens",
        }
    }

    fn from_key(key: &str) -> Option<Opt> {
        Opt::ALL.into_iter().find(|o| o.key() == key)
    }

    fn limit(limits: &mut RenderLimits, which: LimitOpt) -> &mut usize {
        match which {
            LimitOpt::Println => &mut limits.println_limit,
            LimitOpt::ToolCall => &mut limits.tool_call_limit,
            LimitOpt::Sample => &mut limits.sample_limit,
            LimitOpt::SamplePrintable => &mut limits.sample_printable_limit,
            LimitOpt::Arg => &mut limits.arg_limit,
            LimitOpt::ArgPrintable => &mut limits.arg_printable_limit,
            LimitOpt::OutputChars => &mut limits.output_char_limit,
            LimitOpt::DataInlineChars => &mut limits.data_inline_chars,
            LimitOpt::ToolResultChars => &mut limits.tool_result_chars,
        }
    }

    fn set(self, options: &mut CompressionOptions, value: &str) -> Result<(), ConfigError> {
        let number = || {
            value.parse::<usize>().map_err(|_| {
                ConfigError(format!(
                    "option `{}` must be a whole number, got `{value}`",
                    self.key()
                ))
            })
        };
        match self {
            Opt::Limit(which) => *Opt::limit(&mut options.limits, which) = number()?,
            Opt::Window => options.window = number()?,
            Opt::Pricing => {
                options.pricing = Some(value.parse().map_err(|_| {
                    ConfigError(format!(
                        "option `pricing` must be anthropic, openai or ideal, got `{value}`"
                    ))
                })?)
            }
            Opt::CompactAboveTokens => options.compact_above_tokens = Some(number()?),
            Opt::ActivateAfterTurns => options.activate_after_turns = Some(number()?),
            Opt::ActivateAboveTokens => options.activate_above_tokens = Some(number()?),
            Opt::FailedTurns => {
                options.failed_turns = Some(match value {
                    "all" => FailedTurns::All,
                    "unrecovered" => FailedTurns::Unrecovered,
                    "last" => FailedTurns::Last,
                    "kept" => FailedTurns::Kept,
                    _ => {
                        return Err(ConfigError(format!(
                            "option `failed_turns` must be all, unrecovered, last or kept, got \
                             `{value}`"
                        )));
                    }
                })
            }
        }
        Ok(())
    }

    fn get(self, options: &CompressionOptions) -> Option<String> {
        let mut limits = options.limits;
        match self {
            Opt::Limit(which) => Some(Opt::limit(&mut limits, which).to_string()),
            Opt::Window => Some(options.window.to_string()),
            Opt::Pricing => options.pricing.map(|p| p.as_str().to_string()),
            Opt::CompactAboveTokens => options.compact_above_tokens.map(|n| n.to_string()),
            Opt::ActivateAfterTurns => options.activate_after_turns.map(|n| n.to_string()),
            Opt::ActivateAboveTokens => options.activate_above_tokens.map(|n| n.to_string()),
            Opt::FailedTurns => options.failed_turns.map(|f| f.as_str().to_string()),
        }
    }
}

impl Serialize for CompressionConfig {
    /// `false` when off, otherwise the spec string.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.strategy {
            None => serializer.serialize_bool(false),
            Some(_) => serializer.collect_str(self),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Repr {
    Unset(()),
    Flag(bool),
    Spec(String),
    Table {
        strategy: String,
        #[serde(flatten)]
        options: BTreeMap<String, serde_json::Value>,
    },
}

impl<'de> Deserialize<'de> for CompressionConfig {
    /// Accepts `null`, `true`/`false`, a spec string, or a table such as
    /// `{"strategy": "rolling-window", "window": 3}`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CompressionConfig, D::Error> {
        use serde::de::Error;
        match Repr::deserialize(deserializer)? {
            Repr::Unset(()) => Ok(CompressionConfig::default()),
            Repr::Flag(enabled) => Ok(CompressionConfig::normalize(Some(enabled.into()))),
            Repr::Spec(spec) => CompressionConfig::parse(&spec).map_err(D::Error::custom),
            Repr::Table { strategy, options } => {
                let kind: StrategyKind = strategy.parse().map_err(D::Error::custom)?;
                let pairs = options
                    .into_iter()
                    .map(|(key, value)| {
                        let text = match value {
                            serde_json::Value::String(s) => s,
                            other => other.to_string(),
                        };
                        (key, text)
                    })
                    .collect();
                CompressionConfig::with_options(kind, pairs).map_err(D::Error::custom)
            }
        }
    }
}

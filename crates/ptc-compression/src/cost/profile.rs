//! Named pricing profiles: a provider's prompt-caching rules and what cached tokens cost.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Which caching rules a [`PricingProfile`] follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PricingKind {
    /// Anthropic: only prefixes ending at a breakpoint the client marks are cached (at most
    /// four a request), a write costs more than plain input, a read much less.
    #[default]
    Anthropic,
    /// OpenAI: every prompt's prefix is cached automatically, from 1,024 tokens on and in steps
    /// of 128 tokens; cached tokens cost less, writes nothing extra.
    OpenAi,
    /// The best any cache could do: each request's longest common prefix with the previous
    /// request is read from the cache, nothing costs extra.
    Ideal,
}

impl PricingKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [PricingKind; 3] = [
        PricingKind::Anthropic,
        PricingKind::OpenAi,
        PricingKind::Ideal,
    ];

    /// The profile's name: `anthropic`, `openai` or `ideal`.
    pub fn as_str(self) -> &'static str {
        match self {
            PricingKind::Anthropic => "anthropic",
            PricingKind::OpenAi => "openai",
            PricingKind::Ideal => "ideal",
        }
    }

    /// The profile of this kind with its default prices.
    pub fn profile(self) -> PricingProfile {
        match self {
            PricingKind::Anthropic => PricingProfile::anthropic(),
            PricingKind::OpenAi => PricingProfile::openai(),
            PricingKind::Ideal => PricingProfile::ideal(),
        }
    }
}

impl Serialize for PricingKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for PricingKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PricingKind, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for PricingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PricingKind {
    type Err = PricingError;
    fn from_str(name: &str) -> Result<PricingKind, PricingError> {
        PricingKind::ALL
            .into_iter()
            .find(|k| k.as_str() == name.trim())
            .ok_or_else(|| {
                PricingError(format!(
                    "unknown pricing profile `{name}`: expected anthropic, openai or ideal"
                ))
            })
    }
}

/// A provider's prompt-caching rules and prices, relative to its price for an input token.
///
/// | profile | what is cached | cached read | cache write | smallest cached prefix |
/// |---|---|--:|--:|--:|
/// | `anthropic` | prefixes ending at the client's breakpoints (at most 4) | 0.1 | 1.25 | 1,024 tokens |
/// | `openai` | every prefix, in steps of 128 tokens | 0.5 | 1.0 | 1,024 tokens |
/// | `ideal` | the longest common prefix with the previous request | 0.1 | 1.0 | none |
///
/// Anthropic's cache entries live five minutes (refreshed by each read); replays and reports
/// ignore that, as an agent's turns follow each other within seconds. OpenAI bills cached tokens
/// at 0.5 for its older models and at 0.25 or 0.1 for newer ones: set the read multiplier to
/// your model's (`openai?read=0.25`). Claude Haiku models cache from 2,048 tokens
/// (`anthropic?min_tokens=2048`).
///
/// ```
/// use ptc_compression::PricingProfile;
/// let profile = PricingProfile::parse("openai?read=0.25").unwrap();
/// assert_eq!(profile.read_multiplier, 0.25);
/// assert_eq!(profile.to_string(), "openai?read=0.25");
/// assert_eq!(PricingProfile::parse("anthropic").unwrap(), PricingProfile::anthropic());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PricingProfile {
    /// The caching rules.
    pub kind: PricingKind,
    /// What a token read from the cache costs, as a multiple of an input token.
    pub read_multiplier: f64,
    /// What a token written to the cache costs, as a multiple of an input token.
    pub write_multiplier: f64,
    /// Prefixes shorter than this many tokens are never cached.
    pub min_cached_tokens: usize,
    /// What an output token costs, as a multiple of an input token: a run's whole bill is its
    /// billed input plus its output tokens times this.
    pub output_multiplier: f64,
}

/// OpenAI caches prompt prefixes in steps of this many tokens (past the minimum).
pub const OPENAI_CACHE_STEP: usize = 128;

/// How far back from a breakpoint Anthropic looks for a cached prefix, in content blocks.
pub const ANTHROPIC_LOOKBACK_BLOCKS: usize = 20;

impl PricingProfile {
    /// Anthropic's rules: explicit breakpoints, reads at 0.1×, writes at 1.25×, prefixes of at
    /// least 1,024 tokens; output at 5× (Claude Sonnet's $3 and $15 per million tokens).
    pub fn anthropic() -> PricingProfile {
        PricingProfile {
            kind: PricingKind::Anthropic,
            read_multiplier: 0.1,
            write_multiplier: 1.25,
            min_cached_tokens: 1024,
            output_multiplier: 5.0,
        }
    }

    /// OpenAI's rules: automatic prefix caching, reads at 0.5×, writes at no extra cost,
    /// prefixes of at least 1,024 tokens; output at 4× (GPT-4.1's $2 and $8 per million
    /// tokens).
    pub fn openai() -> PricingProfile {
        PricingProfile {
            kind: PricingKind::OpenAi,
            read_multiplier: 0.5,
            write_multiplier: 1.0,
            min_cached_tokens: 1024,
            output_multiplier: 4.0,
        }
    }

    /// A best case for comparisons: every repeated prefix is read from the cache at 0.1×,
    /// whatever its length, and writes cost nothing extra; output at 5×, as Anthropic's.
    pub fn ideal() -> PricingProfile {
        PricingProfile {
            kind: PricingKind::Ideal,
            read_multiplier: 0.1,
            write_multiplier: 1.0,
            min_cached_tokens: 0,
            output_multiplier: 5.0,
        }
    }

    /// The profile's name.
    pub fn name(&self) -> &'static str {
        self.kind.as_str()
    }

    /// Cached tokens cost `multiplier` times an input token.
    pub fn with_read_multiplier(mut self, multiplier: f64) -> PricingProfile {
        self.read_multiplier = multiplier;
        self
    }

    /// Reads a profile: a name (`anthropic`, `openai`, `ideal`), optionally with prices that
    /// differ from its defaults: `openai?read=0.25`, `anthropic?min_tokens=2048`,
    /// `ideal?read=0.5&write=1.25`, `openai?output=8`.
    pub fn parse(spec: &str) -> Result<PricingProfile, PricingError> {
        let (name, query) = match spec.trim().split_once('?') {
            Some((name, query)) => (name, Some(query)),
            None => (spec.trim(), None),
        };
        let mut profile = name.parse::<PricingKind>()?.profile();
        for pair in query
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.trim().is_empty())
        {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(PricingError(format!(
                    "expected key=value in pricing profile `{spec}`, got `{pair}`"
                )));
            };
            let (key, value) = (key.trim(), value.trim());
            let multiplier = || {
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|m| m.is_finite() && *m >= 0.0)
                    .ok_or_else(|| {
                        PricingError(format!(
                            "`{key}` must be a number of 0 or more, got `{value}`"
                        ))
                    })
            };
            match key {
                "read" => profile.read_multiplier = multiplier()?,
                "write" => profile.write_multiplier = multiplier()?,
                "output" => profile.output_multiplier = multiplier()?,
                "min_tokens" => {
                    profile.min_cached_tokens = value.parse().map_err(|_| {
                        PricingError(format!(
                            "`min_tokens` must be a whole number, got `{value}`"
                        ))
                    })?
                }
                _ => {
                    return Err(PricingError(format!(
                        "unknown pricing option `{key}`: expected read, write, output or \
                         min_tokens"
                    )));
                }
            }
        }
        Ok(profile)
    }
}

impl fmt::Display for PricingProfile {
    /// The spec the profile reads back from: its name, and the prices that differ from the
    /// named profile's.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        let defaults = self.kind.profile();
        let mut separator = '?';
        if self.read_multiplier != defaults.read_multiplier {
            write!(f, "{separator}read={}", self.read_multiplier)?;
            separator = '&';
        }
        if self.write_multiplier != defaults.write_multiplier {
            write!(f, "{separator}write={}", self.write_multiplier)?;
            separator = '&';
        }
        if self.output_multiplier != defaults.output_multiplier {
            write!(f, "{separator}output={}", self.output_multiplier)?;
            separator = '&';
        }
        if self.min_cached_tokens != defaults.min_cached_tokens {
            write!(f, "{separator}min_tokens={}", self.min_cached_tokens)?;
        }
        Ok(())
    }
}

impl FromStr for PricingProfile {
    type Err = PricingError;
    fn from_str(spec: &str) -> Result<PricingProfile, PricingError> {
        PricingProfile::parse(spec)
    }
}

impl Serialize for PricingProfile {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for PricingProfile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PricingProfile, D::Error> {
        let spec = String::deserialize(deserializer)?;
        PricingProfile::parse(&spec).map_err(serde::de::Error::custom)
    }
}

/// A pricing profile that cannot be read, saying what would be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PricingError(pub String);

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn profiles_read_and_print_back() {
        for spec in [
            "anthropic",
            "openai",
            "ideal",
            "openai?read=0.1",
            "anthropic?min_tokens=2048",
            "ideal?read=0.5&write=1.25",
        ] {
            assert_eq!(PricingProfile::parse(spec).unwrap().to_string(), spec);
        }
        assert_eq!(
            PricingProfile::parse("openai?read=0.5").unwrap(),
            PricingProfile::openai()
        );
    }

    #[test]
    fn bad_profiles_say_what_is_accepted() {
        let err = |spec: &str| PricingProfile::parse(spec).unwrap_err().0;
        assert_eq!(
            err("gemini"),
            "unknown pricing profile `gemini`: expected anthropic, openai or ideal"
        );
        assert_eq!(
            err("openai?read=-1"),
            "`read` must be a number of 0 or more, got `-1`"
        );
        assert_eq!(
            err("openai?cheap=1"),
            "unknown pricing option `cheap`: expected read, write, output or min_tokens"
        );
        assert_eq!(
            err("openai?read"),
            "expected key=value in pricing profile `openai?read`, got `read`"
        );
    }
}

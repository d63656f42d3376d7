//! How an agent's system prompt differs from the generated one: text before and after it,
//! sections of its own, a whole prompt of its own, or a function of the generated one.

use std::fmt;
use std::sync::Arc;

/// A function from the generated system prompt to the one sent.
pub(crate) type PromptFn = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The changes, applied in this order: the two sections replace their generated ones, the
/// prefix and the extra text wrap the result, a whole prompt replaces all of that, and the
/// function maps what is left.
#[derive(Clone, Default)]
pub(crate) struct PromptCustomization {
    pub prefix: Option<String>,
    pub extra: Option<String>,
    pub reply_format: Option<String>,
    pub language_reference: Option<String>,
    pub replacement: Option<String>,
    pub map: Option<PromptFn>,
    pub limit: Option<crate::prompt_limit::PromptLimit>,
}

impl fmt::Debug for PromptCustomization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptCustomization")
            .field("prefix", &self.prefix)
            .field("extra", &self.extra)
            .field("reply_format", &self.reply_format)
            .field("language_reference", &self.language_reference)
            .field("replacement", &self.replacement)
            .field("map", &self.map.as_ref().map(|_| "fn"))
            .field("limit", &self.limit)
            .finish()
    }
}

impl PromptCustomization {
    /// The prompt sent, from the generated `sections` (already with their replacements).
    pub(crate) fn apply(&self, sections: Vec<String>) -> String {
        let text = match &self.replacement {
            Some(whole) => whole.clone(),
            None => {
                let mut parts: Vec<&str> = Vec::with_capacity(sections.len() + 2);
                if let Some(prefix) = nonempty(&self.prefix) {
                    parts.push(prefix);
                }
                parts.extend(
                    sections
                        .iter()
                        .map(String::as_str)
                        .filter(|s| !s.is_empty()),
                );
                if let Some(extra) = nonempty(&self.extra) {
                    parts.push(extra);
                }
                parts.join("\n\n")
            }
        };
        let text = match &self.map {
            Some(map) => map(&text),
            None => text,
        };
        crate::prompt_limit::cap(text, self.limit)
    }

    /// A section's text: its replacement (trimmed; empty leaves it out) or the generated one.
    pub(crate) fn section(
        replacement: &Option<String>,
        generated: impl FnOnce() -> String,
    ) -> String {
        match replacement {
            Some(text) => text.trim().to_string(),
            None => generated(),
        }
    }
}

fn nonempty(text: &Option<String>) -> Option<&str> {
    text.as_deref().map(str::trim).filter(|t| !t.is_empty())
}

//! `--llm-tools FILE.json`: LLM tools declared in a file, each answered by one request to the
//! run's model.

use std::collections::BTreeMap;
use std::path::Path;

use ptc_agent::LlmTool;
use serde::Deserialize;

/// One tool of the file: `{"signature": "...", "prompt": "...", ...}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Declared {
    signature: String,
    prompt: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    field_descriptions: BTreeMap<String, String>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    temperature: Option<f32>,
}

/// The LLM tools of the file at `path`, by name: `{"classify": {"signature": "(text
/// :string) -> {label :keyword}", "prompt": "Classify {{text}}"}}`, with optional
/// `description`, `field-descriptions`, `max-tokens` and `temperature`.
pub fn read(path: &Path) -> Result<Vec<LlmTool>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--llm-tools {}: cannot be read: {e}", path.display()))?;
    let declared: BTreeMap<String, Declared> =
        serde_json::from_str(&text).map_err(|e| format!("--llm-tools {}: {e}", path.display()))?;
    declared
        .into_iter()
        .map(|(name, declared)| {
            let mut tool = LlmTool::new(name, &declared.signature, declared.prompt)
                .map_err(|e| format!("--llm-tools {}: {e}", path.display()))?
                .with_field_descriptions(declared.field_descriptions);
            if let Some(description) = declared.description {
                tool = tool.with_description(description);
            }
            if let Some(max_tokens) = declared.max_tokens {
                tool = tool.with_max_tokens(max_tokens);
            }
            if let Some(temperature) = declared.temperature {
                tool = tool.with_temperature(temperature);
            }
            Ok(tool)
        })
        .collect()
}

//! Native function tools: tools a request offers the model in the provider's own format
//! (OpenAI `tools`, Anthropic `tools`), which the model answers with tool calls instead of text.
//!
//! PTC programs call their tools themselves, so an agent's requests carry none of these unless
//! the program itself is asked for as a tool call (`run_program`); plain tool calling, where the
//! model calls every tool natively, uses them for everything.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::LlmError;

/// A function the model may call: its name, what it does, and its parameters as a JSON
/// Schema object.
///
/// ```
/// use ptc_run::model::FunctionTool;
/// use serde_json::json;
///
/// let tool = FunctionTool::new(
///     "get_order",
///     "One order by id",
///     json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
/// );
/// assert_eq!(tool.validate(), Ok(()));
/// assert_eq!(tool.openai_json()["function"]["name"], "get_order");
/// assert_eq!(tool.anthropic_json()["input_schema"]["required"], json!(["id"]));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTool {
    /// The name the model calls it by: 1 to 64 characters of `a-z A-Z 0-9 _ -`, the rule both
    /// providers apply.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its parameters: a JSON Schema whose `type` is `object`.
    pub parameters: Value,
}

impl FunctionTool {
    /// A tool with this name, description and parameter schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> FunctionTool {
        FunctionTool {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// The tool in the OpenAI Chat Completions `tools` array.
    pub fn openai_json(&self) -> Value {
        json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }

    /// The tool in the Anthropic Messages `tools` array.
    pub fn anthropic_json(&self) -> Value {
        json!({
            "name": self.name,
            "description": self.description,
            "input_schema": self.parameters,
        })
    }

    /// Checks the name and that the parameters are a JSON Schema object, as both providers
    /// require before they read anything else of the request.
    pub fn validate(&self) -> Result<(), LlmError> {
        let name_ok = (1..=64).contains(&self.name.len())
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(LlmError::InvalidRequest(format!(
                "the tool name `{}` is not allowed: providers take 1 to 64 letters, digits, `_` \
                 and `-`",
                self.name
            )));
        }
        if self.parameters.get("type").and_then(Value::as_str) != Some("object") {
            return Err(LlmError::InvalidRequest(format!(
                "the parameters of tool `{}` must be a JSON Schema with \"type\": \"object\", \
                 not {}",
                self.name, self.parameters
            )));
        }
        Ok(())
    }
}

/// Whether the model must call a tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides: text, tool calls, or both (the providers' default).
    #[default]
    Auto,
    /// The model must call at least one of the tools (OpenAI `"required"`, Anthropic
    /// `{"type": "any"}`).
    Required,
}

impl ToolChoice {
    /// Whether this is [`ToolChoice::Auto`], which requests leave unsaid.
    pub fn is_auto(&self) -> bool {
        *self == ToolChoice::Auto
    }
}

/// The tools of a request as the text a cost model counts: the JSON of their definitions,
/// one a line. Providers put tool definitions before the system prompt in their prompt
/// (Anthropic's cache order is tools, then system, then messages), so a request's priced prompt
/// starts with this text. Empty for no tools.
pub fn tools_prompt_text(tools: &[FunctionTool]) -> String {
    let mut text = String::new();
    for tool in tools {
        text.push_str(&tool.anthropic_json().to_string());
        text.push('\n');
    }
    text
}

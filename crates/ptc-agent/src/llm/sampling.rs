//! How each provider's request body carries the sampling parameters.

use serde_json::{Map, Value, json};

use crate::llm::{LlmError, ResponseFormat, Sampling};

/// Adds the parameters to an OpenAI chat-completions body.
pub(crate) fn write_openai(sampling: &Sampling, body: &mut Map<String, Value>) {
    if let Some(top_p) = sampling.top_p {
        body.insert("top_p".into(), json_f32(top_p));
    }
    if !sampling.stop.is_empty() {
        body.insert("stop".into(), json!(sampling.stop));
    }
    if let Some(seed) = sampling.seed {
        body.insert("seed".into(), json!(seed));
    }
    if let Some(format) = &sampling.response_format {
        let value = match format {
            ResponseFormat::Text => json!({"type": "text"}),
            ResponseFormat::JsonObject => json!({"type": "json_object"}),
            ResponseFormat::JsonSchema { name, schema } => json!({
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema}
            }),
        };
        body.insert("response_format".into(), value);
    }
    if let Some(user) = &sampling.user {
        body.insert("user".into(), json!(user));
    }
}

/// Adds the parameters to an Anthropic messages body. A seed or a response format, which
/// the Messages API does not have, is an error rather than dropped.
pub(crate) fn write_anthropic(
    sampling: &Sampling,
    body: &mut Map<String, Value>,
) -> Result<(), LlmError> {
    let unsupported: Vec<&str> = [
        sampling.seed.map(|_| "seed"),
        sampling.response_format.as_ref().map(|_| "response_format"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !unsupported.is_empty() {
        return Err(LlmError::InvalidRequest(format!(
            "Anthropic's Messages API has no {}; leave {} unset for this model",
            unsupported.join(" or "),
            if unsupported.len() == 1 { "it" } else { "them" }
        )));
    }
    if let Some(top_p) = sampling.top_p {
        body.insert("top_p".into(), json_f32(top_p));
    }
    if !sampling.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(sampling.stop));
    }
    if let Some(user) = &sampling.user {
        body.insert("metadata".into(), json!({"user_id": user}));
    }
    Ok(())
}

/// An `f32` as the JSON number it reads as: `0.2f32` becomes `0.2`, not `0.20000000298023224`.
pub(crate) fn json_f32(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::from(f64::from(x)))
}

//! A turn's request to the model, made from the rendered messages.

use ptc_compression::{CachePoint, PromptRequest};
use ptc_turn::Message;

use crate::model::{LlmRequest, ToolChoice};
use crate::reply_form::{ReplyForm, as_tool_calls};
use crate::settings::RunSettings;

/// The model request for rendered `messages` (system message first) and their cache `points`:
/// leading system messages become the system prompt, and the points mark the stable parts for
/// providers with explicit prompt caching. The request says its turn and the tools' names.
pub fn request_for(
    messages: &[Message],
    points: &[CachePoint],
    settings: &RunSettings,
    turn: u32,
    tools: &[ptc_lisp::ToolSpec],
) -> LlmRequest {
    let mut prompt = PromptRequest::from_rendered(messages, points);
    if settings.reply_form == ReplyForm::ToolCall {
        let (messages, points) = as_tool_calls(&prompt.messages, &prompt.cache_points);
        prompt.messages = messages;
        prompt.cache_points = points;
    }
    let mut request = LlmRequest::from_prompt(prompt)
        .with_max_tokens(settings.max_tokens)
        .with_tools(settings.reply_form.tools(), ToolChoice::Auto);
    if let Some(temperature) = settings.temperature {
        request = request.with_temperature(temperature);
    }
    let tool_names = tools.iter().map(|t| t.name.clone()).collect();
    request
        .with_sampling(settings.sampling.clone())
        .with_turn(turn, tool_names)
}

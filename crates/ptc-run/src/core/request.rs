//! A turn's request to the model, made from the rendered messages.

use ptc_compression::{CachePoint, PromptRequest, RenderOptions, cacheable_prefix_len};
use ptc_turn::{Message, Role};

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

/// The end of the stable `tool/` and `data/` prefix of the first user message of `messages`.
pub fn prefix_point(messages: &[Message], opts: &RenderOptions<'_>) -> Option<CachePoint> {
    let index = messages.iter().position(|m| m.role != Role::System)?;
    let first = messages.get(index).filter(|m| m.role == Role::User)?;
    cacheable_prefix_len(&first.content, opts)
        .filter(|&len| len > 0)
        .map(|len| CachePoint::new(index, len))
}

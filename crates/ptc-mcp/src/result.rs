//! A tool's result as the value a program receives.
//!
//! - `isError: true` is a tool error with the server's text;
//! - `structuredContent` is the value (JSON converted as data is: objects become maps with
//!   keyword keys);
//! - otherwise the content blocks: no block is `nil`, one text block is a string, and several
//!   blocks are a vector with one entry per block. Text that looks like JSON stays a string,
//!   unless the tool declares an `outputSchema` (then a single text block that is JSON is
//!   read as the value);
//! - images, audio and binary resources are summarized as maps (`{:type "image", :mime-type
//!   "image/png", :bytes 1234}`), never passed on as base64; text resources keep their text;
//!   resource links are `{:type "resource-link", :uri ..., :name ...}`;
//! - text over the result limit is cut, at a character boundary, with a note at its end that
//!   says how much there was.

use ptc_lisp::Value;
use ptc_lisp::from_json;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::Value as Json;

/// Converts a result, cutting text so that all of it together stays within `max_bytes`.
pub(crate) fn to_value(
    result: CallToolResult,
    has_output_schema: bool,
    max_bytes: usize,
) -> Result<Value, String> {
    let mut budget = Budget::new(max_bytes);
    if result.is_error == Some(true) {
        let text = texts(&result.content);
        return Err(if text.trim().is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            budget.cut(text)
        });
    }
    if let Some(mut structured) = result.structured_content {
        budget.cut_json(&mut structured);
        return Ok(from_json(&structured));
    }
    let mut blocks = result.content;
    match blocks.as_mut_slice() {
        [] => Ok(Value::Nil),
        [ContentBlock::Text(text)] => {
            if has_output_schema && let Ok(json) = serde_json::from_str::<Json>(&text.text) {
                let mut json = json;
                budget.cut_json(&mut json);
                return Ok(from_json(&json));
            }
            Ok(Value::string(budget.cut(std::mem::take(&mut text.text))))
        }
        [one] => Ok(block(
            std::mem::replace(one, ContentBlock::text("")),
            &mut budget,
        )),
        _ => Ok(Value::vector(
            blocks
                .into_iter()
                .map(|b| block(b, &mut budget))
                .collect::<Vec<_>>(),
        )),
    }
}

/// The text blocks of an error result, one a line.
fn texts(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn block(block: ContentBlock, budget: &mut Budget) -> Value {
    let kw = Value::keyword;
    let entry = |pairs: Vec<(&str, Value)>| {
        Value::map(
            pairs
                .into_iter()
                .filter(|(_, v)| !matches!(v, Value::Nil))
                .map(|(k, v)| (kw(k), v)),
        )
    };
    let text_or_nil = |t: Option<String>| t.map_or(Value::Nil, Value::string);
    match block {
        ContentBlock::Text(text) => Value::string(budget.cut(text.text)),
        ContentBlock::Image(image) => entry(vec![
            ("type", Value::string("image")),
            ("mime-type", Value::string(&image.mime_type)),
            ("bytes", Value::Int(decoded_len(&image.data))),
        ]),
        ContentBlock::Audio(audio) => entry(vec![
            ("type", Value::string("audio")),
            ("mime-type", Value::string(&audio.mime_type)),
            ("bytes", Value::Int(decoded_len(&audio.data))),
        ]),
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => entry(vec![
                ("type", Value::string("resource")),
                ("uri", Value::string(uri)),
                ("mime-type", text_or_nil(mime_type)),
                ("text", Value::string(budget.cut(text))),
            ]),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => entry(vec![
                ("type", Value::string("resource")),
                ("uri", Value::string(uri)),
                ("mime-type", text_or_nil(mime_type)),
                ("bytes", Value::Int(decoded_len(&blob))),
            ]),
            _ => entry(vec![("type", Value::string("resource"))]),
        },
        ContentBlock::ResourceLink(link) => entry(vec![
            ("type", Value::string("resource-link")),
            ("uri", Value::string(link.uri)),
            ("name", Value::string(link.name)),
            ("mime-type", text_or_nil(link.mime_type)),
            ("description", text_or_nil(link.description)),
        ]),
        other => entry(vec![
            ("type", Value::string("unknown")),
            (
                "summary",
                Value::string(
                    budget.cut(
                        serde_json::to_string(&other)
                            .unwrap_or_default()
                            .chars()
                            .take(200)
                            .collect(),
                    ),
                ),
            ),
        ]),
    }
}

/// The number of bytes base64 `data` decodes to.
fn decoded_len(data: &str) -> i64 {
    let significant = data.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    let padding = data
        .trim_end()
        .bytes()
        .rev()
        .take_while(|&b| b == b'=')
        .count();
    i64::try_from((significant / 4 * 3).saturating_sub(padding)).unwrap_or(i64::MAX)
}

/// How many bytes of text may still be passed on.
struct Budget {
    limit: usize,
    left: usize,
}

impl Budget {
    fn new(limit: usize) -> Budget {
        Budget { limit, left: limit }
    }

    /// The text, or its first part with a note when it does not fit in what is left.
    fn cut(&mut self, mut text: String) -> String {
        let total = text.len();
        if total <= self.left {
            self.left -= total;
            return text;
        }
        let mut end = self.left;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        self.left = 0;
        text.push_str(&format!(
            "\n[... cut by the MCP client: the tool's text was {total} bytes, more than the \
             limit of {} bytes for one result; the first {end} are above]",
            self.limit
        ));
        text
    }

    /// Cuts the strings inside a JSON value, depth first, in the order they appear.
    fn cut_json(&mut self, json: &mut Json) {
        match json {
            Json::String(s) => *s = self.cut(std::mem::take(s)),
            Json::Array(items) => items.iter_mut().for_each(|i| self.cut_json(i)),
            Json::Object(map) => map.values_mut().for_each(|v| self.cut_json(v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_lisp::pr_str;
    use rmcp::model::TextContent;
    use serde_json::json;

    fn result(json: Json) -> CallToolResult {
        serde_json::from_value(json).unwrap()
    }

    fn shown(json: Json, has_output_schema: bool, max: usize) -> Result<String, String> {
        to_value(result(json), has_output_schema, max).map(|v| pr_str(&v))
    }

    #[test]
    fn results_follow_the_rules() {
        let text = |t: &str| json!({"type": "text", "text": t});
        let cases: Vec<(Json, bool, Result<&str, &str>)> = vec![
            (json!({"content": []}), false, Ok("nil")),
            (json!({"content": [text("hi")]}), false, Ok("\"hi\"")),
            (
                json!({"content": [text("{\"a\": 1}")]}),
                false,
                Ok("\"{\\\"a\\\": 1}\""),
            ),
            (json!({"content": [text("{\"a\": 1}")]}), true, Ok("{:a 1}")),
            (
                json!({"content": [text("ignored")], "structuredContent": {"t": 33, "c": "Cloudy"}}),
                false,
                Ok("{:c \"Cloudy\", :t 33}"),
            ),
            (
                json!({"content": [text("a"), {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}]}),
                false,
                Ok("[\"a\" {:type \"image\", :mime-type \"image/png\", :bytes 5}]"),
            ),
            (
                json!({"content": [{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "x"}}]}),
                false,
                Ok("{:type \"resource\", :uri \"file:///a.txt\", :text \"x\"}"),
            ),
            (
                json!({"content": [{"type": "resource_link", "uri": "test://1", "name": "one", "mimeType": "text/plain"}]}),
                false,
                Ok(
                    "{:type \"resource-link\", :uri \"test://1\", :name \"one\", :mime-type \"text/plain\"}",
                ),
            ),
            (
                json!({"content": [text("no such file")], "isError": true}),
                false,
                Err("no such file"),
            ),
            (
                json!({"content": [], "isError": true}),
                false,
                Err("the tool reported an error without a message"),
            ),
        ];
        for (json, schema, expected) in cases {
            let expected = expected.map(str::to_string).map_err(str::to_string);
            assert_eq!(shown(json.clone(), schema, 1000), expected, "{json}");
        }
    }

    #[test]
    fn text_over_the_limit_is_cut_with_a_note() {
        let value = to_value(
            CallToolResult::success(vec![ContentBlock::Text(TextContent::new("héllo world"))]),
            false,
            2,
        )
        .unwrap();
        assert_eq!(
            value,
            Value::string(
                "h\n[... cut by the MCP client: the tool's text was 12 bytes, more than the \
                 limit of 2 bytes for one result; the first 1 are above]"
            )
        );
        let structured = shown(
            json!({"structuredContent": {"a": "abcdef", "b": "gh"}}),
            false,
            4,
        )
        .unwrap();
        assert!(
            structured.starts_with(
                "{:a \"abcd\\n[... cut by the MCP client: the tool's text was 6 bytes"
            ),
            "{structured}"
        );
        assert!(structured.contains(":b \"\\n[... cut"), "{structured}");
    }
}

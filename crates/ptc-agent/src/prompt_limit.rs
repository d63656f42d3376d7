//! A cap on the system prompt's size: a prompt longer than the cap is cut, and a note says so,
//! both to the model (at the end of the prompt) and in the logs.

/// The most characters of the system prompt sent; the note that says it was cut comes after
/// them. Off unless set ([`AgentBuilder::prompt_limit`](crate::AgentBuilder::prompt_limit)):
/// the generated prompt is about 4,500 characters and grows with tools, inputs and a
/// signature, which a cap would cut from the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptLimit {
    /// Characters (not bytes) kept of the prompt.
    pub max_chars: usize,
}

/// The note appended to a prompt cut from `total` characters to `kept`.
fn note(kept: usize, total: usize) -> String {
    format!(
        "\n\n[System prompt cut to its first {kept} of {total} characters by its size limit; the \
         rest was left out.]"
    )
}

/// `text` under `limit`: unchanged when it fits, else its first `max_chars` characters (cut at
/// a character boundary) followed by the note; the cut is logged as a warning.
pub(crate) fn cap(text: String, limit: Option<PromptLimit>) -> String {
    let Some(PromptLimit { max_chars }) = limit else {
        return text;
    };
    let total = text.chars().count();
    if total <= max_chars {
        return text;
    }
    let end = text
        .char_indices()
        .nth(max_chars)
        .map_or(text.len(), |(at, _)| at);
    tracing::warn!(
        chars = total,
        max_chars,
        "the system prompt has {total} characters, more than its limit of {max_chars}: it is \
         cut to the limit and a note says so"
    );
    let mut capped = text[..end].to_string();
    capped.push_str(&note(max_chars, total));
    capped
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_prompt_within_the_limit_or_without_one_is_unchanged() {
        assert_eq!(cap("abc".into(), None), "abc");
        assert_eq!(cap("abc".into(), Some(PromptLimit { max_chars: 3 })), "abc");
    }

    #[test]
    fn a_longer_prompt_keeps_its_first_characters_and_the_note() {
        assert_eq!(
            cap("héllo wörld".into(), Some(PromptLimit { max_chars: 4 })),
            "héll\n\n[System prompt cut to its first 4 of 11 characters by its size limit; the \
             rest was left out.]"
        );
        assert_eq!(
            cap("abc".into(), Some(PromptLimit { max_chars: 0 })),
            "\n\n[System prompt cut to its first 0 of 3 characters by its size limit; the rest \
             was left out.]"
        );
    }
}

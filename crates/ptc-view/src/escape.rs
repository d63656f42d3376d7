//! Text made safe to place in HTML: element content and attribute values alike.

/// `text` with `&`, `<`, `>`, `"` and `'` written as character references.
///
/// ```
/// assert_eq!(ptc_view::escape::html("(< a \"b\")"), "(&lt; a &quot;b&quot;)");
/// ```
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    push_html(&mut out, text);
    out
}

/// Appends `text`, escaped, to `out`.
pub fn push_html(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// At most `limit` characters of `text`, and how many characters it has in all when it is
/// longer.
pub fn bounded(text: &str, limit: usize) -> (&str, Option<usize>) {
    match text.char_indices().nth(limit) {
        None => (text, None),
        Some((end, _)) => (&text[..end], Some(text.chars().count())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn escapes_every_markup_character() {
        assert_eq!(
            html("a & b <c> 'd' \"e\""),
            "a &amp; b &lt;c&gt; &#39;d&#39; &quot;e&quot;"
        );
    }

    #[test]
    fn bounds_by_characters_not_bytes() {
        assert_eq!(bounded("héllo", 2), ("hé", Some(5)));
        assert_eq!(bounded("hi", 2), ("hi", None));
    }
}

//! Messages as plain text, for people: what `ptc render` prints.

use ptc_turn::Message;

/// Each message under a `=== role ===` line, messages separated by a blank line.
///
/// ```
/// use ptc_compression::transcript;
/// use ptc_turn::Message;
/// let text = transcript(&[Message::system("Be brief."), Message::user("Hi")]);
/// assert_eq!(text, "=== system ===\nBe brief.\n\n=== user ===\nHi\n");
/// ```
pub fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("=== ");
        out.push_str(message.role.as_str());
        out.push_str(" ===\n");
        out.push_str(&message.content);
        out.push('\n');
    }
    out
}

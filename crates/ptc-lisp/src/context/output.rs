//! What a program prints: `println` entries, cut to their limit and counted against the run's
//! output limit.

use super::Ctx;
use crate::error::{Error, ErrorKind};
use std::fmt::Write as _;

impl Ctx {
    /// Print `text`, followed by a line end if `line`: as one output entry, or into the text
    /// `with-out-str` is capturing (counted against the memory budget, as any string is).
    pub fn emit_text(&mut self, text: String, line: bool) -> Result<(), Error> {
        if let Some(captured) = &mut self.captured {
            captured.push_str(&text);
            if line {
                captured.push('\n');
            }
            return self.charge(text.len() + usize::from(line));
        }
        self.emit_print(text)
    }

    /// Whether printed text goes to a `with-out-str` capture rather than output entries.
    pub fn is_capturing(&self) -> bool {
        self.captured.is_some()
    }

    /// Record one `println` entry, cut at [`Limits::max_print_chars`](super::limits::Limits::max_print_chars)
    /// with a note saying so: a cut that looks like the end of the value would be taken for it.
    pub fn emit_print(&mut self, mut text: String) -> Result<(), Error> {
        self.settle_meter()?;
        let max = self.limits.max_print_chars;
        if let Some((cut, _)) = text.char_indices().nth(max) {
            text.truncate(cut);
            let _ = write!(
                text,
                "... [cut: one println shows at most {max} characters; print parts of it \
                 separately]"
            );
        }
        self.keep_print(text)
    }

    /// Count `text` against [`Limits::max_output_bytes`](super::limits::Limits::max_output_bytes) and keep it if it fits. Once the
    /// limit is passed nothing more is kept: the kept entries are always the first ones.
    pub(crate) fn keep_print(&mut self, text: String) -> Result<(), Error> {
        self.output_bytes = self.output_bytes.saturating_add(text.len());
        if self.output_bytes > self.limits.max_output_bytes {
            return Err(Error::new(
                ErrorKind::OutputLimit,
                format!(
                    "output limit exceeded: the program printed more than {} bytes; print \
                     samples or counts instead of whole collections",
                    self.limits.max_output_bytes
                ),
            ));
        }
        if let Some(captured) = &mut self.captured {
            // A parallel worker's entry, joined while its caller captures the output.
            captured.push_str(&text);
            captured.push('\n');
            return Ok(());
        }
        self.prints.push(text);
        Ok(())
    }
}

//! The turn errors the run words itself, for a reply that held no program to run.

use ptc_turn::{ErrorKind, TurnError};

/// What the model is told when its reply holds no program.
pub const NO_PROGRAM: &str = "Your reply has no program, so nothing ran. Reply with PTC-Lisp \
                              code in a ```clojure block, for example:\n```clojure\n(return \
                              {:answer 42})\n```";

/// The error of a turn whose reply was cut off by the reply token limit before it held a
/// complete program (`detail` says what was wrong with what it held, if anything).
pub(crate) fn cut_off_error(max_tokens: u32, detail: Option<&str>) -> TurnError {
    let what = match detail {
        Some(detail) => format!(" (the program was incomplete: {detail})"),
        None => String::new(),
    };
    TurnError::new(
        ErrorKind::REPLY_CUT_OFF,
        format!(
            "Your reply was cut off at the limit of {max_tokens} tokens before its program was \
             complete{what}, so nothing ran. Write a shorter program, with little or no text \
             around it."
        ),
    )
}

//! `*1 *2 *3 *e` in an agent's programs: the values of the latest turns whose programs ran
//! without an error, newest first, and the latest turn error as a map.

use ptc_lisp::{Map, RecentValues, Value};
use ptc_turn::Turn;

/// What `*1 *2 *3 *e` stand for in the program after `turns`.
///
/// A returned value never reaches a later turn (it ends the run), so only plain values count.
/// `*e` is `{:turn n :kind "..." :message "..."}` for the latest failed turn, nil before any;
/// like Clojure's `*e` it stays until the next error, and `:turn` says how old it is.
pub(crate) fn recent_values_of(turns: &[Turn]) -> RecentValues {
    let error = last_error(turns).map_or(Value::Nil, |(turn, kind, message)| {
        error_value(turn, kind, message)
    });
    with_error(turns, error)
}

/// `*1 *2 *3` after `turns`, with `error` as `*e`.
pub(crate) fn with_error(turns: &[Turn], error: Value) -> RecentValues {
    RecentValues::new(turns.iter().rev().filter_map(Turn::value).cloned(), error)
}

/// The latest failed turn of `turns`: its number, error kind and message.
pub fn last_error(turns: &[Turn]) -> Option<(u32, &str, &str)> {
    turns.iter().rev().find_map(|turn| {
        turn.error()
            .map(|error| (turn.number(), error.kind.as_str(), error.message.as_str()))
    })
}

/// `*e` for the error `kind: message` of turn `turn`.
pub fn error_value(turn: u32, kind: &str, message: &str) -> Value {
    Value::Map(Map::from_pairs([
        (Value::keyword("turn"), Value::Int(i64::from(turn))),
        (Value::keyword("kind"), Value::from(kind)),
        (Value::keyword("message"), Value::from(message)),
    ]))
}

//! `*1 *2 *3 *e` in an agent's programs: the values of the latest turns whose programs ran
//! without an error, newest first, and the latest turn error as a map.

use ptc_lisp::{History, Map, Value};
use ptc_turn::Turn;

/// What `*1 *2 *3 *e` stand for in the program after `turns`.
///
/// A returned value never reaches a later turn (it ends the run), so only plain values count.
/// `*e` is `{:turn n :kind "..." :message "..."}` for the latest failed turn, nil before any;
/// like Clojure's `*e` it stays until the next error, and `:turn` says how old it is.
pub(crate) fn history_of(turns: &[Turn]) -> History {
    let results = turns.iter().rev().filter_map(Turn::value).cloned();
    let error = turns
        .iter()
        .rev()
        .find_map(|turn| turn.error().map(|error| (turn.number(), error)))
        .map_or(Value::Nil, |(number, error)| {
            Value::Map(Map::from_pairs([
                (Value::keyword("turn"), Value::Int(i64::from(number))),
                (Value::keyword("kind"), Value::from(error.kind.as_str())),
                (
                    Value::keyword("message"),
                    Value::from(error.message.as_str()),
                ),
            ]))
        });
    History::new(results, error)
}

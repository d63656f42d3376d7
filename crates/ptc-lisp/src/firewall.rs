//! Firewalled fields: map entries whose key (a keyword, symbol or string) starts with `_` are
//! for programs and the host, never for the model. What an agent shows its model is printed
//! with them hidden ([`Compact::with_firewall_hidden`](crate::Compact::with_firewall_hidden)),
//! or goes through [`hide_firewalled`] first, so such an entry shows its key and `"[hidden]"`.

use std::borrow::Cow;

use crate::value::Value;

/// What a firewalled entry's value is shown as.
pub const HIDDEN: &str = "[hidden]";

/// Whether a name is firewalled: it starts with `_`.
pub fn is_firewalled_name(name: &str) -> bool {
    name.starts_with('_')
}

/// `value` with the value of every firewalled map entry replaced by `"[hidden]"`, in the part
/// a rendering shows: the first `items` entries of each collection (all of them for `None`;
/// the part [`Compact`](crate::Compact) prints with that item limit) and at most `nodes`
/// values in printing order (a text cut after `n` characters shows fewer than `n` values), so
/// hiding walks no more than printing does. Borrowed when nothing is hidden.
///
/// ```
/// use ptc_lisp::{hide_firewalled, pr_str, read_value};
/// let user = read_value(r#"{:name "ada" :_token "s3cret"}"#).unwrap();
/// assert_eq!(
///     pr_str(&hide_firewalled(&user, None, None)),
///     r#"{:name "ada", :_token "[hidden]"}"#
/// );
/// ```
pub fn hide_firewalled(
    value: &Value,
    items: Option<usize>,
    nodes: Option<usize>,
) -> Cow<'_, Value> {
    let mut left = nodes.unwrap_or(usize::MAX);
    match hide(value, items.unwrap_or(usize::MAX), &mut left) {
        Some(hidden) => Cow::Owned(hidden),
        None => Cow::Borrowed(value),
    }
}

/// Whether a map key is firewalled: a string, or the name of a keyword or symbol (after any
/// namespace), that starts with `_`.
///
/// ```
/// use ptc_lisp::{Value, is_firewalled_key};
/// assert!(is_firewalled_key(&Value::keyword("_token")));
/// assert!(is_firewalled_key(&Value::keyword("user/_token")));
/// assert!(is_firewalled_key(&Value::string("_raw")));
/// assert!(!is_firewalled_key(&Value::keyword("_ns/token")));
/// assert!(!is_firewalled_key(&Value::Int(1)));
/// ```
pub fn is_firewalled_key(key: &Value) -> bool {
    match key {
        Value::Keyword(k) => name_is_firewalled(k.as_str()),
        Value::Symbol(s) => name_is_firewalled(s.as_str()),
        Value::Str(s) => is_firewalled_name(s),
        _ => false,
    }
}

/// The value with its shown firewalled entries hidden; `None` if nothing changed.
fn hide(value: &Value, items: usize, left: &mut usize) -> Option<Value> {
    if *left == 0 {
        return None;
    }
    *left -= 1;
    match value {
        Value::Map(map) => {
            let mut changed = None;
            for (key, entry) in map.iter().take(items) {
                let replacement = if is_firewalled_key(key) {
                    Some(Value::string(HIDDEN)).filter(|_| !matches!(entry, Value::Nil))
                } else {
                    hide(entry, items, left)
                };
                if let Some(replacement) = replacement {
                    let map = changed.get_or_insert_with(|| map.clone());
                    *map = map.assoc(key.clone(), replacement);
                }
            }
            changed.map(Value::Map)
        }
        Value::List(seq) | Value::Vector(seq) => {
            let mut replaced: Vec<(usize, Value)> = Vec::new();
            for (i, item) in seq.iter().take(items).enumerate() {
                if let Some(hidden) = hide(item, items, left) {
                    replaced.push((i, hidden));
                }
            }
            if replaced.is_empty() {
                return None;
            }
            let mut out: Vec<Value> = seq.iter().cloned().collect();
            for (i, hidden) in replaced {
                out[i] = hidden;
            }
            Some(if matches!(value, Value::List(_)) {
                Value::list(out)
            } else {
                Value::vector(out)
            })
        }
        Value::Set(set) => {
            let mut changed = false;
            let out: Vec<Value> = set
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let hidden = (i < items).then(|| hide(item, items, left)).flatten();
                    changed |= hidden.is_some();
                    hidden.unwrap_or_else(|| item.clone())
                })
                .collect();
            changed.then(|| Value::set(out))
        }
        _ => None,
    }
}

/// Whether the name of a keyword or symbol written `text` (`ns/name` or `name`) is firewalled.
/// Every map entry a prompt shows is checked, so this is one pass over the bytes rather than
/// splitting off the namespace first.
fn name_is_firewalled(text: &str) -> bool {
    let bytes = text.as_bytes();
    match bytes.iter().position(|&b| b == b'/') {
        // `/` alone, or a trailing `/`, is a name without a namespace.
        Some(slash) if slash > 0 && slash + 1 < bytes.len() => bytes[slash + 1] == b'_',
        _ => bytes.first() == Some(&b'_'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{pr_str, read_value};
    use pretty_assertions::assert_eq;

    fn shown(text: &str, items: Option<usize>) -> String {
        let value = read_value(text).expect("a value");
        pr_str(&hide_firewalled(&value, items, None))
    }

    #[test]
    fn the_one_pass_check_agrees_with_the_name_of_the_keyword() {
        for text in [
            "a", "_a", "ns/a", "ns/_a", "_ns/a", "_ns/_a", "/", "_/", "a/", "/_a", "a/b/_c", "a_b",
            "",
        ] {
            let keyword = crate::value::Keyword::new(text);
            assert_eq!(
                name_is_firewalled(text),
                is_firewalled_name(keyword.name()),
                "{text}"
            );
        }
    }

    #[test]
    fn firewalled_entries_show_their_key_and_hidden() {
        assert_eq!(
            shown(
                r#"{:id 1 :_token "s3cret" "_raw" [1 2] :nested [{:_k 1 :v 2}]}"#,
                None
            ),
            r#"{:id 1, :_token "[hidden]", "_raw" "[hidden]", :nested [{:_k "[hidden]", :v 2}]}"#
        );
    }

    #[test]
    fn a_missing_firewalled_value_stays_nil_and_other_values_are_borrowed() {
        assert_eq!(shown("{:_token nil}", None), "{:_token nil}");
        let value = read_value("[{:a 1} #{:b}]").expect("a value");
        assert!(matches!(
            hide_firewalled(&value, None, None),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn only_what_a_rendering_shows_is_walked() {
        // The third item is past the two a rendering shows.
        assert_eq!(
            shown("[{:_a 1} {:_a 2} {:_a 3}]", Some(2)),
            r#"[{:_a "[hidden]"} {:_a "[hidden]"} {:_a 3}]"#
        );
        // Two values walked: the vector and the first map.
        let value = read_value("[{:_a 1} {:_a 2}]").expect("a value");
        assert_eq!(
            pr_str(&hide_firewalled(&value, None, Some(2))),
            r#"[{:_a "[hidden]"} {:_a 2}]"#
        );
    }
}

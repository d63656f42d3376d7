//! Values read from tagged literals other than dates: UUIDs (`#uuid "..."`) and tagged literals
//! kept as they are (`(tagged-literal 'tag form)`, printed `#tag form`).

use super::{Symbol, Value};
use std::sync::Arc;

/// A UUID, printed `#uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"`; `str` gives the text alone.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid(Arc<u128>);

impl Uuid {
    /// The UUID written in `text` as Java's `UUID.fromString` reads it (which `#uuid` and
    /// `parse-uuid` use): five groups of hexadecimal digits separated by dashes, either case,
    /// at most 36 characters. The canonical form has groups of 8, 4, 4, 4 and 12 digits; a
    /// shorter group stands for its value (`1-1-1-1-1` is
    /// `00000001-0001-0001-0001-000000000001`), and a longer one keeps only the digits that
    /// fit its place, as Java does. `None` for any other text.
    pub fn parse(text: &str) -> Option<Uuid> {
        if text.len() > 36 {
            return None;
        }
        // In the canonical layout Java takes hexadecimal digits only (no signs).
        let dashes = [8, 13, 18, 23];
        if text.len() == 36
            && dashes.iter().all(|&i| text.as_bytes()[i] == b'-')
            && !text
                .bytes()
                .enumerate()
                .all(|(i, b)| dashes.contains(&i) || b.is_ascii_hexdigit())
        {
            return None;
        }
        let groups: Vec<i64> = text.split('-').map(java_hex_long).collect::<Option<_>>()?;
        let [a, b, c, d, e] = groups.as_slice() else {
            return None;
        };
        let bits = |v: i64, width: u32| u128::from(v as u64) & ((1u128 << width) - 1);
        let most = (bits(*a, 32) << 32) | (bits(*b, 16) << 16) | bits(*c, 16);
        let least = (bits(*d, 16) << 48) | bits(*e, 48);
        Some(Uuid(Arc::new((most << 64) | least)))
    }

    /// The 128 bits.
    pub fn bits(&self) -> u128 {
        *self.0
    }

    /// The canonical text, lowercase: `f81d4fae-7dec-11d0-a765-00a0c91e6bf6`.
    pub fn to_text(&self) -> String {
        let hex = format!("{:032x}", *self.0);
        format!(
            "{}-{}-{}-{}-{}",
            &hex[..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..]
        )
    }
}

/// A hexadecimal number as Java's `Long.parseLong(text, 16)` reads it: an optional sign and at
/// least one digit, within 64 bits.
fn java_hex_long(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let magnitude = i128::from_str_radix(digits, 16).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

impl std::fmt::Debug for Uuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Uuid({})", self.to_text())
    }
}

/// A tagged literal kept as data: a tag symbol and the form after it (`#my/tag {:a 1}`).
/// `(:tag t)` and `(:form t)` read its parts.
#[derive(Clone)]
pub struct TaggedLiteral(Arc<TaggedInner>);

struct TaggedInner {
    tag: Symbol,
    form: Value,
    depth: u32,
}

impl TaggedLiteral {
    /// The literal `#tag form`.
    pub fn new(tag: Symbol, form: Value) -> TaggedLiteral {
        let depth = 1 + form.depth();
        TaggedLiteral(Arc::new(TaggedInner { tag, form, depth }))
    }

    /// The tag, without its `#`.
    pub fn tag(&self) -> &Symbol {
        &self.0.tag
    }

    /// The form after the tag.
    pub fn form(&self) -> &Value {
        &self.0.form
    }

    pub(crate) fn depth(&self) -> u32 {
        self.0.depth
    }
}

impl PartialEq for TaggedLiteral {
    fn eq(&self, other: &TaggedLiteral) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || (self.0.tag == other.0.tag && self.0.form == other.0.form)
    }
}

impl std::fmt::Debug for TaggedLiteral {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TaggedLiteral({:?}, {:?})", self.0.tag, self.0.form)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn uuids_read_either_case_and_print_lowercase() {
        let upper = Uuid::parse("F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6").expect("a UUID");
        let lower = Uuid::parse("f81d4fae-7dec-11d0-a765-00a0c91e6bf6").expect("a UUID");
        assert_eq!(upper, lower);
        assert_eq!(upper.to_text(), "f81d4fae-7dec-11d0-a765-00a0c91e6bf6");
        let short = Uuid::parse("1-1-1-1-1").map(|u| u.to_text());
        assert_eq!(
            short.as_deref(),
            Some("00000001-0001-0001-0001-000000000001")
        );
        let long_group = Uuid::parse("f81d4fae-7dec-11d0-a765-00a0c91e6bf").map(|u| u.to_text());
        assert_eq!(
            long_group.as_deref(),
            Some("f81d4fae-7dec-11d0-a765-000a0c91e6bf")
        );
        for bad in [
            "",
            "nope",
            "f81d4fae7dec11d0a76500a0c91e6bf6",
            "g81d4fae-7dec-11d0-a765-00a0c91e6bf6",
            "1-1-1-1",
            "1-1-1-1-1-1",
            "1--1-1-1",
            "+81d4fae-7dec-11d0-a765-00a0c91e6bf6",
            "f81d4fae-7dec-11d0-a765-00a0c91e6bf6-",
        ] {
            assert_eq!(Uuid::parse(bad), None, "{bad}");
        }
    }
}

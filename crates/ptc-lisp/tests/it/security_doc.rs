//! docs/security.md lists every sandbox limit with its default, so that it cannot drift from
//! the code: the fields come from the `Debug` form of `Limits::default()` (a new field fails
//! this test until the document has a row for it), and each must have a row
//! `| \`name\` | default | ...` whose default is the value written as the document writes
//! values: durations in seconds or milliseconds (`1 s`), counts with thousands separators
//! (`50,000,000`), byte sizes as `256 MiB (268,435,456 bytes)`.

use pretty_assertions::assert_eq;
use ptc_lisp::{ErrorKind, Limits};

fn document() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/security.md");
    std::fs::read_to_string(path).expect("docs/security.md exists")
}

/// `(path, value)` of every field of a `Debug` rendering like `A { x: 1, b: B { y: 2s } }`,
/// nested fields named `b.y`.
fn fields(debug: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut prefix: Vec<String> = Vec::new();
    let mut rest = debug
        .split_once('{')
        .map(|(_, r)| r)
        .expect("a struct rendering");
    loop {
        rest = rest.trim_start_matches([' ', ',']);
        if rest.is_empty() {
            break;
        }
        if let Some(r) = rest.strip_prefix('}') {
            prefix.pop();
            rest = r;
            continue;
        }
        let (name, after) = rest.split_once(": ").expect("`name: value`");
        let end = after.find([',', '}', '{']).unwrap_or(after.len());
        if after[end..].starts_with('{') {
            // A nested struct: `Name { ... }`.
            prefix.push(name.to_string());
            rest = &after[end + 1..];
            continue;
        }
        let value = after[..end].trim();
        let mut path = prefix.clone();
        path.push(name.to_string());
        out.push((path.join("."), value.to_string()));
        rest = &after[end..];
    }
    out
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A default as the document writes it.
fn written(name: &str, debug_value: &str) -> String {
    let value = debug_value
        .strip_prefix("Some(")
        .and_then(|v| v.strip_suffix(')'))
        .unwrap_or(debug_value);
    if let Some(ms) = value.strip_suffix("ms") {
        return format!("{ms} ms");
    }
    if let Some(s) = value.strip_suffix('s') {
        return format!("{s} s");
    }
    let n: u64 = value
        .parse()
        .unwrap_or_else(|_| panic!("{name}: an unexpected default {debug_value}"));
    if name.ends_with("_bytes") {
        const MIB: u64 = 1 << 20;
        if n.is_multiple_of(MIB) {
            return format!("{} MiB ({} bytes)", n / MIB, grouped(n));
        }
        return format!("{} bytes", grouped(n));
    }
    grouped(n)
}

#[test]
fn the_document_is_read_the_way_the_defaults_are_written() {
    assert_eq!(
        fields("A { x: 1, b: B { y: 2s, z: Some(30ms) }, c: 3 }"),
        [
            ("x".to_string(), "1".to_string()),
            ("b.y".to_string(), "2s".to_string()),
            ("b.z".to_string(), "Some(30ms)".to_string()),
            ("c".to_string(), "3".to_string()),
        ]
    );
    assert_eq!(written("timeout", "1s"), "1 s");
    assert_eq!(written("tool_timeout", "Some(30s)"), "30 s");
    assert_eq!(written("tool_timeout", "Some(250ms)"), "250 ms");
    assert_eq!(written("max_steps", "50000000"), "50,000,000");
    assert_eq!(written("max_depth", "200"), "200");
    assert_eq!(
        written("max_memory_bytes", "268435456"),
        "256 MiB (268,435,456 bytes)"
    );
    assert_eq!(written("max_odd_bytes", "1000"), "1,000 bytes");
}

#[test]
fn every_limit_is_documented_with_its_default() {
    let doc = document();
    let limits = fields(&format!("{:?}", Limits::default()));
    assert_eq!(limits.len(), 12, "{limits:?}");
    let mut wrong = Vec::new();
    for (name, value) in &limits {
        let expected = written(name, value);
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")));
        match row {
            None => wrong.push(format!("no row for `{name}`")),
            Some(row) => {
                let default = row.split('|').nth(2).map(str::trim).unwrap_or("");
                if default != expected {
                    wrong.push(format!(
                        "`{name}`: the document says {default}, the code {expected}"
                    ));
                }
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

#[test]
fn every_limit_error_kind_is_documented() {
    let doc = document();
    let missing: Vec<&str> = ErrorKind::ALL
        .iter()
        .filter(|k| k.is_limit())
        .map(|k| k.as_str())
        .filter(|k| !doc.contains(&format!("`{k}`")))
        .collect();
    assert_eq!(missing, Vec::<&str>::new());
}

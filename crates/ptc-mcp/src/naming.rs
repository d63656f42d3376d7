//! The `tool/` names of MCP tools: the server's name when it is a PTC-Lisp symbol and unique,
//! otherwise a mapped or prefixed one, always recorded with the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// How a server's tool is named in programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolName {
    /// The name after `tool/`.
    pub name: String,
    /// The server's name for it.
    pub original: String,
    /// The server that has it.
    pub server: String,
    /// Why `name` differs from `original`, if it does.
    pub renamed: Option<Renamed>,
}

/// Why a tool's `tool/` name is not the server's name for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renamed {
    /// The server's name is not a PTC-Lisp symbol: characters other than letters, digits and
    /// `- _ ? ! * .` became `-`, and a leading digit got a `_` before it.
    NotASymbol,
    /// Another server has a tool of the same name: every such tool is `SERVER.NAME`.
    Clash,
    /// Another tool of the same server maps to the same name: a number was appended.
    Duplicate,
}

impl fmt::Display for Renamed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Renamed::NotASymbol => "not a PTC-Lisp symbol",
            Renamed::Clash => "another server has a tool of this name",
            Renamed::Duplicate => "another tool of this server maps to the same name",
        })
    }
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '?' | '!' | '*' | '.')
}

/// `text` as a symbol, or a part of one: other characters become `-` (one for a run of them),
/// with no `-` at either end; a leading digit gets a `_` before it; empty text is `tool`.
pub(crate) fn symbol_part(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if allowed(c) {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.is_empty() {
        "tool".to_string()
    } else if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{trimmed}")
    } else {
        trimmed.to_string()
    }
}

/// Names every tool of every server, `servers` being `(server name, its tool names)` in the
/// order the servers were given. Names that no other server has stay as they are (mapped if
/// they are not symbols); a name that two or more servers have becomes `SERVER.NAME` on each.
pub(crate) fn assign(servers: &[(String, Vec<String>)]) -> Vec<Vec<ToolName>> {
    let base: Vec<Vec<String>> = servers
        .iter()
        .map(|(_, tools)| tools.iter().map(|t| symbol_part(t)).collect())
        .collect();
    let mut owners: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    for (server, names) in base.iter().enumerate() {
        for name in names {
            owners.entry(name).or_default().insert(server);
        }
    }
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(servers.len());
    for (server, (server_name, tools)) in servers.iter().enumerate() {
        let mut named = Vec::with_capacity(tools.len());
        for (original, mapped) in tools.iter().zip(&base[server]) {
            let clash = owners.get(mapped.as_str()).is_some_and(|o| o.len() > 1);
            let mut name = if clash {
                format!("{}.{mapped}", symbol_part(server_name))
            } else {
                mapped.clone()
            };
            let mut renamed = if clash {
                Some(Renamed::Clash)
            } else if mapped != original {
                Some(Renamed::NotASymbol)
            } else {
                None
            };
            if taken.contains(&name) {
                let stem = name.clone();
                let mut n = 2;
                while taken.contains(&name) {
                    name = format!("{stem}-{n}");
                    n += 1;
                }
                renamed = Some(Renamed::Duplicate);
            }
            taken.insert(name.clone());
            named.push(ToolName {
                name,
                original: original.clone(),
                server: server_name.clone(),
                renamed,
            });
        }
        out.push(named);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn names(servers: &[(&str, &[&str])]) -> Vec<(String, Option<Renamed>)> {
        let input: Vec<(String, Vec<String>)> = servers
            .iter()
            .map(|(s, tools)| (s.to_string(), tools.iter().map(|t| t.to_string()).collect()))
            .collect();
        assign(&input)
            .into_iter()
            .flatten()
            .map(|t| (t.name, t.renamed))
            .collect()
    }

    #[test]
    fn symbols_that_are_unique_keep_their_names() {
        assert_eq!(
            names(&[("fs", &["read_text_file", "get-sum", "valid?"])]),
            vec![
                ("read_text_file".into(), None),
                ("get-sum".into(), None),
                ("valid?".into(), None),
            ]
        );
    }

    #[test]
    fn other_names_are_mapped_and_clashes_prefixed() {
        use Renamed::*;
        assert_eq!(
            names(&[
                ("everything", &["echo", "get-sum"]),
                (
                    "fault",
                    &[
                        "echo",
                        "github/search issues",
                        "2fa:check",
                        "a b",
                        "a-b",
                        "é"
                    ]
                ),
            ]),
            vec![
                ("everything.echo".into(), Some(Clash)),
                ("get-sum".into(), None),
                ("fault.echo".into(), Some(Clash)),
                ("github-search-issues".into(), Some(NotASymbol)),
                ("_2fa-check".into(), Some(NotASymbol)),
                ("a-b".into(), Some(NotASymbol)),
                ("a-b-2".into(), Some(Duplicate)),
                ("tool".into(), Some(NotASymbol)),
            ]
        );
    }

    #[test]
    fn every_mapped_name_reads_as_a_tool_call() {
        let odd = ["a/b c", "9lives", "--x--", "", "é", "x:y", "fs.read"];
        for text in odd {
            let name = symbol_part(text);
            let mut tools = ptc_lisp::Tools::new();
            tools.insert(
                ptc_lisp::ToolSpec::new(&name, ""),
                |_: &[ptc_lisp::Value]| Ok(ptc_lisp::Value::Int(1)),
            );
            let out = ptc_lisp::Runtime::new()
                .with_tools(tools)
                .run_str(&format!("(tool/{name})"), &ptc_lisp::UserNamespace::new());
            assert_eq!(
                out.outcome.value(),
                Some(&ptc_lisp::Value::Int(1)),
                "{text:?} as {name:?}"
            );
        }
    }
}

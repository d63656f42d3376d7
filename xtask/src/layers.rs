//! `cargo xtask layers` (part of `ci`): in every crate of the workspace, modules are layered
//! strictly downward and no files import each other in a circle.
//!
//! Two rules, checked on every source file of every crate (`crates/*/src` and `xtask/src`):
//!
//! - **Layers.** The crate root (`lib.rs`, or `main.rs` for a binary alone) declares its
//!   modules in layer order; a file may use only the modules declared above its own. A
//!   `crate::` path that names no module at all is refused too: a re-export at the crate root
//!   would hide which layer an item comes from.
//! - **No circles.** Inside the layers, files form a graph: a file depends on the module file
//!   each of its `crate::`, `super::`, `self::` and child-module paths leads to (the longest
//!   prefix of the path that is a module). No set of files may depend on each other in a
//!   circle. Re-exports (`pub use`) make no dependency: a module that gathers its children's
//!   items for its callers does not use them.
//!
//! Comments and unit tests at the end of a file (`#[cfg(test)] mod tests`) are not part of the
//! layering and are skipped.
//!
//! The layers of the workspace itself are checked too, where they are easiest to break
//! unnoticed: the run crate's dependency tree ([`crate::run_deps`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("layers takes no arguments, got `{extra}`"));
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut problems = Vec::new();
    let mut crates = 0;
    for src in crate_sources(&root)? {
        let name = src
            .strip_prefix(&root)
            .unwrap_or(&src)
            .display()
            .to_string();
        let found = check(&src)?;
        crates += 1;
        problems.extend(found.into_iter().map(|p| format!("{name}/{p}")));
    }
    if problems.is_empty() {
        println!(
            "{crates} crates: every module uses only the modules above it, and no files import \
             each other in a circle"
        );
        return crate::run_deps::check();
    }
    Err(format!(
        "{} layering problems (a module may use only the modules declared above it in its \
         crate root, and files may not import each other in a circle):\n{}",
        problems.len(),
        problems.join("\n")
    ))
}

/// The `src` directory of every crate: `crates/*/src` and `xtask/src`.
fn crate_sources(root: &Path) -> Result<Vec<PathBuf>, String> {
    let crates = root.join("crates");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&crates)
        .map_err(|e| format!("cannot list {}: {e}", crates.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("src"))
        .filter(|src| src.join("lib.rs").is_file() || src.join("main.rs").is_file())
        .collect();
    found.push(root.join("xtask/src"));
    found.sort();
    Ok(found)
}

/// A module of the crate: its path from the root (`["builtins", "io"]`; empty for the root).
type ModulePath = Vec<String>;

/// Every problem of the crate in `src`, as `file:line: message` or `circle: files`.
fn check(src: &Path) -> Result<Vec<String>, String> {
    let root_file = if src.join("lib.rs").is_file() {
        "lib.rs"
    } else {
        "main.rs"
    };
    let layers = declared_children(&read(&src.join(root_file))?);
    // The files of the library (a crate with a library has its binary use that by name).
    let files: Vec<(PathBuf, ModulePath)> = rust_files(src)?
        .into_iter()
        .filter_map(|file| {
            let relative = file.strip_prefix(src).ok()?.to_path_buf();
            // A `tests.rs` beside a module holds its unit tests.
            if relative.file_name().is_some_and(|n| n == "tests.rs") {
                return None;
            }
            let module = module_path(&relative, root_file)?;
            Some((relative, module))
        })
        .collect();
    let modules: BTreeSet<ModulePath> = files.iter().map(|(_, m)| m.clone()).collect();
    let mut problems = Vec::new();
    let mut graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
    for (relative, module) in &files {
        let text = read(&src.join(relative))?;
        let code = library_code(&text);
        let own_rank = module
            .first()
            .and_then(|top| layers.iter().position(|m| m == top));
        if let Some(top) = module.first()
            && own_rank.is_none()
        {
            problems.push(format!(
                "{}: module `{top}` is not declared in {root_file}",
                relative.display()
            ));
            continue;
        }
        let children = declared_children(&code);
        for used in paths(&code, &children) {
            let target = resolve(module, &used.path, used.anchor, &modules);
            let Some(target) = target else { continue };
            if used.anchor == Anchor::Crate {
                let first = &used.path[0];
                match layers.iter().position(|m| m == first) {
                    None => problems.push(format!(
                        "{}:{}: `crate::{first}` names no module: use the path of the module \
                         that defines it",
                        relative.display(),
                        used.line
                    )),
                    Some(rank) if own_rank.is_some_and(|own| rank > own) => problems.push(format!(
                        "{}:{}: `{}` uses `{first}`, which is declared below it",
                        relative.display(),
                        used.line,
                        module[0]
                    )),
                    Some(_) => {}
                }
            }
            // A module using its own children is containment, not layering.
            if !target.starts_with(module) {
                graph.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    if problems
        .iter()
        .any(|p| p.contains("which is declared below it"))
    {
        let order = layer_order(&layers, &graph);
        problems.push(match order {
            Some(order) => format!(
                "{root_file}: an order of its modules that works: {}",
                order.join(", ")
            ),
            None => format!("{root_file}: no order of its modules works until the circle goes"),
        });
    }
    let file_of: BTreeMap<&ModulePath, &PathBuf> = files.iter().map(|(f, m)| (m, f)).collect();
    for circle in circles(&graph) {
        let names: Vec<String> = circle
            .iter()
            .map(|m| {
                file_of
                    .get(m)
                    .map_or(String::new(), |f| f.display().to_string())
            })
            .collect();
        problems.push(format!("circle: {}", names.join(" <-> ")));
    }
    problems.sort();
    problems.dedup();
    Ok(problems)
}

/// The child modules a file declares with `mod x;`, `pub mod x;` or `pub(crate) mod x;` (not
/// inline modules), in order: for a crate root, its layers.
fn declared_children(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
                .or_else(|| line.strip_prefix("mod "))?;
            let name = rest.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

/// The module a file is (`value/map.rs` → `value::map`, `cost/mod.rs` → `cost`); `None` for a
/// binary's `main.rs` beside a library (it uses the library by name) and for files outside the
/// module tree (`bin/`).
fn module_path(relative: &Path, root_file: &str) -> Option<ModulePath> {
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let (last, dirs) = parts.split_last()?;
    if dirs.first().is_some_and(|d| d == "bin") {
        return None;
    }
    let stem = last.strip_suffix(".rs")?;
    let mut module: ModulePath = dirs.to_vec();
    match stem {
        "lib" | "main" if dirs.is_empty() => {
            if stem != root_file.trim_end_matches(".rs") {
                return None;
            }
        }
        "mod" => {}
        _ => module.push(stem.to_string()),
    }
    Some(module)
}

/// What a path starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// `crate::` or `$crate::`.
    Crate,
    /// `super::`, this many times.
    Super(usize),
    /// `self::`, or a child module's name.
    Own,
}

/// A path a file uses.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UsedPath {
    anchor: Anchor,
    path: Vec<String>,
    line: usize,
}

/// The code of a file that belongs to the library: everything before a trailing
/// `#[cfg(test)]` module, comment lines blanked and end-of-line comments cut (line numbers
/// stay as they are).
fn library_code(text: &str) -> String {
    let text = blank_strings(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if trimmed == "#[cfg(test)]"
            && lines[i + 1..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        if !trimmed.starts_with("//") {
            out.push_str(line.split(" //").next().unwrap_or(line));
        }
        out.push('\n');
    }
    out
}

/// `text` with the contents of its string literals (`"..."`, `r#"..."#`) blanked, line breaks
/// kept: a path inside a message is no use of a module.
fn blank_strings(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        // `'"'` is a character, not the start of a string.
        if c == '\'' && chars.get(i + 1) == Some(&'"') && chars.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
            continue;
        }
        let raw_hashes = if c == 'r' && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            (chars.get(i + 1 + hashes) == Some(&'"')).then_some(hashes)
        } else {
            None
        };
        if let Some(hashes) = raw_hashes {
            out.push('r');
            out.extend(std::iter::repeat_n('#', hashes));
            out.push('"');
            i += hashes + 2;
            while i < chars.len() {
                let closes = chars[i] == '"'
                    && chars[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == '#')
                        .count()
                        == hashes;
                if closes {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
            continue;
        }
        if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if let Some(&inner) = chars.get(i) {
                    out.push(blank(inner));
                }
                i += 1;
            }
            if i < chars.len() {
                out.push('"');
            }
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Every `crate::`, `super::` and `self::` path in `code`, and every path through one of the
/// file's `children`, with `use` groups expanded; paths in re-exports (`pub use`) are left out.
fn paths(code: &str, children: &[String]) -> Vec<UsedPath> {
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        if !code.is_char_boundary(at)
            || (at > 0 && (is_ident(bytes[at - 1]) || bytes[at - 1] == b':'))
        {
            at += 1;
            continue;
        }
        let rest = &code[at..];
        let start = if let Some(after) = rest.strip_prefix("crate::") {
            // `pub(crate)` is no path; `$crate::` is.
            Some((Anchor::Crate, at + rest.len() - after.len()))
        } else if rest.starts_with("super::") {
            let mut count = 0;
            let mut tail = rest;
            while let Some(next) = tail.strip_prefix("super::") {
                count += 1;
                tail = next;
            }
            Some((Anchor::Super(count), at + rest.len() - tail.len()))
        } else if let Some(after) = rest.strip_prefix("self::") {
            Some((Anchor::Own, at + rest.len() - after.len()))
        } else {
            children
                .iter()
                .find(|child| {
                    rest.strip_prefix(child.as_str())
                        .is_some_and(|after| after.starts_with("::"))
                })
                .map(|_| (Anchor::Own, at))
        };
        let Some((anchor, tree_start)) = start else {
            at += 1;
            continue;
        };
        let (trees, end) = use_tree(&code[tree_start..]);
        if !in_reexport(&code[..at]) {
            let line = code[..at].matches('\n').count() + 1;
            for path in trees {
                if !path.is_empty() {
                    found.push(UsedPath { anchor, path, line });
                }
            }
        }
        at = tree_start + end.max(1);
    }
    found
}

/// The paths of a use tree or path at the start of `text` (`a::b::{c, d::e}` → `a::b::c`,
/// `a::b::d::e`), each cut at its first segment that is not a plain name, and where it ends.
fn use_tree(text: &str) -> (Vec<Vec<String>>, usize) {
    let mut prefix: Vec<String> = Vec::new();
    let mut at = 0;
    loop {
        let name: String = text[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            if text[at..].starts_with('{') {
                let close = matching_brace(&text[at..]);
                let inner = &text[at + 1..at + close];
                let mut paths = Vec::new();
                for item in split_top_level(inner) {
                    let item = item.trim();
                    let (subpaths, _) = use_tree(item);
                    for sub in subpaths {
                        let mut full = prefix.clone();
                        full.extend(sub);
                        paths.push(full);
                    }
                }
                return (paths, at + close + 1);
            }
            return (vec![prefix], at);
        }
        at += name.len();
        prefix.push(name);
        match text[at..].strip_prefix("::") {
            Some(_) => at += 2,
            None => return (vec![prefix], at),
        }
    }
}

/// The index of the brace closing the one `text` starts with (the end of `text` if none).
fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// `text` split at the commas outside braces.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Whether the statement that `before` ends inside is a re-export (`pub use`,
/// `pub(crate) use`): the text since the previous `;`, `{` or `}`, attributes aside.
fn in_reexport(before: &str) -> bool {
    let start = before.rfind([';', '{', '}']).map_or(0, |i| i + 1);
    let mut statement = before[start..].trim_start();
    while statement.starts_with("#[") {
        match statement.find(']') {
            Some(end) => statement = statement[end + 1..].trim_start(),
            None => break,
        }
    }
    ["pub use ", "pub(crate) use ", "pub(super) use "]
        .iter()
        .any(|prefix| statement.starts_with(prefix))
}

/// The module `path` leads to from the file of `module`: the longest prefix of it that is a
/// module (`None` when it leaves the crate, as too many `super::` would).
fn resolve(
    module: &ModulePath,
    path: &[String],
    anchor: Anchor,
    modules: &BTreeSet<ModulePath>,
) -> Option<ModulePath> {
    // `super::` counts from the module a file is: `a/b.rs` and `a/b/mod.rs` are both `a::b`.
    let mut base: ModulePath = match anchor {
        Anchor::Crate => Vec::new(),
        Anchor::Own => module.clone(),
        Anchor::Super(count) => {
            if count > module.len() {
                return None;
            }
            module[..module.len() - count].to_vec()
        }
    };
    for segment in path {
        let mut next = base.clone();
        next.push(segment.clone());
        if modules.contains(&next) {
            base = next;
        } else {
            break;
        }
    }
    Some(base)
}

/// An order of the top-level `modules` in which each uses only those before it, as close to
/// the given order as the dependencies allow; `None` when top-level modules form a circle.
fn layer_order(
    modules: &[String],
    graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>,
) -> Option<Vec<String>> {
    let mut uses: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (from, targets) in graph {
        let Some(from) = from.first() else { continue };
        for target in targets {
            if let Some(to) = target.first()
                && to != from
            {
                uses.entry(from.as_str()).or_default().insert(to.as_str());
            }
        }
    }
    let mut placed: Vec<String> = Vec::new();
    let mut left: Vec<&String> = modules.iter().collect();
    while !left.is_empty() {
        let ready = left.iter().position(|m| {
            uses.get(m.as_str()).is_none_or(|deps| {
                deps.iter()
                    .all(|d| placed.iter().any(|p| p == d) || !modules.iter().any(|m| m == d))
            })
        })?;
        placed.push(left.remove(ready).clone());
    }
    Some(placed)
}

/// The sets of modules that depend on each other in a circle (strongly connected components of
/// more than one module), each sorted, in order.
fn circles(graph: &BTreeMap<ModulePath, BTreeSet<ModulePath>>) -> Vec<Vec<ModulePath>> {
    struct Tarjan<'g> {
        graph: &'g BTreeMap<ModulePath, BTreeSet<ModulePath>>,
        index: BTreeMap<&'g ModulePath, usize>,
        low: BTreeMap<&'g ModulePath, usize>,
        stack: Vec<&'g ModulePath>,
        on_stack: BTreeSet<&'g ModulePath>,
        found: Vec<Vec<ModulePath>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, node: &'g ModulePath) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            if let Some(targets) = self.graph.get(node) {
                for target in targets {
                    if !self.index.contains_key(target) {
                        self.visit(target);
                        let low = self.low[node].min(self.low[target]);
                        self.low.insert(node, low);
                    } else if self.on_stack.contains(target) {
                        let low = self.low[node].min(self.index[target]);
                        self.low.insert(node, low);
                    }
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.clone());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !tarjan.index.contains_key(node) {
            tarjan.visit(node);
        }
    }
    tarjan.found.sort();
    tarjan.found
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        for entry in entries {
            let path = entry
                .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn modules_are_read_in_declaration_order() {
        let lib = "//! Docs.\npub mod span;\nmod stack;\npub(crate) mod value;\n\npub use value::Value;\n";
        assert_eq!(declared_children(lib), ["span", "stack", "value"]);
    }

    #[test]
    fn paths_are_found_in_uses_groups_and_expressions() {
        let code = "use crate::value::{Value, map::{Map, Entry}};\nlet x = crate::format::pr_str(&v);\n\
                    $crate::builtins::Builtin {\nuse super::super::a::B;\nuse self::child::C;\n\
                    let y = child::f();\npub(crate) fn f() {}\n";
        let found: Vec<(Anchor, Vec<String>, usize)> = paths(code, &strings(&["child"]))
            .into_iter()
            .map(|p| (p.anchor, p.path, p.line))
            .collect();
        assert_eq!(
            found,
            [
                (Anchor::Crate, strings(&["value", "Value"]), 1),
                (Anchor::Crate, strings(&["value", "map", "Map"]), 1),
                (Anchor::Crate, strings(&["value", "map", "Entry"]), 1),
                (Anchor::Crate, strings(&["format", "pr_str"]), 2),
                (Anchor::Crate, strings(&["builtins", "Builtin"]), 3),
                (Anchor::Super(2), strings(&["a", "B"]), 4),
                (Anchor::Own, strings(&["child", "C"]), 5),
                (Anchor::Own, strings(&["child", "f"]), 6),
            ]
        );
    }

    #[test]
    fn reexports_are_no_dependency() {
        let code = "pub use crate::a::X;\n#[doc(hidden)]\npub(crate) use super::b::{Y, Z};\nuse crate::c::W;\n";
        let found: Vec<Vec<String>> = paths(code, &[]).into_iter().map(|p| p.path).collect();
        assert_eq!(found, [strings(&["c", "W"])]);
    }

    #[test]
    fn string_contents_are_no_paths() {
        let text = "let m = format!(\"`crate::{x}` \\\" crate::y\");\nlet c = '\"'; use crate::z;\nr#\"crate::w\"#;\n";
        let code = blank_strings(text);
        assert_eq!(code.lines().count(), 3);
        let found: Vec<Vec<String>> = paths(&code, &[]).into_iter().map(|p| p.path).collect();
        assert_eq!(found, [strings(&["z"])]);
    }

    #[test]
    fn trailing_test_modules_and_comments_are_skipped() {
        let text = "use crate::a;\n// crate::b in a comment\nfn f() {} // crate::d\n\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\n";
        assert_eq!(library_code(text), "use crate::a;\n\nfn f() {}\n\n");
    }

    #[test]
    fn files_are_modules_and_paths_resolve_to_the_longest_module() {
        assert_eq!(
            module_path(Path::new("value/map.rs"), "lib.rs"),
            Some(strings(&["value", "map"]))
        );
        assert_eq!(
            module_path(Path::new("cost/mod.rs"), "lib.rs"),
            Some(strings(&["cost"]))
        );
        assert_eq!(module_path(Path::new("lib.rs"), "lib.rs"), Some(vec![]));
        assert_eq!(module_path(Path::new("main.rs"), "lib.rs"), None);
        let modules: BTreeSet<ModulePath> = [
            vec![],
            strings(&["cost"]),
            strings(&["cost", "model"]),
            strings(&["strategy"]),
        ]
        .into_iter()
        .collect();
        let here = strings(&["cost", "model"]);
        assert_eq!(
            resolve(&here, &strings(&["cost", "Bill"]), Anchor::Crate, &modules),
            Some(strings(&["cost"]))
        );
        assert_eq!(
            resolve(
                &here,
                &strings(&["strategy", "x"]),
                Anchor::Super(2),
                &modules
            ),
            Some(strings(&["strategy"]))
        );
        assert_eq!(
            resolve(&here, &strings(&["x"]), Anchor::Super(3), &modules),
            None
        );
    }

    #[test]
    fn circles_are_the_modules_that_reach_each_other() {
        let m = |name: &str| strings(&[name]);
        let graph: BTreeMap<ModulePath, BTreeSet<ModulePath>> = [
            (m("a"), [m("b")].into_iter().collect()),
            (m("b"), [m("c")].into_iter().collect()),
            (m("c"), [m("a"), m("d")].into_iter().collect()),
            (m("d"), BTreeSet::new()),
        ]
        .into_iter()
        .collect();
        assert_eq!(circles(&graph), [vec![m("a"), m("b"), m("c")]]);
    }
}

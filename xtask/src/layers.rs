//! `cargo xtask layers` (part of `ci`): the modules of `ptc-lisp` are layered strictly downward.
//!
//! `crates/ptc-lisp/src/lib.rs` declares its modules in layer order; a module may use only the
//! modules declared above it. This check reads every source file of the crate and refuses a
//! `crate::` (or `$crate::`) path that names a module declared below the file's own, and a
//! `crate::` path that names no module at all (a re-export at the crate root would hide which
//! layer an item comes from). Unit tests at the end of a file (`#[cfg(test)] mod tests`) are
//! not part of the layering and are skipped.

use std::path::{Path, PathBuf};

/// The crate whose layers are checked, relative to the workspace root.
const CRATE_SRC: &str = "crates/ptc-lisp/src";

pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!("layers takes no arguments, got `{extra}`"));
    }
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(CRATE_SRC);
    let violations = check(&src)?;
    if violations.is_empty() {
        println!("{CRATE_SRC}: every module uses only the modules above it");
        return Ok(());
    }
    Err(format!(
        "{} upward or unlayered paths in {CRATE_SRC} (a module may use only the modules \
         declared above it in lib.rs):\n{}",
        violations.len(),
        violations.join("\n")
    ))
}

/// Every path that breaks the layering, as `file:line: message`.
fn check(src: &Path) -> Result<Vec<String>, String> {
    let lib = read(&src.join("lib.rs"))?;
    let layers = module_order(&lib);
    if layers.is_empty() {
        return Err("lib.rs declares no modules".into());
    }
    let mut violations = Vec::new();
    for file in rust_files(src)? {
        let relative = file.strip_prefix(src).unwrap_or(&file);
        let Some(own) = top_module(relative) else {
            continue;
        };
        let Some(own_rank) = layers.iter().position(|m| *m == own) else {
            violations.push(format!(
                "{}: module `{own}` is not declared in lib.rs",
                relative.display()
            ));
            continue;
        };
        let text = read(&file)?;
        for (number, line) in library_lines(&text) {
            for used in crate_paths(line) {
                let message = match layers.iter().position(|m| *m == used) {
                    Some(rank) if rank <= own_rank => continue,
                    Some(_) => format!("`{own}` uses `{used}`, which is declared below it"),
                    None => format!(
                        "`crate::{used}` names no module: use the path of the module that \
                         defines it"
                    ),
                };
                violations.push(format!("{}:{number}: {message}", relative.display()));
            }
        }
    }
    violations.sort();
    violations.dedup();
    Ok(violations)
}

/// The modules `lib.rs` declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`), in order.
fn module_order(lib: &str) -> Vec<String> {
    lib.lines()
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

/// The layer a file belongs to: its first path component (`value/map.rs` → `value`,
/// `span.rs` → `span`); `None` for `lib.rs`, the facade above every layer.
fn top_module(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    if first == "lib.rs" {
        return None;
    }
    Some(first.strip_suffix(".rs").unwrap_or(first).to_string())
}

/// The lines of a file that belong to the library, numbered from 1: everything before a
/// trailing `#[cfg(test)]` module, without comments.
fn library_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
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
        if trimmed.starts_with("//") {
            continue;
        }
        out.push((i + 1, line.split(" //").next().unwrap_or(line)));
    }
    out
}

/// The first module of every `crate::` and `$crate::` path in `line`.
fn crate_paths(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = &rest[..at];
        let after = &rest[at + "crate::".len()..];
        // `pub(crate)` is not a path; `$crate::` and `crate::` are.
        let is_path = before.is_empty()
            || !before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            || before.ends_with('$');
        if is_path {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
        rest = after;
    }
    found
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

    #[test]
    fn modules_are_read_in_declaration_order() {
        let lib = "//! Docs.\npub mod span;\nmod stack;\npub(crate) mod value;\n\npub use value::Value;\n";
        assert_eq!(module_order(lib), ["span", "stack", "value"]);
    }

    #[test]
    fn paths_are_found_in_uses_and_expressions() {
        assert_eq!(
            crate_paths("use crate::value::{Value, Map}; let x = crate::format::pr_str(&v);"),
            ["value", "format"]
        );
        assert_eq!(
            crate_paths("        $crate::builtins::Builtin {"),
            ["builtins"]
        );
        assert_eq!(crate_paths("pub(crate) fn f() {}"), Vec::<String>::new());
    }

    #[test]
    fn trailing_test_modules_and_comments_are_skipped() {
        let text = "use crate::a;\n// crate::b in a comment\nfn f() {}\n\n#[cfg(test)]\nmod tests {\n    use crate::c;\n}\n";
        let lines: Vec<usize> = library_lines(text).into_iter().map(|(n, _)| n).collect();
        assert_eq!(lines, [1, 3, 4]);
    }

    #[test]
    fn the_file_decides_the_layer() {
        assert_eq!(top_module(Path::new("value/map.rs")), Some("value".into()));
        assert_eq!(top_module(Path::new("span.rs")), Some("span".into()));
        assert_eq!(top_module(Path::new("lib.rs")), None);
    }
}

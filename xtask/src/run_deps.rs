//! The run crate (`ptc-run`) is sans-IO by construction: its dependency tree holds no async
//! runtime, no async-trait and no HTTP stack. `cargo xtask layers` (part of `ci`) asks
//! `cargo tree` and refuses the crates below, wherever in the tree they come from, so a
//! dependency added to the run crate or to a crate under it cannot bring them in unnoticed.

use std::process::Command;

/// The crate whose tree is checked.
const RUN_CRATE: &str = "ptc-run";

/// What the run crate may not depend on, directly or through any crate below it. The async
/// traits a run needs (models, tools, stores, summarizers) belong to its drivers; the one
/// below it, `ptc-compression`'s `Summarizer`, returns a boxed future written out by hand.
const REFUSED_ANYWHERE: &[&str] = &["tokio", "reqwest", "hyper", "async-trait"];

/// Checks the run crate's dependency tree; the crates it should not have, if any.
pub fn check() -> Result<(), String> {
    let all = tree(&["--edges", "normal,build", "--prefix", "none"])?;
    let found = refused(&all, REFUSED_ANYWHERE);
    if found.is_empty() {
        println!("{RUN_CRATE} builds without {}", REFUSED_ANYWHERE.join(", "));
        return Ok(());
    }
    Err(format!(
        "{RUN_CRATE} must stay sans-IO, but its dependency tree has {}; move what needs them \
         into ptc-agent, which drives the run core",
        found.join(", ")
    ))
}

/// The crate names of `cargo tree -p ptc-run` with `args`, one per line.
fn tree(args: &[&str]) -> Result<Vec<String>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args(["tree", "--quiet", "-p", RUN_CRATE, "--format", "{p}"])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run cargo tree: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo tree -p {RUN_CRATE} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok(crate_names(&String::from_utf8_lossy(&output.stdout)))
}

/// The crate name of each line of `cargo tree --format {p}` (`name v1.2.3 (path)`).
fn crate_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The names of `names` that `refused` lists, each once, in order.
fn refused(names: &[String], refused: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = names
        .iter()
        .filter(|name| refused.contains(&name.as_str()))
        .cloned()
        .collect();
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_crates_are_found_by_name_once() {
        let names = crate_names(
            "ptc-run v0.1.0 (/x)\nptc-lisp v0.1.0 (/y)\ntokio v1.2.0\ntokio v1.2.0\n\
             tokio-util v0.7.0\n",
        );
        assert_eq!(
            names,
            ["ptc-run", "ptc-lisp", "tokio", "tokio", "tokio-util"]
        );
        assert_eq!(refused(&names, REFUSED_ANYWHERE), ["tokio"]);
        assert!(refused(&names[..2], REFUSED_ANYWHERE).is_empty());
    }

    #[test]
    fn async_trait_is_refused_anywhere_in_the_tree() {
        // As a crate under ptc-compression would bring it: not a direct dependency.
        let names = crate_names(
            "ptc-run v0.1.0 (/x)\nptc-compression v0.1.0 (/y)\nasync-trait v0.1.89 (proc-macro)\n\
             async-trait v0.1.89 (proc-macro)\n",
        );
        assert_eq!(refused(&names, REFUSED_ANYWHERE), ["async-trait"]);
    }
}

//! The run crate (`ptc-run`) is sans-IO by construction: its dependency tree holds no async
//! runtime, no async-trait and no HTTP stack. `cargo xtask layers` (part of `ci`) asks
//! `cargo tree` and refuses the crates below, wherever in the tree they come from, so a
//! dependency added to the run crate or to a crate under it cannot bring them in unnoticed.

use std::process::Command;

/// The crate whose tree is checked.
const RUN_CRATE: &str = "ptc-run";

/// What the run crate may not depend on, directly or through any crate below it.
const REFUSED_ANYWHERE: &[&str] = &["tokio", "reqwest", "hyper"];

/// What the run crate may not depend on itself. `ptc-compression`, below it, declares an
/// async `Summarizer` trait with `async-trait` (a macro crate, no runtime); the run crate
/// itself has no async item.
const REFUSED_DIRECTLY: &[&str] = &["async-trait"];

/// Whether [`REFUSED_DIRECTLY`] is refused anywhere in the tree too. Not yet: it is to be
/// set once `ptc-compression` declares its `Summarizer` without `async-trait`, so that no
/// crate under the run crate brings it back.
const REFUSED_DIRECTLY_ANYWHERE_TOO: bool = false;

/// What the run crate may not depend on through any crate below it: [`REFUSED_ANYWHERE`],
/// and [`REFUSED_DIRECTLY`] too when `directly_too` (see [`REFUSED_DIRECTLY_ANYWHERE_TOO`]).
fn refused_anywhere(directly_too: bool) -> Vec<&'static str> {
    let mut names = REFUSED_ANYWHERE.to_vec();
    if directly_too {
        names.extend(REFUSED_DIRECTLY);
    }
    names
}

/// Checks the run crate's dependency tree; the crates it should not have, if any.
pub fn check() -> Result<(), String> {
    let all = tree(&["--edges", "normal,build", "--prefix", "none"])?;
    let direct = tree(&[
        "--edges",
        "normal,build",
        "--prefix",
        "none",
        "--depth",
        "1",
    ])?;
    let anywhere = refused_anywhere(REFUSED_DIRECTLY_ANYWHERE_TOO);
    let mut found = refused(&all, &anywhere);
    found.extend(refused(&direct, REFUSED_DIRECTLY));
    found.sort();
    found.dedup();
    if found.is_empty() {
        if REFUSED_DIRECTLY_ANYWHERE_TOO {
            println!("{RUN_CRATE} builds without {}", anywhere.join(", "));
        } else {
            println!(
                "{RUN_CRATE} builds without {} (and has no {} of its own)",
                anywhere.join(", "),
                REFUSED_DIRECTLY.join(", ")
            );
        }
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
    fn async_trait_is_refused_anywhere_once_the_switch_says_so() {
        let names =
            crate_names("ptc-run v0.1.0 (/x)\nptc-compression v0.1.0 (/y)\nasync-trait v0.1.89\n");
        assert!(refused(&names, &refused_anywhere(false)).is_empty());
        assert_eq!(refused(&names, &refused_anywhere(true)), ["async-trait"]);
    }
}

//! `cargo xtask docs`: write `docs/language.md`, the language reference generated from the
//! builtin registry and the table of special forms (`ptc_lisp::reference`).

use std::path::PathBuf;

/// Where the generated reference lives, relative to the workspace root.
const LANGUAGE_DOC: &str = "docs/language.md";

pub fn run(args: &[String]) -> Result<(), String> {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => return Err("usage: cargo xtask docs [--check]".into()),
    };
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(LANGUAGE_DOC);
    let generated = ptc_lisp::reference::markdown();
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == generated {
        println!("{LANGUAGE_DOC} is up to date");
        return Ok(());
    }
    if check {
        return Err(format!(
            "{LANGUAGE_DOC} is out of date: run `cargo xtask docs`"
        ));
    }
    std::fs::write(&path, generated)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("wrote {LANGUAGE_DOC}");
    Ok(())
}

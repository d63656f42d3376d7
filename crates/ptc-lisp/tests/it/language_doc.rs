//! `docs/language.md` is generated from the registry; this fails when it is out of date.

#[test]
fn language_doc_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/language.md");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let generated = ptc_lisp::reference::markdown();
    assert!(
        current == generated,
        "docs/language.md is out of date: run `cargo xtask docs` and commit the result"
    );
}

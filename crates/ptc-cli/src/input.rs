//! The files a command reads and writes: input data and fixture tools given on the command
//! line, and the check that an output file can be written before any work is done.

use ptc_lisp::{Tools, Value};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

/// Read a file, naming it in the error.
pub(crate) fn read_file(path: &PathBuf) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Fixture tools from a file.
pub(crate) fn fixture_tools(path: &PathBuf) -> Result<Tools, String> {
    Tools::from_fixture_json(&read_file(path)?)
        .map_err(|e| format!("{}: {}", path.display(), e.message))
}

/// The input data entries of a JSON file, in the file's order.
pub fn data_entries(path: &PathBuf) -> Result<Vec<(String, Value)>, String> {
    let value = ptc_lisp::from_json_str(&read_file(path)?)
        .map_err(|e| format!("{}: {}", path.display(), e.message))?;
    ptc_lisp::data_entries(&value).map_err(|e| format!("{}: {}", path.display(), e.message))
}

/// Checks that `path` can be written, before anything is paid for.
pub(crate) fn check_writable(path: &Path, what: &str) -> Result<(), String> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map(|_| ())
        .map_err(|e| format!("cannot write the {what} to {}: {e}", path.display()))
}

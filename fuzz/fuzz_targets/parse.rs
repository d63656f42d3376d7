//! The reader on arbitrary text: it must return forms or an error, never panic, and stay
//! within its limits (libFuzzer's own timeout and memory limit catch the rest).

#![no_main]

use libfuzzer_sys::fuzz_target;
use ptc_lisp::{Form, Program, ReadLimits};

/// The forms of `src`, read with `limits`.
fn read(src: &str, limits: &ReadLimits) -> ptc_lisp::Result<Vec<Form>> {
    Program::parse_with(src, limits).map(|p| p.forms().to_vec())
}


fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let limits = ReadLimits::default();
    if let Err(e) = read(source, &limits) {
        // An error must point inside the text it is about.
        if let Some(span) = e.span {
            assert!(span.start <= span.end && span.end as usize <= source.len(), "{e:?}");
        }
        assert!(!e.message.is_empty());
    }
});

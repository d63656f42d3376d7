//! Process-wide interning of keyword and symbol names.
//!
//! Interned names share one allocation, so comparing two keywords is usually a pointer compare and
//! ten thousand JSON records with the same keys hold each key text once.

use arcstr::ArcStr;
use rustc_hash::FxHashSet;
use std::cell::RefCell;
use std::sync::{Mutex, OnceLock};

fn table() -> &'static Mutex<FxHashSet<ArcStr>> {
    static TABLE: OnceLock<Mutex<FxHashSet<ArcStr>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(FxHashSet::default()))
}

thread_local! {
    /// Names this thread has interned, up to [`MAX_SEEN_PER_THREAD`]: a thread reading programs
    /// or data meets the same few hundred names again and again, and finds them here without
    /// taking the process-wide lock.
    static SEEN: RefCell<FxHashSet<ArcStr>> = RefCell::new(FxHashSet::default());
}

/// How many names each thread remembers in front of the process-wide table.
const MAX_SEEN_PER_THREAD: usize = 4096;

/// The shared copy of `name`. Names longer than `MAX_INTERNED_LEN` (128 bytes) are not interned
/// (they are rare, and a program must not be able to grow the table without bound through long
/// names).
pub fn intern(name: &str) -> ArcStr {
    if name.len() > MAX_INTERNED_LEN {
        return ArcStr::from(name);
    }
    if let Some(seen) = SEEN.with(|seen| seen.borrow().get(name).cloned()) {
        return seen;
    }
    let shared = intern_shared(name);
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if seen.len() < MAX_SEEN_PER_THREAD {
            seen.insert(shared.clone());
        }
    });
    shared
}

fn intern_shared(name: &str) -> ArcStr {
    let mut table = table()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(existing) = table.get(name) {
        return existing.clone();
    }
    if table.len() >= MAX_INTERNED_NAMES {
        return ArcStr::from(name);
    }
    let shared = ArcStr::from(name);
    table.insert(shared.clone());
    shared
}

/// Longest name that is interned.
pub const MAX_INTERNED_LEN: usize = 128;
/// Upper bound on the table size; beyond it names are still correct, only not shared.
pub const MAX_INTERNED_NAMES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_names_share_storage() {
        let a = intern("price");
        let b = intern(&String::from("price"));
        assert!(ArcStr::ptr_eq(&a, &b));
    }

    #[test]
    fn threads_share_the_same_copy() {
        let here = intern("shared-across-threads");
        let there = std::thread::spawn(|| intern("shared-across-threads"))
            .join()
            .expect("the thread finishes");
        assert!(ArcStr::ptr_eq(&here, &there));
    }
}

//! Process-wide interning of keyword and symbol names.
//!
//! Interned names share one allocation, so comparing two keywords is usually a pointer compare and
//! ten thousand JSON records with the same keys hold each key text once.

use arcstr::ArcStr;
use rustc_hash::FxHashSet;
use std::sync::{Mutex, OnceLock};

fn table() -> &'static Mutex<FxHashSet<ArcStr>> {
    static TABLE: OnceLock<Mutex<FxHashSet<ArcStr>>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(FxHashSet::default()))
}

/// The shared copy of `name`. Names longer than [`MAX_INTERNED_LEN`] are not interned (they are
/// rare, and a program must not be able to grow the table without bound through long names).
pub fn intern(name: &str) -> ArcStr {
    if name.len() > MAX_INTERNED_LEN {
        return ArcStr::from(name);
    }
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
}

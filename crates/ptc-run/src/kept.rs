//! The limit on what a run keeps between turns: the estimated size of its `user/` namespace
//! after each turn.

use ptc_lisp::UserNamespace;
use ptc_turn::{ErrorKind, TurnError};

/// How many of the largest definitions the error names.
const NAMED: usize = 3;

/// An error if the definitions of `memory` take more than `limit` bytes.
pub(crate) fn check(memory: &UserNamespace, limit: usize) -> Result<(), TurnError> {
    let mut sizes = memory.estimated_sizes(limit);
    let total: usize = sizes.iter().map(|(_, size)| size).sum();
    if total <= limit {
        return Ok(());
    }
    // The walk stopped inside the last one: its size is only a lower bound.
    let stopped = sizes.last().map(|(name, _)| name.clone());
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let largest = sizes
        .iter()
        .take(NAMED)
        .map(|(name, size)| {
            if Some(name) == stopped.as_ref() {
                // Reported as one byte more than the room that was left for it.
                format!("{name} (more than {})", bytes_text(size.saturating_sub(1)))
            } else {
                format!("{name} ({})", bytes_text(*size))
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    Err(TurnError::new(
        ErrorKind::MEMORY_KEPT_LIMIT,
        format!(
            "your definitions would take more than {} kept between turns, the most a run may \
             keep (largest: {largest}); nothing this program defined was kept. Keep less: def \
             only what later programs need (counts, ids, the few fields or items you use), not \
             whole tool results, and compute the rest in the same program.",
            bytes_text(limit)
        ),
    ))
}

/// A byte count for people: `512 bytes`, `1.5 KB`, `16 MB` (powers of 1024, at most one
/// decimal).
fn bytes_text(bytes: usize) -> String {
    const UNITS: [&str; 3] = ["KB", "MB", "GB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn byte_counts_read_as_people_write_them() {
        assert_eq!(bytes_text(512), "512 bytes");
        assert_eq!(bytes_text(1536), "1.5 KB");
        assert_eq!(bytes_text(16 << 20), "16 MB");
        assert_eq!(bytes_text(3 << 30), "3 GB");
    }
}

//! Spelling suggestions for names that resolve to nothing ("did you mean ...?").

use super::library::Library;

/// The candidate within edit distance 2 (or sharing a long prefix), for "did you mean".
pub(super) fn closest<'c>(name: &str, candidates: &[&'c str]) -> Option<&'c str> {
    // One- and two-letter names are close to too many others for a guess to help.
    if name.chars().count() <= 2 {
        return None;
    }
    let max = if name.len() <= 4 { 1 } else { 2 };
    candidates
        .iter()
        .filter(|c| **c != name)
        // A Java method (`.length`) is no fix for a function name, nor the other way round.
        .filter(|c| c.starts_with('.') == name.starts_with('.'))
        .map(|c| (edit_distance(name, c), *c))
        .filter(|(d, _)| *d <= max)
        .min()
        .map(|(_, c)| c)
}

/// Edits between `a` and `b`, an adjacent transposition (`unoin` → `union`) counting as one:
/// the commonest typo should not tie with a different word.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 {
        return usize::MAX;
    }
    let mut before: Vec<usize> = Vec::new();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

/// The end of an "undefined symbol" message suggesting `name`. A name that ends in its own `?`
/// is quoted: `coll??` would read as a typo.
pub(super) fn did_you_mean(name: &str) -> String {
    if name.ends_with('?') {
        format!("; did you mean `{name}`?")
    } else {
        format!("; did you mean {name}?")
    }
}

/// For `ns/name` whose namespace the library knows under any alias (`str/`, `clojure.string/`,
/// `set/`, `clojure.core/`, a Java class), the closest builtin of that namespace, written with
/// the namespace as the program wrote it: `str/uper-case` → `str/upper-case`.
pub(super) fn namespaced(library: &dyn Library, ns: &str, local: &str) -> Option<String> {
    let names = library.names();
    let locals: Vec<&str> = names
        .iter()
        .map(|n| n.split_once('/').map_or(*n, |(_, l)| l))
        .filter(|l| !l.is_empty() && library.function(&format!("{ns}/{l}")).is_some())
        .collect();
    closest(local, &locals).map(|l| format!("{ns}/{l}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested_and_far_ones_are_not() {
        assert_eq!(closest("fitler", &["filter", "first"]), Some("filter"));
        assert_eq!(closest("unoin", &["join", "union"]), Some("union"));
        assert_eq!(closest("frobnicate", &["filter", "first"]), None);
        // Too short to guess.
        assert_eq!(closest("fi", &["if"]), None);
    }
}

//! The generated numeric-tower corpus: every builtin that takes numbers (ranges, counts, sizes,
//! arithmetic, comparison, rounding, keys and comparators of sorts, formatting) crossed with
//! longs, doubles, ratios, big integers, big decimals, nil and edge values (0, -0.0, the limits
//! of 64 bits, infinities, NaN). The programs come from a fixed seed, so the file is the same on
//! every machine; Clojure 1.11 gives each its result, written into [`NUMERIC_PATH`] in the
//! corpus format, which the engine's `numeric_tower` test checks without Clojure.
//!
//! `cargo xtask conformance --numeric` rewrites the file: the programs from the seed, their
//! results from the oracle, and the deviation lines a case had before (kept by case name).

use crate::cases::*;
use std::collections::HashMap;
use std::path::Path;

/// Where the generated cases live, relative to the workspace root.
pub const NUMERIC_PATH: &str = "crates/ptc-lisp/tests/numeric_tower/generated.cases";
/// The seed of the generator: change it only on purpose, since it changes every program.
pub const SEED: u64 = 42;
/// How many programs cross two or three arguments, drawn at random from the pools.
const DRAWN: usize = 3600;

/// Values of every kind of number, nil, and the edges where implementations differ.
const LONGS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "-3",
    "7",
    "10",
    "-10",
    "100",
    "9223372036854775807",
    "-9223372036854775808",
];
const DOUBLES: &[&str] = &[
    "0.0", "-0.0", "0.5", "1.5", "-2.5", "2.5", "3.0", "0.1", "1e300", "-1e300", "##Inf", "##-Inf",
    "##NaN",
];
const RATIOS: &[&str] = &["1/2", "1/4", "-1/2", "7/2", "-3/4", "2/3", "1/3", "10/3"];
const BIGINTS: &[&str] = &[
    "0N",
    "1N",
    "-1N",
    "3N",
    "5N",
    "-7N",
    "9223372036854775808N",
    "-9223372036854775809N",
];
const BIGDECS: &[&str] = &[
    "0M", "0.0M", "1.0M", "2.5M", "-1.5M", "4.0M", "0.1M", "100.00M", "-0.5M",
];
const NIL: &[&str] = &["nil"];

/// Small finite values of every kind, for programs that realize a whole range or repeat.
const SMALL: &[&str] = &[
    "0", "1", "-1", "3", "7", "-4", "0.0", "0.5", "2.5", "-1.5", "1/2", "7/2", "-3/4", "1/3", "0N",
    "1N", "5N", "-2N", "0.0M", "1.0M", "2.5M", "4.0M", "-0.5M",
];
/// Small non-zero steps of every kind.
const STEPS: &[&str] = &[
    "1", "2", "-1", "-3", "0.5", "-0.5", "1.5", "1/4", "1/3", "-1/2", "3/2", "1N", "-2N", "1.0M",
    "0.5M", "-1.5M",
];

/// Every value of every pool.
fn all_values() -> Vec<&'static str> {
    [LONGS, DOUBLES, RATIOS, BIGINTS, BIGDECS, NIL].concat()
}

/// Programs of one argument `A`, run with every value.
const UNARY: &[(&str, &str)] = &[
    ("range1", "(take 12 (range A))"),
    ("take", "(take A [1 2 3 4 5])"),
    ("drop", "(drop A [1 2 3 4 5])"),
    ("take-last", "(take-last A [1 2 3 4 5])"),
    ("drop-last", "(drop-last A [1 2 3 4 5])"),
    ("nth", "(nth [10 20 30] A)"),
    ("nth-default", "(nth [10 20 30] A :none)"),
    ("nthrest", "(nthrest [1 2 3 4 5] A)"),
    ("nthnext", "(nthnext [1 2 3 4 5] A)"),
    ("take-nth", "(take 4 (take-nth A [1 2 3 4 5]))"),
    ("repeat", "(take 4 (repeat A :x))"),
    ("partition", "(take 4 (partition A [1 2 3 4 5 6 7]))"),
    (
        "partition-all",
        "(take 4 (partition-all A [1 2 3 4 5 6 7]))",
    ),
    ("split-at", "(split-at A [1 2 3 4 5])"),
    ("subvec", "(subvec [1 2 3 4 5] A)"),
    ("get", "(get [10 20 30] A)"),
    ("subs", "(subs \"hello\" A)"),
    ("inc", "(inc A)"),
    ("dec", "(dec A)"),
    ("negate", "(- A)"),
    ("reciprocal", "(/ A)"),
    ("abs", "(abs A)"),
    ("zero", "(zero? A)"),
    ("pos", "(pos? A)"),
    ("neg", "(neg? A)"),
    ("even", "(even? A)"),
    ("odd", "(odd? A)"),
    ("round", "(Math/round A)"),
    ("floor", "(Math/floor A)"),
    ("ceil", "(Math/ceil A)"),
    ("int", "(int A)"),
    ("long", "(long A)"),
    ("double", "(double A)"),
    ("bigint", "(bigint A)"),
    ("bigdec", "(bigdec A)"),
    ("rationalize", "(rationalize A)"),
    ("num", "(num A)"),
    ("integer", "(integer? A)"),
    ("ratio", "(ratio? A)"),
    ("rational", "(rational? A)"),
    ("decimal", "(decimal? A)"),
    ("float", "(float? A)"),
    ("str", "(str A)"),
    ("pr-str", "(pr-str A)"),
    ("format-s", "(format \"%s\" A)"),
    ("format-d", "(format \"%d\" A)"),
    ("format-f", "(format \"%.3f\" A)"),
    ("quot2", "(quot A 2)"),
    ("rem3", "(rem A 3)"),
    ("mod3", "(mod A 3)"),
];

/// Programs of one small argument `S`, which realize what they make.
const SMALL_UNARY: &[(&str, &str)] = &[
    ("vec-range1", "(vec (range S))"),
    ("count-range1", "(count (range S))"),
    ("count-repeat", "(count (repeat S :x))"),
    ("vec-repeat", "(vec (repeat S 0))"),
];

/// Programs of two arguments `A` and `B`.
const BINARY: &[(&str, &str)] = &[
    ("range2", "(take 12 (range A B))"),
    ("add", "(+ A B)"),
    ("sub", "(- A B)"),
    ("mul", "(* A B)"),
    ("div", "(/ A B)"),
    ("add-promoting", "(+' A B)"),
    ("quot", "(quot A B)"),
    ("rem", "(rem A B)"),
    ("mod", "(mod A B)"),
    ("lt", "(< A B)"),
    ("le", "(<= A B)"),
    ("gt", "(> A B)"),
    ("ge", "(>= A B)"),
    ("eq", "(= A B)"),
    ("numeq", "(== A B)"),
    ("compare", "(compare A B)"),
    ("max", "(max A B)"),
    ("min", "(min A B)"),
    ("partition-step", "(take 4 (partition A B [1 2 3 4 5 6 7]))"),
    ("max-key", "(max-key - A B)"),
    ("min-key", "(min-key - A B)"),
];

/// Programs of three arguments `A`, `B` and `C`.
const TERNARY: &[(&str, &str)] = &[
    ("range3", "(take 12 (range A B C))"),
    ("sort", "(sort [A B C])"),
    ("sort-desc", "(sort > [A B C])"),
    ("sort-compare", "(sort compare [A B C])"),
    ("sort-by", "(sort-by - [A B C])"),
    ("max-key3", "(max-key identity A B C)"),
    ("min-key3", "(min-key identity A B C)"),
    ("apply-max", "(apply max [A B C])"),
    ("apply-min", "(apply min [A B C])"),
    ("add3", "(+ A B C)"),
];

/// Programs that realize a whole range of small bounds `S`, `T` and a non-zero step `P`.
const SMALL_RANGES: &[(&str, &str)] = &[
    ("vec-range2", "(vec (range S T))"),
    ("count-range3", "(count (range S T P))"),
    ("sum-range3", "(reduce + (range S T P))"),
    ("vec-range3", "(into [] (range S T P))"),
];

/// Floats and big numbers at the edges of printing and conversion, crossed with every
/// [`EDGE_UNARY`] program (after the programs above, so their names stay as they were).
const EDGES: &[&str] = &[
    "1e7",
    "9999999.0",
    "1.0E-3",
    "9.99E-4",
    "123456789.125",
    "1e16",
    "1e21",
    "1e22",
    "4.9E-324",
    "1.7976931348623157E308",
    "0.30000000000000004",
    "2.5E-5",
    "-1e-10",
    "12345678901234567890N",
    "1.23456789012345678901M",
    "-0.000001M",
    "1E+3M",
    "22/7",
    "-1/1024",
    "1/3",
];

/// Programs of one argument `A` for [`EDGES`] (and every other value).
const EDGE_UNARY: &[(&str, &str)] = &[
    ("edge-str", "(str A)"),
    ("edge-pr-str", "(pr-str A)"),
    ("edge-format-2f", "(format \"%.2f\" A)"),
    ("edge-format-e", "(format \"%e\" A)"),
    ("edge-format-g", "(format \"%g\" A)"),
    ("edge-format-s", "(format \"%s\" A)"),
    ("edge-double", "(double A)"),
    ("edge-long", "(long A)"),
    ("edge-int", "(int A)"),
    ("edge-bigint", "(bigint A)"),
    ("edge-bigdec", "(bigdec A)"),
    ("edge-rationalize", "(rationalize A)"),
    ("edge-inc-promoting", "(inc' A)"),
    ("edge-dec-promoting", "(dec' A)"),
    ("edge-times-promoting", "(*' A 3)"),
    ("edge-minus-promoting", "(-' A 1)"),
    ("edge-abs", "(Math/abs A)"),
    ("edge-floor", "(Math/floor A)"),
    ("edge-max3", "(max A 1 2.0)"),
    ("edge-compare0", "(compare A 0)"),
    ("edge-hash-eq", "(= (hash A) (hash A))"),
    ("edge-div3", "(/ A 3)"),
    ("edge-nth-str", "(nth \"abcdef\" A :none)"),
    ("edge-subs2", "(subs \"abcdef\" 1 A)"),
];

/// Programs of one argument `A` that use a number as an index, a key, a bit count, a
/// precision or an element compared with others, run with every value (after the programs
/// above, so their names stay as they were).
const INDEX_UNARY: &[(&str, &str)] = &[
    ("nth-list", "(nth '(10 20 30) A :none)"),
    ("nth-range", "(nth (range 10 40 10) A :none)"),
    ("assoc-vec", "(assoc [1 2 3] A :x)"),
    ("contains-vec", "(contains? [1 2 3] A)"),
    ("vec-as-fn", "([10 20 30] A)"),
    ("get-str", "(get \"abc\" A)"),
    ("bit-and", "(bit-and A 6)"),
    ("bit-shift", "(bit-shift-left 1 A)"),
    ("pow", "(Math/pow A 2)"),
    ("sqrt", "(Math/sqrt A)"),
    ("format-x", "(format \"%x\" A)"),
    ("format-8-1f", "(format \"%8.1f\" A)"),
    ("with-precision", "(with-precision 3 (/ A 7))"),
    ("numerator", "(numerator A)"),
    ("char", "(char A)"),
    ("take-while", "(take-while #(< % A) [1 2 3 4 5])"),
    ("filter-gt", "(filter #(> % A) [1 2.5 7/2 4N 5.0M])"),
    ("sort-by-desc", "(sort-by identity > [3 A 1])"),
    ("count-range-step", "(count (range 0 10 A))"),
    ("compare-vec", "(compare [1 A] [1 2])"),
    ("set-count", "(count (hash-set A 1 1N 1.0 1M 1.0M))"),
    (
        "map-key",
        "(get {1 :long 1.0 :double 1/2 :ratio 1.0M :decimal} A :none)",
    ),
    ("distinct", "(distinct [A 1 1N 1.0 1M])"),
    ("eq-vec", "(= [A] [1])"),
];

/// SplitMix64: small, fast and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

fn fill(template: &str, args: &[(&str, &str)]) -> String {
    args.iter()
        .fold(template.to_string(), |text, (slot, value)| {
            text.replace(slot, value)
        })
}

/// The generated programs, each with a unique name that says which builtin it exercises.
pub fn programs(seed: u64) -> Vec<(String, String)> {
    let values = all_values();
    let mut out = Vec::new();
    let mut push = |tag: &str, program: String| {
        let name = format!("num-{:04}-{tag}", out.len() + 1);
        out.push((name, program));
    };
    for (tag, template) in UNARY {
        for a in &values {
            push(tag, fill(template, &[("A", a)]));
        }
    }
    for (tag, template) in SMALL_UNARY {
        for s in SMALL {
            push(tag, fill(template, &[("S", s)]));
        }
    }
    let mut rng = Rng(seed);
    let drawn_small = DRAWN / 6;
    for i in 0..drawn_small {
        let (tag, template) = SMALL_RANGES[i % SMALL_RANGES.len()];
        let (s, t, p) = (rng.pick(SMALL), rng.pick(SMALL), rng.pick(STEPS));
        push(tag, fill(template, &[("S", s), ("T", t), ("P", p)]));
    }
    for i in 0..DRAWN - drawn_small {
        let all = BINARY.len() + TERNARY.len();
        let k = i % all;
        let (a, b, c) = (rng.pick(&values), rng.pick(&values), rng.pick(&values));
        if k < BINARY.len() {
            let (tag, template) = BINARY[k];
            push(tag, fill(template, &[("A", a), ("B", b)]));
        } else {
            let (tag, template) = TERNARY[k - BINARY.len()];
            push(tag, fill(template, &[("A", a), ("B", b), ("C", c)]));
        }
    }
    let edges: Vec<&str> = EDGES
        .iter()
        .copied()
        .chain(values.iter().copied())
        .collect();
    for (tag, template) in EDGE_UNARY {
        for a in &edges {
            push(tag, fill(template, &[("A", a)]));
        }
    }
    for (tag, template) in INDEX_UNARY {
        for a in &values {
            push(tag, fill(template, &[("A", a)]));
        }
    }
    out
}

/// The file's leading comment.
fn header(seed: u64, count: usize) -> Vec<String> {
    vec![
        format!(
            ";; Generated by `cargo xtask conformance --numeric` (seed {seed}, {count} programs); \
             do not edit"
        ),
        ";; except to add a `;; deviation:` and `;; ptc` line under a case, which regeneration \
         keeps."
            .into(),
        ";; The engine's numeric_tower test checks that PTC-Lisp prints exactly what Clojure \
         printed,"
            .into(),
        ";; or fails where Clojure threw (or never finished).".into(),
        String::new(),
    ]
}

/// The case items of the generated file, keeping the deviations `old` (the current file's
/// items) records for the same names.
pub fn items(seed: u64, old: &[Item]) -> Vec<Item> {
    let kept: HashMap<&str, &Case> = old
        .iter()
        .filter_map(|item| match item {
            Item::Case(case) if case.ptc.is_some() => Some((case.name.as_str(), case)),
            _ => None,
        })
        .collect();
    let generated = programs(seed);
    let mut items: Vec<Item> = header(seed, generated.len())
        .into_iter()
        .map(Item::Text)
        .collect();
    for (name, program) in generated {
        let previous = kept.get(name.as_str());
        items.push(Item::Case(Case {
            line: 0,
            program: vec![program],
            outcome: old_outcome(old, &name),
            deviation: previous.and_then(|c| c.deviation.clone()),
            ptc: previous.and_then(|c| c.ptc.clone()),
            trailing: Vec::new(),
            name,
        }));
    }
    items
}

fn old_outcome(old: &[Item], name: &str) -> Option<Outcome> {
    old.iter().find_map(|item| match item {
        Item::Case(case) if case.name == name => case.outcome.clone(),
        _ => None,
    })
}

/// Rewrite [`NUMERIC_PATH`]: the seed's programs, Clojure's results, the kept deviations.
pub fn regenerate(root: &Path) -> Result<(), String> {
    let path = root.join(NUMERIC_PATH);
    let old_text = std::fs::read_to_string(&path).unwrap_or_default();
    let old = parse_cases(NUMERIC_PATH, &old_text).map_err(|e| e.join("\n"))?;
    let mut files = [CaseFile {
        path: path.clone(),
        family: "numeric_tower".into(),
        items: items(SEED, &old),
    }];
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    super::oracle::regenerate_results(root, &mut files)?;
    println!("wrote {NUMERIC_PATH}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_gives_the_same_programs_every_time() {
        assert_eq!(programs(SEED), programs(SEED));
        assert_ne!(programs(SEED), programs(SEED + 1));
        assert!(programs(SEED).len() >= 5000);
    }

    #[test]
    fn the_committed_file_holds_the_seeds_programs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let text = std::fs::read_to_string(root.join(NUMERIC_PATH)).unwrap();
        let committed: Vec<(String, String)> = parse_cases(NUMERIC_PATH, &text)
            .unwrap()
            .into_iter()
            .filter_map(|item| match item {
                Item::Case(case) => Some((case.name.clone(), case.program_text())),
                Item::Text(_) => None,
            })
            .collect();
        assert_eq!(
            committed,
            programs(SEED),
            "{NUMERIC_PATH} is not the seed's programs; run `cargo xtask conformance --numeric`"
        );
    }
}

//! Where PTC-Lisp gives another result than Clojure on purpose: one entry per difference, with
//! the names whose results differ and a note short enough for a system prompt. The conformance
//! corpus marks every case that differs with a `;; deviation:` line, and a test checks that each
//! such line belongs to an entry here (it starts with the entry's `deviation`) and that every
//! entry has a case, so the list and the corpus cannot drift apart. `(doc name)` shows the note
//! of every entry naming `name`; the system prompt lists the names and notes.

/// One deliberate difference from Clojure.
#[derive(Debug)]
pub struct Difference {
    /// The functions and forms whose results differ.
    pub names: &'static [&'static str],
    /// The difference in a few words, for the system prompt and `(doc name)`.
    pub note: &'static str,
    /// How the corpus's `;; deviation:` lines for it begin.
    pub deviation: &'static str,
}

/// Every deliberate difference whose result a program can see (refused names are listed with
/// their hints in the catalogue instead), most often met first.
pub const DIFFERENCES: &[Difference] = &[
    Difference {
        names: &["type"],
        note: "gives keywords (:integer :string :map ...)",
        deviation: "type returns a keyword",
    },
    Difference {
        names: &["get", "get-in"],
        note: "and keyword lookup match string keys too",
        deviation: "key leniency for JSON data",
    },
    Difference {
        names: &["map", "filter", "remove", "keep", "mapcat", "take-while"],
        note: "are eager",
        deviation: "finite sequence functions are eager",
    },
    Difference {
        names: &["list?", "counted?", "peek", "pop"],
        note: "take realized seqs as lists",
        deviation: "a realized sequence is a list",
    },
    Difference {
        names: &["re-find", "re-matches", "re-seq", "re-pattern"],
        note: "have no look-around or backreferences",
        deviation: "regexes run in linear time",
    },
    Difference {
        names: &["key", "val", "map-entry?"],
        note: "take entries as [k v] vectors",
        deviation: "map entries are [key value] vectors",
    },
    Difference {
        names: &["str", "pr-str"],
        note: "show an unbounded seq as #lazy-seq[...]",
        deviation: "a lazy sequence that is never realized",
    },
    Difference {
        names: &["eduction", "iteration"],
        note: "compute at once",
        deviation: "eduction and iteration give sequences computed at once",
    },
    Difference {
        names: &["count"],
        note: "counts a range without walking it",
        deviation: "count of a range is computed without walking it",
    },
    Difference {
        names: &["partition-by"],
        note: "consumes lazy input at once",
        deviation: "partition-by",
    },
    Difference {
        names: &["float"],
        note: "is 64-bit",
        deviation: "there are no 32-bit floats",
    },
    Difference {
        names: &["reduced"],
        note: "is the map {:ptc/reduced x}",
        deviation: "reduced is a marked map",
    },
    Difference {
        names: &["subs", "clojure.string/index-of"],
        note: "count Unicode characters",
        deviation: "string positions and lengths count Unicode characters",
    },
    Difference {
        names: &["Math/round", "Math/abs"],
        note: "take any number",
        deviation: "Math/ functions accept integers and floats alike",
    },
    Difference {
        names: &["println", "prn"],
        note: "order maps over 16 entries their own way",
        deviation: "maps and sets with more than 16 entries print in a fixed order",
    },
    Difference {
        names: &["derive", "underive"],
        note: "need a hierarchy value",
        deviation: "the global hierarchy stays empty",
    },
    Difference {
        names: &["with-meta"],
        note: "refuses symbols",
        deviation: "symbols are interned names that carry no metadata",
    },
    Difference {
        names: &["var"],
        note: "names user definitions only",
        deviation: "#' names user definitions only",
    },
];

/// How the corpus's deviation lines for refused names begin: those differences are the
/// catalogue's refusals, whose errors say what to write instead.
pub const REFUSAL_DEVIATIONS: &[&str] = &[
    "slurp and spit are not supported",
    "atom, swap! and reset! are not supported",
    "no randomness",
    "nothing reads the clock",
    "import is not supported",
    "future is not supported",
    "eval is not supported",
    "defmacro is not supported",
    "Java interop is limited",
];

/// The entries naming `name`.
pub(crate) fn of(name: &str) -> impl Iterator<Item = &'static Difference> + '_ {
    DIFFERENCES.iter().filter(move |d| d.names.contains(&name))
}

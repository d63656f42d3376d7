//! The language catalogue: every special form, macro-like form and refused Clojure name, each
//! defined once.
//!
//! The analyzer dispatches on it (a name is a special form, a macro-like form, a refused name
//! or none of these only because an entry here says so), its error messages for refused names
//! take their hints from it, and the language reference (`docs/language.md`) and the system
//! prompt's compact reference are generated from it. Adding a special form means one entry here
//! and one arm where the analyzer handles its [`Special`] variant.

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

/// A special form: evaluated by the language itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    Def,
    Defn,
    Declare,
    Fn,
    Let,
    If,
    Do,
    And,
    Or,
    Quote,
    Loop,
    Recur,
    Letfn,
    Case,
    Try,
    Throw,
    For,
    Doseq,
    Return,
    Fail,
    Comment,
    Ns,
    Require,
    WithOutStr,
    Delay,
    Defonce,
    Var,
    Unquote,
    WithPrecision,
    Doc,
}

/// A macro-like form: rewritten into special forms before analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Macro {
    When,
    WhenNot,
    IfNot,
    Cond,
    Condp,
    IfLet,
    WhenLet,
    IfSome,
    WhenSome,
    WhenFirst,
    Thread,
    ThreadLast,
    ThreadAs,
    SomeThread,
    SomeThreadLast,
    CondThread,
    CondThreadLast,
    Dotimes,
    Assert,
    Doto,
    Pvalues,
    Amap,
    Areduce,
    Memfn,
}

/// What a form is to the analyzer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FormRole {
    Special(Special),
    Macro(Macro),
    /// Written with reader syntax rather than a name (`#(...)`).
    Reader,
}

/// One special or macro-like form, documented like a builtin.
#[derive(Debug)]
pub(crate) struct FormEntry {
    pub name: &'static str,
    /// Other names of the same form (`defn-`, `fn*`, `let*`).
    pub aliases: &'static [&'static str],
    pub role: FormRole,
    /// How it is written; several shapes separated by spaces.
    pub signature: &'static str,
    /// One line saying what it does.
    pub doc: &'static str,
    /// A program using it ...
    pub example: &'static str,
    /// ... and that program's result as `pr-str` prints it (`(fail x)` shows as `failed: x`).
    pub expected: &'static str,
}

macro_rules! form {
    ($role:expr, $name:literal, $aliases:expr, $sig:literal, $doc:literal, $ex:literal => $expected:literal) => {
        FormEntry {
            name: $name,
            aliases: $aliases,
            role: $role,
            signature: $sig,
            doc: $doc,
            example: $ex,
            expected: $expected,
        }
    };
}

/// Every special form and macro-like form, in the order the reference lists them.
pub(crate) const FORMS: &[FormEntry] = &[
    form!(FormRole::Special(Special::Def), "def", &[], "(def name value) (def name \"doc\" value)", "Defines name in the user namespace; definitions last into later turns.", "(def rate 0.2) (* 100 rate)" => "20.0"),
    form!(FormRole::Special(Special::Defonce), "defonce", &[], "(defonce name value)", "Like def, but only while name has no value: a later defonce of the same name (in this turn or a later one) keeps the first value.", "(defonce limit 10) (defonce limit 20) limit" => "10"),
    form!(FormRole::Special(Special::Var), "var", &[], "(var name) #'name", "The var of a user definition, which prints as #'user/name; (meta #'name) gives its :name and :doc.", "(def x \"five\" 5) [(var x) (:doc (meta #'x))]" => "[#'user/x \"five\"]"),
    form!(FormRole::Special(Special::Defn), "defn", &["defn-"], "(defn name [params] body) (defn name \"doc\" ([x] ...) ([x y] ...))", "Defines a function in the user namespace (defn- is the same).", "(defn sq [x] (* x x)) (sq 5)" => "25"),
    form!(FormRole::Special(Special::Declare), "declare", &[], "(declare name ...)", "Names a definition that comes later, so earlier code may refer to it.", "(declare b) (defn a [] (b)) (defn b [] :b) (a)" => ":b"),
    form!(FormRole::Special(Special::Fn), "fn", &["fn*"], "(fn [params] body) (fn name [params] body) (fn ([x] ...) ([x y] ...))", "A function; params may be destructured and end with & rest.", "((fn [x & more] [x more]) 1 2 3)" => "[1 (2 3)]"),
    form!(FormRole::Reader, "#()", &[], "#(... % %2 %&)", "A short function: % (or %1) is the first argument, %2 the second, %& the rest.", "(map #(* % 10) [1 2])" => "(10 20)"),
    form!(FormRole::Special(Special::Let), "let", &["let*"], "(let [name value ...] body)", "Binds names (or destructuring patterns) in order, then evaluates the body.", "(let [{:keys [a b] :or {b 2}} {:a 1} [x & xs] [3 4]] [a b x xs])" => "[1 2 3 (4)]"),
    form!(FormRole::Special(Special::If), "if", &[], "(if test then) (if test then else)", "then when test is truthy (anything but nil and false), else otherwise.", "(if (empty? []) :empty :full)" => ":empty"),
    form!(FormRole::Special(Special::Do), "do", &[], "(do expr ...)", "Evaluates the expressions in order; the value of the last one.", "(do (println \"hi\") 42)" => "42"),
    form!(FormRole::Special(Special::And), "and", &[], "(and x ...)", "The first falsey value, or the last value.", "[(and 1 nil 2) (and 1 2)]" => "[nil 2]"),
    form!(FormRole::Special(Special::Or), "or", &[], "(or x ...)", "The first truthy value, or the last value.", "(or nil false :default)" => ":default"),
    form!(FormRole::Special(Special::Quote), "quote", &[], "(quote form) 'form", "The form itself as data, unevaluated.", "'(a b 1)" => "(a b 1)"),
    form!(FormRole::Special(Special::Unquote), "unquote", &["unquote-splicing"], "(unquote x) (unquote-splicing xs)", "Written ~x and ~@xs inside a syntax-quote `(...), a template of a form: ~x puts in x's value, ~@xs the items of xs, and other symbols are qualified (user/a, clojure.core/inc). An error anywhere else.", "(let [x 3 xs [4 5]] `(a ~x ~@xs))" => "(user/a 3 4 5)"),
    form!(FormRole::Special(Special::Loop), "loop", &[], "(loop [name init ...] body)", "A loop: recur in tail position jumps back with new values.", "(loop [i 0 acc []] (if (< i 3) (recur (inc i) (conj acc i)) acc))" => "[0 1 2]"),
    form!(FormRole::Special(Special::Recur), "recur", &[], "(recur value ...)", "Jumps to the innermost loop or function with new values (tail position only).", "((fn [n acc] (if (zero? n) acc (recur (dec n) (* acc n)))) 5 1)" => "120"),
    form!(FormRole::Special(Special::Letfn), "letfn", &[], "(letfn [(name [params] body) ...] body)", "Local functions that may call each other.", "(letfn [(ev? [n] (if (zero? n) true (od? (dec n)))) (od? [n] (if (zero? n) false (ev? (dec n))))] (ev? 10))" => "true"),
    form!(FormRole::Special(Special::Case), "case", &[], "(case x value expr ... default) (case x (v1 v2) expr ...)", "The expr for the constant equal to x, else the default (an error without one).", "(case :b :a 1 (:b :c) 2 0)" => "2"),
    form!(FormRole::Special(Special::Try), "try", &[], "(try body (catch Exception e handler) (finally cleanup))", "Catches errors thrown in body; e is a map with :message (ex-message works on it).", "(try (nth [1] 5) (catch IndexOutOfBoundsException e :out-of-range) (finally (println \"done\")))" => ":out-of-range"),
    form!(FormRole::Special(Special::Throw), "throw", &[], "(throw (ex-info message data))", "Throws an exception; catch it with try.", "(try (throw (ex-info \"bad\" {:id 1})) (catch Exception e (ex-data e)))" => "{:id 1}"),
    form!(FormRole::Special(Special::For), "for", &[], "(for [x xs :let [y ...] :when test :while test ...] expr)", "A list comprehension; several bindings nest, the last varies fastest.", "(for [x [1 2 3] :when (odd? x) y [:a :b]] [x y])" => "([1 :a] [1 :b] [3 :a] [3 :b])"),
    form!(FormRole::Special(Special::Doseq), "doseq", &[], "(doseq [x xs ...] body)", "Like for, for side effects; returns nil.", "(doseq [x [1 2]] (println x))" => "nil"),
    form!(FormRole::Special(Special::Return), "return", &[], "(return value)", "Ends the program successfully with value.", "(do (return {:done true}) :not-reached)" => "{:done true}"),
    form!(FormRole::Special(Special::Fail), "fail", &[], "(fail reason)", "Ends the program as failed, with reason.", "(fail \"no matching order\")" => "failed: \"no matching order\""),
    form!(FormRole::Special(Special::Doc), "doc", &[], "(doc name)", "Prints the reference of a function, form, tool/ or user definition: how it is called, what it does, an example, and how it differs from Clojure; nil.", "(with-out-str (doc inc))" => "\"(inc x)\\n  x plus one.\\n  Example: (inc 41) ;=> 42\\n\""),
    form!(FormRole::Special(Special::Comment), "comment", &[], "(comment ...)", "Ignores its contents; nil.", "(comment (this is not run))" => "nil"),
    form!(FormRole::Special(Special::Ns), "ns", &[], "(ns name ...) (ns name (:require [clojure.string :as s]))", "Its :require clauses give aliases as require does; the rest is ignored: a program has one namespace, user.", "(ns app.core) (+ 1 2)" => "3"),
    form!(FormRole::Special(Special::WithOutStr), "with-out-str", &[], "(with-out-str body ...)", "Evaluates the body and returns what it printed as a string, instead of printing it.", "(with-out-str (print \"a\" 1) (println \"!\"))" => "\"a 1!\\n\""),
    form!(FormRole::Special(Special::WithPrecision), "with-precision", &[], "(with-precision digits body ...) (with-precision digits :rounding FLOOR body ...)", "Evaluates the body with big-decimal results rounded to that many significant digits (HALF_UP unless :rounding says CEILING, FLOOR, HALF_DOWN, HALF_EVEN, UP, DOWN or UNNECESSARY).", "(with-precision 5 (/ 1M 3))" => "0.33333M"),
    form!(FormRole::Special(Special::Require), "require", &[], "(require '[clojure.walk :as w]) (require '[clojure.string :as s :refer [join]]) (require 'clojure.walk)", "Gives a namespace an alias or refers some of its names, until the program ends; every namespace is loaded already.", "(require '[clojure.set :as cs]) (cs/union #{1} #{2})" => "#{1 2}"),
    form!(FormRole::Special(Special::Delay), "delay", &[], "(delay body ...)", "A value whose body runs the first time it is forced (force, deref or @); later forcings give the same value.", "(let [d (delay (+ 1 2))] [(realized? d) @d (realized? d)])" => "[false 3 true]"),
    form!(FormRole::Macro(Macro::When), "when", &[], "(when test body ...)", "The body when test is truthy, else nil.", "(when (pos? 3) :yes)" => ":yes"),
    form!(FormRole::Macro(Macro::WhenNot), "when-not", &[], "(when-not test body ...)", "The body when test is falsey, else nil.", "(when-not (pos? 3) :yes)" => "nil"),
    form!(FormRole::Macro(Macro::IfNot), "if-not", &[], "(if-not test then else)", "(if (not test) then else).", "(if-not (empty? [1]) :some :none)" => ":some"),
    form!(FormRole::Macro(Macro::Cond), "cond", &[], "(cond test expr ... :else expr)", "The expr after the first truthy test, else nil.", "(let [n 0] (cond (neg? n) :neg (zero? n) :zero :else :pos))" => ":zero"),
    form!(FormRole::Macro(Macro::Condp), "condp", &[], "(condp pred x v1 e1 ... default)", "The expr for the first v with (pred v x) truthy, else the default.", "(condp = 2 1 :one 2 :two :many)" => ":two"),
    form!(FormRole::Macro(Macro::IfLet), "if-let", &[], "(if-let [name test] then else)", "Binds name to test's value and evaluates then when it is truthy, else else.", "(if-let [x (first [7])] (* x 2) :none)" => "14"),
    form!(FormRole::Macro(Macro::WhenLet), "when-let", &[], "(when-let [name test] body ...)", "Binds name and evaluates the body when test's value is truthy, else nil.", "(when-let [m (re-find #\"\\d+\" \"a12\")] (parse-long m))" => "12"),
    form!(FormRole::Macro(Macro::IfSome), "if-some", &[], "(if-some [name test] then else)", "Like if-let, but only nil counts as missing (false is kept).", "(if-some [x false] [x] :none)" => "[false]"),
    form!(FormRole::Macro(Macro::WhenSome), "when-some", &[], "(when-some [name test] body ...)", "Like when-let, but only nil counts as missing.", "(when-some [x 0] (inc x))" => "1"),
    form!(FormRole::Macro(Macro::WhenFirst), "when-first", &[], "(when-first [name coll] body ...)", "Binds name to the first item and evaluates the body when coll is not empty.", "(when-first [x [5 6]] (* x 2))" => "10"),
    form!(FormRole::Macro(Macro::Thread), "->", &[], "(-> x (f a) g ...)", "Threads x through the forms as their first argument.", "(-> {:a 1} (assoc :b 2) (dissoc :a))" => "{:b 2}"),
    form!(FormRole::Macro(Macro::ThreadLast), "->>", &[], "(->> x (f a) g ...)", "Threads x through the forms as their last argument.", "(->> [1 2 3 4] (filter even?) (map inc))" => "(3 5)"),
    form!(FormRole::Macro(Macro::ThreadAs), "as->", &[], "(as-> x name form ...)", "Threads x through the forms, bound to name wherever it is needed.", "(as-> 5 n (* n 2) (- 100 n))" => "90"),
    form!(FormRole::Macro(Macro::SomeThread), "some->", &[], "(some-> x form ...)", "Like ->, but stops at the first nil.", "(some-> {:a {:b 5}} :a :b inc)" => "6"),
    form!(FormRole::Macro(Macro::SomeThreadLast), "some->>", &[], "(some->> x form ...)", "Like ->>, but stops at the first nil.", "(some->> nil (map inc))" => "nil"),
    form!(FormRole::Macro(Macro::CondThread), "cond->", &[], "(cond-> x test form ...)", "Threads x through each form whose test is truthy (as first argument).", "(cond-> {:a 1} true (assoc :b 2) false (assoc :c 3))" => "{:a 1, :b 2}"),
    form!(FormRole::Macro(Macro::CondThreadLast), "cond->>", &[], "(cond->> x test form ...)", "Like cond->, threading as last argument.", "(cond->> [1 2 3] true (map inc) false (filter odd?))" => "(2 3 4)"),
    form!(FormRole::Macro(Macro::Dotimes), "dotimes", &[], "(dotimes [i n] body ...)", "Evaluates the body with i from 0 to n-1, for side effects; nil.", "(dotimes [i 2] (println i))" => "nil"),
    form!(FormRole::Macro(Macro::Assert), "assert", &[], "(assert test) (assert test message)", "nil when test is truthy, else throws \"Assert failed: \" with the message and the test.", "(try (assert (pos? -1)) (catch Exception e (ex-message e)))" => "\"Assert failed: (pos? -1)\""),
    form!(FormRole::Macro(Macro::Memfn), "memfn", &[], "(memfn method arg ...)", "A function calling the Java method on its first argument with the rest: (memfn toUpperCase) is (fn [s] (.toUpperCase s)).", "[(map (memfn toUpperCase) [\"a\" \"b\"]) ((memfn substring start end) \"hello\" 1 3)]" => "[(\"A\" \"B\") \"el\"]"),
    form!(FormRole::Macro(Macro::Doto), "doto", &[], "(doto x (f a) g ...)", "Calls each form with x inserted as first argument, for side effects; returns x.", "(doto {:a 1} println)" => "{:a 1}"),
    form!(FormRole::Macro(Macro::Pvalues), "pvalues", &[], "(pvalues expr ...)", "The values of the expressions, evaluated concurrently as pcalls does, in order.", "(pvalues (+ 1 2) (* 2 3))" => "(3 6)"),
    form!(FormRole::Macro(Macro::Amap), "amap", &[], "(amap a i ret expr)", "A copy of the array (vector) a with each item i replaced by expr, evaluated with i and ret (the copy so far) bound.", "(let [a (int-array [1 2 3])] (amap a i ret (* 2 (aget a i))))" => "[2 4 6]"),
    form!(FormRole::Macro(Macro::Areduce), "areduce", &[], "(areduce a i acc init expr)", "Reduces the array (vector) a: acc starts as init and becomes expr for each index i.", "(let [a [1 2 3]] (areduce a i acc 0 (+ acc (aget a i))))" => "6"),
];

/// The symbols Clojure 1.11's compiler handles as special forms (`special-symbol?`), which a
/// syntax-quote leaves unqualified.
pub(crate) const CLOJURE_SPECIAL_FORMS: &[&str] = &[
    "def",
    "loop*",
    "recur",
    "if",
    "case*",
    "let*",
    "letfn*",
    "do",
    "fn*",
    "quote",
    "var",
    "import*",
    ".",
    "set!",
    "deftype*",
    "reify*",
    "try",
    "throw",
    "monitor-enter",
    "monitor-exit",
    "catch",
    "finally",
    "new",
    "&",
];

/// Forms the system prompt's compact reference leaves out: rarely written, and the full
/// reference lists them all the same.
pub(crate) const FORMS_LEFT_OUT_OF_PROMPT: &[&str] = &[
    "assert",
    "doto",
    "delay",
    "pvalues",
    "amap",
    "areduce",
    "defonce",
    "var",
    "unquote",
    "memfn",
    "with-precision",
];

/// Whether a refused name is refused everywhere or only where no definition has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A form or function outside the subset: refused even where a program defines the name.
    Always,
    /// A Clojure function outside the subset that a program may still define under the same
    /// name: only a call that finds no definition is refused.
    Undefined,
}

/// Clojure names outside the subset, which get an explanation instead of "undefined symbol".
#[derive(Debug)]
pub(crate) struct Refused {
    pub names: &'static [&'static str],
    pub refusal: Refusal,
    /// What to write instead.
    pub hint: &'static str,
    /// Whether the system prompt's compact reference names the group: only names models often
    /// reach for earn their tokens there; the others are refused with the same hint all the
    /// same, and the full reference lists them.
    pub in_prompt: bool,
}

macro_rules! refused {
    ($refusal:ident, [$($name:literal),+ $(,)?], $hint:literal) => {
        Refused {
            names: &[$($name),+],
            refusal: Refusal::$refusal,
            hint: $hint,
            in_prompt: true,
        }
    };
    (rare $refusal:ident, [$($name:literal),+ $(,)?], $hint:literal) => {
        Refused {
            names: &[$($name),+],
            refusal: Refusal::$refusal,
            hint: $hint,
            in_prompt: false,
        }
    };
}

/// Every refused name, grouped by the hint it gets.
pub(crate) const REFUSED: &[Refused] = &[
    refused!(
        Always,
        ["defmacro", "macroexpand"],
        "PTC-Lisp has no macros; write a function with defn"
    ),
    refused!(
        Always,
        ["eval", "read-string", "load-string", "load", "load-file"],
        "programs cannot evaluate code they build; write the code directly"
    ),
    refused!(
        Always,
        ["atom", "swap!", "reset!", "compare-and-set!", "add-watch"],
        "PTC-Lisp has no mutable state: instead of (let [acc (atom [])] (doseq [x xs] (swap! acc conj (f x))) @acc) write (reduce (fn [acc x] (conj acc (f x))) [] xs) or (mapv f xs), count with (reduce (fn [n x] (if (p x) (inc n) n)) 0 xs), carry several values in a map through reduce or loop/recur, and keep values across turns with def"
    ),
    refused!(
        Always,
        ["slurp", "spit"],
        "programs cannot read or write files; call a tool/ function"
    ),
    refused!(
        Always,
        ["future", "promise", "deliver", "agent", "send", "thread"],
        "use pmap or pcalls to run tool calls in parallel"
    ),
    refused!(
        Always,
        ["import", "use", "refer", "in-ns"],
        "everything available is already loaded (clojure.string as str/, clojure.set as set/, clojure.walk, clojure.edn); give another alias with (require '[clojure.string :as s])"
    ),
    refused!(
        Always,
        [
            "binding",
            "set!",
            "var-set",
            "alter-var-root",
            "with-redefs"
        ],
        "there are no dynamic vars; pass values as arguments"
    ),
    refused!(
        Always,
        ["ref", "dosync", "alter", "commute"],
        "there are no refs; use reduce or loop/recur"
    ),
    refused!(
        Always,
        [
            "defrecord",
            "deftype",
            "defprotocol",
            "reify",
            "proxy",
            "defmulti",
            "defmethod",
            "extend-type",
            "extend-protocol",
            "gen-class",
            "new"
        ],
        "there are no types or protocols; use maps and functions"
    ),
    refused!(
        Always,
        ["while"],
        "there is no mutable state to end a while loop; use loop/recur"
    ),
    refused!(
        Undefined,
        [
            "rand",
            "rand-int",
            "rand-nth",
            "shuffle",
            "random-sample",
            "random-uuid"
        ],
        "there is no randomness: a program must give the same result every time it is replayed; pick items deterministically (first, nth, take, sort-by)"
    ),
    refused!(
        Undefined,
        ["lazy-seq", "lazy-cat"],
        "build unbounded sequences from range, iterate, repeat or cycle with map, filter, take and friends, or compute a finite one with loop/recur"
    ),
    refused!(
        Undefined,
        [
            "transient",
            "persistent!",
            "conj!",
            "assoc!",
            "dissoc!",
            "disj!",
            "pop!"
        ],
        "collections are persistent and updating them is cheap: use conj/assoc inside reduce or loop/recur"
    ),
    refused!(
        Undefined,
        ["volatile!", "vswap!", "vreset!"],
        "there is no mutable state: carry the value through reduce or loop/recur"
    ),
    refused!(
        Undefined,
        ["sorted-map-by", "sorted-set-by"],
        "sorted collections use the natural order only: build the map or set, then order its entries with (sort-by key-fn comparator coll)"
    ),
    refused!(
        Undefined,
        [
            "System/currentTimeMillis",
            "System/nanoTime",
            "LocalDate/now",
            "Instant/now",
            "LocalDateTime/now",
            "java.time.LocalDate/now",
            "java.time.Instant/now",
            "java.time.LocalDateTime/now",
            "time"
        ],
        "a program must give the same result every time it runs, so it cannot read the clock; take the current date or time from the input data or a tool"
    ),
    refused!(
        rare Undefined,
        ["*in*", "*out*", "*err*", "*file*", "*command-line-args*", "read", "read+string", "read-line", "with-in-str", "line-seq", "file-seq", "with-open", "PrintWriter-on", "resultset-seq", "load-reader", "clojure.edn/read"],
        "a program reaches the outside world only through tool/ functions, its inputs are data/ and tool results, and printed text is captured per run; split text into lines with clojure.string/split-lines and read data from text with clojure.edn/read-string"
    ),
    refused!(
        rare Undefined,
        ["compile", "*compile-files*", "*compile-path*", "*compiler-options*", "*fn-loader*", "*use-context-classloader*", "*source-path*", "*allow-unresolved-vars*", "*warn-on-reflection*", "*unchecked-math*", "*read-eval*", "*reader-resolver*", "*suppress-read*", "add-classpath", "with-loading-context"],
        "there is no JVM compiler or class loader to configure: a program is read and analysed once, then run in a sandbox"
    ),
    refused!(
        rare Undefined,
        ["definline", "macroexpand-1", "clojure.walk/macroexpand-all", "gensym", "destructure"],
        "PTC-Lisp has no macros: write a function with defn, and destructure directly in let, fn and loop"
    ),
    refused!(
        rare Undefined,
        ["*ns*", "create-ns", "remove-ns", "all-ns", "find-ns", "the-ns", "ns-name", "ns-aliases", "ns-imports", "ns-interns", "ns-map", "ns-publics", "ns-refers", "ns-resolve", "ns-unalias", "ns-unmap", "intern", "refer-clojure", "loaded-libs", "requiring-resolve", "resolve", "find-var", "find-keyword", "alias", "with-redefs-fn", "test", "bound?", "var-get", "alter-meta!", "reset-meta!"],
        "a program runs in one namespace, user, whose only changes are its own definitions, and namespaces and vars are not values: refer to a definition by its name, define names with def, and give a namespace an alias with (require '[clojure.string :as s])"
    ),
    refused!(
        rare Undefined,
        ["*1", "*2", "*3", "*e"],
        "the values and the last error of earlier turns exist only in an agent's turns (or a runtime given a History): keep a value for later with (def name value)"
    ),
    refused!(
        rare Undefined,
        ["with-bindings", "with-bindings*", "bound-fn", "bound-fn*", "get-thread-bindings", "push-thread-bindings", "pop-thread-bindings", "thread-bound?", "with-local-vars", "*print-length*", "*print-level*", "*print-meta*", "*print-dup*", "*print-readably*", "*print-namespace-maps*", "*flush-on-newline*", "*assert*", "*math-context*", "*data-readers*", "*default-data-reader-fn*", "default-data-readers", "*verbose-defrecords*", "*clojure-version*", "clojure-version"],
        "there are no dynamic vars or settings to bind: pass values as arguments, and carry changing values through reduce or loop/recur"
    ),
    refused!(
        rare Undefined,
        ["*agent*", "send-off", "send-via", "await", "await-for", "await1", "agent-error", "agent-errors", "clear-agent-errors", "restart-agent", "error-handler", "error-mode", "set-error-handler!", "set-error-mode!", "release-pending-sends", "set-agent-send-executor!", "set-agent-send-off-executor!", "shutdown-agents", "future-call", "future-cancel", "future-cancelled?", "future-done?", "future?", "seque", "locking", "add-tap", "remove-tap", "tap>"],
        "nothing runs on other threads or outlives the run: use pmap or pcalls to run tool calls in parallel, and println to show a value"
    ),
    refused!(
        rare Undefined,
        ["swap-vals!", "reset-vals!", "remove-watch", "set-validator!", "get-validator", "volatile?", "ref-set", "ensure", "sync", "io!", "ref-history-count", "ref-max-history", "ref-min-history"],
        "there are no mutable references: accumulate with reduce or loop/recur, and keep values across turns with def"
    ),
    refused!(
        rare Undefined,
        ["aset", "aset-boolean", "aset-byte", "aset-char", "aset-double", "aset-float", "aset-int", "aset-long", "aset-short", "booleans", "bytes", "chars", "doubles", "floats", "ints", "longs", "shorts"],
        "there are no Java arrays: use vectors, and change an element with (assoc v i x)"
    ),
    refused!(
        rare Undefined,
        ["re-matcher", "re-groups"],
        "there are no mutable Java matchers: use re-find, re-matches or re-seq on the pattern, which return the groups"
    ),
    refused!(
        rare Undefined,
        ["chunk", "chunk-append", "chunk-buffer", "chunk-cons", "chunk-first", "chunk-next", "chunk-rest", "chunked-seq?"],
        "chunked sequences are internal machinery: build sequences with map, filter, range, iterate and friends"
    ),
    refused!(
        rare Undefined,
        ["extend", "extenders", "extends?", "satisfies?", "find-protocol-impl", "find-protocol-method", "-cache-protocol-fn", "-reset-methods", "method-sig", "Inst", "inst-ms*", "defstruct", "create-struct", "struct", "struct-map", "accessor", "get-method", "methods", "prefer-method", "prefers", "remove-method", "remove-all-methods"],
        "there are no types, structs, protocols or multimethods: use maps (with keywords as accessors), functions, and case or cond to dispatch"
    ),
    refused!(
        rare Undefined,
        ["proxy-super", "proxy-call-with-super", "proxy-mappings", "proxy-name", "construct-proxy", "get-proxy-class", "init-proxy", "update-proxy", "gen-interface", "definterface", "bean", "class", "class?", "instance?", "cast", "bases", "supers", "enumeration-seq", "iterator-seq", "Throwable->map", "StackTraceElement->vec", "->ArrayChunk", "->Eduction", "->Vec", "->VecNode", "->VecSeq", "EMPTY-NODE", "primitives-classnames", "print-method", "print-dup", "print-ctor", "print-simple", "munge", "namespace-munge", "reader-conditional", "reader-conditional?"],
        "Java classes and objects are not values in PTC-Lisp: test a value's kind with the predicates (string?, map?, number?, ...), read a caught error with ex-message and ex-data, and print values with pr-str"
    ),
];

/// The refused group `name` belongs to.
pub(crate) fn refused(name: &str) -> Option<&'static Refused> {
    match lookup(name)? {
        Listed::Refused(r) => Some(r),
        Listed::Form(_) => None,
    }
}

/// What a name is in the catalogue: a form, or a refused name.
pub(crate) enum Listed {
    Form(&'static FormEntry),
    Refused(&'static Refused),
}

/// What `name` is in the catalogue, if anything.
pub(crate) fn lookup(name: &str) -> Option<&'static Listed> {
    index().get(name)
}

/// Every name of the catalogue (aliases included), found with one hash lookup: the analyzer
/// looks up the head of every list it meets.
fn index() -> &'static FxHashMap<&'static str, Listed> {
    static INDEX: OnceLock<FxHashMap<&'static str, Listed>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let forms = FORMS.iter().flat_map(|f| {
            std::iter::once(f.name)
                .chain(f.aliases.iter().copied())
                .map(move |name| (name, Listed::Form(f)))
        });
        let refused = REFUSED
            .iter()
            .flat_map(|r| r.names.iter().map(move |name| (*name, Listed::Refused(r))));
        forms.chain(refused).collect()
    })
}

/// Why `what` is missing from the subset, and what to write instead.
pub(crate) fn unsupported_message(what: &str) -> String {
    let hint = refused(what).map_or("it is outside the PTC-Lisp subset", |r| r.hint);
    format!("{what} is not supported: {hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_in_one_entry_only() {
        let mut names: Vec<&str> = FORMS
            .iter()
            .flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()))
            .chain(REFUSED.iter().flat_map(|r| r.names.iter().copied()))
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a name appears twice in the catalogue");
    }

    #[test]
    fn every_form_is_documented() {
        for f in FORMS {
            assert!(f.signature.starts_with(['(', '#']), "{}", f.name);
            assert!(f.doc.ends_with('.'), "{}", f.name);
            assert!(!f.example.is_empty(), "{}", f.name);
        }
    }
}

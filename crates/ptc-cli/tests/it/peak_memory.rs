//! Peak resident memory of `ptc eval`: on a 100,000-record data file, and on every program that
//! tries to build more than its memory budget. The budget must hold within a factor of 2: a
//! run that ends with a memory limit error may grow the process by at most twice the budget
//! over a trivial run (`ptc eval -e 1`) with the same files loaded, plus [`CODE_SLACK`].
//!
//! Each run is a child process reaped with `wait4`, whose resource usage is that one child's
//! own peak resident set (`ru_maxrss`), read by the kernel when the child ended: nothing has to
//! sample the child while it runs, and other tests running at the same time do not count.
//!
//! `cargo test -p ptc-cli --test it peak_memory -- --nocapture` prints the measurements;
//! docs/security.md quotes them.

#![cfg(target_os = "linux")]

use pretty_assertions::assert_eq;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// Resident memory a run may add that is not values: the pages of the program's own code that
/// a run touches and `ptc eval -e 1` does not (a regex engine, the printer, the error path),
/// thread stacks. Without it, a budget of 100,000 bytes would be tested against noise.
const CODE_SLACK: u64 = MIB;

/// The memory budget of an adversarial case that does not set its own (the corpus's default).
const CORPUS_BUDGET: u64 = 16 * MIB;

/// Far more than any case needs: memory, not time, must end these runs, even in a debug build
/// on a loaded machine.
const TIMEOUT_MS: &str = "60000";

/// What one run of `ptc eval` did.
struct Run {
    exit_code: Option<i32>,
    stdout: String,
    stderr: String,
    peak_rss: u64,
    elapsed: Duration,
}

impl Run {
    /// The `--json` report.
    fn report(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not a JSON report ({e}): {}{}", self.stdout, self.stderr))
    }

    fn error_kind(&self) -> Option<String> {
        self.report()["error"]["kind"].as_str().map(str::to_string)
    }
}

/// Run `ptc eval` with `args` and measure its peak resident memory.
fn ptc_eval(args: &[&str]) -> Run {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ptc"))
        .arg("eval")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ptc starts");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            pipe.read_to_string(&mut text).expect("readable output");
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data, valid when zeroed.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child, writing into the two locals above. The child is
        // reaped here, so `child` must not be waited for again (it is only dropped).
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        assert_eq!(
            error.kind(),
            std::io::ErrorKind::Interrupted,
            "wait4 failed: {error}"
        );
    }
    let elapsed = started.elapsed();
    drop(child);
    Run {
        exit_code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stdout: stdout.join().expect("stdout drained"),
        stderr: stderr.join().expect("stderr drained"),
        // Linux reports kilobytes.
        peak_rss: u64::try_from(usage.ru_maxrss).expect("a size") * 1024,
        elapsed,
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

/// A directory of its own for the files of one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("ptc-peak-memory-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        TempDir(dir)
    }

    fn file(&self, name: &str, contents: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("write a test file");
        path.to_str().expect("a UTF-8 path").to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const CATEGORIES: [&str; 10] = [
    "books", "garden", "tools", "toys", "music", "games", "office", "kitchen", "sports", "food",
];

/// `{"records": [...]}` with `n` records of seven fields.
fn records_json(n: usize) -> String {
    let mut json = String::from("{\"records\": [");
    for i in 0..n {
        if i > 0 {
            json.push_str(",\n");
        }
        json.push_str(&format!(
            "{{\"id\": {i}, \"name\": \"item-{i}\", \"category\": \"{}\", \"price\": {}.{:02}, \
             \"quantity\": {}, \"in_stock\": {}, \"tags\": [\"t{}\", \"t{}\"]}}",
            CATEGORIES[i % CATEGORIES.len()],
            (i * 37) % 1000,
            i % 100,
            i % 7,
            i % 3 != 0,
            i % 5,
            i % 11,
        ));
    }
    json.push_str("]}");
    json
}

/// A pipeline over the 100,000 records: filter, sum, group, sort.
const PIPELINE: &str = "[(->> data/records (filter :in_stock) (map :quantity) (reduce +))
 (count (group-by :category data/records))
 (:id (first (sort-by :price data/records)))
 (count (mapv #(assoc % :total (* (:price %) (:quantity %))) data/records))]";

#[test]
fn a_pipeline_over_a_hundred_thousand_records() {
    let n = 100_000;
    let dir = TempDir::new("records");
    let json = records_json(n);
    let data = dir.file("records.json", &json);
    let bare = ptc_eval(&["--json", "-e", "1"]);
    let loaded = ptc_eval(&["--data", &data, "--json", "-e", "1"]);
    let pipeline = ptc_eval(&[
        "--data",
        &data,
        "--json",
        "--timeout-ms",
        TIMEOUT_MS,
        "-e",
        PIPELINE,
    ]);
    let in_stock_quantity: usize = (0..n).filter(|i| i % 3 != 0).map(|i| i % 7).sum();
    for (run, result) in [
        (&bare, "1".to_string()),
        (&loaded, "1".to_string()),
        (&pipeline, format!("[{in_stock_quantity} 10 0 {n}]")),
    ] {
        assert_eq!(
            (run.exit_code, run.report()["value_clojure"].as_str()),
            (Some(0), Some(result.as_str())),
            "{}",
            run.stderr
        );
    }
    let data_rss = loaded.peak_rss.saturating_sub(bare.peak_rss);
    let pipeline_rss = pipeline.peak_rss.saturating_sub(loaded.peak_rss);
    println!(
        "\n{n} records, {} of JSON\n\
         | run                         | peak RSS  | over the previous row | time     |\n\
         |-----------------------------|-----------|-----------------------|----------|\n\
         | ptc eval -e 1               | {:>9} |                       | {:>8.2?} |\n\
         | ptc eval --data FILE -e 1   | {:>9} | {:>21} | {:>8.2?} |\n\
         | ptc eval --data FILE (pipeline) | {:>9} | {:>21} | {:>8.2?} |",
        mib(json.len() as u64),
        mib(bare.peak_rss),
        bare.elapsed,
        mib(loaded.peak_rss),
        mib(data_rss),
        loaded.elapsed,
        mib(pipeline.peak_rss),
        mib(pipeline_rss),
        pipeline.elapsed,
    );
}

/// One program that must end at its memory budget.
struct Case {
    name: String,
    source: String,
    budget: u64,
    max_steps: Option<String>,
    /// Whether the run loads the records file.
    with_data: bool,
}

/// A case of the adversarial corpus as written.
#[derive(Default)]
struct Written {
    name: String,
    /// `key=value` settings of its `;; limits:` line.
    limits: Vec<(String, String)>,
    source: String,
    /// Its expectation line.
    expect: String,
}

/// The cases of the adversarial corpus that end with a memory limit error and that `ptc eval`
/// can run with the same limits, and the names of those it cannot.
fn corpus_cases() -> (Vec<Case>, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ptc-lisp/tests/adversarial");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the adversarial corpus")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    let mut skipped = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a readable case file");
        let mut parsed: Vec<Written> = Vec::new();
        for line in text.lines() {
            if let Some(name) = line.strip_prefix(";; ==== ") {
                parsed.push(Written {
                    name: name.trim().to_string(),
                    ..Written::default()
                });
            } else if let Some(case) = parsed.last_mut() {
                if let Some(limits) = line.strip_prefix(";; limits:") {
                    case.limits = limits
                        .split_whitespace()
                        .map(|s| {
                            let (k, v) = s.split_once('=').expect("a limit is key=value");
                            (k.to_string(), v.to_string())
                        })
                        .collect();
                } else if line.starts_with(";; !!") || line.starts_with(";; =>") {
                    case.expect = line.to_string();
                } else if !line.starts_with(";;") {
                    case.source.push_str(line);
                    case.source.push('\n');
                }
            }
        }
        for Written {
            name,
            limits,
            source,
            expect,
        } in parsed
        {
            if !expect.starts_with(";; !! error[memory_limit]") {
                continue;
            }
            // `ptc eval` sets the timeout, the memory and the step budgets; the cases' tools
            // are the corpus's own (the fixture tools of `ptc eval` return fixed values).
            let settable = limits.iter().all(|(k, _)| {
                matches!(k.as_str(), "max_memory_bytes" | "max_steps" | "timeout_ms")
            });
            if !settable || source.contains("tool/") || source.contains("{{") {
                skipped.push(name);
                continue;
            }
            let get = |key: &str| {
                limits
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.clone())
            };
            cases.push(Case {
                name,
                source,
                budget: get("max_memory_bytes")
                    .map_or(CORPUS_BUDGET, |v| v.parse().expect("a number")),
                max_steps: get("max_steps"),
                with_data: false,
            });
        }
    }
    (cases, skipped)
}

/// Programs that build too much in ways the corpus does not: records, maps, sets, strings,
/// nested data, `into`. Some are refused before they build anything (their size is known up
/// front); the others grow step by step until the budget stops them.
fn more_cases() -> Vec<Case> {
    let case = |name: &str, source: &str, budget: u64, with_data: bool| Case {
        name: name.to_string(),
        source: source.to_string(),
        budget,
        max_steps: None,
        with_data,
    };
    vec![
        case(
            "into-a-vector-over-a-range",
            "(into [] (range 1000000000))",
            16 * MIB,
            false,
        ),
        case(
            "a-big-map-from-a-range",
            "(into {} (map (fn [i] [i (str \"v\" i)]) (range 100000000)))",
            16 * MIB,
            false,
        ),
        case(
            "zipmap-of-ranges",
            "(zipmap (range 100000000) (range))",
            16 * MIB,
            false,
        ),
        case(
            "nested-records-from-a-range",
            "(vec (for [i (range 100000000)] {:id i :tags [i (str i)] :meta {:n i}}))",
            16 * MIB,
            false,
        ),
        case(
            "join-of-a-range",
            "(clojure.string/join \",\" (range 100000000))",
            16 * MIB,
            false,
        ),
        case(
            "string-doubling",
            "(loop [s \"a\"] (recur (str s s)))",
            64 * MIB,
            false,
        ),
        case(
            "nested-records-grown-by-conj",
            "(loop [v [] i 0] (recur (conj v {:id i :tags [i (str i)] :meta {:n i}}) (inc i)))",
            16 * MIB,
            false,
        ),
        case(
            "hash-map-grown-by-assoc",
            "(loop [m {} i 0] (recur (assoc m i (str i)) (inc i)))",
            8 * MIB,
            false,
        ),
        case(
            "hash-set-grown-by-conj",
            "(loop [s #{} i 0] (recur (conj s (str i)) (inc i)))",
            8 * MIB,
            false,
        ),
        case(
            "small-sets-kept",
            "(loop [v [] i 0] (recur (conj v #{i (str i)}) (inc i)))",
            16 * MIB,
            false,
        ),
        case(
            "closures-kept",
            "(loop [v [] i 0] (recur (conj v (fn [] i)) (inc i)))",
            16 * MIB,
            false,
        ),
        case(
            "versions-of-a-short-vector-kept",
            "(let [s (vec (range 30))] (loop [v [] i 0] (recur (conj v (conj s i)) (inc i))))",
            16 * MIB,
            false,
        ),
        case(
            "versions-of-a-small-map-kept",
            "(let [m {:a 1 :b 2 :c 3 :d 4 :e 5 :f 6 :g 7 :h 8}]
               (loop [v [] i 0] (recur (conj v (assoc m :a i)) (inc i))))",
            16 * MIB,
            false,
        ),
        case(
            "versions-of-a-large-hash-map-kept",
            "(let [m (zipmap (range 1000) (range 1000))] (mapv #(assoc m % %) (range 100000000)))",
            16 * MIB,
            false,
        ),
        case(
            "versions-of-a-large-sorted-map-kept",
            "(let [m (into (sorted-map) (zipmap (range 1000) (range 1000)))]
               (mapv #(assoc m % %) (range 100000000)))",
            16 * MIB,
            false,
        ),
        case(
            "versions-of-a-large-hash-set-kept",
            "(let [s (set (range 1000))] (mapv #(conj s (str %)) (range 100000000)))",
            16 * MIB,
            false,
        ),
        case(
            "versions-of-a-long-vector-kept",
            "(let [v (vec (range 1000))] (mapv #(assoc v 0 %) (range 100000000)))",
            16 * MIB,
            false,
        ),
        case(
            "rests-of-a-long-vector-kept",
            "(let [v (conj (vec (range 1000)) 0)] (mapv #(rest (conj v %)) (range 100000000)))",
            16 * MIB,
            false,
        ),
        case(
            "records-with-their-text",
            "(mapv #(assoc % :text (pr-str %)) (concat data/records data/records data/records))",
            16 * MIB,
            true,
        ),
        case(
            "records-doubled-with-a-new-key",
            "(loop [v data/records] (recur (into v (map #(assoc % :copy true) v))))",
            32 * MIB,
            true,
        ),
        case(
            "records-indexed-by-id",
            "(reduce (fn [m r] (assoc m (:id r) (dissoc r :tags))) {} data/records)",
            32 * MIB,
            true,
        ),
    ]
}

#[test]
fn memory_limit_cases_stay_within_twice_their_budget() {
    let (mut cases, skipped) = corpus_cases();
    // Cases that need a limit `ptc eval` does not set (the call depth) or a host tool that
    // builds its result in Rust.
    assert_eq!(
        skipped,
        [
            "shared-structure-to-a-tool",
            "huge-tool-result",
            "deep-recursion-with-a-huge-depth-limit"
        ]
    );
    assert!(cases.len() >= 25, "only {} corpus cases", cases.len());
    cases.extend(more_cases());
    let dir = TempDir::new("cases");
    let data = dir.file("records.json", &records_json(100_000));
    let baseline = ptc_eval(&["--json", "-e", "1"]);
    let data_baseline = ptc_eval(&["--data", &data, "--json", "-e", "1"]);
    assert_eq!(
        (baseline.exit_code, data_baseline.exit_code),
        (Some(0), Some(0))
    );
    let mut table = format!(
        "\nbaseline (ptc eval -e 1): {}; with the records file: {}\n\
         | case                                        | budget    | peak RSS  | growth    | growth / budget | time     |\n\
         |---------------------------------------------|-----------|-----------|-----------|-----------------|----------|\n",
        mib(baseline.peak_rss),
        mib(data_baseline.peak_rss),
    );
    let mut failures = Vec::new();
    for case in &cases {
        let budget = case.budget.to_string();
        let mut args = vec![
            "--json",
            "--timeout-ms",
            TIMEOUT_MS,
            "--max-memory",
            &budget,
        ];
        if let Some(steps) = &case.max_steps {
            args.extend(["--max-steps", steps]);
        }
        if case.with_data {
            args.extend(["--data", &data]);
        }
        args.extend(["-e", &case.source]);
        let run = ptc_eval(&args);
        let base = if case.with_data {
            &data_baseline
        } else {
            &baseline
        };
        let growth = run.peak_rss.saturating_sub(base.peak_rss);
        let ratio = growth as f64 / case.budget as f64;
        table.push_str(&format!(
            "| {:<43} | {:>9} | {:>9} | {:>9} | {:>15.2} | {:>8.2?} |\n",
            case.name,
            mib(case.budget),
            mib(run.peak_rss),
            mib(growth),
            ratio,
            run.elapsed
        ));
        if run.exit_code != Some(3) || run.error_kind().as_deref() != Some("memory_limit") {
            failures.push(format!(
                "{}: exit {:?}, {}{}",
                case.name, run.exit_code, run.stdout, run.stderr
            ));
        } else if growth > 2 * case.budget + CODE_SLACK {
            failures.push(format!(
                "{}: grew by {} on a budget of {}",
                case.name,
                mib(growth),
                mib(case.budget)
            ));
        }
    }
    println!("{table}");
    assert_eq!(failures, Vec::<String>::new());
}

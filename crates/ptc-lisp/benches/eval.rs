//! Evaluation speed, against the engine issue's targets (medians on the 2-core reference
//! machine): parse + evaluate a one-line pipeline ≤ 5 µs; a filter → group-by → reduce pipeline
//! over 10,000 maps held in `data/` ≤ 2 ms; a 100,000-iteration `loop`/`recur` ≤ 5 ms.

use criterion::{Criterion, criterion_group, criterion_main};
use ptc_lisp::{Program, Runtime, UserNamespace, Value};
use std::hint::black_box;

#[path = "../tests/support/products.rs"]
mod products;
use products::products_json;

const SMALL: &str = "(let [xs [1 2 3 4 5]] (reduce + (map inc (filter odd? xs))))";

const PIPELINE: &str = "
(->> data/products
     (filter #(and (:active %) (> (:price %) 20.0)))
     (group-by :category)
     (reduce-kv (fn [acc category items] (assoc acc category (reduce + (map :price items)))) {}))";

const LOOP: &str = "(loop [i 0 acc 0] (if (< i 100000) (recur (inc i) (+ acc i)) acc))";

fn benches(c: &mut Criterion) {
    // Every input is built before anything is measured, so that where the data set lands in
    // memory does not depend on which benchmarks ran before it (a run of one benchmark alone
    // measures what the whole suite does).
    let data = ptc_lisp::from_json_str(&products_json(10_000)).expect("valid JSON");
    let data_runtime = Runtime::new().with_data_map(&data).expect("a map");
    let pipeline = Program::parse(PIPELINE).expect("valid program");
    let counting_loop = Program::parse(LOOP).expect("valid program");

    let runtime = Runtime::new();
    let memory = UserNamespace::new();
    c.bench_function("parse+eval small pipeline", |b| {
        b.iter(|| {
            let out = runtime.run_str(black_box(SMALL), &memory);
            assert_eq!(out.outcome.value(), Some(&Value::Int(12)));
        })
    });

    // The same program as a run that can suspend at tool calls (as agents run programs): the
    // cost of its own stack.
    c.bench_function("parse+eval small pipeline, suspendable", |b| {
        b.iter(|| match runtime.start(black_box(SMALL), &memory) {
            ptc_lisp::Progress::Finished(out) => {
                assert_eq!(out.outcome.value(), Some(&Value::Int(12)));
            }
            ptc_lisp::Progress::Suspended(_) => unreachable!("no tool is called"),
        })
    });

    c.bench_function("filter-group-by-reduce over 10,000 maps", |b| {
        b.iter(|| {
            let out = data_runtime.run(black_box(&pipeline), &memory);
            assert!(out.outcome.value().is_some(), "{:?}", out.outcome);
        })
    });

    c.bench_function("loop-recur 100,000 iterations", |b| {
        b.iter(|| {
            let out = runtime.run(black_box(&counting_loop), &memory);
            assert_eq!(out.outcome.value(), Some(&Value::Int(4_999_950_000)));
        })
    });
}

/// Run one program `n` times (for the `profile_eval` example).
pub fn profile(which: &str, n: usize) {
    let memory = UserNamespace::new();
    let runtime = if which == "pipeline" {
        let data = ptc_lisp::from_json_str(&products_json(10_000)).expect("valid JSON");
        Runtime::new().with_data_map(&data).expect("a map")
    } else {
        Runtime::new()
    };
    let source = match which {
        "small" => SMALL,
        "pipeline" => PIPELINE,
        "loop" => LOOP,
        other => panic!("unknown program {other}: small, pipeline or loop"),
    };
    for _ in 0..n {
        black_box(runtime.run_str(source, &memory));
    }
}

criterion_group!(eval, benches);
criterion_main!(eval);

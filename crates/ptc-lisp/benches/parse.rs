//! Reader throughput: lexing, the delimiter pass and the grammar, on a one-line program and on
//! a realistic ~40-line program.

use criterion::{Criterion, criterion_group, criterion_main};
use ptc_lisp::{Form, Program, ReadLimits};
use std::hint::black_box;

/// The forms of `src`, read with `limits`.
fn read(src: &str, limits: &ReadLimits) -> ptc_lisp::Result<Vec<Form>> {
    Program::parse_with(src, limits).map(|p| p.forms().to_vec())
}

const SMALL: &str = "(let [xs [1 2 3 4 5]] (reduce + (map inc (filter odd? xs))))";

const REALISTIC: &str = r#"
;; Summarise paid orders per customer and keep the largest ones.
(defn order-total
  "Sum of line amounts of one order, after its discount."
  [{:keys [lines discount] :or {discount 0}}]
  (let [gross (reduce + (map (fn [{:keys [qty price]}] (* qty price)) lines))]
    (- gross (* gross discount))))

(defn customer-summary
  "One row per customer: id, name, order count and total spent."
  [customers orders]
  (let [by-customer (group-by :customer-id orders)]
    (for [{:keys [id name tier]} customers
          :let [own (get by-customer id [])
                total (reduce + 0.0 (map order-total own))]
          :when (seq own)]
      {:id id
       :name name
       :tier (or tier :standard)
       :orders (count own)
       :total total})))

(def paid
  (->> (tool/fetch-orders {:status "paid" :since "2024-01-01"})
       (filter #(pos? (count (:lines %))))
       (remove :refunded?)))

(def summary
  (->> (customer-summary data/customers paid)
       (sort-by :total >)
       (take 10)
       (mapv #(update % :total (fn [t] (/ (Math/round (* t 100.0)) 100.0))))))

(def tiers (frequencies (map :tier summary)))

(println "top customers:" (count summary))
(doseq [{:keys [name total]} summary]
  (println (str name ": " total)))
(println "by tier:" tiers)
{:summary summary
 :tiers tiers
 :largest (first summary)}
"#;

fn bench_parse(c: &mut Criterion) {
    let limits = ReadLimits::default();
    for (name, src) in [("parse/small", SMALL), ("parse/realistic", REALISTIC)] {
        assert!(read(src, &limits).is_ok(), "{name} must read");
        c.bench_function(name, |b| b.iter(|| read(black_box(src), &limits)));
    }
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);

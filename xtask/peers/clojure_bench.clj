;; The peer workloads in Clojure, through its read + eval path (as a program given as text runs).
;; Run by `cargo xtask bench peers`: `clojure clojure_bench.clj PRODUCTS_EDN`. Measured inside one
;; warm JVM, so start-up is not counted: after a warm-up, rounds of a batch of runs each; prints
;; `name microseconds` lines, the median over the rounds.

(def products (read-string (slurp (first *command-line-args*))))

(def workloads
  [["small" "(let [xs [1 2 3 4 5]] (reduce + (map inc (filter odd? xs))))" 12 2000]
   ["pipeline" "(->> products
                     (filter #(and (:active %) (> (:price %) 20.0)))
                     (group-by :category)
                     (reduce-kv (fn [acc category items] (assoc acc category (reduce + (map :price items)))) {}))"
    nil 20]
   ["loop" "(loop [i 0 acc 0] (if (< i 100000) (recur (inc i) (+ acc i)) acc))" 4999950000 20]])

(defn run [source] (eval (read-string source)))

(defn batch-micros [source n]
  (let [started (System/nanoTime)]
    (dotimes [_ n] (run source))
    (/ (- (System/nanoTime) started) 1000.0 n)))

(doseq [[name source expected n] workloads]
  (let [result (run source)]
    (when (and expected (not= expected result))
      (throw (ex-info (str name ": expected " expected ", got " result) {}))))
  ;; Warm-up: let the JIT compile the reader, compiler and library paths this program takes.
  (dotimes [_ 5] (batch-micros source n))
  (let [rounds (sort (repeatedly 9 #(batch-micros source n)))]
    (println name (format "%.2f" (nth rounds 4)))))

;; One day of five services' logs (about 1,500 lines, 140 KB each), from fixed seeds.
(defn lcg "The next number of a linear congruential generator (0 to 2^31 - 1)." [x]
  (mod (+ (* x 1103515245) 12345) 2147483648))
(defn draws "n numbers of the generator after seed." [seed n]
  (vec (take n (rest (iterate lcg seed)))))
(defn pick "A number from 0 to n - 1, from the generator's high bits." [r n]
  (mod (quot r 65536) n))
(defn pad "n as a string of at least width digits." [n width]
  (let [s (str n)] (str (apply str (repeat (- width (count s)) "0")) s)))

(def pool 3000)
(def rs (draws 7001 (* pool 8)))
(defn r "Draw k of request i." [i k] (rs (+ (* 8 i) k)))

(def gateway-error? (vec (for [i (range pool)] (and (< (pick (r i 0) 100) 50) (< (pick (r i 1) 100) 15)))))
(def in-gateway? (vec (for [i (range pool)] (< (pick (r i 0) 100) 50))))
(def in-payments? (vec (for [i (range pool)]
                         (< (pick (r i 2) 100) (if (gateway-error? i) 90 50)))))
(def payments-error? (vec (for [i (range pool)]
                            (and (in-payments? i)
                                 (< (pick (r i 3) 100) (if (gateway-error? i) 60 8))))))

(defn time-of "The log time of the n-th line of a log of len lines." [n len]
  (let [s (quot (* n 86400) len)]
    (str "2026-11-03T" (pad (quot s 3600) 2) ":" (pad (mod (quot s 60) 60) 2) ":" (pad (mod s 60) 2) "Z")))

(def gateway-codes ["E502" "E503" "E504" "E429"])
(def payment-codes ["P01-card-declined" "P02-insufficient-funds" "P03-processor-timeout"
                    "P04-fraud-hold" "P05-currency-mismatch" "P06-duplicate"])
(def info-messages ["request served" "cache hit" "token refreshed" "retry after ERROR cleared"
                    "connection reused" "slow upstream, still ok"])
(def warn-messages ["retrying" "latency above 2s" "partial response" "deprecated field used"])

(defn line [ts level service i code ms msg]
  (str ts " " level " " service " req=r-" (+ 10000 i) " code=" code " ms=" ms " msg=\"" msg "\""))

(defn log-of "The log of service: a line for each request it served, in time order."
  [service served? level-of code-of]
  (let [ids (filter served? (range pool))
        n (count ids)]
    (str/join "\n"
              (map-indexed (fn [k i]
                             (let [level (level-of i)]
                               (line (time-of k n) level service i
                                     (if (= level "ERROR") (code-of i) "-")
                                     (+ 3 (pick (r i 4) 900))
                                     (case level
                                       "ERROR" "failed"
                                       "WARN" (warn-messages (pick (r i 5) 4))
                                       (info-messages (pick (r i 6) 6))))))
                           ids))))

(defn usual-level "INFO mostly, some WARN and a few ERROR." [salt]
  (fn [i] (let [x (pick (lcg (+ (r i 7) salt)) 100)]
            (cond (< x 4) "ERROR" (< x 15) "WARN" :else "INFO"))))

(def logs
  {"gateway" (log-of "gateway" in-gateway?
                     (fn [i] (if (gateway-error? i) "ERROR" ((usual-level 1) i)))
                     (fn [i] (gateway-codes (pick (r i 5) 4))))
   "payments" (log-of "payments" in-payments?
                      (fn [i] (if (payments-error? i) "ERROR"
                                  (let [l ((usual-level 2) i)] (if (= l "ERROR") "WARN" l))))
                      (fn [i] (payment-codes (pick (r i 6) 6))))
   "auth" (log-of "auth" #(< (pick (r % 1) 100) 50) (usual-level 3) (fn [_] "A401"))
   "orders" (log-of "orders" #(< (pick (r % 2) 100) 55) (usual-level 4) (fn [_] "O500"))
   "shipping" (log-of "shipping" #(< (pick (r % 3) 100) 45) (usual-level 5) (fn [_] "S404"))})

{:tools {:fetch-log {:cases (mapv (fn [[service text]] {:args [service] :returns text}) logs)
                     :error "no such service; the services are gateway, auth, orders, payments and shipping"}}}

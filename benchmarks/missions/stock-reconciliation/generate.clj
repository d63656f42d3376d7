;; Ten warehouses' stock as the system has it, and the scans of a stock count (about 8,000
;; records), from fixed seeds.
(defn lcg "The next number of a linear congruential generator (0 to 2^31 - 1)." [x]
  (mod (+ (* x 1103515245) 12345) 2147483648))
(defn draws "n numbers of the generator after seed." [seed n]
  (vec (take n (rest (iterate lcg seed)))))
(defn pick "A number from 0 to n - 1, from the generator's high bits." [r n]
  (mod (quot r 65536) n))
(defn pad "n as a string of at least width digits." [n width]
  (let [s (str n)] (str (apply str (repeat (- width (count s)) "0")) s)))

(def warehouses (mapv #(str "w-" (pad (inc %) 2)) (range 10)))
(def skus 600)
(def rs (draws 4242 (* 10 skus 6)))
(defn r "Draw k of sku s in warehouse w." [w s k] (rs (+ (* 6 (+ (* w skus) s)) k)))

(defn tracked? [w s] (< (pick (r w s 0) 100) 90))
(defn on-hand [w s] (pick (r w s 1) 220))
(defn counted "What the count found: mostly the system's figure, sometimes off." [w s]
  (let [x (pick (r w s 2) 1000)
        off (cond (< x 700) 0
                  (< x 990) (- (pick (r w s 3) 11) 5)
                  :else (let [d (+ 6 (pick (r w s 3) 35))] (if (even? x) d (- d))))]
    (if (tracked? w s)
      (max 0 (+ (on-hand w s) off))
      (inc (pick (r w s 3) 40)))))
(defn scanned? "Tracked SKUs are all scanned; a few untracked ones turn up too." [w s]
  (or (tracked? w s) (< (pick (r w s 4) 100) 4)))

(def scanners ["handheld-1" "handheld-2" "handheld-3" "tablet-A" "tablet-B"])

(def scans
  (vec (for [w (range 10)
             s (range skus)
             :when (scanned? w s)
             :let [total (counted w s)
                   split? (< (pick (r w s 5) 100) 50)
                   first-part (if split? (quot total 3) total)
                   parts (if split? [first-part (- total first-part)] [total])]
             [k part] (map-indexed vector parts)]
         {:warehouse (warehouses w)
          :sku (str "s-" (pad (inc s) 4))
          :counted part
          :scanner (scanners (pick (lcg (+ (r w s 5) k)) 5))
          :at (str "2026-11-2" (inc (mod (+ w k) 3)) "T" (pad (+ 8 (pick (r w s 3) 9)) 2) ":" (pad (pick (r w s 4) 60) 2))})))

(def bins ["A" "B" "C" "D" "E" "F"])

{:data {:scans scans}
 :tools {:system-stock
         {:cases (vec (for [w (range 10)]
                        {:args [(warehouses w)]
                         :returns {:warehouse (warehouses w)
                                   :as-of "2026-11-20"
                                   :items (vec (for [s (range skus) :when (tracked? w s)]
                                                 {:sku (str "s-" (pad (inc s) 4))
                                                  :on-hand (on-hand w s)
                                                  :bin (str (bins (pick (r w s 5) 6)) "-" (pick (r w s 4) 40) "-" (pick (r w s 3) 6))}))}}))
          :error "no such warehouse: they are w-01 to w-10"}}}

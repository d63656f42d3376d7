;; 2,000 customers and 20,000 orders, from fixed seeds: the same data on every machine.
(defn lcg "The next number of a linear congruential generator (0 to 2^31 - 1)." [x]
  (mod (+ (* x 1103515245) 12345) 2147483648))
(defn draws "n numbers of the generator after seed." [seed n]
  (vec (take n (rest (iterate lcg seed)))))
(defn pick "A number from 0 to n - 1, from the generator's high bits." [r n]
  (mod (quot r 65536) n))
(defn pad "n as a string of at least width digits." [n width]
  (let [s (str n)] (str (apply str (repeat (- width (count s)) "0")) s)))

(def regions ["north" "south" "east" "west" "central"])
(def tiers ["bronze" "bronze" "silver" "silver" "gold"])
(def first-names ["Ada" "Bo" "Cy" "Di" "Ed" "Fay" "Gus" "Hal" "Ivy" "Jo" "Kim" "Lu" "Mo" "Ned" "Oli" "Pia"])
(def last-names ["Berg" "Carr" "Dahl" "Eck" "Frey" "Gray" "Holm" "Ito" "Juul" "Krog" "Lind" "Moss"])

(def customers
  (let [rs (draws 11 (* 2000 4))]
    (mapv (fn [i]
            (let [r (fn [k] (rs (+ (* 4 i) k)))]
              {:id (str "c-" (pad (inc i) 4))
               :name (str (first-names (pick (r 0) 16)) " " (last-names (pick (r 1) 12)))
               :region (regions (pick (r 2) 5))
               :tier (tiers (pick (r 3) 5))}))
          (range 2000))))

(def statuses ["delivered" "delivered" "delivered" "delivered" "returned" "cancelled" "pending"])

(defn order-line [x]
  (let [y (lcg x) z (lcg y)]
    {:sku (str "s-" (pad (pick x 400) 3))
     :qty (inc (pick y 5))
     :unit-price (/ (+ 199 (pick z 9800)) 100.0)}))

(def orders
  (let [rs (draws 29 (* 20000 6))]
    (mapv (fn [i]
            (let [r (fn [k] (rs (+ (* 6 i) k)))
                  month (inc (pick (r 0) 12))
                  day (inc (pick (r 1) 28))]
              {:id (str "o-" (pad (inc i) 5))
               :customer (str "c-" (pad (inc (pick (r 2) 2000)) 4))
               :status (statuses (pick (r 3) 7))
               :placed (str "2026-" (pad month 2) "-" (pad day 2))
               :lines (mapv order-line (take (inc (pick (r 4) 3)) (iterate lcg (r 5))))}))
          (range 20000))))

{:data {:orders orders :customers customers}}

;; 50,000 card transactions of 40 merchants in November 2026, and daily exchange rates, from
;; fixed seeds.
(defn lcg "The next number of a linear congruential generator (0 to 2^31 - 1)." [x]
  (mod (+ (* x 1103515245) 12345) 2147483648))
(defn draws "n numbers of the generator after seed." [seed n]
  (vec (take n (rest (iterate lcg seed)))))
(defn pick "A number from 0 to n - 1, from the generator's high bits." [r n]
  (mod (quot r 65536) n))
(defn pad "n as a string of at least width digits." [n width]
  (let [s (str n)] (str (apply str (repeat (- width (count s)) "0")) s)))

(def currencies ["EUR" "EUR" "EUR" "SEK" "NOK" "DKK" "GBP" "USD" "CHF" "PLN"])
(def base-rates {"SEK" 0.0871 "NOK" 0.0842 "DKK" 0.1341 "GBP" 1.1712 "USD" 0.9231
                 "CHF" 1.0418 "PLN" 0.2317})

(def transactions
  (let [rs (draws 9090 (* 50000 5))]
    (mapv (fn [i]
            (let [r (fn [k] (rs (+ (* 5 i) k)))
                  refund? (< (pick (r 3) 100) 4)
                  amount (/ (+ 100 (pick (r 2) 30000)) 100.0)]
              {:id (str "tx-" (pad (inc i) 6))
               :merchant (str "m-" (pad (inc (pick (r 0) 40)) 2))
               :currency (currencies (pick (r 1) 10))
               :amount (if refund? (- amount) amount)
               :day (inc (pick (r 4) 30))}))
          (range 50000))))

(def rates
  "The rate of each currency on each day, in euros per unit: the base rate, moved a little."
  (let [rs (draws 8080 (* 7 30))]
    (vec (for [[k currency] (map-indexed vector (sort (keys base-rates)))
               day (range 1 31)]
           {:args [currency day]
            :returns {:currency currency :day day
                      :eur-per-unit (/ (round (* 1000000 (base-rates currency)
                                                 (/ (+ 9850 (pick (rs (+ (* 30 k) (dec day))) 301)) 10000.0)))
                                       1000000.0)}}))))

{:data {:transactions transactions}
 :tools {:fx-rate {:cases rates
                   :error "no rate: give a currency other than EUR and a day of November from 1 to 30"}}}

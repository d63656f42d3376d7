(def mine (filter #(#{"m-07" "m-23"} (:merchant %)) data/transactions))
(def rate "Euros per unit by [currency day]"
  (into {} (pmap (fn [[c d]] [[c d] (:eur-per-unit (tool/fx-rate c d))])
                 (distinct (for [t mine :when (not= "EUR" (:currency t))] [(:currency t) (:day t)])))))
(defn in-euros [t]
  (if (= "EUR" (:currency t)) (:amount t) (* (:amount t) (rate [(:currency t) (:day t)]))))
(return (into {} (for [[m ts] (group-by :merchant mine)]
                   [m (/ (round (* 100 (reduce + (map in-euros ts)))) 100.0)])))

(def gold-regions
  "Region of each gold-tier customer, by id"
  (into {} (for [c data/customers :when (= (:tier c) "gold")] [(:id c) (:region c)])))
(defn revenue "Sum of qty x unit price over an order's lines" [o]
  (reduce + (map #(* (:qty %) (:unit-price %)) (:lines o))))
(def q3
  (filter #(and (= (:status %) "delivered")
                (gold-regions (:customer %))
                (#{"07" "08" "09"} (subs (:placed %) 5 7)))
          data/orders))
(return (into {} (for [[region orders] (group-by #(gold-regions (:customer %)) q3)]
                   [region (/ (round (* 100 (reduce + (map revenue orders)))) 100.0)])))

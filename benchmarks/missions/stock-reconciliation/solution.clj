(def counts "Scanned count by [warehouse sku]"
  (reduce (fn [acc s] (update acc [(:warehouse s) (:sku s)] (fnil + 0) (:counted s))) {} data/scans))
(def on-hand "On hand by [warehouse sku], as the system lists it"
  (into {} (for [w (distinct (map :warehouse data/scans))
                 item (:items (tool/system-stock w))]
             [[w (:sku item)] (:on-hand item)])))
(def adjustments
  (for [[[w sku] n] counts
        :let [delta (- n (get on-hand [w sku] 0))]
        :when (> (abs delta) 5)]
    {:warehouse w :sku sku :delta delta}))
(doseq [a adjustments] (tool/open-adjustment (:warehouse a) (:sku a) (:delta a)))
(return (reduce + (map #(abs (:delta %)) adjustments)))

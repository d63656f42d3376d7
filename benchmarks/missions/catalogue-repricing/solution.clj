(def products
  "Every product of the catalogue"
  (loop [page 1 acc []]
    (let [r (tool/list-products page)
          acc (into acc (:products r))]
      (if (< page (:pages r)) (recur (inc page) acc) acc))))
(def audio (filter #(= (:category %) "audio") products))
(def competitor "Competitor price by sku"
  (into {} (pmap (fn [p] [(:sku p) (:price (tool/competitor-price (:sku p)))]) audio)))
(def changes
  (for [p audio
        :let [c (competitor (:sku p))]
        :when (> (:price p) c)]
    {:sku (:sku p) :price (max (/ (round (* 100 (- c 0.01))) 100.0) (:floor p))}))
(doseq [c changes] (tool/set-price (:sku c) (:price c)))
(return (count changes))

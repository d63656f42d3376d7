(def tickets "Every ticket"
  (loop [page 1 acc []]
    (let [r (tool/list-tickets page) acc (into acc (:tickets r))]
      (if (< page (:pages r)) (recur (inc page) acc) acc))))
(defn breached? [t]
  (and (#{"high" "urgent"} (:priority t))
       (or (nil? (:first-response-min t))
           (> (- (:first-response-min t) (:opened-min t)) 240))))
(def breached (filter breached? tickets))
(def customers "Customer by id, for the breached tickets"
  (into {} (pmap (fn [id] [id (tool/get-customer id)]) (distinct (map :customer breached)))))
(def escalations
  (sort-by :id (filter #(= "enterprise" (:plan (customers (:customer %)))) breached)))
(doseq [t escalations]
  (tool/escalate (:id t) (:account-manager (customers (:customer t)))))
(return (mapv :id escalations))

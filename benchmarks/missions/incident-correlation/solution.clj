(defn errors "Request id -> code of each ERROR line of a log" [text]
  (into {} (for [line (str/split-lines text)
                 :let [[_ level _ req code] (str/split line #" ")]
                 :when (= level "ERROR")]
             [(subs req 4) (subs code 5)])))
(def gateway (errors (tool/fetch-log "gateway")))
(def payments (errors (tool/fetch-log "payments")))
(return (frequencies (for [[req code] payments :when (contains? gateway req)] code)))

;; 3,000 support tickets on 30 pages of 100, and 400 customers, from fixed seeds.
(defn lcg "The next number of a linear congruential generator (0 to 2^31 - 1)." [x]
  (mod (+ (* x 1103515245) 12345) 2147483648))
(defn draws "n numbers of the generator after seed." [seed n]
  (vec (take n (rest (iterate lcg seed)))))
(defn pick "A number from 0 to n - 1, from the generator's high bits." [r n]
  (mod (quot r 65536) n))
(defn pad "n as a string of at least width digits." [n width]
  (let [s (str n)] (str (apply str (repeat (- width (count s)) "0")) s)))

(def plans ["free" "free" "free" "pro" "pro" "pro" "enterprise"])
(def managers ["Astrid Lund" "Bruno Keller" "Chiara Moretti" "Dev Patel" "Elin Berg"
               "Farid Haddad" "Greta Nowak" "Hugo Laurent"])
(def company-a ["Acme" "Birch" "Cobalt" "Delta" "Ember" "Falcon" "Granite" "Harbor" "Iris" "Juniper"])
(def company-b ["Logistics" "Foods" "Health" "Studios" "Energy" "Retail" "Labs" "Finance"])

(def customers
  (let [rs (draws 505 (* 400 4))]
    (mapv (fn [i]
            (let [r (fn [k] (rs (+ (* 4 i) k)))
                  plan (plans (pick (r 0) 7))]
              {:id (str "cu-" (pad (inc i) 4))
               :name (str (company-a (pick (r 1) 10)) " " (company-b (pick (r 2) 8)))
               :plan plan
               :account-manager (when (= plan "enterprise") (managers (pick (r 3) 8)))}))
          (range 400))))

(def priorities ["low" "low" "normal" "normal" "normal" "high" "high" "urgent"])
(def topics ["Cannot log in after password reset" "Invoice shows the wrong VAT rate"
             "Export to CSV times out for large reports" "Webhook deliveries delayed"
             "Two-factor codes arrive late" "API returns 500 on bulk update"
             "Dashboard charts do not load in Safari" "Need to change the billing contact"
             "SSO login loops back to the start page" "Data import skipped some rows"])
(def channels ["email" "chat" "phone" "portal"])

(def tickets
  (let [rs (draws 606 (* 3000 7))]
    (mapv (fn [i]
            (let [r (fn [k] (rs (+ (* 7 i) k)))
                  opened (+ (* i 14) (pick (r 0) 14))
                  wait (let [x (pick (r 1) 100)]
                         (cond (< x 70) (+ 5 (pick (r 2) 200))
                               (< x 90) (+ 200 (pick (r 2) 100))
                               (< x 96) (+ 300 (pick (r 2) 900))
                               :else nil))]
              {:id (str "t-" (pad (inc i) 5))
               :customer (str "cu-" (pad (inc (pick (r 3) 400)) 4))
               :priority (priorities (pick (r 4) 8))
               :channel (channels (pick (r 5) 4))
               :subject (topics (pick (r 6) 10))
               :opened-min opened
               :first-response-min (when wait (+ opened wait))}))
          (range 3000))))

{:tools {:list-tickets
         {:cases (mapv (fn [page]
                         {:args [(inc page)]
                          :returns {:page (inc page) :pages 30
                                    :tickets (subvec tickets (* 100 page) (* 100 (inc page)))}})
                       (range 30))
          :error "no such page: pages are numbered from 1 to 30"}
         :get-customer
         {:cases (mapv (fn [c] {:args [(:id c)] :returns c}) customers)
          :error "no such customer"}}}

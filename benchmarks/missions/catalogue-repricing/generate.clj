;; 2,000 products on 25 pages of 80, a competitor price for each, from fixed seeds.
(defn lcg "The next number of a linear congruential generator (0 to 2^31 - 1)." [x]
  (mod (+ (* x 1103515245) 12345) 2147483648))
(defn draws "n numbers of the generator after seed." [seed n]
  (vec (take n (rest (iterate lcg seed)))))
(defn pick "A number from 0 to n - 1, from the generator's high bits." [r n]
  (mod (quot r 65536) n))
(defn pad "n as a string of at least width digits." [n width]
  (let [s (str n)] (str (apply str (repeat (- width (count s)) "0")) s)))
(defn cents "x rounded to cents." [x] (/ (round (* 100 x)) 100.0))

(def categories ["audio" "video" "kitchen" "garden" "toys" "office" "sports" "books"
                 "lighting" "bath" "pets" "travel"])
(def adjectives ["Compact" "Deluxe" "Classic" "Smart" "Portable" "Quiet" "Rugged" "Slim"
                 "Wireless" "Premium" "Basic" "Eco"])
(def nouns {"audio" ["Speaker" "Headphones" "Soundbar" "Turntable" "Earbuds" "Amplifier"]
            "video" ["Projector" "Webcam" "Monitor" "Streaming Stick" "Camera" "Screen"]
            "kitchen" ["Kettle" "Blender" "Toaster" "Knife Set" "Scale" "Grinder"]
            "garden" ["Hose" "Shears" "Planter" "Rake" "Sprinkler" "Lantern"]
            "toys" ["Puzzle" "Robot Kit" "Train Set" "Kite" "Blocks" "Doll House"]
            "office" ["Desk Lamp" "Stapler" "Chair" "Organizer" "Whiteboard" "Shredder"]
            "sports" ["Yoga Mat" "Dumbbells" "Racket" "Helmet" "Bottle" "Jump Rope"]
            "books" ["Atlas" "Cookbook" "Novel" "Field Guide" "Dictionary" "Journal"]
            "lighting" ["Bulb Pack" "Floor Lamp" "String Lights" "Spotlight" "Night Light" "Pendant"]
            "bath" ["Towel Set" "Shower Head" "Mirror" "Bath Mat" "Caddy" "Robe"]
            "pets" ["Leash" "Cat Tree" "Dog Bed" "Feeder" "Carrier" "Brush"]
            "travel" ["Backpack" "Suitcase" "Neck Pillow" "Adapter" "Packing Cubes" "Wallet"]})
(def suppliers ["Nordvik AB" "Kestrel Ltd" "Hansa Supply" "Orchid Trading" "Baltic Goods"
                "Meridian Co" "Alder & Sons" "Fjord Import"])
(def colours ["black" "white" "grey" "blue" "green" "red" "oak" "steel"])

(def products
  (let [rs (draws 101 (* 2000 8))]
    (mapv (fn [i]
            (let [r (fn [k] (rs (+ (* 8 i) k)))
                  category (categories (pick (r 0) 12))
                  price (cents (/ (+ 999 (pick (r 1) 29000)) 100.0))]
              {:sku (str "p-" (pad (inc i) 4))
               :name (str (adjectives (pick (r 2) 12)) " " ((nouns category) (pick (r 3) 6)))
               :category category
               :price price
               :floor (cents (* price (/ (+ 70 (pick (r 4) 26)) 100.0)))
               :stock (pick (r 5) 250)
               :supplier (suppliers (pick (r 6) 8))
               :colour (colours (pick (r 7) 8))
               :weight-kg (/ (+ 1 (pick (r 7) 400)) 10.0)}))
          (range 2000))))

(def competitor-prices
  "Each product's competitor price: 85 % to 115 % of its own, by product."
  (let [rs (draws 202 2000)]
    (mapv (fn [p r] (cents (* (:price p) (/ (+ 85 (pick r 31)) 100.0)))) products rs)))

(def shops ["PriceHub" "Electra" "ShopNorth" "MegaMart"])

{:data {}
 :tools {:list-products
         {:cases (mapv (fn [page]
                         {:args [(inc page)]
                          :returns {:page (inc page) :pages 25
                                    :products (subvec products (* 80 page) (* 80 (inc page)))}})
                       (range 25))
          :error "no such page: pages are numbered from 1 to 25"}
         :competitor-price
         {:cases (mapv (fn [p c i] {:args [(:sku p)]
                                    :returns {:sku (:sku p) :shop (shops (mod i 4))
                                              :price c :checked "2026-11-30"}})
                       products competitor-prices (range))
          :error "unknown sku"}}}

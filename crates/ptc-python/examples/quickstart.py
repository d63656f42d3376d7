"""ptc in a few lines: a program over your data, calling your function."""

import ptc


def send_email(to, items):
    """Sends a list of items by email."""
    return {"sent": True, "to": to, "count": len(items)}


products = [
    {"name": "lamp", "price": 120.0},
    {"name": "mug", "price": 8.5},
    {"name": "desk", "price": 340.0},
]
result = ptc.run(
    """
    (def picks (->> data/products (filter #(> (:price %) 100)) (sort-by :price >)))
    (println "picked" (count picks))
    (tool/send_email "buyer@example.com" (mapv :name picks))
    """,
    data={"products": products},
    tools=[send_email],
)
print(result.value)
print(result.prints)
print([(call.name, call.args) for call in result.tool_calls])

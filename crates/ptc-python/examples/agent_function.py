"""A PTC agent whose model is a Python function: any client library can answer the messages.
Here the function replays two replies, so the example runs offline."""

import ptc

REPLIES = iter([
    "```clojure\n(def open (filter #(= (:status %) \"open\") data/tickets))\n(println (count open) \"open\")\n```",
    "```clojure\n(return {:owners (vec (distinct (map :owner open)))})\n```",
])


def model(messages):
    # messages: [{"role": "system", ...}, {"role": "user", ...}, ...], as chat APIs take them.
    return next(REPLIES)


agent = ptc.Agent(
    "Who owns the open tickets?",
    llm=model,
    data={"tickets": [
        {"id": 1, "status": "open", "owner": "ada"},
        {"id": 2, "status": "closed", "owner": "bob"},
        {"id": 3, "status": "open", "owner": "ada"},
    ]},
    signature="{owners [:string]}",
)
step = agent.run()
print(step.value)
print([turn.prints for turn in step.turns])
print(step.to_dict()["outcome"])

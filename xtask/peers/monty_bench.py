"""The peer workloads in pydantic-monty, net of its worker round trip.

Run by `cargo xtask bench peers` with the venv it installs: `python monty_bench.py PRODUCTS_JSON`
(`python_bench.py` takes its programs).
Every program is fed to one warm session; batches of the real program alternate with batches of
a trivial one (`1`), and the difference of their times is the program's own cost (parse, compile
and run), free of the round trip to the worker process. Prints `name microseconds` lines: the
median over the rounds.
"""

import json
import statistics
import sys
import time

from pydantic_monty import Monty

SMALL = "sum([x + 1 for x in [1, 2, 3, 4, 5] if x % 2 == 1])"

PIPELINE = """
groups = {}
for p in [p for p in products if p['active'] and p['price'] > 20.0]:
    if p['category'] not in groups:
        groups[p['category']] = []
    groups[p['category']].append(p)
totals = {}
for category, items in groups.items():
    totals[category] = sum([p['price'] for p in items])
totals
"""

LOOP = """
i = 0
acc = 0
while i < 100000:
    acc = acc + i
    i = i + 1
acc
"""

WORKLOADS = [
    ("small", SMALL, 12, 200),
    ("pipeline", PIPELINE, None, 10),
    ("loop", LOOP, 4999950000, 10),
]
ROUNDS = 9


def timed(session, source, times):
    started = time.perf_counter()
    for _ in range(times):
        result = session.feed_run(source)
    return time.perf_counter() - started, result


def main():
    with open(sys.argv[1]) as f:
        products = json.load(f)["products"]
    with Monty() as pool:
        with pool.checkout() as session:
            # In slices: one literal may hold at most 65,536 constants.
            session.feed_run("products = []")
            for start in range(0, len(products), 1000):
                session.feed_run(f"products.extend({products[start:start + 1000]!r})")
            for name, source, expected, batch in WORKLOADS:
                _, result = timed(session, source, 2)
                if expected is not None and result != expected:
                    raise SystemExit(f"{name}: expected {expected}, got {result}")
                nets = []
                for _ in range(ROUNDS):
                    trivial, _ = timed(session, "1", batch)
                    real, _ = timed(session, source, batch)
                    nets.append((real - trivial) / batch)
                trip, _ = timed(session, "1", 200)
                print(f"{name} {statistics.median(nets) * 1e6:.2f}")
            print(f"round-trip {trip / 200 * 1e6:.2f}")


if __name__ == "__main__":
    main()

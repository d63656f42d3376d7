"""ptc and pydantic-monty side by side from Python, in one process and one sitting.

Run by `cargo xtask bench python` (release wheel, both packages pinned):
`python python_bench.py PRODUCTS_JSON`. Each workload is timed as a caller sees it, whole calls
from Python (monty's round trip to its worker process included, as its `feed_run` pays it),
in rounds that alternate the two packages; the table gives the medians, and the ratio ptc/monty.

- small: a five-element filter/map/reduce program, read, analysed and run, its value as a
  Python object;
- pipeline: filter -> group-by -> sum over 10,000 product records already in the sandbox (a
  session holding them), the totals as a Python dict;
- pipeline, data passed: the same with the records handed over with each call (converted from
  Python objects each time).

Then 1,000 concurrent `run_async` calls, each awaiting an async tool that sleeps 1 s, in one
event loop: their wall time.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import ptc
from pydantic_monty import Monty

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from monty_bench import PIPELINE as MONTY_PIPELINE  # noqa: E402
from monty_bench import SMALL as MONTY_SMALL  # noqa: E402

# The programs of crates/ptc-lisp/benches/eval.rs.
SMALL = "(let [xs [1 2 3 4 5]] (reduce + (map inc (filter odd? xs))))"
PIPELINE = """
(->> data/products
     (filter #(and (:active %) (> (:price %) 20.0)))
     (group-by :category)
     (reduce-kv (fn [acc category items] (assoc acc category (reduce + (map :price items)))) {}))"""

ROUNDS = 9

# Targets: ptc's time as a share of monty's.
TARGETS = {"small": 0.1, "pipeline": 0.5}


def per_call(call: Callable[[], Any], times: int) -> float:
    started = time.perf_counter()
    for _ in range(times):
        call()
    return (time.perf_counter() - started) / times


def side_by_side(
    ptc_call: Callable[[], Any], monty_call: Callable[[], Any], times: int
) -> Tuple[float, float]:
    """Median seconds per call of each, over rounds that alternate them."""
    ptc_times: List[float] = []
    monty_times: List[float] = []
    for _ in range(ROUNDS):
        ptc_times.append(per_call(ptc_call, times))
        monty_times.append(per_call(monty_call, times))
    return statistics.median(ptc_times), statistics.median(monty_times)


def close(a: Dict[str, float], b: Dict[str, float]) -> bool:
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) < 1e-6 * max(1.0, abs(b[k])) for k in a)


async def concurrent_runs(n: int) -> float:
    async def slow(x: int) -> int:
        await asyncio.sleep(1.0)
        return x * 2

    session_tools = {"slow": slow}
    started = time.perf_counter()
    results = await asyncio.gather(
        *(ptc.run_async("(+ 1 (tool/slow %d))" % i, tools=session_tools) for i in range(n))
    )
    elapsed = time.perf_counter() - started
    if [r.value for r in results] != [2 * i + 1 for i in range(n)]:
        raise SystemExit("the concurrent runs returned wrong values")
    return elapsed


def main() -> None:
    with open(sys.argv[1]) as f:
        products = json.load(f)["products"]
    rows = []
    with Monty() as pool:
        with pool.checkout() as monty:
            # Checked first: both compute the same thing.
            assert ptc.run(SMALL).value == monty.feed_run(MONTY_SMALL) == 12
            session = ptc.Session(data={"products": products})
            monty.feed_run("products = []")
            for start in range(0, len(products), 1000):
                monty.feed_run(f"products.extend({products[start:start + 1000]!r})")
            ours, theirs = session.run(PIPELINE).value, monty.feed_run(MONTY_PIPELINE)
            if not close(ours, theirs):
                raise SystemExit(f"the pipelines disagree: {ours} and {theirs}")

            rows.append(("small", *side_by_side(
                lambda: ptc.run(SMALL).value, lambda: monty.feed_run(MONTY_SMALL), 200)))
            rows.append(("pipeline", *side_by_side(
                lambda: session.run(PIPELINE).value, lambda: monty.feed_run(MONTY_PIPELINE), 10)))
            inputs = {"products": products}
            monty.feed_run("products = None")
            rows.append(("pipeline, data passed", *side_by_side(
                lambda: ptc.run(PIPELINE, data=inputs).value,
                lambda: monty.feed_run(MONTY_PIPELINE, inputs=inputs),
                5,
            )))

    print("\nptc vs pydantic-monty, from Python (µs per call, medians; lower is better)\n")
    print("| workload | ptc | pydantic-monty | ptc / monty | target |")
    print("|----------|-----|----------------|-------------|--------|")
    for name, ours, theirs in rows:
        ratio = ours / theirs
        target = TARGETS.get(name)
        verdict = "-" if target is None else f"≤ {target} ({'met' if ratio <= target else 'MISSED'})"
        print(f"| {name} | {ours * 1e6:.1f} | {theirs * 1e6:.1f} | {ratio:.3f} | {verdict} |")

    n = 1000
    elapsed = asyncio.run(concurrent_runs(n))
    verdict = "met" if elapsed < 3.0 else "MISSED"
    print(f"\n{n} concurrent run_async calls, each awaiting a 1 s async tool: {elapsed:.2f} s "
          f"(target < 3 s: {verdict})")


if __name__ == "__main__":
    main()

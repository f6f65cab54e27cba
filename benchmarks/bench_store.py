"""The store's hot paths at fixed sizes: retrieval latency at 1k, 10k and 100k live
entries, and lethe's consolidation at 1k and 10k long-term items.

Retrieval: a keep_all store filled with the contradiction stream's observations up to
N live entries, then 300 of the stream's questions (after 20 warm-up ones); p50/p95
of ``MemoryStore.retrieve`` (k=5). Targets (docs/reference.md, "Costs and performance
targets"): p50 <= 1 ms at 10k and <= 10 ms at 100k. Consolidation: a lethe store of N
distinct long-term entries (promoted at a first tick); ``first_s`` is a consolidation
comparing every pair (as after ``MemoryStore.open``), ``daily_s`` the next day's,
after 20 new entries.
Usage: ``python -m benchmarks.bench_store [--sizes 1000,10000,100000]
[--consolidation 1000,10000]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

RETRIEVAL_P50_MS = {10_000: 1.0, 100_000: 10.0}


def _stream(n_live: int) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    from workloads import WORKLOADS, Observe, Query

    wl = WORKLOADS["contradiction"]
    adds: list[tuple[str, int]] = []
    questions: list[tuple[str, int]] = []
    horizon = wl.default_horizon
    while len(adds) < n_live:
        adds, questions = [], []
        for ev in wl.events(0, horizon, wl.Params()):
            if isinstance(ev, Observe) and len(adds) < n_live:
                adds.append((ev.text, ev.t))
            elif isinstance(ev, Query):
                questions.append((ev.text, ev.t))
        horizon *= 2
    return adds, questions


def retrieval(n_live: int, n_queries: int = 300) -> dict[str, Any]:
    from memcore import POLICIES, HashingEmbedder, MemoryStore

    adds, questions = _stream(n_live)
    store = MemoryStore(POLICIES["keep_all"](), HashingEmbedder(), None)
    for text, t in adds:
        store.add(text, t)
    now = adds[-1][1]
    qs = [q for q, _ in questions[-(n_queries + 20):]]
    ms = []
    for i, q in enumerate(qs):
        start = time.perf_counter()
        store.retrieve(q, now + i)
        if i >= 20:
            ms.append((time.perf_counter() - start) * 1000.0)
    p50, p95 = np.percentile(ms, [50, 95])
    target = RETRIEVAL_P50_MS.get(n_live)
    return {"live": store.size, "queries": len(ms), "p50_ms": float(p50), "p95_ms": float(p95),
            "target_p50_ms": target, "ok": None if target is None else bool(p50 <= target),
            "command": f"python -m benchmarks.bench_store --sizes {n_live} --consolidation ''"}


def consolidation(n_items: int) -> dict[str, Any]:
    from memcore import POLICIES, HashingEmbedder, MemoryStore
    from memcore.policies.lethe import LONG, Lethe

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(5000)]
    policy = POLICIES["lethe"]()
    assert isinstance(policy, Lethe)
    store = MemoryStore(policy, HashingEmbedder(), None)
    for i in range(n_items):
        store.add(f"item {i} " + " ".join(rng.choice(words, 6)), 0, meta={"tags": "fact"})
    store.tick(0)  # promotes every item to long-term
    long_term = int(np.count_nonzero(store.cols.tier[: store.cols.n] == LONG))
    policy._checked_eid = -1  # as after a reopen: every pair is compared once
    start = time.perf_counter()
    store.tick(0)
    first = time.perf_counter() - start
    for i in range(20):
        store.add(f"new {i} " + " ".join(rng.choice(words, 6)), 1, meta={"tags": "fact"})
    start = time.perf_counter()
    store.tick(1)
    daily = time.perf_counter() - start
    return {"items": n_items, "long_term": long_term, "first_s": first, "daily_s": daily,
            "command": f"python -m benchmarks.bench_store --sizes '' --consolidation {n_items}"}


def _ints(raw: str) -> list[int]:
    return [int(x) for x in raw.split(",") if x]


def measure(sizes: list[int], items: list[int], log: Any = print) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # as in a job (runner.job.run)
        return _measure(sizes, items, log)


def _measure(sizes: list[int], items: list[int], log: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"retrieval": [], "consolidation": []}
    for n in sizes:
        r = retrieval(n)
        out["retrieval"].append(r)
        log(f"  retrieve @ {r['live']:>7} live: p50 {r['p50_ms']:.3f} ms, p95 "
            f"{r['p95_ms']:.3f} ms" + ("" if r["ok"] is None else
                                       f"  ({'ok' if r['ok'] else 'OVER'} "
                                       f"target p50 <= {r['target_p50_ms']} ms)"))
    for n in items:
        c = consolidation(n)
        out["consolidation"].append(c)
        log(f"  consolidate {c['long_term']:>6} long-term: every pair {c['first_s']:.3f} s, "
            f"next day (20 new) {c['daily_s'] * 1000:.1f} ms")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--consolidation", default="1000,10000")
    args = ap.parse_args()
    measure(_ints(args.sizes), _ints(args.consolidation))


if __name__ == "__main__":
    main()

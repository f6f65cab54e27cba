"""What the process-wide embedding caches save on the incumbents sweep's MiniLM cells.

One stream per workload (seed 0, a share of its default horizon), and on it every MiniLM
cell of ``sweeps/incumbents.toml``, in turn in one process, two ways: ``alone``, the
process's caches emptied before each job (each job encodes all it asks for, as the first
job of its stream in a worker does), and ``shared``, the caches kept from job to job (as
a worker running one stream's jobs one after another keeps them). The order of the two
alternates by workload. The figures are each cell's seconds both ways and the ratio of
the totals. Usage: ``python benchmarks/bench_embeddings.py [--horizon 0.25]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

# (policy, params): the incumbents sweep's cells on MiniLM
CELLS: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    *(("lethe_agent", (("retention", r), ("embedder", "minilm")))
      for r in ("score_decay", "fifo")),
    *(("mem0", (("expire_days", d),)) for d in (0.0, 7.0, 30.0)),
    *(("langgraph_store", (("backend", "sqlite"), ("ttl_days", d), ("embedder", "minilm")))
      for d in (0.0, 7.0, 30.0)),
    ("yantrikdb", (("embedder", "minilm"),)),
    *((p, (("embedder", "minilm"),)) for p in ("lethe", "ebbinghaus", "keep_all")),
    *(("oracle", (("capacity", c), ("embedder", "minilm"))) for c in (0, 15, 60, 240)),
)
WORKLOADS = ("contradiction", "lifecycle", "statebench")


def empty_caches() -> None:
    from memcore import minilm
    from runner.adapters import embed_cache

    minilm._encode_batch.cache_clear()
    embed_cache._CACHES.clear()


def run_cells(workload: str, horizon: int, shared: bool) -> dict[str, float]:
    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    empty_caches()
    seconds = {}
    for policy, params in CELLS:
        if not shared:
            empty_caches()
        spec = make_spec(workload, policy, 0, horizon=horizon, params=params)
        t = time.perf_counter()
        run_job(spec)
        seconds[f"{policy} {dict(params)}"] = time.perf_counter() - t
    return seconds


def measure(share: float = 0.25, log: Any = print) -> dict[str, Any]:
    from runner.job.run import run_job
    from runner.spec.resolve import make_spec
    from workloads import WORKLOADS as REGISTRY

    for policy, params in CELLS:  # imports and model loads, untimed
        run_job(make_spec("contradiction", policy, 1, horizon=20, params=params))
    out: dict[str, Any] = {"share_of_default_horizon": share, "workloads": {}}
    totals = {"alone": 0.0, "shared": 0.0}
    for i, workload in enumerate(WORKLOADS):
        horizon = max(1, round(share * REGISTRY[workload].default_horizon))
        modes = ("alone", "shared") if i % 2 == 0 else ("shared", "alone")
        got = {m: run_cells(workload, horizon, m == "shared") for m in modes}
        for m in modes:
            totals[m] += sum(got[m].values())
        rows = [{"cell": cell, "alone_s": got["alone"][cell], "shared_s": got["shared"][cell]}
                for cell in got["alone"]]
        out["workloads"][workload] = {"horizon": horizon, "cells": rows}
        a, s = sum(got["alone"].values()), sum(got["shared"].values())
        log(f"{workload} (horizon {horizon}): alone {a:.1f} s, shared {s:.1f} s, "
            f"{a / s:.2f}x")
    out["alone_s"], out["shared_s"] = totals["alone"], totals["shared"]
    out["ratio"] = totals["alone"] / totals["shared"]
    out["command"] = f"python benchmarks/bench_embeddings.py --horizon {share}"
    log(f"all: alone {totals['alone']:.1f} s, shared {totals['shared']:.1f} s, "
        f"{out['ratio']:.2f}x")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--horizon", type=float, default=0.25,
                    help="each stream's share of its workload's default horizon")
    measure(ap.parse_args().horizon)


if __name__ == "__main__":
    main()

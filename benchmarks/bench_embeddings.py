"""What the process-wide embedding caches save on the incumbents sweep's MiniLM cells.

One stream per workload (seed 0, a share of its default horizon), and on it every MiniLM
cell of ``sweeps/incumbents.toml``, in turn in one process, two ways: ``alone``, the
process's caches emptied before each job (each job encodes all it asks for, as the first
job of its stream in a worker does), and ``shared``, the caches kept from job to job (as
a worker running one stream's jobs one after another keeps them). The order of the two
alternates by workload. The figures are each cell's seconds both ways and the ratio of
the totals. Usage: ``python benchmarks/bench_embeddings.py [--horizon 0.25]``.

``--before REV`` measures the sweep instead: ``SLICE``, ``sweeps/incumbents.toml``'s MiniLM
cells on 2 seeds at a quarter of each default horizon (108 jobs), swept on Ray by the
code at REV (checked out in a temporary git worktree: the revision before the caches,
``BEFORE``) and by this checkout, in turn, ``--runs`` times each; the figures are each
run's wall seconds from outside (``fbench sweep`` started to exited) and the median of
the pairs' ratios. Usage: ``python benchmarks/bench_embeddings.py --before ce71c0e^``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "ce71c0e^"  # the revision before the process-wide embedding caches
SWEEP_CONFIG = ROOT / "sweeps" / "incumbents.toml"
# its MiniLM cells on 2 seeds at a quarter of each default horizon
SLICE = ("--seeds", "2", "--horizons", "0.25x", "--param", "embedder=minilm")
SWEEP = ("import sys, runner.cli as c; sys.argv = ['fbench', 'sweep', *sys.argv[1:], "
         "'--executor', 'ray', '--no-report', '--quiet']; c.main()")

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
    minilm.shared_model().forward.clear()
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


def sweep_seconds(code: Path, out: Path) -> float:
    """Wall seconds of one ``fbench sweep`` of ``SLICE`` by the code in ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    args = ["--config", str(SWEEP_CONFIG), *SLICE, "--out", str(out)]
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", SWEEP, *args], cwd=out.parent, env=env,
                   check=True, capture_output=True)
    return time.perf_counter() - t


def measure_sweep(before: str = BEFORE, runs: int = 3, log: Any = print) -> dict[str, Any]:
    """``SLICE`` swept by the code at ``before`` and by this checkout, in turn."""
    seconds: dict[str, list[float]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="fbench-bench-embed-") as tmp:
        base = Path(tmp)
        tree = base / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree),
                        before], check=True, capture_output=True)
        try:
            for i in range(runs):
                order = ("before", "after") if i % 2 == 0 else ("after", "before")
                for who in order:
                    code = tree if who == "before" else ROOT
                    s = sweep_seconds(code, base / f"{who}{i}")
                    seconds[who].append(s)
                    log(f"run {i + 1}: {who} {s:.1f} s")
            jobs = len(json.loads((base / "after0" / "sweep.json").read_text())["jobs"])
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(tree)], check=True, capture_output=True)
    ratios = [b / a for b, a in zip(seconds["before"], seconds["after"], strict=True)]
    out = {"before": before, "jobs": jobs, "before_s": seconds["before"],
           "after_s": seconds["after"], "ratio_median": statistics.median(ratios),
           "command": f"python benchmarks/bench_embeddings.py --before {before}"}
    log(f"sweep slice: before {statistics.median(seconds['before']):.1f} s, after "
        f"{statistics.median(seconds['after']):.1f} s, {out['ratio_median']:.2f}x")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--horizon", type=float, default=0.25,
                    help="each stream's share of its workload's default horizon")
    ap.add_argument("--before", help="sweep SLICE by this revision and by this checkout")
    ap.add_argument("--runs", type=int, default=3, help="sweeps of each (with --before)")
    args = ap.parse_args()
    if args.before:
        measure_sweep(args.before, args.runs)
    else:
        measure(args.horizon)


if __name__ == "__main__":
    main()

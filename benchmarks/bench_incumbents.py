"""Per-job seconds and retrieval latency of each incumbent next to fbench's own policies,
on the same stream (one seed, the default horizon), in-process, one job at a time.

Each memory runs once untimed (imports, model loading: reported as ``warmup_s``), then
on seed 0; the figures are that job's wall seconds and its per-query latency (mean and
p95, measured by the harness around each ``query`` call, so they include the library's
own reinforcement or filtering work). Every row also names its final size.
Usage: ``python benchmarks/bench_incumbents.py [--workloads contradiction,lifecycle]``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

# (label, policy, params): the incumbents sweep's cells
MEMORIES: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = (
    ("lethe_agent", "lethe_agent", ()),
    ("lethe_agent minilm", "lethe_agent", (("embedder", "minilm"),)),
    ("lethe_agent fifo", "lethe_agent", (("retention", "fifo"),)),
    ("mem0 (minilm)", "mem0", ()),
    ("mem0 expire_days=7", "mem0", (("expire_days", 7.0),)),
    ("mem0 expire_days=30", "mem0", (("expire_days", 30.0),)),
    ("langgraph_store", "langgraph_store", ()),
    ("langgraph_store minilm", "langgraph_store", (("embedder", "minilm"),)),
    ("langgraph_store sqlite", "langgraph_store", (("backend", "sqlite"),)),
    ("langgraph_store sqlite ttl_days=7", "langgraph_store",
     (("backend", "sqlite"), ("ttl_days", 7.0))),
    ("langgraph_store sqlite ttl_days=30", "langgraph_store",
     (("backend", "sqlite"), ("ttl_days", 30.0))),
    ("yantrikdb", "yantrikdb", ()),
    ("yantrikdb minilm", "yantrikdb", (("embedder", "minilm"),)),
    ("yantrikdb max_active=100", "yantrikdb", (("max_active", 100),)),
    ("lethe", "lethe", ()),
    ("lethe minilm", "lethe", (("embedder", "minilm"),)),
    ("ebbinghaus", "ebbinghaus", ()),
    ("ebbinghaus minilm", "ebbinghaus", (("embedder", "minilm"),)),
    ("keep_all", "keep_all", ()),
    ("keep_all minilm", "keep_all", (("embedder", "minilm"),)),
)


def measure(workload: str, log: Any = print) -> dict[str, Any]:
    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    log(f"{workload}: {'memory':<20}{'warm-up s':>10}{'job s':>9}{'query ms':>10}"
        f"{'p95 ms':>9}{'size':>7}")
    rows = []
    for label, policy, params in MEMORIES:
        t = time.perf_counter()
        run_job(make_spec(workload, policy, 1, horizon=20 if workload != "contradiction"
                          else 200, params=params))
        warm = time.perf_counter() - t
        spec = make_spec(workload, policy, 0, params=params)
        t = time.perf_counter()
        m = run_job(spec).metrics()
        wall = time.perf_counter() - t
        row = {"memory": label, "policy": policy, "params": dict(params), "warmup_s": warm,
               "job_s": wall, "query_ms_mean": m["query_ms_mean"],
               "query_ms_p95": m["query_ms_p95"], "final_size": m["final_size"]}
        rows.append(row)
        log(f"{workload}: {label:<20}{warm:>10.2f}{wall:>9.2f}{m['query_ms_mean']:>10.3f}"
            f"{m['query_ms_p95']:>9.3f}{m['final_size']:>7}")
    return {"horizon": spec.horizon, "seed": 0, "memories": rows,
            "command": f"python benchmarks/bench_incumbents.py --workloads {workload}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workloads", default="contradiction,lifecycle")
    args = ap.parse_args()
    for w in args.workloads.split(","):
        measure(w)


if __name__ == "__main__":
    main()

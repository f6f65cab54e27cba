"""The benchmark suite: ``python -m benchmarks`` (or ``make bench``).

Runs every part, prints each figure as it comes and a summary table, and writes
``benchmarks/results.json`` (every figure with the command that made it, the
machine, the load average and the machine's speed at the time: ``python_loop_1e7_s``, the
seconds of a pure-Python loop of 10^7 additions in a function, just before the part (a
shared machine's speed varies by the hour: compare two runs' figures with it in mind).
Parts:

1. ``run``: per-policy seconds of one job at the default horizon, median of 5
   (``benchmarks/bench_run.py``; targets: contradiction <= 0.25 s, lifecycle <= 0.5 s).
2. ``horizons``: seconds and peak RSS per job at 1x, 10x, 100x, one fresh process
   each (``benchmarks.bench_horizons``; bounded policies: slope <= 1.1, RSS ratio <= 1.5).
3. ``store``: retrieval p50/p95 at 1k/10k/100k live entries, consolidation at 1k/10k
   long-term items (``benchmarks.bench_store``).
4. ``executors``: sweep jobs/second inline vs Ray (``benchmarks/bench_executors.py``).
5. ``aggregate``: aggregation seconds for 1k and 10k shards, raw and after
   ``fbench compact`` (``benchmarks/bench_aggregate.py``; 10k compacted <= 10 s).
6. ``seed``: a 3,000-turn contradiction job against a plain-Python re-implementation of
   the seed, timed in the same run (``benchmarks.bench_seed``; >= 15x it, i.e. >= 30x
   the seed's own code, for every analytic policy; learned_forget <= 1.5x ebbinghaus).
7. ``sweep``: README's ``fbench sweep --seeds N`` from a cold start at 2, 4 and 6 seeds,
   fitted and extrapolated to 50 (``benchmarks.bench_sweep``; <= 10 minutes, mean job
   <= 0.25 s, every workload's median job <= 0.6 s, efficiency >= 0.85); with
   ``--full-sweep`` also the 50 seeds themselves, timed.
8. ``startup``: whole-process seconds of ``fbench list policies`` and of a one-turn
   ``fbench run``, and the heavy modules each imports (``benchmarks.bench_startup``;
   <= 0.5 s and <= 1 s, importing none of torch, Ray, matplotlib, the incumbents).
9. ``incumbents``: per-job seconds and query latency of every incumbent library next to
   fbench's policies on the same stream (``benchmarks/bench_incumbents.py``; needs the
   ``incumbents`` extra).
10. ``driver``: a sweep of trivial jobs end to end at ``--driver-jobs`` (default 10,000
   and 100,000): seconds per 10,000 jobs, the driver's peak RSS, resume's scan,
   compaction and aggregate after it (``benchmarks.bench_driver``); and the driver's
   own bookkeeping, each job replaced by writing a 10-byte file, at ``--bookkeeping-jobs``
   (default 1,000,000: ``benchmarks.bench_bookkeeping``). Not in the default run
   (``--only driver`` runs it).

11. ``embeddings``: the incumbents sweep's MiniLM cells on one stream per workload,
   each job alone (the process's embedding caches emptied first) and sharing them
   (``benchmarks/bench_embeddings.py``).

   ``embeddings_sweep``: the same cells on 2 seeds at a quarter of each default horizon
   (108 jobs), swept on Ray by the code before the caches (``bench_embeddings.BEFORE``,
   a temporary git worktree) and by this checkout, in turn, 3 times each
   (``benchmarks/bench_embeddings.py --before``; target: >= 3x faster).

12. ``samples``: the default grid at 2 seeds, swept without and with ``--samples`` in
   turn: the jobs' seconds ratio and the samples' size, projected to 50 seeds
   (``benchmarks.bench_samples``).

``--only run,store`` runs some parts; ``--multiples 1,10`` shortens ``horizons``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results.json"
PARTS = ("run", "horizons", "store", "executors", "aggregate", "seed", "sweep", "driver",
         "startup", "incumbents", "embeddings", "embeddings_sweep", "samples")


def _run_part(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_run import measure

    return {w: measure(w, repeats=5) for w in ("contradiction", "lifecycle")}


def _horizons(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_horizons import measure, reference_policies

    return measure(args.workloads.split(","), reference_policies(),
                   [int(m) for m in args.multiples.split(",")])


def _store(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_store import measure

    return measure([1000, 10_000, 100_000], [1000, 10_000])


def _executors(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_executors import measure

    return measure(200, 3000, pool=False)


def _aggregate(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_aggregate import measure

    with tempfile.TemporaryDirectory() as tmp:
        out: dict[str, dict[str, Any]] = {
            str(n): dict(measure(n, Path(tmp))) for n in (1000, 10_000)}
    for n, r in out.items():
        print(f"  {n:>6} shards: aggregate raw {r['aggregate_raw_s']:.2f} s, compact "
              f"{r['compact_s']:.2f} s, aggregate compacted {r['aggregate_compacted_s']:.2f} s")
        r["command"] = f"python benchmarks/bench_aggregate.py --shards {n}"
    return out


def _seed(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_seed import measure

    return measure(repeats=7)


def _sweep(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_sweep import measure

    return measure([2, 4, 6], full=args.full_sweep)


def _startup(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_startup import measure

    return measure(repeats=5)


def _incumbents(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_incumbents import measure

    return {w: measure(w) for w in ("contradiction", "lifecycle")}


def _embeddings(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_embeddings import measure

    return measure()


def _embeddings_sweep(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_embeddings import measure_sweep

    return measure_sweep()


def _samples(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_samples import measure

    return measure()


def _driver(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks.bench_bookkeeping import measure as bookkeeping
    from benchmarks.bench_driver import extrapolate, measure, paper_line

    rows = [measure(int(n)) for n in args.driver_jobs.split(",")]
    result: dict[str, Any] = {
        "command": f"python -m benchmarks.bench_driver --jobs {args.driver_jobs}", "rows": rows}
    if len(rows) >= 2:
        result["extrapolated"] = extrapolate(rows)
        print(paper_line(result["extrapolated"]))
    result["bookkeeping"] = {
        "command": f"python -m benchmarks.bench_bookkeeping --jobs {args.bookkeeping_jobs}",
        "rows": [bookkeeping(int(n)) for n in args.bookkeeping_jobs.split(",")]}
    return result


RUNNERS = {"run": _run_part, "driver": _driver, "horizons": _horizons, "store": _store,
           "executors": _executors, "aggregate": _aggregate, "seed": _seed, "sweep": _sweep,
           "startup": _startup, "incumbents": _incumbents, "embeddings": _embeddings,
           "embeddings_sweep": _embeddings_sweep, "samples": _samples}


def loop_seconds() -> float:
    """The machine's speed now: seconds of a pure-Python loop of 10^7 additions (five
    times the fastest of three loops of 2·10^6)."""
    best = float("inf")
    for _ in range(3):
        t, total = time.perf_counter(), 0
        for i in range(2_000_000):
            total += i
        best = min(best, time.perf_counter() - t)
    return 5 * best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(p for p in PARTS if p != "driver"),
                    help="comma-separated parts")
    ap.add_argument("--multiples", default="1,10,100", help="horizon multiples for horizons")
    ap.add_argument("--workloads", default="contradiction,lifecycle",
                    help="workloads for horizons")
    ap.add_argument("--driver-jobs", default="10000,100000", help="sweep sizes for driver")
    ap.add_argument("--bookkeeping-jobs", default="1000000",
                    help="sweep sizes for the driver's bookkeeping")
    ap.add_argument("--full-sweep", action="store_true",
                    help="sweep: also run the 50 seeds it extrapolates to (about 10 min)")
    ap.add_argument("--output", type=Path, default=RESULTS)
    args = ap.parse_args()
    parts = [p for p in args.only.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise SystemExit(f"unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    results: dict[str, Any] = {}
    if args.output.exists():  # a partial run updates its parts, keeps the others
        results = json.loads(args.output.read_text())
    results["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "platform": platform.platform()}
    for part in parts:
        speed = loop_seconds()
        print(f"== {part}  (load average {os.getloadavg()[0]:.2f}; a 10^7-addition loop "
              f"{speed:.2f} s)", flush=True)
        start = time.perf_counter()
        value = RUNNERS[part](args)
        if part == "horizons" and "horizons" in results:  # keep other workloads' rows
            ran = set(args.workloads.split(","))
            old = results["horizons"]["result"]
            for key in ("jobs", "fits"):
                value[key] = [r for r in old[key] if r["workload"] not in ran] + value[key]
        results[part] = {"when": datetime.datetime.now(datetime.UTC).isoformat(
            timespec="seconds"), "seconds": round(time.perf_counter() - start, 1),
            "load_average_after": round(os.getloadavg()[0], 2),
            "python_loop_1e7_s": round(speed, 3), "result": value}
        tmp = args.output.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        tmp.replace(args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

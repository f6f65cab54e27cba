"""README's main job, timed: ``fbench sweep --seeds N`` from a cold start (a fresh
process, embedded Ray, ending in its report), at a few seed counts, extrapolated to 50.

Each run is the whole command a user types, with ``--executor ray`` (so a small run
does not go inline) into a fresh folder. The wall time of each is fitted as
``a + b·seeds`` (least squares, ``numpy.polyfit``): ``a`` is the fixed cost (start-up,
Ray, the report), ``b`` a seed's jobs. Linearity is shown by the per-seed cost of each
run after the fixed cost, and by the fit's largest relative residual (three seed
counts, so a line is a claim). From the shards: the mean and the per-workload median of
a job's ``wall_s``, and the sweep's efficiency, the jobs' summed seconds over (wall x
CPUs), measured and, at 50 seeds, estimated from the fit.

Targets: 50 seeds <= 10 minutes on 2 cores; mean job <= 0.25 s; no
workload's median job > 0.6 s; efficiency >= 0.85.
Usage: ``python -m benchmarks.bench_sweep [--seeds 2,4,6] [--full]`` (``--full`` also
runs 50 seeds, about as long as it predicts).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

TARGET_50_S = 600.0
TARGET_MEAN_JOB_S = 0.25
TARGET_MEDIAN_JOB_S = 0.6
TARGET_EFFICIENCY = 0.85


def _job_seconds(out: Path) -> dict[str, list[float]]:
    """Each job's own seconds (its last checkpoint's ``wall_s``) by workload."""
    import pyarrow.parquet as pq

    by_workload: dict[str, list[float]] = defaultdict(list)
    for shard in sorted((out / "shards").rglob("*.parquet")):
        table = pq.read_table(shard, columns=["wall_s"])
        workload = next(p.split("=", 1)[1] for p in shard.parts if p.startswith("workload="))
        by_workload[workload].append(float(table.column("wall_s")[-1].as_py()))
    return by_workload


def run_sweep(seeds: int, log: Any = print) -> dict[str, Any]:
    """One cold ``fbench sweep --seeds N`` into a fresh folder: its wall, jobs, and the
    jobs' seconds."""
    cpus = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results"
        cmd = [sys.executable, "-m", "runner.cli", "sweep", "--seeds", str(seeds),
               "--executor", "ray", "--out", str(out)]
        t = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t
        if done.returncode != 0:
            raise SystemExit(f"fbench sweep --seeds {seeds} failed:\n{done.stderr[-2000:]}")
        jobs = _job_seconds(out)
        reported = (out / "RESULTS.md").exists()
    every = [s for v in jobs.values() for s in v]
    row = {"seeds": seeds, "wall_s": wall, "jobs": len(every), "report": reported,
           "mean_job_s": statistics.fmean(every), "job_s_sum": sum(every),
           "efficiency": sum(every) / (wall * cpus),
           "median_job_s": {w: statistics.median(v) for w, v in sorted(jobs.items())}}
    log(f"--seeds {seeds:>3}: {wall:7.1f} s, {len(every)} jobs, mean job "
        f"{row['mean_job_s']:.3f} s, efficiency {row['efficiency']:.2f}"
        f"{'' if reported else ' (no report!)'}")
    return row


def measure(seed_counts: list[int], full: bool = False, log: Any = print) -> dict[str, Any]:
    """Runs at ``seed_counts`` (and at 50 if ``full``), the linear fit, the 50-seed
    estimate and the targets."""
    runs = [run_sweep(n, log) for n in seed_counts]
    x = np.array([r["seeds"] for r in runs], dtype=float)
    y = np.array([r["wall_s"] for r in runs])
    per_seed, fixed = np.polyfit(x, y, 1)
    residual = float(np.max(np.abs(np.polyval([per_seed, fixed], x) - y) / y))
    estimate = float(fixed + 50 * per_seed)
    for r in runs:
        r["per_seed_after_fixed_s"] = (r["wall_s"] - fixed) / r["seeds"]
    log(f"fit: {fixed:.1f} s fixed + {per_seed:.1f} s a seed (largest residual "
        f"{residual:.1%}); per seed after the fixed cost: "
        + ", ".join(f"{r['per_seed_after_fixed_s']:.1f} s at {r['seeds']}" for r in runs))
    last = runs[-1]
    worst = max(last["median_job_s"].items(), key=lambda kv: kv[1])
    jobs_50 = last["jobs"] / last["seeds"] * 50
    efficiency_50 = last["mean_job_s"] * jobs_50 / (estimate * (os.cpu_count() or 1))
    result: dict[str, Any] = {
        "runs": runs, "fixed_s": float(fixed), "per_seed_s": float(per_seed),
        "largest_residual": residual, "estimate_50_s": estimate,
        "mean_job_s": last["mean_job_s"], "slowest_workload_median": list(worst),
        "efficiency": last["efficiency"], "efficiency_50_est": efficiency_50,
        "command": "python -m benchmarks.bench_sweep --seeds "
                   + ",".join(map(str, seed_counts)) + (" --full" if full else "")}
    log(f"50 seeds, estimated: {estimate / 60:.1f} min (target <= {TARGET_50_S / 60:.0f}); "
        f"mean job {last['mean_job_s']:.3f} s (<= {TARGET_MEAN_JOB_S}); slowest workload "
        f"median {worst[0]} {worst[1]:.3f} s (<= {TARGET_MEDIAN_JOB_S}); efficiency "
        f"{last['efficiency']:.2f} at {last['seeds']} seeds, {efficiency_50:.2f} at 50 "
        f"estimated (>= {TARGET_EFFICIENCY})")
    if full:
        result["full"] = run_sweep(50, log)
        log(f"50 seeds, measured: {result['full']['wall_s'] / 60:.1f} min")
    wall_50 = result["full"]["wall_s"] if full else estimate
    eff_50 = result["full"]["efficiency"] if full else efficiency_50
    result["ok"] = (wall_50 <= TARGET_50_S and last["mean_job_s"] <= TARGET_MEAN_JOB_S
                    and worst[1] <= TARGET_MEDIAN_JOB_S and eff_50 >= TARGET_EFFICIENCY)
    return result


def readme_sentence(result: dict[str, Any]) -> str:
    """README's timing sentence, from this benchmark's figures (``benchmarks/results.json``;
    ``tests/test_readme.py`` checks README says exactly this)."""
    runs = result["runs"]
    counts = [str(r["seeds"]) for r in runs]
    seeds = ", ".join(counts[:-1]) + f" and {counts[-1]}" if len(counts) > 1 else counts[0]
    if "full" in result:  # the run itself, and what the smaller runs predicted
        full = result["full"]
        return (f"On a 2-core machine it took {full['wall_s'] / 60:.1f} minutes from a cold "
                f"start, embedded Ray and the report included (a mean job of "
                f"{full['mean_job_s']:.2f} s); runs at {seeds} seeds fit "
                f"{result['fixed_s']:.0f} s of start-up and report plus "
                f"{result['per_seed_s']:.1f} s a seed, {result['estimate_50_s'] / 60:.1f} "
                f"minutes at 50 (a mean job of {result['mean_job_s']:.2f} s; `python -m "
                "benchmarks.bench_sweep --full`, figures in `benchmarks/results.json`).")
    took = f"takes about {result['estimate_50_s'] / 60:.0f} minutes"
    return (f"On a 2-core machine it {took} from a cold start, embedded Ray and the report "
            f"included: {result['fixed_s']:.0f} s of start-up and report plus "
            f"{result['per_seed_s']:.1f} s a seed, fitted at {seeds} seeds by "
            f"`python -m benchmarks.bench_sweep` (a mean job of "
            f"{result['mean_job_s']:.2f} s; figures in `benchmarks/results.json`).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="2,4,6", help="comma-separated seed counts")
    ap.add_argument("--full", action="store_true", help="also run 50 seeds")
    args = ap.parse_args()
    measure([int(s) for s in args.seeds.split(",")], args.full)


if __name__ == "__main__":
    main()

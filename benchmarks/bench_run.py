"""Per-policy seconds for one job at a workload's default horizon, in-process.

Targets on this 2-core machine, measured after a first warm-up job (the warm-up:
imports, weight loading, reported separately): a 3,000-turn ``contradiction`` job
<= 0.25 s and a 365-day ``lifecycle`` job <= 0.5 s, for every policy (docs/reference.md,
"Costs and performance targets", sets them against the seed's own cost).
Usage: ``python benchmarks/bench_run.py [--workload lifecycle] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

TARGET_S = {"contradiction": 0.25, "lifecycle": 0.5}


def measure(workload: str, repeats: int = 5, horizon: int | None = None,
            log: Any = print) -> dict[str, Any]:
    """Warm-up and median seconds per reference policy; ``ok`` when every median meets
    the workload's target."""
    from memcore import POLICIES
    from runner.job import streams
    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    target = TARGET_S.get(workload, 1.0)
    log(f"{'policy':<18}{'warm-up s':>10}{'median s':>10}{'min s':>8}{'max s':>8}  target")
    rows: list[dict[str, Any]] = []
    for policy in sorted(p for p, c in POLICIES.items() if not c.wrapper):
        spec = make_spec(workload, policy, 0, horizon)
        t = time.perf_counter()
        run_job(spec)  # first job: loads weights, warms caches
        warm = time.perf_counter() - t
        times = []
        for seed in range(1, repeats + 1):
            spec = make_spec(workload, policy, seed, horizon)
            streams.clear()  # the job generates its stream (a sweep's jobs share it)
            t = time.perf_counter()
            run_job(spec)
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        rows.append({"policy": policy, "warmup_s": warm, "median_s": med,
                     "min_s": min(times), "max_s": max(times), "ok": med <= target})
        log(f"{policy:<18}{warm:>10.3f}{med:>10.3f}{min(times):>8.3f}{max(times):>8.3f}  "
            f"{'ok' if med <= target else 'OVER'}")
    worst = max(float(r["median_s"]) for r in rows)
    log(f"slowest policy median: {worst:.3f} s per {workload} job at horizon "
        f"{spec.horizon} (target <= {target} s)")
    return {"horizon": spec.horizon, "target_s": target, "policies": rows,
            "slowest_median_s": worst, "ok": worst <= target,
            "command": f"python benchmarks/bench_run.py --workload {workload} "
                       f"--repeats {repeats}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--workload", default="contradiction")
    ap.add_argument("--horizon", type=int, default=None, help="default: the workload's")
    args = ap.parse_args()
    t0 = time.perf_counter()
    import runner.job.run  # noqa: F401 - the import time is reported

    print(f"import fbench: {time.perf_counter() - t0:.3f} s")
    measure(args.workload, args.repeats, args.horizon)


if __name__ == "__main__":
    main()

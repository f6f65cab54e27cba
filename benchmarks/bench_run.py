"""Per-policy seconds for one job at a workload's default horizon, in-process.

Targets on this 2-core machine, measured after a first warm-up job (the warm-up:
imports, weight loading, reported separately): a 3,000-turn ``contradiction`` job
<= 0.5 s (issue #2), a 365-day ``lifecycle`` job <= 1 s (issue #4), for every
policy. Usage: ``python benchmarks/bench_run.py [--workload lifecycle] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

TARGET_S = {"contradiction": 0.5, "lifecycle": 1.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--workload", default="contradiction")
    ap.add_argument("--horizon", type=int, default=None, help="default: the workload's")
    args = ap.parse_args()
    target = TARGET_S.get(args.workload, 1.0)

    t0 = time.perf_counter()
    from memcore import POLICIES
    from runner.job import run_job
    from runner.resolve import make_spec

    print(f"import fbench: {time.perf_counter() - t0:.3f} s")
    print(f"{'policy':<18}{'warm-up s':>10}{'median s':>10}{'min s':>8}{'max s':>8}  target")
    worst = 0.0
    for policy in sorted(p for p, c in POLICIES.items() if not c.wrapper):
        spec = make_spec(args.workload, policy, 0, args.horizon)
        t = time.perf_counter()
        run_job(spec)  # first job: loads weights, warms caches
        warm = time.perf_counter() - t
        times = []
        for seed in range(1, args.repeats + 1):
            spec = make_spec(args.workload, policy, seed, args.horizon)
            t = time.perf_counter()
            run_job(spec)
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        worst = max(worst, med)
        ok = "ok" if med <= target else "OVER"
        print(f"{policy:<18}{warm:>10.3f}{med:>10.3f}{min(times):>8.3f}{max(times):>8.3f}  {ok}")
    print(f"slowest policy median: {worst:.3f} s per {args.workload} job at horizon "
          f"{spec.horizon} (target <= {target} s)")


if __name__ == "__main__":
    main()

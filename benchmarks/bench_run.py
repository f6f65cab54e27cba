"""Per-policy seconds for one 3,000-turn contradiction job, in-process.

Target (issue #2): every policy <= 0.5 s per job on a 2-core machine, measured
after a first warm-up job; the warm-up (imports, weight loading) is reported
separately. Usage: ``python benchmarks/bench_run.py [--repeats 5] [--horizon 3000]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

TARGET_S = 0.5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--horizon", type=int, default=3000)
    args = ap.parse_args()

    t0 = time.perf_counter()
    from memcore import POLICIES
    from runner.job import run_job
    from runner.resolve import make_spec

    print(f"import fbench: {time.perf_counter() - t0:.3f} s")
    print(f"{'policy':<18}{'warm-up s':>10}{'median s':>10}{'min s':>8}{'max s':>8}  target")
    worst = 0.0
    for policy in sorted(POLICIES):
        spec = make_spec("contradiction", policy, 0, args.horizon)
        t = time.perf_counter()
        run_job(spec)  # first job: loads weights, warms caches
        warm = time.perf_counter() - t
        times = []
        for seed in range(1, args.repeats + 1):
            spec = make_spec("contradiction", policy, seed, args.horizon)
            t = time.perf_counter()
            run_job(spec)
            times.append(time.perf_counter() - t)
        med = statistics.median(times)
        worst = max(worst, med)
        ok = "ok" if med <= TARGET_S else "OVER"
        print(f"{policy:<18}{warm:>10.3f}{med:>10.3f}{min(times):>8.3f}{max(times):>8.3f}  {ok}")
    print(f"slowest policy median: {worst:.3f} s per {args.horizon}-turn job "
          f"(target <= {TARGET_S} s)")


if __name__ == "__main__":
    main()

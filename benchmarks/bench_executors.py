"""Jobs per second of one sweep, inline vs Ray (embedded local), on this machine.

The sweep: contradiction at horizon 3000, every registered reference policy, seeds
0.. until ``--jobs`` jobs. Inline runs after one warm-up job (imports, weights); Ray's
start-up (``ray.init``) is timed separately, its run includes the workers' own warm-up.

Efficiency vs ideal = (inline s / CPUs) / Ray s; target >= 85% on 2 cores. For scale,
the same batches on a plain ``multiprocessing`` pool (one process per CPU, no Ray) are
timed too: the machine's own parallel ceiling (two processes on two vCPUs do not run
twice as fast as one), so Ray's overhead proper is pool s / Ray s.
Usage: ``python benchmarks/bench_executors.py [--jobs 200] [--horizon 3000] [--no-pool]``.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import os
import time
from typing import Any

TARGET_EFFICIENCY = 0.85


def _pool_batch(spec_jsons: list[str]) -> int:
    import torch

    from runner.job.execute import execute_batch

    torch.set_num_threads(1)
    return sum(o.table is not None for o in execute_batch(spec_jsons, "pool"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--horizon", type=int, default=3000)
    ap.add_argument("--no-pool", action="store_true", help="skip the multiprocessing run")
    args = ap.parse_args()
    measure(args.jobs, args.horizon, not args.no_pool)


def measure(jobs: int, horizon: int, pool: bool = True, log: Any = print) -> dict[str, Any]:
    """Seconds and jobs/second inline, on a plain pool (if ``pool``) and on Ray."""
    args = argparse.Namespace(jobs=jobs, horizon=horizon, no_pool=not pool)
    print = log  # every line below goes to the caller's log
    result: dict[str, Any] = {"jobs": jobs, "horizon": horizon,
                              "command": f"python benchmarks/bench_executors.py --jobs {jobs}"
                                         f" --horizon {horizon}"}

    from cluster import EXECUTORS
    from cluster.base import Outcome
    from cluster.ray_connect import start_local_ray
    from cluster.ray_executor import batch_size, make_batches
    from memcore import POLICIES
    from runner.job.execute import job_task
    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    policies = sorted(POLICIES)
    seeds = range(-(-args.jobs // len(policies)))
    cells = itertools.islice(itertools.product(seeds, policies), args.jobs)
    specs = [make_spec("contradiction", policy, seed, args.horizon).canonical_json()
             for seed, policy in cells]
    n, n_cpus = len(specs), os.cpu_count() or 1
    print(f"{n} jobs: contradiction, horizon {args.horizon}, policies {', '.join(policies)}; "
          f"{n_cpus} CPUs; load average {os.getloadavg()[0]:.2f}")

    def timed_run(name: str, **kw: object) -> tuple[float, int, float]:
        """Wall seconds, failed jobs, and the jobs' own summed seconds (their wall_s)."""
        out: list[Outcome] = []
        ex = EXECUTORS[name](task=job_task(), **kw)
        t = time.perf_counter()
        ex.run(specs, out.append)
        seconds = time.perf_counter() - t
        ex.close()
        assert len(out) == n, f"{name}: {len(out)} outcomes for {n} jobs"
        tables = [o.table for o in out if o.table is not None]
        busy = sum(t.column("wall_s")[-1].as_py() for t in tables)
        return seconds, n - len(tables), busy

    def line(label: str, seconds: float, note: str) -> None:
        print(f"{label:<12}{seconds:8.2f} s  {n / seconds:7.2f} jobs/s  {note}")

    run_job(make_spec("contradiction", policies[0], 10**6, args.horizon))  # warm-up
    inline_s, inline_failed, inline_busy = timed_run("inline")
    result["inline_s"], result["inline_jobs_per_s"] = inline_s, n / inline_s
    job_s = inline_s / n
    line("inline", inline_s, f"({job_s:.3f} s a job, {inline_failed} failed)")

    batches = make_batches(specs, batch_size(n, n_cpus, job_s), n_cpus)
    pool_s = None
    if not args.no_pool:
        t = time.perf_counter()
        with multiprocessing.get_context("spawn").Pool(n_cpus) as workers:
            ok = sum(workers.imap_unordered(_pool_batch, batches))
        pool_s = time.perf_counter() - t
        result["pool_s"], result["pool_jobs_per_s"] = pool_s, n / pool_s
        line("pool", pool_s, f"({n_cpus} plain processes, same {len(batches)} batches; "
             f"{n - ok} failed)")

    import ray

    t = time.perf_counter()
    start_local_ray()
    startup_s = time.perf_counter() - t
    print(f"{'ray start':<12}{startup_s:8.2f} s  (ray.init, embedded, {n_cpus} CPUs)")
    try:
        ray_s, ray_failed, ray_busy = timed_run("ray", job_seconds=job_s)
    finally:
        ray.shutdown()
    result.update(ray_s=ray_s, ray_jobs_per_s=n / ray_s, ray_startup_s=startup_s)
    line("ray", ray_s, f"({len(batches)} tasks, {ray_failed} failed; start-up excluded)")

    eff = (inline_s / n_cpus) / ray_s
    print(f"a job in a Ray worker takes {ray_busy / inline_busy:.2f}x its inline time; "
          f"workers busy {ray_busy / (n_cpus * ray_s):.0%} of the run; "
          f"load average now {os.getloadavg()[0]:.2f}")
    print(f"efficiency vs ideal ({n_cpus} CPUs): {eff:.0%} "
          f"({'ok' if eff >= TARGET_EFFICIENCY else 'BELOW'} target {TARGET_EFFICIENCY:.0%}); "
          f"with start-up {(inline_s / n_cpus) / (ray_s + startup_s):.0%}")
    if pool_s is not None:
        print(f"plain pool vs ideal: {(inline_s / n_cpus) / pool_s:.0%}; "
              f"Ray vs plain pool: {pool_s / ray_s:.0%}")
    result["efficiency"] = eff
    return result


if __name__ == "__main__":
    main()

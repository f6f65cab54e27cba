"""The driver's own bookkeeping at a million jobs, measured rather than extrapolated:
what ``fbench sweep`` does per job besides running it, with the job itself replaced.

The sweep is the real one (``runner.sweep``: expand, plan, ``sweep.json``, the
manifest, every outcome tracked, every stamp in the commit log) with one executor
swapped in: ``stamping``, which runs no job but writes a 10-byte file at the job's shard
path and reports it stored, as a worker that wrote its shard does. Then the same sweep
again: a resume that finds every job done (the commit log vouches for each file, so
none is opened). Each step runs in a fresh process; its peak RSS is ``ru_maxrss``.

Usage: ``python -m benchmarks.bench_bookkeeping [--jobs 100000,1000000]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PLUGIN = "benchmarks.driver_plugin"
ROOT = Path(__file__).resolve().parent.parent


class StampingExecutor:
    """Runs no job: writes a 10-byte file where the job's shard goes, and reports it
    stored with its stamp (what a worker that wrote the shard reports)."""

    name = "stamping"

    def __init__(self, out: Path, **_: object) -> None:
        self.out = out

    def start(self) -> None:
        pass

    def run(self, spec_jsons: Sequence[str], on_outcome: Any) -> None:
        from cluster.base import Outcome
        from runner.results.shard import shard_path
        from runner.spec.jobspec import JobSpec

        for spec_json in spec_jsons:
            path = shard_path(self.out, JobSpec.from_dict(json.loads(spec_json)))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"0123456789")
            st = path.stat()
            on_outcome(Outcome(spec_json, None, stored=(st.st_size, st.st_mtime_ns)))

    def close(self) -> None:
        pass


def step(n_jobs: int, out: Path) -> dict[str, Any]:
    """One sweep of ``n_jobs`` into ``out`` in this process: seconds and figures."""
    from cluster import EXECUTORS
    from runner.sweep.expand import SweepSpec, expand
    from runner.sweep.run import prepare, run_sweep

    EXECUTORS.register("stamping")(lambda **kw: StampingExecutor(out, **kw))
    start = time.perf_counter()
    spec = SweepSpec(seeds=tuple(range(n_jobs)), policies=(f"{PLUGIN}:Noop",),
                     workloads=(f"{PLUGIN}:TenEvents",))
    prepared = prepare(spec, expand(spec), out, executor="stamping")
    planned = time.perf_counter() - start
    result = run_sweep(prepared)
    return {"seconds": time.perf_counter() - start, "plan_s": planned,
            "ran": result.done, "skipped": result.skipped,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _in_child(n_jobs: int, out: Path) -> dict[str, Any]:
    code = ("import json, sys; from benchmarks.bench_bookkeeping import step; "
            f"print(json.dumps(step({n_jobs}, __import__('pathlib').Path({str(out)!r}))))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    figures: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return figures


def measure(n_jobs: int, workdir: Path | None = None, log: Any = print) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        out = Path(tmp) / "out"
        sweep = _in_child(n_jobs, out)
        assert (sweep["ran"], sweep["skipped"]) == (n_jobs, 0), sweep
        resume = _in_child(n_jobs, out)
        assert (resume["ran"], resume["skipped"]) == (0, n_jobs), resume
    row = {"jobs": n_jobs, "sweep_s": sweep["seconds"], "sweep_plan_s": sweep["plan_s"],
           "sweep_peak_rss_mb": sweep["peak_rss_mb"], "resume_s": resume["seconds"],
           "resume_peak_rss_mb": resume["peak_rss_mb"]}
    log(f"{n_jobs:>9,} jobs  bookkeeping {row['sweep_s']:7.1f} s (peak RSS "
        f"{row['sweep_peak_rss_mb']:.0f} MB)  resume {row['resume_s']:6.1f} s (peak RSS "
        f"{row['resume_peak_rss_mb']:.0f} MB)")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="100000,1000000")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    rows = [measure(int(n), args.workdir) for n in args.jobs.split(",")]
    print(json.dumps({"rows": rows}, indent=1))


if __name__ == "__main__":
    main()

"""The driver at scale: a sweep of N trivial jobs end to end, where what costs is
fbench's own work per job (expand, plan, schedule, track, write), not the jobs'.

The job: ``benchmarks.driver_plugin:Noop`` (a memory that keeps nothing) on
``benchmarks.driver_plugin:TenEvents`` (10 events), one job per seed, run by
``fbench sweep`` in a fresh process (file plugins, imported from the repository root).
Figures, for each N:

- ``sweep_s`` and ``s_per_10k``: the whole command, start-up included;
- ``driver_peak_rss_mb``: the driver process's peak resident memory (``VmHWM``, polled;
  the Ray workers and daemons are other processes);
- ``resume_s``: the same command again, every job done (resume's scan of OUT);
- ``compact_s`` and ``aggregate_after_compact_s``: ``fbench compact`` then
  ``fbench aggregate`` on the result.

Usage: ``python -m benchmarks.bench_driver [--jobs 10000,100000] [--executor ray]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = "benchmarks.driver_plugin"


def _peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _timed(argv: list[str]) -> tuple[float, float, str]:
    """Run ``fbench ARGV`` from the repository root: seconds, the driver's peak RSS (MB),
    and its output's last line."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "runner.cli", *argv], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = 0.0
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout or []), daemon=True)
    reader.start()  # (drained as it comes: a full pipe would stall the command)
    while proc.poll() is None:
        peak = max(peak, _peak_rss_mb(proc.pid) or 0.0)
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    reader.join()
    err = "".join(output)
    if proc.returncode != 0:
        raise RuntimeError(f"fbench {' '.join(argv)} exited {proc.returncode}: {err[-2000:]}")
    return seconds, peak, (err.strip().splitlines() or [""])[-1]


def measure(n_jobs: int, executor: str = "ray", workdir: Path | None = None,
            log: Any = print) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        out = str(Path(tmp) / "out")
        sweep = ["sweep", "--seeds", str(n_jobs), "--policies", f"{PLUGIN}:Noop",
                 "--workloads", f"{PLUGIN}:TenEvents", "--executor", executor,
                 "--no-report", "--out", out]
        sweep_s, rss, line = _timed(sweep)
        log(f"{n_jobs:>9,} jobs  sweep {sweep_s:8.1f} s  ({sweep_s / n_jobs * 1e4:6.1f} s per "
            f"10k)  driver peak RSS {rss:7.0f} MB   [{line}]")
        resume_s, resume_rss, line = _timed(sweep)
        log(f"{'':>14}resume {resume_s:7.1f} s  (peak RSS {resume_rss:.0f} MB)   [{line}]")
        compact_s, _, line = _timed(["compact", out])
        log(f"{'':>14}compact {compact_s:6.1f} s   [{line[:100]}]")
        agg_s, agg_rss, _ = _timed(["aggregate", out, "--baseline", f"{PLUGIN}:Noop"])
        log(f"{'':>14}aggregate after compact {agg_s:.1f} s (peak RSS {agg_rss:.0f} MB)")
    return {"jobs": n_jobs, "executor": executor, "sweep_s": sweep_s,
            "s_per_10k": sweep_s / n_jobs * 1e4, "driver_peak_rss_mb": rss,
            "resume_s": resume_s, "resume_peak_rss_mb": resume_rss, "compact_s": compact_s,
            "aggregate_after_compact_s": agg_s, "aggregate_peak_rss_mb": agg_rss}


FIGURES = ("sweep_s", "driver_peak_rss_mb", "resume_s", "resume_peak_rss_mb", "compact_s",
           "aggregate_after_compact_s", "aggregate_peak_rss_mb")


def extrapolate(rows: list[dict[str, Any]], n_jobs: int = 1_000_000) -> dict[str, Any]:
    """Each figure at ``n_jobs``, on paper: the line through the two largest measured
    sizes (fixed cost + cost per job; every step is O(jobs)), and that per-job cost."""
    a, b = sorted(rows, key=lambda r: r["jobs"])[-2:]
    out: dict[str, Any] = {"jobs": n_jobs, "from": [a["jobs"], b["jobs"]]}
    for key in FIGURES:
        slope = (b[key] - a[key]) / (b["jobs"] - a["jobs"])
        out[key] = b[key] + slope * (n_jobs - b["jobs"])
        out[f"{key}_per_job"] = slope
    return out


def paper_line(e: dict[str, Any]) -> str:
    """The extrapolation for a person."""
    return (f"on paper at {e['jobs']:,} jobs (the line through {e['from'][0]:,} and "
            f"{e['from'][1]:,}): sweep {e['sweep_s'] / 3600:.1f} h, driver peak RSS "
            f"{e['driver_peak_rss_mb'] / 1024:.1f} GB "
            f"({e['driver_peak_rss_mb_per_job'] * 1024:.1f} KB per job), resume "
            f"{e['resume_s']:.0f} s, compact {e['compact_s'] / 60:.0f} min, aggregate after "
            f"compact {e['aggregate_after_compact_s']:.0f} s (peak RSS "
            f"{e['aggregate_peak_rss_mb'] / 1024:.1f} GB)")


def readme_sentence(result: dict[str, Any]) -> str:
    """The docs' sentence on the driver at scale (docs/cluster.md), made from the largest
    measured sweep (``tests/test_docs_examples.py`` keeps the page in step with
    ``benchmarks/results.json``)."""
    r = max(result["rows"], key=lambda row: row["jobs"])
    e = result["extrapolated"]
    return (f"On this 2-core machine, {r['jobs']:,} trivial jobs (a memory that keeps "
            f"nothing, on 10 events) took {r['sweep_s']:.0f} s on the embedded Ray, the "
            f"driver's peak RSS {r['driver_peak_rss_mb']:.0f} MB; a resume that found them "
            f"all done took {r['resume_s']:.1f} s, `fbench compact` {r['compact_s']:.0f} s "
            f"and `fbench aggregate` after it {r['aggregate_after_compact_s']:.1f} s "
            f"(`python -m benchmarks --only driver`). On paper (the line through the two "
            f"sizes), {e['jobs']:,} jobs would take the driver "
            f"{e['driver_peak_rss_mb']:,.0f} MB and a resume {e['resume_s']:.0f} s.{_kept(result)}")


def _kept(result: dict[str, Any]) -> str:
    """The sentence on the driver's own bookkeeping at the largest size measured."""
    rows = result.get("bookkeeping", {}).get("rows", [])
    if not rows:
        return ""
    b = max(rows, key=lambda row: row["jobs"])
    return (f" Measured without the jobs (each replaced by writing a 10-byte file where "
            f"its shard goes), the driver's bookkeeping for {b['jobs']:,} jobs took "
            f"{b['sweep_s']:.0f} s with a peak RSS of {b['sweep_peak_rss_mb']:.0f} MB, and "
            f"a resume that found them all done {b['resume_s']:.0f} s with "
            f"{b['resume_peak_rss_mb']:.0f} MB (`benchmarks/bench_bookkeeping.py`).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="10000,100000")
    ap.add_argument("--executor", default="ray")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    rows = [measure(int(n), args.executor, args.workdir) for n in args.jobs.split(",")]
    result: dict[str, Any] = {"rows": rows}
    if len(rows) >= 2:
        result["extrapolated"] = extrapolate(rows)
        print(paper_line(result["extrapolated"]))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

"""What ``--samples`` costs: README's default grid (every policy x workload) at N seeds,
swept inline without and with ``--samples``, in turn, each a fresh process into a fresh
folder; and the samples' size on disk, projected to the 50-seed default sweep.

Each run is ``python -m runner.cli sweep --seeds N --executor inline --no-report --quiet``
(inline: one process, so the jobs' own seconds are not spread over workers); the pairs
run in turn (off, on, off, on, ...) so the machine's drift falls on both. Per run: its
wall seconds and the jobs' own summed seconds (each job's last ``wall_s``). The
samples' bytes are the files under ``OUT/samples``; per seed they are the same for
every seed up to the streams' sizes, so the 50-seed figure is bytes / N x 50, and the
row counts say what the bytes hold.

Usage: ``python -m benchmarks.bench_samples [--seeds 2] [--pairs 2]``; figures in
``benchmarks/results.json`` under ``samples`` (``python -m benchmarks --only samples``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _job_seconds(out: Path) -> float:
    import pyarrow.parquet as pq

    return sum(float(pq.read_table(s, columns=["wall_s"]).column("wall_s")[-1].as_py())
               for s in sorted((out / "shards").rglob("*.parquet")))


def _rows(out: Path) -> dict[str, int]:
    import pyarrow.parquet as pq

    rows = {"queries": 0, "deletions": 0}
    for path in (out / "samples").rglob("*.parquet"):
        kind = "queries" if path.name.endswith(".queries.parquet") else "deletions"
        rows[kind] += pq.read_metadata(path).num_rows
    return rows


def run(seeds: int, samples: bool) -> dict[str, Any]:
    """One sweep of the default grid at ``seeds``, with or without samples."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "runner.cli", "sweep", "--seeds", str(seeds),
               "--executor", "inline", "--no-report", "--quiet", "--out", str(out)]
        t = time.perf_counter()
        subprocess.run(cmd + (["--samples"] if samples else []), check=True,
                       capture_output=True)
        wall = time.perf_counter() - t
        row: dict[str, Any] = {"samples": samples, "wall_s": round(wall, 2),
                               "jobs_s": round(_job_seconds(out), 2),
                               "jobs": sum(1 for _ in (out / "shards").rglob("*.parquet"))}
        if samples:
            files = list((out / "samples").rglob("*.parquet"))
            row["sample_files"] = len(files)
            row["sample_bytes"] = sum(f.stat().st_size for f in files)
            row["rows"] = _rows(out)
    return row


def measure(seeds: int = 2, pairs: int = 2, log: Any = print) -> dict[str, Any]:
    """``pairs`` runs without and with samples, in turn; the cost and the size."""
    runs = []
    for _ in range(pairs):
        for samples in (False, True):
            runs.append(run(seeds, samples))
            log(f"  samples {'on ' if samples else 'off'}: {runs[-1]['wall_s']:.1f} s "
                f"wall, jobs {runs[-1]['jobs_s']:.1f} s")
    off = [r for r in runs if not r["samples"]]
    on = [r for r in runs if r["samples"]]
    ratio = statistics.median(b["jobs_s"] / a["jobs_s"] for a, b in zip(off, on, strict=True))
    size = on[-1]["sample_bytes"]
    result = {
        "command": f"python -m benchmarks.bench_samples --seeds {seeds} --pairs {pairs}",
        "runs": runs, "jobs": on[-1]["jobs"],
        "jobs_seconds_ratio_on_off": round(ratio, 3),
        "wall_ratio_on_off": round(statistics.median(
            b["wall_s"] / a["wall_s"] for a, b in zip(off, on, strict=True)), 3),
        "sample_mb": round(size / 2**20, 2),
        "sample_kb_per_job": round(size / on[-1]["jobs"] / 1024, 1),
        "sample_mb_at_50_seeds": round(size / seeds * 50 / 2**20, 1),
    }
    log(f"samples: jobs' seconds x{ratio:.2f}; {result['sample_kb_per_job']} KB a job; "
        f"{result['sample_mb_at_50_seeds']} MB for the 50-seed default sweep")
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=2)
    args = ap.parse_args()
    measure(args.seeds, args.pairs)


if __name__ == "__main__":
    main()

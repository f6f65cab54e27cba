"""Two ways to read a sweep's final rows, side by side: fbench's reader
(``runner.results.load.read_rows``: pyarrow datasets, the files a batch at a time, each
file's footer checked) and DuckDB's ``read_parquet`` over the hive-partitioned shards
(``union_by_name``, the same columns, ``WHERE is_final``, no per-file check).

Each read runs in a fresh process, A and B in turn (``--repeats`` pairs), on the same
folder; a figure is that process's wall seconds and peak RSS (``ru_maxrss``) and the
rows it read, beside the machine's speed just before (``python_loop_1e7_s``). The
folder is a sweep's output (``--out``); without one, ``--shards`` synthetic shards are
made as ``benchmarks/bench_aggregate.py`` makes them. Figures go to
``benchmarks/results.json`` under ``readers``. Usage::

    python benchmarks/bench_readers.py [--out OUT | --shards 4000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results.json"

_READ = """
import resource, sys, time
from runner.results.aggregate import UNUSED
out, how = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if how == "fbench":
    from runner.results.load import read_rows
    rows = read_rows(out, final=None, skip=UNUSED).final.num_rows
else:
    import duckdb
    from runner.results.shard import SCHEMA
    cols = ", ".join(c for c in SCHEMA.names if c not in UNUSED)
    rows = duckdb.connect().execute(
        f"SELECT {cols} FROM read_parquet('{out}/shards/*/*/*.parquet', union_by_name=true) "
        "WHERE is_final ORDER BY workload, policy, job_id").to_arrow_table().num_rows
print(rows, time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def read_once(out: Path, how: str) -> dict[str, float]:
    """One read in a fresh process: rows, seconds, peak RSS in MB."""
    done = subprocess.run([sys.executable, "-c", _READ, str(out), how], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    rows, seconds, rss_kb = done.stdout.split()[-3:]  # (the last line: what it printed)
    return {"rows": int(rows), "seconds": float(seconds), "peak_rss_mb": int(rss_kb) / 1024}


def compare(out: Path, repeats: int) -> dict[str, Any]:
    """Each reader ``repeats`` times, in turn; the medians, and every run."""
    runs: dict[str, list[dict[str, float]]] = {"fbench": [], "duckdb": []}
    for _ in range(repeats):
        for how in runs:
            runs[how].append(read_once(out, how))
            print(how, runs[how][-1], flush=True)
    return {how: {"median_seconds": statistics.median(r["seconds"] for r in rs),
                  "median_peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in rs),
                  "rows": rs[0]["rows"], "runs": rs} for how, rs in runs.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="a sweep's output folder")
    ap.add_argument("--shards", type=int, default=4000, help="synthetic shards, without --out")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from benchmarks.__main__ import loop_seconds

    speed = loop_seconds()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out
        if out is None:
            from benchmarks.bench_aggregate import make_shards

            out = Path(tmp) / "sweep"
            make_shards(args.shards, out)
        found = compare(out.resolve(), args.repeats)
    files = sum(1 for _ in (out / "shards").rglob("*.parquet")) if out.exists() else args.shards
    doc = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    doc["readers"] = {"command": " ".join(["python benchmarks/bench_readers.py", *sys.argv[1:]]),
                      "files": files, "python_loop_1e7_s": round(speed, 3),
                      "load_average_before": round(os.getloadavg()[0], 2), "result": found}
    RESULTS.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""Where a job's time goes: py-spy samples of N jobs, summed by function.

``python -m benchmarks.profile_job WORKLOAD POLICY [--jobs 10] [--horizon H]`` runs
``py-spy record`` (a sampling profiler, no code changes) over a process that runs a
warm-up job, then N jobs (seeds 1..N), and prints the share of samples inside the
jobs that each function takes, inclusive and by itself (the warm-up, imports and
weight loading are left out: only samples under ``run_job`` of the measured jobs
count). Needs ``py-spy`` (``pip install py-spy``).
"""

from __future__ import annotations

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_LOOP = """
import sys
from runner.job.run import run_job
from runner.spec.resolve import make_spec
w, p, n, h = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) or None
run_job(make_spec(w, p, 0, h))
def measured():
    for seed in range(1, n + 1):
        run_job(make_spec(w, p, seed, h))
measured()
"""


def profile(workload: str, policy: str, jobs: int, horizon: int, top: int) -> None:
    if shutil.which("py-spy") is None:
        raise SystemExit("py-spy is not installed; pip install py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        loop, raw = Path(tmp) / "loop.py", Path(tmp) / "samples.txt"
        loop.write_text(_LOOP)
        subprocess.run(["py-spy", "record", "-r", "500", "-f", "raw", "-o", str(raw), "--",
                        sys.executable, str(loop), workload, policy, str(jobs), str(horizon)],
                       check=True, capture_output=True)
        lines = raw.read_text().splitlines()
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in lines:
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not any(f.startswith("measured ") for f in frames):
            continue
        n = int(count)
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            incl[frame] += n
    print(f"{total} samples in {jobs} {workload} jobs of {policy} (500 Hz)")
    for title, counter in (("inclusive", incl), ("by itself", own)):
        print(f"-- {title}")
        for frame, n in counter.most_common(top):
            print(f"{n / total:6.1%}  {frame}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("workload")
    ap.add_argument("policy")
    ap.add_argument("--jobs", type=int, default=10)
    ap.add_argument("--horizon", type=int, default=0, help="default: the workload's")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    profile(args.workload, args.policy, args.jobs, args.horizon, args.top)


if __name__ == "__main__":
    main()

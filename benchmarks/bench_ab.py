"""CPU seconds per job, this tree against another git revision, on the same specs.

``python -m benchmarks.bench_ab REV [--workloads contradiction,lifecycle] [--policies
keep_all,ebbinghaus] [--seeds 3] [--rounds 1]`` checks REV out into a temporary
worktree and runs, in a fresh process for each tree (``PYTHONPATH`` first, so its code
is the one imported), a warm-up job and then seeds 1..N of every workload x policy, timing each
with ``time.process_time`` (CPU time: steadier than wall time on a shared machine).
It prints the median of each tree and the ratio, and checks that both trees gave the
same metrics, timing aside (a speed-up must not change a number). With ``--rounds N``
the two trees run alternately N times and each cell keeps its fastest median, so a load
that comes and goes on a shared machine hits both trees alike.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_PROBE = """
import json, statistics, sys, time
from runner.job.run import run_job
from runner.spec.resolve import make_spec
from runner.metrics import METRICS
try:  # a job generates its own stream (a tree that keeps streams must not reuse one)
    from runner.job.streams import clear
except ImportError:
    clear = lambda: None
out = {}
for cell in json.loads(sys.argv[1]):
    workload, policy, seeds = cell
    run_job(make_spec(workload, policy, 10**6))
    times, finals = [], []
    for seed in range(1, seeds + 1):
        clear()
        t = time.process_time()
        m = run_job(make_spec(workload, policy, seed)).metrics()
        times.append(time.process_time() - t)
        finals.append({k: v for k, v in m.items() if k in METRICS and not METRICS[k].timing})
    out[workload + " " + policy] = [statistics.median(times), finals]
print(json.dumps(out))
"""


def _run(tree: Path, cells: list[list[Any]]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(cells)], cwd=tree,
                          env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _fastest(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each cell's fastest median over rounds (the metrics of the first: all rounds of a
    tree run the same jobs)."""
    return {key: [min(r[key][0] for r in runs), runs[0][key][1]] for key in runs[0]}


def measure(rev: str, workloads: list[str], policies: list[str], seeds: int,
            rounds: int = 1, log: Any = print) -> dict[str, Any]:
    """The two trees' CPU seconds per job; with ``rounds`` > 1 they run alternately and
    each cell keeps its fastest median (a load that comes and goes hits both alike)."""
    cells = [[w, p, seeds] for w in workloads for p in policies]
    olds, news = [], []
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(before),
                        rev], check=True, capture_output=True)
        try:
            for _ in range(rounds):
                olds.append(_run(before, cells))
                news.append(_run(ROOT, cells))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(before)], check=False, capture_output=True)
    old, new = _fastest(olds), _fastest(news)
    rows = []
    log(f"{'workload':<26}{'policy':<18}{rev[:10]:>10}{'now':>8}{'speed-up':>10}  same")
    for key in old:
        workload, policy = key.split(" ")
        same = json.dumps(old[key][1], sort_keys=True) == json.dumps(new[key][1], sort_keys=True)
        rows.append({"workload": workload, "policy": policy, "before_cpu_s": old[key][0],
                     "after_cpu_s": new[key][0], "speedup": old[key][0] / new[key][0],
                     "same_metrics": same})
        log(f"{workload:<26}{policy:<18}{old[key][0]:>10.3f}{new[key][0]:>8.3f}"
            f"{old[key][0] / new[key][0]:>9.2f}x  {'yes' if same else 'NO'}")
    return {"rev": rev, "seeds": seeds, "rows": rows,
            "all_same": all(r["same_metrics"] for r in rows),
            "rounds": rounds,
            "command": f"python -m benchmarks.bench_ab {rev} --workloads {','.join(workloads)}"
                       f" --policies {','.join(policies)} --seeds {seeds} --rounds {rounds}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev")
    ap.add_argument("--workloads", default="contradiction,lifecycle")
    ap.add_argument("--policies", default="keep_all,last_write_wins,ebbinghaus,learned_forget")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the trees alternately this many times, keep the fastest")
    args = ap.parse_args()
    measure(args.rev, args.workloads.split(","), args.policies.split(","), args.seeds,
            args.rounds)


if __name__ == "__main__":
    main()

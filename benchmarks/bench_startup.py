"""What a one-job command pays before its work: whole-process seconds of ``fbench list
policies`` and of ``fbench run`` on a one-turn job (its job is a few milliseconds, so
the process is its start-up: imports, plugin discovery, the spec, the store), median
of ``--repeats`` fresh processes each, and the heavy modules each one imported.

Targets: ``fbench run``'s start-up <= 1 s and ``fbench list`` <= 0.5 s, with torch,
Ray, matplotlib and the incumbents imported only by the commands that use them (neither
of these does).
Usage: ``python -m benchmarks.bench_startup [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any

HEAVY = ("torch", "ray", "matplotlib", "mem0", "lethe", "yantrikdb", "langgraph",
         "sentence_transformers", "scipy", "pandas")
COMMANDS = {
    "list": (["list", "policies"], 0.5),
    "run": (["run", "--workload", "contradiction", "--policy", "keep_all",
             "--horizon", "1"], 1.0),
}
# prints the heavy modules a command imported (run in the same process, after it)
_PROBE = ("import sys, runpy; sys.argv = ['fbench'] + sys.argv[1:]\n"
          "try:\n    runpy.run_module('runner.cli', run_name='__main__')\n"
          "except SystemExit:\n    pass\n"
          "print('HEAVY', ','.join(sorted({m.split('.')[0] for m in sys.modules} & set("
          + repr(HEAVY) + "))), file=sys.stderr)")


def _fbench() -> list[str]:
    found = shutil.which("fbench")
    return [found] if found else [sys.executable, "-m", "runner.cli"]


def _heavy(args: list[str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                          text=True, check=False)
    line = next((x for x in done.stderr.splitlines() if x.startswith("HEAVY")), "HEAVY ")
    return [m for m in line.removeprefix("HEAVY ").split(",") if m]


def measure(repeats: int = 5, log: Any = print) -> dict[str, Any]:
    out: dict[str, Any] = {"command": f"python -m benchmarks.bench_startup --repeats {repeats}"}
    ok = True
    for name, (args, target) in COMMANDS.items():
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            done = subprocess.run(_fbench() + args, capture_output=True, check=False)
            times.append(time.perf_counter() - t)
            if done.returncode != 0:
                raise SystemExit(f"fbench {' '.join(args)} failed: {done.stderr[-500:]!r}")
        med, heavy = statistics.median(times), _heavy(args)
        ok = ok and med <= target and not heavy
        out[name] = {"args": args, "median_s": med, "min_s": min(times), "target_s": target,
                     "heavy_imports": heavy}
        log(f"fbench {' '.join(args):<62} {med:6.3f} s (min {min(times):.3f}; target "
            f"<= {target} s); heavy imports: {', '.join(heavy) or 'none'}")
    out["ok"] = ok
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    measure(ap.parse_args().repeats)


if __name__ == "__main__":
    main()

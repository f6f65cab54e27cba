"""One job in a fresh process: its seconds and its process's peak RSS.

``python -m benchmarks.job_probe WORKLOAD POLICY HORIZON`` runs a warm-up job (the
same workload and policy at its default horizon, another seed: imports, weights,
the learned tables), then the measured job (seed 0 at HORIZON), and prints one JSON
line: seconds, the peak RSS after the warm-up (``rss_setup_mb``) and at the end
(``rss_peak_mb``), the final size and the mean query milliseconds.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def _peak_mb() -> float:
    """This process's peak RSS: ``VmHWM`` (reset by exec, unlike ``ru_maxrss``, which
    keeps the peak of the parent that forked it)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def probe(workload: str, policy: str, horizon: int) -> dict[str, float]:
    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    run_job(make_spec(workload, policy, 10**6))
    setup = _peak_mb()
    start = time.perf_counter()
    result = run_job(make_spec(workload, policy, 0, horizon))
    seconds = time.perf_counter() - start
    final = result.metrics()
    return {"seconds": seconds, "rss_setup_mb": setup, "rss_peak_mb": _peak_mb(),
            "final_size": float(final["final_size"]),
            "query_ms_mean": float(final["query_ms_mean"])}


if __name__ == "__main__":
    w, p, h = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print(json.dumps(probe(w, p, h)))

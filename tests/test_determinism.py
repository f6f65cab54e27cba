"""The same job spec gives the same metrics (timing columns aside), in any order."""

from __future__ import annotations

import json
import math
import subprocess
import sys

from runner.job.run import run_job
from runner.metrics import METRICS
from runner.spec.resolve import make_spec

TIMING = {name for name, m in METRICS.items() if m.timing}


def deterministic_rows(policy: str) -> list[dict[str, object]]:
    spec = make_spec("contradiction", policy, 3, horizon=900)
    return [
        {k: ("nan" if isinstance(v, float) and math.isnan(v) else v)
         for k, v in row.items() if k not in TIMING}
        for row in run_job(spec).rows
    ]


def test_same_spec_same_rows_in_any_order() -> None:
    """Prevents state leaking between jobs (caches, global RNGs): running the policies in
    two different orders must give identical checkpoint rows."""
    policies = ["keep_all", "last_write_wins", "ebbinghaus", "learned_forget"]
    first = {p: deterministic_rows(p) for p in policies}
    second = {p: deterministic_rows(p) for p in reversed(policies)}
    assert first == second


def test_same_spec_same_metrics_in_a_fresh_process() -> None:
    """Prevents process-dependent results (hash seeds, thread counts): a fresh interpreter
    running the same spec prints the same metrics."""
    code = (
        "import json,math;from runner.job.run import run_job;"
        "from runner.spec.resolve import make_spec;"
        "m=run_job(make_spec('contradiction','learned_forget',3,horizon=900)).metrics();"
        "[m.pop(k) for k in ('wall_s','query_ms_mean','query_ms_p95')];"
        "print(json.dumps({k:(None if isinstance(v,float) and math.isnan(v) "
        "else v) for k,v in m.items()},sort_keys=True))"
    )
    outs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": str(h), "PATH": ""}).stdout
        for h in (1, 2)
    ]
    assert outs[0] == outs[1]
    here = run_job(make_spec("contradiction", "learned_forget", 3, horizon=900)).metrics()
    for name in TIMING:
        here.pop(name)
    assert json.loads(outs[0]) == {
        k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in here.items()
    }

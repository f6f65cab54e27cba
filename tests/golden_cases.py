"""The tiny seeded cases behind the exact golden files, and how to compute them.

Regenerate with ``make golden`` (``python -m tests.regen_golden``) only when a change
of behaviour is intended, and review the diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcore import POLICIES
from runner.job.run import run_job
from runner.spec.resolve import make_spec

GOLDEN_DIR = Path(__file__).parent / "golden"
# One tiny case per workload family: turns without ticks, and days with ticks and tags;
# the retired versions' cases hold the numbers those streams always gave.
CASES = (
    {"workload": "contradiction@1", "seed": 7, "horizon": 400, "k": 5},
    {"workload": "lifecycle@1", "seed": 3, "horizon": 60, "k": 5},
    {"workload": "contradiction", "seed": 7, "horizon": 400, "k": 5},
    {"workload": "lifecycle", "seed": 3, "horizon": 60, "k": 5},
)


def golden_path(policy: str) -> Path:
    return GOLDEN_DIR / f"{policy}.json"


def compute(policy: str) -> dict[str, Any]:
    """Exact integer counts of the policy's tiny jobs, one per case."""
    return {str(case["workload"]): compute_case(policy, case) for case in CASES}


def compute_case(policy: str, case: dict[str, Any]) -> dict[str, Any]:
    """Exact integer counts of one tiny job (no floats, so no tolerance is needed)."""
    spec = make_spec(case["workload"], policy, case["seed"], case["horizon"], case["k"])
    result = run_job(spec)
    m = result.metrics()
    n = m["n_queries"]
    return {
        "case": case | {"policy": policy},
        "n_queries": n,
        "recall_hits": round(m["recall_at_k"] * n),
        "contradiction_hits": round(m["contradiction_rate"] * n),
        "top1_hits": round(m["accuracy_at_1"] * n),
        "false_forget_queries": round(m["false_forget_rate"] * n),
        "final_size": m["final_size"],
        "peak_size": m["peak_size"],
        "final_tokens": m["final_tokens"],
        "forgotten": dict(sorted(result.forgotten.items())),
        "size_trajectory": [row["final_size"] for row in result.rows],
    }


def policies() -> list[str]:
    return sorted(POLICIES)

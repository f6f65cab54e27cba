"""The tiny seeded cases behind the exact golden files, and how to compute them.

Regenerate with ``make golden`` (``python -m tests.regen_golden``) only when a change
of behaviour is intended, and review the diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memcore import POLICIES
from runner.job import run_job
from runner.resolve import make_spec

GOLDEN_DIR = Path(__file__).parent / "golden"
CASE = {"workload": "contradiction", "seed": 7, "horizon": 400, "k": 5}


def golden_path(policy: str) -> Path:
    return GOLDEN_DIR / f"{policy}.json"


def compute(policy: str) -> dict[str, Any]:
    """Exact integer counts of one tiny job (no floats, so no tolerance is needed)."""
    spec = make_spec(CASE["workload"], policy, CASE["seed"], CASE["horizon"], CASE["k"])
    result = run_job(spec)
    m = result.metrics()
    n = m["n_queries"]
    return {
        "case": CASE | {"policy": policy},
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

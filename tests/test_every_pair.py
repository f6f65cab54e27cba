"""Every registered (workload, policy) pair runs through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runner.adapters import MEMORIES
from runner.cli import app
from runner.metrics import CATEGORIES, METRICS, category_columns
from workloads import WORKLOADS, FromData


def own_memories() -> list[str]:
    """Every registered memory but the libraries: fbench's policies, their wrappers, the
    oracle, and any installed plugin's."""
    return [p for p in sorted(MEMORIES) if MEMORIES[p].family != "incumbent"]


def incumbents() -> list[str]:
    """The memory libraries fbench drives (the incumbents extra)."""
    return [p for p in sorted(MEMORIES) if MEMORIES[p].family == "incumbent"]


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_every_policy_runs_on_the_workload(workload: str, tmp_path: Path) -> None:
    """Prevents a registered policy that crashes (or returns metrics out of range) on a
    registered workload: `fbench run --json` for every pair, on a short horizon (a
    trace replays a short exported lifecycle trace; a workload with query categories of
    its own has their split metrics too, and no other)."""
    runs_on(workload, own_memories(), tmp_path)


@pytest.mark.slow
@pytest.mark.incumbents
@pytest.mark.faketime
@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_every_incumbent_runs_on_the_workload(workload: str, tmp_path: Path) -> None:
    """Prevents a memory library's adapter that crashes (or returns metrics out of range)
    on a registered workload, as the test above does for fbench's own memories."""
    runs_on(workload, incumbents(), tmp_path)


def runs_on(workload: str, policies: list[str], tmp_path: Path) -> None:
    """`fbench run --json` of each policy on the workload: exit 0, metrics in range."""
    if workload == "trace":
        trace = tmp_path / "t.jsonl"
        assert CliRunner().invoke(app, ["trace", "export", "lifecycle", "--horizon", "12",
                                        "--output", str(trace)]).exit_code == 0
        args = ["--param", f"workload.path={trace}"]
    else:
        horizon = 12 if WORKLOADS[workload].horizon_unit == "days" else 200
        args = ["--horizon", str(horizon)]
    w = WORKLOADS[workload]
    stream = w.bind(w.Params(), 0) if isinstance(w, FromData) and workload != "trace" else w
    own = sorted(set(stream.categories) - CATEGORIES.keys())
    for policy in policies:
        result = CliRunner().invoke(app, ["run", "--workload", workload, "--policy", policy,
                                          *args, "--json"])
        assert result.exit_code == 0, (policy, result.output)
        metrics = json.loads(result.stdout)["metrics"]
        assert set(metrics) == set(METRICS) | {n for c in own for n in category_columns(c)}
        assert metrics["n_queries"] > 0, policy
        for name in ("recall_at_k", "false_forget_rate", "contradiction_rate"):
            assert 0.0 <= metrics[name] <= 1.0, (policy, name)

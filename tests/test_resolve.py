"""The CLI/config boundary resolving a spec into live objects."""

from __future__ import annotations

import pytest

from runner.errors import FbenchError
from runner.job.run import run_job
from runner.spec.resolve import make_spec, materialize


@pytest.mark.parametrize(
    ("workload", "fraction", "capacity"),
    [("lifecycle", "0.5", 20), ("lifecycle", "2", 80), ("contradiction", "0.5", 30),
     ("lifecycle", "0.001", 1)],
)
def test_capacity_fraction_is_a_share_of_distinct_facts(
    workload: str, fraction: str, capacity: int
) -> None:
    """Prevents a fractional capacity being ignored or mis-scaled: it becomes
    round(fraction × the workload's distinct facts), at least 1 (lifecycle: 40 durable
    facts; contradiction: 60 slots)."""
    spec = make_spec(workload, "fifo", 0, 30, params=[("capacity_fraction", fraction)])
    assert materialize(spec).policy_params.capacity == capacity
    result = run_job(spec)
    assert result.resolved_params["policy.capacity"] == capacity
    assert result.metrics()["peak_size"] <= capacity


def test_capacity_fraction_reaches_pinned_wrappers() -> None:
    """Prevents the wrapper's copy of the inner parameters from dropping the fraction."""
    spec = make_spec("lifecycle", "pinned.lru", 0, 30, params=[("capacity_fraction", "0.25")])
    assert materialize(spec).policy_params.capacity == 10


def test_negative_capacity_fraction_is_an_error() -> None:
    """Prevents a negative fraction silently meaning 'use capacity'."""
    with pytest.raises(FbenchError, match="capacity_fraction"):
        make_spec("lifecycle", "fifo", 0, 30, params=[("capacity_fraction", "-1")])

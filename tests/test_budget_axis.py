"""The budget axis: every policy at a memory budget, natively (capacity policies, the
oracle) or by the store's uniform cap (the weakest entry goes)."""

from __future__ import annotations

import pytest

from memcore import POLICIES
from runner.errors import FbenchError
from runner.job.run import run_job
from runner.spec.resolve import make_spec, materialize

PLAIN = sorted(p for p, c in POLICIES.items() if not c.wrapper)


@pytest.mark.parametrize("workload", ["contradiction", "lifecycle"])
@pytest.mark.parametrize("policy", [*PLAIN, "oracle"])
def test_no_policy_ever_holds_more_than_the_budget(workload: str, policy: str) -> None:
    """Prevents a budget some policy escapes: at every checkpoint the most live entries
    so far is at most the budget, and the token budget bounds the tokens."""
    horizon = 600 if workload == "contradiction" else 40
    for params in ([("budget", 25)], [("budget_tokens", 150)]):
        result = run_job(make_spec(workload, policy, 1, horizon=horizon, params=params))
        for row in result.rows:
            if params[0][0] == "budget":
                assert row["peak_size"] <= 25, (policy, row["t"])
            else:
                assert row["final_tokens"] <= 150, (policy, row["t"])


@pytest.mark.parametrize("policy", ["fifo", "lru", "lfu", "lifo", "oracle"])
def test_capacity_policies_meet_the_budget_natively(policy: str) -> None:
    """Prevents a capacity policy judged by the store's cap instead of its own rule:
    its capacity becomes the budget and the store's cap never acts."""
    spec = make_spec("contradiction", policy, 0, horizon=600, params=[("budget", 30)])
    assert materialize(spec).policy_params.capacity == 30
    assert "budget" not in run_job(spec).forgotten


def test_the_uniform_cap_removes_the_weakest_then_the_oldest() -> None:
    """Prevents a cap that removes arbitrary entries: a policy without a strength
    (keep_all) under a budget is exactly FIFO at that capacity."""
    a = run_job(make_spec("lifecycle", "keep_all", 2, horizon=60, params=[("budget", 40)]))
    b = run_job(make_spec("lifecycle", "fifo", 2, horizon=60, params=[("capacity", 40)]))
    skip = ("wall_s", "query_ms", "n_forgotten")
    assert {k: v for k, v in a.metrics().items() if not k.startswith(skip)} == pytest.approx(
        {k: v for k, v in b.metrics().items() if not k.startswith(skip)}, nan_ok=True)


def test_a_negative_budget_is_a_one_line_error() -> None:
    """Prevents a negative budget from being read as no budget."""
    with pytest.raises(FbenchError, match="budget"):
        make_spec("contradiction", "keep_all", 0, params=[("budget", "-5")])

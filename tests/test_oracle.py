"""The oracle adapter: the bound drawn beside every policy (harness-side, reads truth)."""

from __future__ import annotations

import numpy as np
import pytest

from runner.job.run import run_job
from runner.spec.resolve import make_spec

SEEDS = (0, 1, 2)


def mean(workload: str, policy: str, metric: str, **params: object) -> float:
    horizon = 1500 if workload.startswith("contradiction") else 120
    return float(np.mean([
        run_job(make_spec(workload, policy, s, horizon=horizon,
                          params=list(params.items()))).metrics()[metric] for s in SEEDS]))


@pytest.mark.parametrize("workload", ["contradiction", "lifecycle"])
def test_unlimited_oracle_has_no_contradiction_and_forgets_nothing_true(workload: str) -> None:
    """Prevents an oracle that keeps a superseded fact or removes a current one."""
    assert mean(workload, "oracle", "contradiction_rate") == 0.0
    assert mean(workload, "oracle", "false_forget_rate") == 0.0
    assert mean(workload, "oracle", "n_forgotten") > 0


@pytest.mark.parametrize("workload", ["contradiction", "lifecycle"])
@pytest.mark.parametrize("capacity", [20, 60])
def test_no_capacity_policy_beats_the_oracle_at_its_budget(workload: str, capacity: int) -> None:
    """Prevents an oracle that is not a bound at equal memory: at the same number of
    entries, every capacity policy's recall is at most the oracle's, its false-forget
    rate at least the oracle's, and the oracle holds exactly the budget."""
    oracle = mean(workload, "oracle", "recall_at_k", capacity=capacity)
    assert mean(workload, "oracle", "final_size", capacity=capacity) == capacity
    ff = mean(workload, "oracle", "false_forget_rate", capacity=capacity)
    for policy in ("fifo", "lru", "lfu", "lifo"):
        assert mean(workload, policy, "recall_at_k", capacity=capacity) <= oracle, policy
        assert mean(workload, policy, "false_forget_rate", capacity=capacity) >= ff, policy


def test_budget_evicts_distractors_before_facts() -> None:
    """Prevents Belady's rule from spending the budget on noise: with room for every
    slot (60 on contradiction), no question ever finds its current fact deleted."""
    assert mean("contradiction", "oracle", "false_forget_rate", capacity=60) == 0.0
    assert mean("contradiction", "oracle", "false_forget_rate", capacity=30) > 0.0


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["contradiction", "lifecycle"])
def test_no_reference_policy_beats_the_oracle_at_a_budget(workload: str) -> None:
    """Prevents a budgeted oracle that some policy out-recalls: at store budgets of 20
    and 60 entries, every reference policy's mean recall (seeds 0-2) is at most the
    oracle's."""
    from memcore import POLICIES

    for budget in (20, 60):
        for metric in ("recall_at_k", "recall_current_at_k"):
            oracle = mean(workload, "oracle", metric, budget=budget)
            for policy in sorted(p for p, c in POLICIES.items() if not c.wrapper):
                assert mean(workload, policy, metric, budget=budget) <= oracle, \
                    (policy, budget, metric)


@pytest.mark.parametrize("workload", ["contradiction", "contradiction.retrievable", "lifecycle"])
def test_no_reference_policy_beats_the_unbounded_oracle_on_current_recall(workload: str) -> None:
    """Prevents an unbounded oracle that is not a bound: with no budget, every reference
    policy's mean recall of the current assertion (seeds 0-2) is at most the oracle's.
    On the seeds' recall_at_k a hoarder is credited for an old entry whose value came
    back, which an oracle with contradiction 0 has removed; that quirk is real on the
    contradiction stream (keep_all's recall_at_k exceeds its recall_current_at_k)."""
    from memcore import POLICIES

    oracle = mean(workload, "oracle", "recall_current_at_k")
    assert oracle == mean(workload, "oracle", "recall_at_k")  # it holds no old entry
    for policy in sorted(p for p, c in POLICIES.items() if not c.wrapper):
        assert mean(workload, policy, "recall_current_at_k") <= oracle, policy
    if workload == "contradiction":
        assert (mean(workload, "keep_all", "recall_at_k")
                > mean(workload, "keep_all", "recall_current_at_k"))

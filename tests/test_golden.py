"""Exact golden counts per policy on a tiny seeded workload (``make golden`` rewrites them)."""

from __future__ import annotations

import json

import pytest

from tests.golden_cases import (
    compute,
    compute_incumbents,
    golden_path,
    incumbents_path,
    policies,
)


@pytest.mark.parametrize("policy", policies())
def test_policy_matches_its_golden_counts(policy: str) -> None:
    """Prevents any unintended change of a policy's behaviour: exact hit counts, sizes,
    removals per reason and the size trajectory must equal the reviewed golden file."""
    path = golden_path(policy)
    assert path.exists(), f"no golden file for {policy}: run `make golden` and review it"
    assert compute(policy) == json.loads(path.read_text())


@pytest.mark.slow
@pytest.mark.incumbents
@pytest.mark.faketime
def test_incumbents_match_their_golden_counts() -> None:
    """Prevents an unintended change of an incumbent's numbers (its adapter, its clock,
    the order of its calls): each library setting the published sweeps run gives the
    exact hit counts, sizes, removals and size trajectory of the reviewed golden file,
    on a turn stream and a day stream."""
    assert compute_incumbents() == json.loads(incumbents_path().read_text())

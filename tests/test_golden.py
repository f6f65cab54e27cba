"""Exact golden counts per policy on a tiny seeded workload (``make golden`` rewrites them)."""

from __future__ import annotations

import json

import pytest

from tests.golden_cases import compute, golden_path, policies


@pytest.mark.parametrize("policy", policies())
def test_policy_matches_its_golden_counts(policy: str) -> None:
    """Prevents any unintended change of a policy's behaviour: exact hit counts, sizes,
    removals per reason and the size trajectory must equal the reviewed golden file."""
    path = golden_path(policy)
    assert path.exists(), f"no golden file for {policy}: run `make golden` and review it"
    assert compute(policy) == json.loads(path.read_text())

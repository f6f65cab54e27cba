"""Exact digests of every current workload's streams (``make golden`` rewrites them)."""

from __future__ import annotations

import json

import pytest

from tests.golden_cases import STREAM_SEEDS, stream_digest, stream_workloads, streams_path


@pytest.mark.parametrize("workload", stream_workloads())
def test_streams_match_their_golden_digests(workload: str) -> None:
    """Prevents a faster generator (or any change) from drawing another stream: every
    event's time, text, meta and truth of seeds 0 and 1 at the default horizon must hash
    to the reviewed digests, so every figure computed on the old streams still holds."""
    golden = json.loads(streams_path().read_text())
    for seed in STREAM_SEEDS:
        assert stream_digest(workload, seed) == golden[f"{workload} {seed}"], (workload, seed)

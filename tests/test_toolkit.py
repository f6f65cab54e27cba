"""The adapter toolkit (``runner.adapters.toolkit``): fbench's embedders and memory-side
extractors, as an outside adapter builds with them (``tests/toolkit_plugin/slotmem.py``)."""

from __future__ import annotations

import pytest

from runner.adapters.contract import FAST_STREAMS, check_memory
from runner.adapters.toolkit import extractor
from runner.errors import FbenchError
from runner.job.run import run_job
from runner.spec.resolve import make_spec
from workloads import WORKLOADS

SLOTMEM = "tests.toolkit_plugin.slotmem:MEMORY"


@pytest.mark.parametrize("workload", ["contradiction", "lifecycle"])
def test_a_keyed_adapter_supersedes_as_fbench_s_store_does(workload: str) -> None:
    """Prevents a toolkit extractor that is not the one fbench's own memories read slots
    with: keyed by it, an outside adapter removes exactly the observations fbench's
    last_write_wins removes, and ends the same size."""
    mine = run_job(make_spec(workload, SLOTMEM, 0))
    ours = run_job(make_spec(workload, "last_write_wins", 0))
    assert mine.forgotten == ours.forgotten and mine.forgotten["superseded"] > 0
    assert mine.metrics()["final_size"] == ours.metrics()["final_size"]


def test_the_toolkit_adapter_keeps_the_contract() -> None:
    """Prevents the documented toolkit example from breaking a rule: every rule passes,
    and its supersession puts the rules about deletions to the test."""
    report = check_memory(SLOTMEM, streams=FAST_STREAMS, compare=False)
    assert [v.status for v in report.verdicts] == ["pass"] * len(report.verdicts)


@pytest.mark.parametrize("name", ["oracle", "noisy", "nonesuch"])
def test_only_memory_side_extractors_are_offered(name: str) -> None:
    """Prevents an adapter reading the harness's ground truth through the toolkit: a
    harness-side extractor (or an unknown name) is one line naming those it may use."""
    with pytest.raises(FbenchError, match="is not one an adapter may use: keyword, learned, auto"):
        extractor(name, WORKLOADS["contradiction"].vocabulary())

"""The job's bounded state (runner.job.streaming): truth per observation, query latency."""

from __future__ import annotations

import numpy as np
import pytest

from runner.job.streaming import LatencyStats, TruthTable


def test_truth_table_is_a_mapping_of_slotted_observations() -> None:
    """Prevents the compact truth table from answering differently than the dict it
    replaced: only observations with a slot and a value are keys, past its growth."""
    table = TruthTable()
    expected: dict[int, tuple[str, str]] = {}
    for obs in range(3000):
        slot = None if obs % 3 == 0 else f"s{obs % 7}"
        value = None if obs % 5 == 0 else f"v{obs % 11}"
        if slot is not None and value is not None:
            table.set(obs, slot, value)
            expected[obs] = (slot, value)
    assert dict(table) == expected
    assert table.get(0) is None and table.get(5000) is None and table.get(-1) is None
    assert all(table.get(o, ("-", "-")) == expected.get(o, ("-", "-"))
               for o in range(-3, 4100))
    assert table[1] == ("s1", "v1")


def test_latency_quantile_is_within_half_a_percent() -> None:
    """Prevents the O(1)-memory p95 from drifting from the exact percentile of the same
    samples by more than its documented 0.5% (and the mean from being anything but exact)."""
    rng = np.random.default_rng(0)
    samples = rng.lognormal(mean=-2.0, sigma=1.0, size=20_000)
    stats = LatencyStats()
    for ms in samples:
        stats.add(float(ms))
    exact = np.sort(samples)[int(np.ceil(0.95 * len(samples))) - 1]
    assert stats.quantile(0.95) == pytest.approx(exact, rel=0.005)
    assert stats.mean() == pytest.approx(samples.mean(), rel=1e-12)


def test_latency_without_samples_is_nan() -> None:
    """Prevents a job without queries from reporting a made-up latency."""
    stats = LatencyStats()
    assert np.isnan(stats.mean()) and np.isnan(stats.quantile(0.95))


@pytest.mark.parametrize("policy", ["lfu", "lethe", "oracle"])
def test_a_finished_job_is_freed_without_the_garbage_collector(policy: str) -> None:
    """Prevents a reference cycle through a job's state (it held its own bound methods
    once): the whole store then waited for a cyclic collection, which in a sweep's worker
    scanned every finished job's memory and cost about 7% of its time. After a job, a
    collection finds none of the job's objects."""
    import gc

    from runner.job.run import run_job
    from runner.spec.resolve import make_spec

    run_job(make_spec("lifecycle", policy, 0, horizon=30))
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run_job(make_spec("lifecycle", policy, 1, horizon=30))
        gc.collect()
        kinds = {type(o).__module__.split(".")[0] for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not kinds & {"memcore", "runner", "workloads"}, kinds

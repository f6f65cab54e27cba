"""A process keeps its recent streams (``runner.job.streams``) and a sweep runs a
stream's jobs together (``runner.sweep.order``): neither changes a number."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterator
from typing import Any

import pytest

from runner.job import streams
from runner.job.run import run_job
from runner.metrics import METRICS
from runner.spec.resolve import make_spec
from runner.sweep.expand import SweepSpec, expand
from runner.sweep.grid import SpecJsons, Subset
from runner.sweep.order import run_order

TIMING = {name for name, m in METRICS.items() if m.timing}


def _metrics(policy: str, workload: str = "lifecycle", seed: int = 2) -> dict[str, Any]:
    m = run_job(make_spec(workload, policy, seed, horizon=40)).metrics()
    return {k: ("nan" if isinstance(v, float) and math.isnan(v) else v)
            for k, v in m.items() if k not in TIMING}


def test_a_kept_stream_gives_the_numbers_a_fresh_one_does() -> None:
    """Prevents a kept stream differing from a fresh generation (a job reading events a
    previous job altered, or another stream's): every metric of a job on a kept stream
    equals that job's on a freshly generated one, the oracle's second pass included."""
    for policy in ("lethe", "oracle", "lfu"):
        streams.clear()
        fresh = _metrics(policy)
        kept_before = len(streams._kept)
        again = _metrics(policy)  # this one reads the kept stream
        assert kept_before == 1 and again == fresh, policy
    streams.clear()


def test_streams_are_kept_by_what_they_depend_on() -> None:
    """Prevents two jobs on different streams sharing events: the key is everything but
    the memory, and a job's memory (policy, its parameters) is not part of it."""
    a = make_spec("lifecycle", "lfu", 1, horizon=40)
    assert streams.stream_key(a) == streams.stream_key(
        make_spec("lifecycle", "fifo", 1, horizon=40, params=[("policy.capacity", 7)]))
    for other in (make_spec("lifecycle", "lfu", 2, horizon=40),
                  make_spec("lifecycle", "lfu", 1, horizon=41),
                  make_spec("lifecycle.bursty", "lfu", 1, horizon=40),
                  make_spec("lifecycle", "lfu", 1, horizon=40,
                            params=[("workload.p_update", 0.5)]),
                  dataclasses.replace(a, workload_version="1")):
        assert streams.stream_key(other) != streams.stream_key(a)


def test_only_streams_read_to_the_end_and_not_too_long_are_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents a cut-short stream (a job that failed half-way) being handed to the next
    job as if whole, and a long horizon's stream being held in memory."""
    streams.clear()
    spec = make_spec("lifecycle", "lfu", 1, horizon=40)

    def gen(n: int) -> Iterator[int]:
        yield from range(n)

    half = streams.events(spec, gen(10))
    assert [next(half) for _ in range(5)] == list(range(5))
    assert list(streams.events(spec, gen(10))) == list(range(10))  # fresh: none kept
    assert list(streams.events(spec, gen(99))) == list(range(10))   # now kept
    streams.clear()
    monkeypatch.setattr(streams, "EVENTS_KEPT", 8)
    assert list(streams.events(spec, gen(10))) == list(range(10))
    assert list(streams.events(spec, gen(3))) == [0, 1, 2]  # too long: not kept
    streams.clear()


def test_a_streams_blocks_are_its_events_in_order_fresh_or_kept() -> None:
    """Prevents the blocks a job reads (``streams.blocks``) from dropping, repeating or
    reordering an event, or from differing between a fresh stream and a kept one: both
    are the stream's events in lists of the size asked, the last one shorter."""
    streams.clear()
    spec = make_spec("lifecycle", "lfu", 1, horizon=40)
    want = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert list(streams.blocks(spec, iter(range(10)), 4)) == want  # fresh
    assert list(streams.blocks(spec, iter(range(99)), 4)) == want  # kept
    assert list(streams.blocks(spec, iter(range(99)), 3))[-1] == [9]
    streams.clear()


def test_a_sweep_runs_a_streams_jobs_together_and_spreads_the_rest() -> None:
    """Prevents the run order splitting a stream's jobs (each split regenerates the
    stream) or piling a slow workload's or policy's jobs into one part of the run (a
    long tail): consecutive jobs change stream only between streams, and every quarter
    of the run carries a fair share of each workload and policy."""
    spec = SweepSpec(seeds=tuple(range(40)), policies=("fifo", "lru", "lfu"),
                     workloads=("contradiction", "lifecycle", "lifecycle.bursty"))
    grid = expand(spec)
    jobs = Subset(grid, [p for p in range(len(grid)) if p % 7])  # a resume's subset
    order = run_order(jobs)
    assert sorted(order.tolist()) == list(range(len(jobs)))
    ordered = [jobs[int(i)] for i in order]
    keys = [(j.workload, j.seed) for j in ordered]
    changes = sum(a != b for a, b in itertools.pairwise(keys))
    assert changes == len(set(keys)) - 1
    q = len(ordered) // 4
    for part in (ordered[:q], ordered[q:2 * q], ordered[2 * q:3 * q], ordered[3 * q:]):
        for field, value in (("workload", "lifecycle.bursty"), ("policy", "lfu")):
            share = sum(getattr(j, field) == value for j in part) / len(part)
            assert 0.15 <= share <= 0.52, (field, share)  # (a third of the jobs)
    assert list(SpecJsons(jobs, order)) == [j.canonical_json() for j in ordered]
    assert run_order(Subset(grid, [])).tolist() == []

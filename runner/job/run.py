"""Running one job: feed a workload's stream through a memory and score it.

The memory sees only text, time and meta; the harness keeps the ground truth
(which observation asserted which slot value) and judges every query with it
(``runner.job.state``).
The stream is consumed lazily and the job's own state stays small whatever the
horizon (``runner.job.streaming``): 8 bytes of truth per observation, O(1) per query.
A process keeps its last few streams of moderate length (``runner.job.streams``), so the
next job on the same stream (another policy of a sweep) reads them instead of generating.
The result is one row per checkpoint (20 evenly spaced, the last at the
horizon): size and tokens at that time, quality metrics over the queries so far.

Queries are accesses: a memory may change when it is asked (LRU and LFU count it,
lethe reinforces what it returns), exactly as an agent's memory would; the harness
asks each question once, at its own time, and never stores it.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

from threadpoolctl import ThreadpoolController

from runner.adapters import AnswersAsIds, AnswersInBatches, Foresees, Prefetches
from runner.job import streams
from runner.job.state import JobRun
from runner.results.shard import checkpoints
from runner.spec.jobspec import JobSpec
from runner.spec.resolve import materialize
from workloads import Query, Tick

# The stream is read in fixed blocks of events; a memory with ``prefetch(texts)`` (a
# batching embedder) sees each block's texts before its events. Fixed blocks keep a
# job's batches, hence its numbers, the same wherever it runs.
PREFETCH_BLOCK = 256


@dataclass
class JobResult:
    spec: JobSpec
    rows: list[dict[str, Any]]
    resolved_params: dict[str, Any] = field(default_factory=dict)
    forgotten: dict[str, int] = field(default_factory=dict)
    embedder: str = "own"  # the embedder the memory ranked with (its kind declares it)
    # per query, in stream order: 1 if its top-k held the current assertion (recorded on
    # request: fbench calibrate's saturated and impossible queries)
    answered: list[int] | None = None
    # the workload's query categories of its own (fbench's have columns in every shard):
    # their split metrics are columns of this job's shard
    categories: tuple[str, ...] = ()

    @property
    def final(self) -> dict[str, Any]:
        return self.rows[-1]

    def metrics(self) -> dict[str, Any]:
        """The final row's metric values (checkpoint coordinates dropped)."""
        return {k: v for k, v in self.final.items() if k not in ("t", "fraction")}


def run_job(spec: JobSpec, record_queries: bool = False) -> JobResult:
    """Run one job in-process and return its checkpoint rows.

    Runs on one BLAS thread: fbench parallelises across jobs (one per Ray worker), and a
    job's matrix products are a few rows wide, where a thread pool only waits. One
    thread gives the same numbers (BLAS threads split outputs, not sums).
    """
    with _blas().limit(limits=1, user_api="blas"):
        return _run(spec, record_queries)


_BLAS: list[tuple[int, ThreadpoolController]] = []  # (modules when scanned, the scan)


def _blas() -> ThreadpoolController:
    """The process's thread-pool libraries, scanned again only when a module has been
    imported since (a library comes with the module that loads it, torch's with torch):
    a scan walks every loaded library and leaves a reference cycle for the garbage
    collector, so a job reuses the last scan."""
    if not _BLAS or _BLAS[0][0] != len(sys.modules):
        _BLAS[:] = [(len(sys.modules), ThreadpoolController())]
    return _BLAS[0][1]


def _run(spec: JobSpec, record_queries: bool = False) -> JobResult:
    r = materialize(spec)
    memory = r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())
    run = JobRun(memory, spec.k, spec.seed, r.workload.update_kinds, record_queries,
               tuple(r.workload.categories))
    def generate() -> Iterator[Any]:
        """The job's events, made afresh (``streams`` hands out kept ones instead, if this
        process ran the stream before)."""
        return iter(r.workload.events(spec.seed, spec.horizon, r.workload_params))

    if isinstance(memory, Foresees):  # the oracle reads the questions ahead (a second pass)
        memory.foresee(streams.events(spec, generate()))
    feed = _Feed(spec, run, memory)
    for block in streams.blocks(spec, generate(), PREFETCH_BLOCK):
        feed.block(block)
    rows = feed.finish()
    embedder = r.memory.embedder(r.policy_params, r.store_params)
    return JobResult(spec, rows, r.full_params(), memory.forgotten(), embedder, run.answered,
                     run.categories)


class _Feed:
    """A job's events fed to its ``JobRun`` block by block, and its checkpoint rows.

    The last checkpoint (the horizon) waits for the stream's end, so an event at
    t == horizon is still counted; an event at ``gate`` or later is looked at closely:
    the next checkpoint before the horizon is due, or it is past the horizon.
    """

    def __init__(self, spec: JobSpec, run: JobRun, memory: Any) -> None:
        self.spec, self.run = spec, run
        self.cps = checkpoints(spec.horizon)
        self.rows: list[dict[str, Any]] = []
        self.start = time.perf_counter()
        self.handlers = run.handlers()
        self.prefetch = memory.prefetch if isinstance(memory, Prefetches) else None
        # questions of one time in one call, as ids where the memory gives them so
        self.ask_batch: Callable[[list[Query]], None] | None = (
            partial(run.queries_ids, memory) if isinstance(memory, AnswersAsIds)
            else partial(run.queries, memory) if isinstance(memory, AnswersInBatches)
            else None)
        self.horizon = spec.horizon
        self.past = math.nextafter(self.horizon, math.inf)
        self.gate = self.cps[0] if len(self.cps) > 1 else self.past

    def block(self, block: list[Any]) -> None:
        """Feeds one block of events: each to its handler, the questions of one time
        together (``ask_batch``), the checkpoint rows as their times pass. Ticks that
        change nothing are dropped (one past the horizon is still looked at): no
        checkpoint row is another for it, as nothing changes until the next event."""
        if self.run.ticks_ignored:
            block = [ev for ev in block if type(ev) is not Tick or ev.t > self.horizon]
        if self.prefetch is not None:
            self.prefetch([ev.text for ev in block if not isinstance(ev, Tick)])
        handlers, ask_batch, gate = self.handlers, self.ask_batch, self.gate
        skip = 0
        for i, ev in enumerate(block, 1):  # (``i``: the next event's index)
            if skip:  # (asked in the batch before)
                skip -= 1
                continue
            t = ev.t
            if t >= gate:
                gate = self._checkpoints_to(t)
            kind = type(ev)
            if kind is Query and ask_batch is not None:
                skip = _same_time_queries(block, i, t)
                if skip:  # questions of one time: one batch (no checkpoint between)
                    ask_batch(cast(list[Query], block[i - 1:i + skip]))
                    continue
            handlers[kind](ev)

    def _checkpoints_to(self, t: int) -> float:
        """Writes the rows of the checkpoints before the horizon that an event at ``t``
        has reached; the next gate. An event past the horizon is an error."""
        if t > self.horizon:
            raise ValueError(f"workload {self.spec.workload!r} yielded an event at t={t}, "
                             f"past the horizon {self.horizon}: a stream must stop there")
        cps, rows = self.cps, self.rows
        while len(rows) < len(cps) - 1 and t >= cps[len(rows)]:
            self._snapshot(cps[len(rows)])
        self.gate = cps[len(rows)] if len(rows) < len(cps) - 1 else self.past
        return self.gate

    def _snapshot(self, cp: int) -> None:
        self.rows.append(self.run.snapshot(cp, cp / self.horizon,
                                           time.perf_counter() - self.start))

    def finish(self) -> list[dict[str, Any]]:
        """The checkpoint rows, those still due written at the stream's end."""
        while len(self.rows) < len(self.cps):
            self._snapshot(self.cps[len(self.rows)])
        return self.rows


def _same_time_queries(block: list[Any], i: int, t: int) -> int:
    """How many events from ``block[i]`` on are questions at time ``t``."""
    end = i
    while end < len(block) and type(block[end]) is Query and block[end].t == t:
        end += 1
    return end - i

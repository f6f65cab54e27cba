"""Running one job: feed a workload's stream through a memory and score it.

The memory sees only text, time and meta; the harness keeps the ground truth
(which observation asserted which slot value) and judges every query with it.
The stream is consumed lazily and the job's own state stays small whatever the
horizon (``runner.job.streaming``): 8 bytes of truth per observation, O(1) per query.
The result is one row per checkpoint (20 evenly spaced, the last at the
horizon): size and tokens at that time, quality metrics over the queries so far.

Queries are accesses: a memory may change when it is asked (LRU and LFU count it,
lethe reinforces what it returns), exactly as an agent's memory would; the harness
asks each question once, at its own time, and never stores it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
from threadpoolctl import threadpool_limits

from runner.adapters import (
    AnswersAsIds,
    AnswersInBatches,
    Foresees,
    Hit,
    LinksSlots,
    MemoryAdapter,
    Prefetches,
    TakesTruthHints,
)
from runner.job.streaming import LatencyStats, TruthTable
from runner.metrics import CATEGORIES, QUALITY, own_categories, quality_metrics, score_query
from runner.metrics.scoring import QueryScore
from runner.results.shard import checkpoints
from runner.spec.jobspec import JobSpec
from runner.spec.resolve import materialize
from workloads import Observe, Query, Tick

# The stream is read in fixed blocks of events; a memory with ``prefetch(texts)`` (a
# batching embedder) sees each block's texts before its events. Fixed blocks keep a
# job's batches, hence its numbers, the same wherever it runs.
PREFETCH_BLOCK = 256
A = TypeVar("A")  # a batch's answers, as a memory gives them


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


class _Run:
    """The state of one job while its stream flows."""

    def __init__(self, memory: MemoryAdapter, k: int, seed: int = 0,
                 update_kinds: dict[str, str] | None = None, record: bool = False,
                 categories: tuple[str, ...] = ()) -> None:
        self.memory = memory
        self.answered: list[int] | None = [] if record else None
        # observation kind -> how the update is phrased ("canonical" or "hard"), as the
        # workload declares it (for the extractor diagnostics)
        self.update_kinds = update_kinds or {}
        self.k = k
        self.seed = seed
        # a harness-side extractor (oracle, noisy) is told each observation's true slot
        self.hint = memory.hint_truth if isinstance(memory, TakesTruthHints) else None
        self.truth_of = TruthTable()
        self.current_obs: dict[str, int] = {}
        # slot -> (its current value, the first observation of that value's current run)
        self.run_start: dict[str, tuple[str, int]] = {}
        self.next_obs = 0
        self.peak = 0
        self.categories = own_categories(categories)
        cats = self.cats = ("all", *CATEGORIES, *self.categories)
        # every per-query metric (fbench's and installed plugins'), split by category
        # only for fbench's own (the per-category columns)
        self.quality = [(m.name, m.per_query) for m in quality_metrics()
                        if m.per_query is not None]
        self.values = [value for _, value in self.quality]
        self._values_of: dict[QueryScore, list[float]] = {}  # (scores recur: few kinds)
        # per category, each quality metric's sum over its queries (in ``quality`` order)
        self.sums = {c: [0.0] * len(self.quality) for c in cats}
        self.counts = dict.fromkeys(cats, 0)
        self.linked = {"canonical": [0, 0], "hard": [0, 0]}
        self.false_links = 0
        self.n_obs = 0
        self.linker = memory if isinstance(memory, LinksSlots) else None
        self.diagnoses = self.linker is not None
        self.latency = LatencyStats()
        self.handlers = {Observe: self.observe, Query: self.query, Tick: self.tick}

    def observe(self, ev: Observe) -> None:
        obs = self.next_obs
        self.next_obs += 1
        truth = ev.truth
        if self.hint is not None:
            self.hint(truth.slot, self.seed, obs)
        self.memory.observe(obs, ev.t, ev.text, ev.meta)
        if truth.slot is not None and truth.value is not None:
            self.truth_of.set(obs, truth.slot, truth.value)
            self.current_obs[truth.slot] = obs
            run = self.run_start.get(truth.slot)
            if run is None or run[0] != truth.value:
                self.run_start[truth.slot] = (truth.value, obs)
        if self.linker is not None:
            linked = self.linker.linked_slot(obs)
            self.n_obs += 1
            if linked is not None and linked != truth.slot:
                self.false_links += 1
            cat = self.update_kinds.get(truth.kind)
            if cat is not None:
                self.linked[cat][0] += linked == truth.slot
                self.linked[cat][1] += 1
        self.peak = max(self.peak, self.memory.size())

    def query(self, ev: Query) -> None:
        start = time.perf_counter()
        found = self.memory.query(ev.t, ev.text, self.k)
        self.latency.add((time.perf_counter() - start) * 1000.0)
        self.judge(ev, found)

    def _asked_together(self, evs: list[Query], ask: Callable[[int, list[str], int], A]
                        ) -> A:
        """Questions of one time, nothing observed between them, in one call: each
        counts the batch's mean latency."""
        start = time.perf_counter()
        answers = ask(evs[0].t, [ev.text for ev in evs], self.k)
        each = (time.perf_counter() - start) * 1000.0 / len(evs)
        for _ in evs:
            self.latency.add(each)
        return answers

    def queries(self, batch: AnswersInBatches, evs: list[Query]) -> None:
        """A batch of questions, all judged at once (``judge_many``)."""
        self.judge_many(evs, self._asked_together(evs, batch.query_many))

    def _since(self, slot: str, value: str) -> int:
        """The first observation of the slot's current run of ``value``."""
        run = self.run_start.get(slot)
        return run[1] if run is not None and run[0] == value else self.next_obs

    def _forgotten(self, slot: str) -> bool:
        current = self.current_obs.get(slot)
        return current is not None and not self.memory.holds(current)

    def judge(self, ev: Query, found: list[Hit]) -> None:
        """Score one question's hits against the truth."""
        truth = ev.truth
        self.count(ev, score_query([h.obs_id for h in found], truth.slot, truth.value,
                                   self.truth_of, self._forgotten(truth.slot), self.k,
                                   self._since(truth.slot, truth.value)))

    def queries_ids(self, batch: AnswersAsIds, evs: list[Query]) -> None:
        """``queries``, the answers as one matrix of observation ids."""
        self.judge_ids(evs, self._asked_together(evs, batch.query_ids))

    def judge_many(self, evs: list[Query], answers: list[list[Hit]]) -> None:
        """``judge`` for each question, its hits judged against the truth table in array
        operations (the same scores: ``tests/test_relevance.py``)."""
        width = max((len(found) for found in answers), default=0)
        obs = np.full((len(evs), width), -1, dtype=np.int64)
        for i, found in enumerate(answers):
            obs[i, : len(found)] = [h.obs_id for h in found]
        self.judge_ids(evs, obs)

    def judge_ids(self, evs: list[Query], ids: np.ndarray) -> None:
        """``judge_many`` of a matrix of hits' observation ids (a row per question, best
        first, -1 past its last hit)."""
        width = max(self.k, ids.shape[1])
        obs = np.full((len(evs), width), -1, dtype=np.int64)
        obs[:, : ids.shape[1]] = ids
        retrieved = cast(list[int], (ids >= 0).sum(axis=1).tolist())
        slots = [ev.truth.slot for ev in evs]
        values = [ev.truth.value for ev in evs]
        correct, stale = self.truth_of.judge(obs, slots, values)
        since = np.array([self._since(s, v) for s, v in zip(slots, values, strict=True)])
        n_correct, n_stale, n_current, top1, top5 = (cast(list[Any], a.tolist()) for a in (
            correct.sum(axis=1), stale.sum(axis=1),
            (correct & (obs >= since[:, None])).sum(axis=1), correct[:, 0],
            correct[:, :5].any(axis=1)))
        for i, ev in enumerate(evs):
            self.count(ev, QueryScore(retrieved[i], n_correct[i], n_stale[i], top1[i],
                                      self._forgotten(slots[i]),
                                      top5[i] if self.k >= 5 else None, n_current[i]))

    def count(self, ev: Query, score: QueryScore) -> None:
        """Add one question's score to its categories' sums."""
        values = self._values_of.get(score)
        if values is None:  # a per-query value is a function of the score alone
            values = self._values_of[score] = [value(score) for value in self.values]
        if self.answered is not None:
            self.answered.append(int(score.current > 0))
        for cat in ("all", ev.truth.category):
            if cat not in self.counts:  # a category the workload does not declare
                continue
            self.counts[cat] += 1
            sums = self.sums[cat]
            for j, v in enumerate(values):
                sums[j] += v

    def tick(self, ev: Tick) -> None:
        self.memory.tick(ev.t)

    def snapshot(self, t: int, fraction: float, wall: float) -> dict[str, Any]:
        nan = float("nan")
        row: dict[str, Any] = {"t": t, "fraction": fraction}
        for cat in self.cats:
            n = self.counts[cat]
            suffix = "" if cat == "all" else f"_{cat}"
            for (name, _), total in zip(self.quality, self.sums[cat], strict=True):
                if cat == "all" or name in QUALITY:
                    row[name + suffix] = total / n if n else nan
            row["n_queries" + suffix] = n
        row["final_size"] = self.memory.size()
        row["peak_size"] = self.peak
        row["final_tokens"] = self.memory.tokens()
        row["n_forgotten"] = sum(self.memory.forgotten().values())
        for cat, (hit, total) in self.linked.items():
            row[f"extract_link_{cat}"] = hit / total if self.diagnoses and total else nan
        row["extract_false_link"] = (
            self.false_links / self.n_obs if self.diagnoses and self.n_obs else nan
        )
        row["query_ms_mean"] = self.latency.mean()
        row["query_ms_p95"] = self.latency.quantile(0.95)
        row["wall_s"] = wall
        return row


def run_job(spec: JobSpec, record_queries: bool = False) -> JobResult:
    """Run one job in-process and return its checkpoint rows.

    A job is single-threaded: fbench parallelises across jobs (one per Ray worker),
    and a job's matrix products are a few rows wide, where a BLAS thread pool only
    waits: with two OpenBLAS threads on a busy 2-core machine, one query's relevance
    product over 88k entries took 5–8 ms instead of 0.09 ms. The job runs with BLAS
    limited to one thread (the same numbers: the threads split outputs, not sums).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _run(spec, record_queries)


def _run(spec: JobSpec, record_queries: bool = False) -> JobResult:
    r = materialize(spec)
    memory = r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())
    run = _Run(memory, spec.k, spec.seed, r.workload.update_kinds, record_queries,
               tuple(r.workload.categories))
    if isinstance(memory, Foresees):  # the oracle reads the questions ahead (a second pass)
        memory.foresee(r.workload.events(spec.seed, spec.horizon, r.workload_params))
    cps = checkpoints(spec.horizon)
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    handlers = run.handlers
    prefetch = memory.prefetch if isinstance(memory, Prefetches) else None
    batch = memory if isinstance(memory, AnswersInBatches) else None
    ids = memory if isinstance(memory, AnswersAsIds) else None
    events = iter(r.workload.events(spec.seed, spec.horizon, r.workload_params))
    while block := list(itertools.islice(events, PREFETCH_BLOCK)):
        if prefetch is not None:
            prefetch([ev.text for ev in block if not isinstance(ev, Tick)])
        i = 0
        while i < len(block):
            ev = block[i]
            if ev.t > spec.horizon:
                raise ValueError(f"workload {spec.workload!r} yielded an event at t={ev.t}, "
                                 f"past the horizon {spec.horizon}: a stream must stop there")
            # the last checkpoint (the horizon) waits for the stream's end, so an event at
            # t == horizon is still counted
            while len(rows) < len(cps) - 1 and ev.t >= cps[len(rows)]:
                cp = cps[len(rows)]
                rows.append(run.snapshot(cp, cp / spec.horizon, time.perf_counter() - start))
            end = i + 1
            if (batch is not None or ids is not None) and type(ev) is Query:
                while end < len(block) and type(block[end]) is Query and block[end].t == ev.t:
                    end += 1
            if end - i > 1:  # questions of one time: one batch (no checkpoint between)
                if ids is not None:
                    run.queries_ids(ids, block[i:end])  # type: ignore[arg-type]
                else:
                    run.queries(batch, block[i:end])  # type: ignore[arg-type]
            else:
                handlers[type(ev)](ev)  # type: ignore[operator]
            i = end
    while len(rows) < len(cps):
        cp = cps[len(rows)]
        rows.append(run.snapshot(cp, cp / spec.horizon, time.perf_counter() - start))
    embedder = r.memory.embedder(r.policy_params, r.store_params)
    return JobResult(spec, rows, r.full_params(), memory.forgotten(), embedder, run.answered,
                     run.categories)

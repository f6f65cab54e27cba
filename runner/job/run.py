"""Running one job: feed a workload's stream through a memory and score it.

The memory sees only text, time and meta; the harness keeps the ground truth
(which observation asserted which slot value) and judges every query with it. The
state of a job while its stream flows (``JobRun``) says what each event does to it,
judges each question's hits by the true slot and value of the observations they came
from (``runner.metrics.score_query``, or in array operations for a batch of questions:
``TruthTable.judge``), adds its score to the sums of the job's quality metrics, overall
and per category, and gives the checkpoint rows.
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
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar, cast

import numpy as np
from threadpoolctl import ThreadpoolController

from fbench.clock import clock_of
from runner.adapters import (
    AnswersAsIds,
    AnswersInBatches,
    Foresees,
    Hit,
    IgnoresTicks,
    LinksSlots,
    MemoryAdapter,
    Prefetches,
    TakesTruthHints,
    UsesClock,
)
from runner.adapters.base import hit_ids
from runner.job import streams
from runner.job.samples import Recorder
from runner.job.streaming import LatencyStats, TruthTable
from runner.metrics import CATEGORIES, QUALITY, own_categories, quality_metrics
from runner.metrics.scoring import QueryScore, score_key
from runner.results.samples import Samples
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
    samples: Samples | None = None  # the job's evidence, when asked for

    @property
    def final(self) -> dict[str, Any]:
        return self.rows[-1]

    def metrics(self) -> dict[str, Any]:
        """The final row's metric values (checkpoint coordinates dropped)."""
        return {k: v for k, v in self.final.items() if k not in ("t", "fraction")}


class JobRun:
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
        # a score's per-query values, by the score's fields (scores recur: few kinds)
        self._values_of: dict[tuple[Any, ...], list[float]] = {}
        # per category, each quality metric's sum over its queries (in ``quality`` order)
        self.sums = {c: [0.0] * len(self.quality) for c in cats}
        self.counts = dict.fromkeys(cats, 0)
        self.linked = {"canonical": [0, 0], "hard": [0, 0]}
        self.false_links = 0
        self.n_obs = 0
        # the memory's methods an observation calls (bound once: no lookups per event)
        self._observe, self._size = memory.observe, memory.size
        self._linked_slot = memory.linked_slot if isinstance(memory, LinksSlots) else None
        self.diagnoses = self._linked_slot is not None
        self.latency = LatencyStats()
        # the memory has said its ticks change nothing (``IgnoresTicks``: asked once)
        self.ticks_ignored = isinstance(memory, IgnoresTicks) and memory.ignores_ticks()

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        """What each kind of event does, as bound methods in a new dict: a dict held by
        the job's loop, never by the ``JobRun`` (which it would hold in a reference
        cycle, leaving the job's whole memory to the cyclic garbage collector instead
        of reference counting).
        A memory that gives answers as ids is asked a lone question that way too (no
        hit made); one whose ticks change nothing is not told them."""
        memory = self.memory
        return {Observe: self.observe,
                Query: self.query_as_ids if isinstance(memory, AnswersAsIds) else self.query,
                Tick: self._ignore if self.ticks_ignored else self.tick}

    def observe(self, ev: Observe) -> None:
        obs = self.next_obs
        self.next_obs += 1
        truth = ev.truth
        if self.hint is not None:
            self.hint(truth.slot, self.seed, obs)
        self._observe(obs, ev.t, ev.text, ev.meta)
        slot, value = truth.slot, truth.value
        if slot is not None and value is not None:
            self.truth_of.set(obs, slot, value)
            self.current_obs[slot] = obs
            run = self.run_start.get(slot)
            if run is None or run[0] != value:
                self.run_start[slot] = (value, obs)
        if self._linked_slot is not None:
            linked = self._linked_slot(obs)
            self.n_obs += 1
            if linked is not None and linked != slot:
                self.false_links += 1
            cat = self.update_kinds.get(truth.kind)
            if cat is not None:
                self.linked[cat][0] += linked == slot
                self.linked[cat][1] += 1
        size = self._size()
        if size > self.peak:
            self.peak = size

    def query(self, ev: Query) -> None:
        start = time.perf_counter()
        found = self.memory.query(ev.t, ev.text, self.k)
        self.latency.add((time.perf_counter() - start) * 1000.0)
        self.judge(ev, found)

    def query_as_ids(self, ev: Query) -> None:
        """``query`` of an ``AnswersAsIds`` memory: its one-row matrix, judged as
        ``judge`` judges hits."""
        memory = cast(AnswersAsIds, self.memory)
        start = time.perf_counter()
        ids = memory.query_ids(ev.t, [ev.text], self.k)
        self.latency.add((time.perf_counter() - start) * 1000.0)
        self._judge_obs(ev, [o for o in ids[0].tolist() if o >= 0])

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
        self._judge_obs(ev, [h.obs_id for h in found])

    def _judge_obs(self, ev: Query, obs: list[int]) -> None:
        """``judge`` of the hits' observation ids."""
        truth = ev.truth
        self._count(ev, score_key(obs, truth.slot, truth.value, self.truth_of,
                                  self._forgotten(truth.slot), self.k,
                                  self._since(truth.slot, truth.value)))

    def queries_ids(self, batch: AnswersAsIds, evs: list[Query]) -> None:
        """``queries``, the answers as one matrix of observation ids."""
        self.judge_ids(evs, self._asked_together(evs, batch.query_ids))

    def judge_many(self, evs: list[Query], answers: list[list[Hit]]) -> None:
        """``judge`` for each question, its hits judged against the truth table in array
        operations (the same scores: ``tests/test_relevance.py``)."""
        self.judge_ids(evs, hit_ids(answers))

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
        five = self.k >= 5
        for i, ev in enumerate(evs):  # (as ``QueryScore.key``: no score made per question)
            self._count(ev, (retrieved[i], n_correct[i], n_stale[i], top1[i],
                             self._forgotten(slots[i]), top5[i] if five else None,
                             n_current[i]))

    def _count(self, ev: Query, fields: tuple[Any, ...]) -> None:
        """Add the score with these fields (``QueryScore.key``) to its categories' sums."""
        values = self._values_of.get(fields)
        if values is None:  # a per-query value is a function of the score alone
            score = QueryScore(*fields)
            values = self._values_of[fields] = [value(score) for value in self.values]
        if self.answered is not None:
            self.answered.append(int(fields[6] > 0))  # (the score's ``current``)
        for cat in ("all", ev.truth.category):
            if cat not in self.counts:  # a category the workload does not declare
                continue
            self.counts[cat] += 1
            sums = self.sums[cat]
            for j, v in enumerate(values):
                sums[j] += v

    def tick(self, ev: Tick) -> None:
        self.memory.tick(ev.t)

    def _ignore(self, ev: Tick) -> None:
        """A tick a memory has said changes nothing in it (``IgnoresTicks``)."""

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


class RecordingRun(JobRun):
    """A ``JobRun`` that also records the job's evidence (``runner.job.samples``): each
    question is asked for hits (so the memory's scores come with them; the same answers
    as asked for ids), and the recorder hears of each observation, each scored question
    and, after each event, the removals the memory reports."""

    def __init__(self, memory: MemoryAdapter, k: int, seed: int = 0,
                 update_kinds: dict[str, str] | None = None, record: bool = False,
                 categories: tuple[str, ...] = ()) -> None:
        super().__init__(memory, k, seed, update_kinds, record, categories)
        self.recorder = Recorder(memory)
        self._hits: deque[tuple[list[int], list[float | None]]] = deque()

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        """Observations, questions (as hits) and ticks, each followed by a look at the
        removals it caused."""
        recorder, current = self.recorder, self.current_obs
        plain: dict[type, Callable[[Any], None]] = {
            Observe: self.observe, Query: self.query,
            Tick: self._ignore if self.ticks_ignored else self.tick}

        def then_removed(handle: Callable[[Any], None]) -> Callable[[Any], None]:
            def handled(ev: Any) -> None:
                handle(ev)
                recorder.removed(ev.t, current)
            return handled

        return {kind: then_removed(handle) for kind, handle in plain.items()}

    def observe(self, ev: Observe) -> None:
        super().observe(ev)
        self.recorder.observed(self.next_obs - 1, ev)

    def queries(self, batch: AnswersInBatches, evs: list[Query]) -> None:
        super().queries(batch, evs)
        self.recorder.removed(evs[-1].t, self.current_obs)

    def judge(self, ev: Query, found: list[Hit]) -> None:
        self._hits.append(([h.obs_id for h in found], [h.score for h in found]))
        super().judge(ev, found)

    def judge_many(self, evs: list[Query], answers: list[list[Hit]]) -> None:
        for found in answers:
            self._hits.append(([h.obs_id for h in found], [h.score for h in found]))
        super().judge_many(evs, answers)

    def _count(self, ev: Query, fields: tuple[Any, ...]) -> None:
        super()._count(ev, fields)
        ids, scores = self._hits.popleft()
        self.recorder.asked(ev, ids, scores, fields, self.current_obs)


def run_job(spec: JobSpec, record_queries: bool = False, samples: bool = False) -> JobResult:
    """Run one job in-process and return its checkpoint rows.

    Runs on one BLAS thread: fbench parallelises across jobs (one per Ray worker), and a
    job's matrix products are a few rows wide, where a thread pool only waits. One
    thread gives the same numbers (BLAS threads split outputs, not sums).
    """
    with _blas().limit(limits=1, user_api="blas"):
        return _run(spec, record_queries, samples)


_BLAS: list[tuple[int, ThreadpoolController]] = []  # (modules when scanned, the scan)


def _blas() -> ThreadpoolController:
    """The process's thread-pool libraries, scanned again only when a module has been
    imported since (a library comes with the module that loads it, torch's with torch):
    a scan walks every loaded library and leaves a reference cycle for the garbage
    collector, so a job reuses the last scan."""
    if not _BLAS or _BLAS[0][0] != len(sys.modules):
        _BLAS[:] = [(len(sys.modules), ThreadpoolController())]
    return _BLAS[0][1]


def _run(spec: JobSpec, record_queries: bool = False, samples: bool = False) -> JobResult:
    r = materialize(spec)
    memory = r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())
    run = (RecordingRun if samples else JobRun)(
        memory, spec.k, spec.seed, r.workload.update_kinds, record_queries,
        tuple(r.workload.categories))
    def generate() -> Iterator[Any]:
        """The job's events, made afresh (``streams`` hands out kept ones instead, if this
        process ran the stream before)."""
        return iter(r.workload.events(spec.seed, spec.horizon, r.workload_params))

    if isinstance(memory, UsesClock):
        memory.use_clock(clock_of(r.workload, r.workload_params))
    if isinstance(memory, Foresees):  # the oracle reads the questions ahead (a second pass)
        memory.foresee(streams.events(spec, generate()))
    feed = _Feed(spec, run, memory)
    for block in streams.blocks(spec, generate(), PREFETCH_BLOCK):
        feed.block(block)
    rows = feed.finish()
    embedder = r.memory.embedder(r.policy_params, r.store_params)
    return JobResult(spec, rows, r.full_params(), memory.forgotten(), embedder, run.answered,
                     run.categories,
                     run.recorder.samples() if isinstance(run, RecordingRun) else None)


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
        # questions of one time in one call, as ids where the memory gives them so (as
        # hits when the job's evidence is recorded)
        recording = isinstance(run, RecordingRun)
        self.ask_batch: Callable[[list[Query]], None] | None = (
            partial(run.queries_ids, memory) if isinstance(memory, AnswersAsIds)
            and not recording
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

"""The adapter contract: the rules every memory under test must keep, checked on seeded
streams of both workload families, and what the memory did there. ``fbench check NAME``
runs it on any memory (a plugin author's first command); ``tests/test_adapter_contract.py``
runs it on fbench's own.

The streams are the workloads' own at their default horizons, long enough that a memory
which forgets at all forgets during the check; ``FAST_STREAMS`` are short ones for the
edit-check loop. Each stream runs twice (the second for ``deterministic``), fed as the
harness feeds a job: the workload's clock first, each block's texts to a memory that
prefetches.

Each rule is checked at every event it concerns (the rules that scan every observation,
at ``SCANS`` times a stream and at its end) and reported once: ``FAIL`` with the first
violation and what to fix; ``not exercised`` when the run never put it to the test (a
rule about deletions, where nothing was deleted), with what to rerun; ``not run`` when
the memory did not build; ``pass`` otherwise.

What the memory did, per stream: its length, what it forgot by reason, its current
recall (``recall_current_at_k``, judged as the harness judges it) next to keep_all's on
the same stream and to what a random top-k of what it held would get, and its seconds
per event.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from scipy.stats import hypergeom

from fbench.clock import clock_of
from runner.adapters.base import MemoryAdapter, Prefetches, UsesClock
from runner.metrics.scoring import score_key
from runner.spec.params import Scalar
from runner.spec.resolve import make_spec, materialize
from workloads import Observe, Query, Tick

# One stream per workload family (turns, days); None: the workload's default horizon.
STREAMS: tuple[tuple[str, int | None], ...] = (("contradiction", None), ("lifecycle", None))
FAST_STREAMS: tuple[tuple[str, int | None], ...] = (("contradiction", 240), ("lifecycle", 12))
SEED = 3
SCANS = 24  # full scans of holds() over every observation, per stream
BLOCK = 256  # events whose texts a prefetching memory sees at once (the harness's block)
RANDOM_SDS = 3.0  # recall within this many standard deviations of a random top-k's


@dataclass(frozen=True)
class Rule:
    name: str
    says: str    # the rule, as the report states it
    fix: str     # what to change when it is broken
    needs: str   # what a run must do to put it to the test ("" : any run does)


DELETES = "the memory to delete something"
RULES = (
    Rule("builds", "the memory builds from its parameters",
         "make the class (or factory) take its Params instance and return a MemoryAdapter",
         ""),
    Rule("given_ids", "query returns only observation ids it was given",
         "return Hit(obs_id, score) with the obs_id passed to observe(), never your own ids",
         "a query to return hits"),
    Rule("at_most_k", "query returns at most k distinct observations",
         "cut the hits to k and drop duplicates", "a query to return hits"),
    Rule("holds_hits", "query never returns an observation it no longer holds",
         "drop deleted items from retrieval, or keep holds() true until they are gone",
         "a query after " + DELETES),
    Rule("size_bounded", "size() is between 0 and the number of observations so far",
         "count live entries only, one per stored observation", ""),
    Rule("holds_is_size", "holds() is true for exactly size() observations",
         "make holds(obs_id) false once the item is deleted, and size() count what holds",
         DELETES),
    Rule("tokens", "tokens() is never negative, and 0 exactly when nothing is held",
         "count the whitespace tokens of the live entries", ""),
    Rule("forgotten", "forgotten() maps reasons to positive counts",
         "return {reason: count} with counts > 0 (an empty dict for none)", DELETES),
    Rule("deterministic", "the same stream gives the same hits twice",
         "seed any randomness from the job, and do not depend on wall-clock time",
         "a query to return hits"),
)


@dataclass
class Verdict:
    rule: Rule
    failure: str = ""  # the first violation ("" when the rule held)
    checked: int = 0   # times the rule was looked at
    exercised: int = 0  # of those, times the run could have broken it

    @property
    def ok(self) -> bool:
        return not self.failure

    @property
    def status(self) -> str:
        if self.failure:
            return "FAIL"
        if not self.checked:
            return "not run"
        return "pass" if self.exercised else "not exercised"


@dataclass(frozen=True)
class StreamReport:
    """What the memory did on one stream (its first run)."""

    workload: str
    horizon: int
    unit: str
    events: int
    observations: int
    questions: int
    forgotten: dict[str, int]
    recall: float          # recall_current_at_k, as the harness judges it
    random_recall: float   # what a random top-k of what it held would get
    random_sd: float       # the standard deviation of that recall over the questions
    keep_all_recall: float  # keep_all's on the same stream
    seconds_per_event: float

    @property
    def looks_random(self) -> bool:
        """The memory's recall is no further above a random top-k's than chance takes
        it (``RANDOM_SDS`` standard deviations: each question a coin of its own)."""
        return (self.questions > 0 and self.random_sd > 0
                and self.recall - self.random_recall < RANDOM_SDS * self.random_sd)


@dataclass
class Report:
    verdicts: list[Verdict]
    streams: list[StreamReport] = field(default_factory=list)
    cause: str = ""  # why the memory did not build

    @property
    def forgot_nothing(self) -> bool:
        return bool(self.streams) and not any(s.forgotten for s in self.streams)


@dataclass
class _Checker:
    verdicts: dict[str, Verdict] = field(
        default_factory=lambda: {r.name: Verdict(r) for r in RULES})

    def expect(self, rule: str, ok: bool, where: str, what: str, exercised: bool = True
               ) -> None:
        v = self.verdicts[rule]
        v.checked += 1
        v.exercised += exercised
        if not ok and not v.failure:
            v.failure = f"{where}: {what}"


@dataclass
class _Truth:
    """The stream's truth as the harness keeps it, for judging answers."""

    truth_of: dict[int, tuple[str, str]] = field(default_factory=dict)
    run_start: dict[str, tuple[str, int]] = field(default_factory=dict)
    runs: dict[str, list[int]] = field(default_factory=dict)  # the current run's obs
    next_obs: int = 0

    def observed(self, ev: Observe) -> int:
        obs = self.next_obs
        self.next_obs += 1
        slot, value = ev.truth.slot, ev.truth.value
        if slot is not None and value is not None:
            self.truth_of[obs] = (slot, value)
            run = self.run_start.get(slot)
            if run is None or run[0] != value:
                self.run_start[slot] = (value, obs)
                self.runs[slot] = []
            self.runs[slot].append(obs)
        return obs

    def since(self, slot: str, value: str) -> int:
        run = self.run_start.get(slot)
        return run[1] if run is not None and run[0] == value else self.next_obs

    def current(self, slot: str, value: str) -> list[int]:
        """The observations asserting ``slot = value`` since the slot last took it."""
        run = self.run_start.get(slot)
        return list(self.runs[slot]) if run is not None and run[0] == value else []


def _random_recall(held: int, current_held: int, k: int) -> float:
    """The chance a random top-k of ``held`` items holds one of ``current_held``."""
    if not held or not current_held:
        return 0.0
    return float(1.0 - hypergeom.pmf(0, held, current_held, min(k, held)))


@dataclass
class _Run:
    """One run of a stream: the hits, and the figures of ``StreamReport``."""

    answers: list[list[int]] = field(default_factory=list)
    recall: float = 0.0
    random_recall: float = 0.0
    random_var: float = 0.0
    seconds: float = 0.0


def _drive(memory: MemoryAdapter, chk: _Checker, workload: str, events: list[Any],
           k: int) -> _Run:
    """Feed one stream as the harness does, checking the per-event rules."""
    truth, run = _Truth(), _Run()
    scan_every = max(1, len(events) // SCANS)
    prefetch = memory.prefetch if isinstance(memory, Prefetches) else None
    start = time.perf_counter()
    for i, ev in enumerate(events):
        if prefetch is not None and i % BLOCK == 0:
            prefetch([e.text for e in events[i:i + BLOCK] if not isinstance(e, Tick)])
        where = f"{workload} t={ev.t}"
        if isinstance(ev, Observe):
            memory.observe(truth.observed(ev), ev.t, ev.text, ev.meta)
            size = memory.size()
            chk.expect("size_bounded", 0 <= size <= truth.next_obs, where,
                       f"size() is {size} after {truth.next_obs} observations")
        elif isinstance(ev, Query):
            _ask(memory, chk, truth, run, ev, where, k)
        elif isinstance(ev, Tick):
            memory.tick(ev.t)
        if i % scan_every == 0 or i == len(events) - 1:
            _scan(memory, chk, truth.next_obs, where)
    run.seconds = time.perf_counter() - start
    n = max(1, len(run.answers))
    run.recall, run.random_recall, run.random_var = (
        run.recall / n, run.random_recall / n, run.random_var / n**2)
    return run


def _ask(memory: MemoryAdapter, chk: _Checker, truth: _Truth, run: _Run, ev: Query,
         where: str, k: int) -> None:
    n_obs = truth.next_obs
    ids = [h.obs_id for h in memory.query(ev.t, ev.text, k)]
    run.answers.append(ids)
    hit = bool(ids)
    chk.expect("given_ids", all(isinstance(i, int) and 0 <= i < n_obs for i in ids),
               where, f"returned ids {ids}; it was given 0..{n_obs - 1}", hit)
    chk.expect("at_most_k", len(ids) <= k and len(set(ids)) == len(ids), where,
               f"returned {ids} for k={k}", hit)
    size = memory.size()
    gone = [i for i in ids if isinstance(i, int) and not memory.holds(i)]
    chk.expect("holds_hits", not gone, where, f"returned {gone}, which it does not hold",
               hit and size < n_obs)
    slot, value = ev.truth.slot, ev.truth.value
    key = score_key([i for i in ids if isinstance(i, int)], slot, value, truth.truth_of,
                    False, k, truth.since(slot, value))
    run.recall += key[-1] > 0
    current_held = sum(memory.holds(o) for o in truth.current(slot, value))
    chance = _random_recall(size, current_held, k)
    run.random_recall += chance
    run.random_var += chance * (1.0 - chance)


def _scan(memory: MemoryAdapter, chk: _Checker, n_obs: int, where: str) -> None:
    """The rules that look at every observation: holds against size, tokens, forgotten."""
    held = sum(memory.holds(i) for i in range(n_obs))
    deleted = held < n_obs
    size = memory.size()
    chk.expect("holds_is_size", held == size, where,
               f"holds() is true for {held} observations, size() says {size}", deleted)
    tokens = memory.tokens()
    chk.expect("tokens", tokens >= 0 and (held == 0) == (tokens == 0), where,
               f"tokens() is {tokens} with {held} observations held", n_obs > 0)
    forgotten = memory.forgotten()
    chk.expect("forgotten", all(isinstance(v, int) and v > 0 for v in forgotten.values()),
               where, f"forgotten() is {forgotten}", bool(forgotten))


def build_cause(exc: BaseException) -> str:
    """The innermost cause of a failed build, as one line (a missing module or system
    library names itself there, not in the constructor that met it)."""
    while exc.__cause__ is not None or (exc.__context__ is not None
                                        and not exc.__suppress_context__):
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check_memory(name: str, params: Iterable[tuple[str, Scalar]] = (), k: int = 5,
                 streams: tuple[tuple[str, int | None], ...] = STREAMS,
                 compare: bool = True) -> Report:
    """Every rule's verdict for memory ``name`` with ``params`` (``policy.KEY``...), and
    what it did on each stream (``compare``: keep_all's recall on it too)."""
    chk = _Checker()
    params = tuple(params)
    report = Report(list(chk.verdicts.values()))
    for workload, horizon in streams:
        spec = make_spec(workload, name, SEED, horizon=horizon, k=k, params=params)
        r = materialize(spec)
        events = list(r.workload.events(spec.seed, spec.horizon, r.workload_params))
        runs = []
        for _ in range(2):
            try:
                memory = r.memory.build(r.policy_params, r.store_params,
                                        r.workload.vocabulary())
            except Exception as exc:  # the rule is that it builds: report why not
                report.cause = build_cause(exc)
                chk.expect("builds", False, workload, report.cause)
                return report
            chk.expect("builds", True, workload, "")
            if isinstance(memory, UsesClock):
                memory.use_clock(clock_of(r.workload, r.workload_params))
            runs.append((_drive(memory, chk, workload, events, k), memory))
        (first, memory), (second, _) = runs
        differ = next((i for i, (a, b) in enumerate(zip(first.answers, second.answers,
                                                        strict=True)) if a != b), None)
        chk.expect("deterministic", differ is None, workload,
                   "two runs of the same stream returned different hits"
                   + ("" if differ is None else f" (query {differ}: "
                      f"{first.answers[differ]} then {second.answers[differ]})"),
                   any(first.answers))
        report.streams.append(_stream_report(spec, r, events, first, memory, compare))
    return report


def _stream_report(spec: Any, r: Any, events: list[Any], run: _Run, memory: MemoryAdapter,
                   compare: bool) -> StreamReport:
    keep_all = float("nan")
    if compare:
        from runner.job.run import run_job

        keep_all = run_job(make_spec(spec.workload, "keep_all", spec.seed, spec.horizon,
                                     spec.k)).metrics()["recall_current_at_k"]
    return StreamReport(
        workload=spec.workload, horizon=spec.horizon, unit=str(r.workload.horizon_unit),
        events=len(events), observations=sum(isinstance(e, Observe) for e in events),
        questions=len(run.answers), forgotten=dict(sorted(memory.forgotten().items())),
        recall=run.recall, random_recall=run.random_recall,
        random_sd=run.random_var ** 0.5, keep_all_recall=keep_all,
        seconds_per_event=run.seconds / max(1, len(events)))

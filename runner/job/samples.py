"""A job's evidence: a row per scored query and a row per deletion, recorded on request.

``Recorder`` watches a job's stream flow (``runner.job.run.RecordingRun`` feeds it) and
gives two tables:

- **queries** (``QUERIES``): each scored question, its time and category, the slot asked
  and its current value, what the memory returned in rank order (observation ids, texts,
  ages, the memory's own scores, and each item's label from ground truth: ``current``
  the slot's current value, ``stale`` another value of the slot, ``noise`` another slot
  or none), and the score's fields (``runner.metrics.scoring.QueryScore``), so that
  every quality metric of the job's shard is the mean of a column function of this
  table (``recompute_quality``), to the last bit.
- **deletions** (``DELETIONS``): each removal, when (the time of the event it followed),
  the observation and its text, the reason and the policy's score where the memory
  gives them, its age, its kind (``category``: the workload's kind of the observation),
  whether it was its slot's current assertion when removed (``still_current``: a false
  forget in the making), and when its slot was next asked (null: never).

A memory that reports its removals (``ReportsDeletions``) gives the whole deletions
table. For any other the harness records what it sees: when a slot is asked, each of
its observations the memory no longer holds (``holds``) is a deletion dated then, with
reason ``unreported``. Such a table is partial, and says so in its metadata
(``fbench.deletions``: ``reported`` or ``partial``).

The tables' schemas and files (written whole, like shards, the job's id and spec in
their metadata; checked by ``samples_problem``) are ``runner.results.samples``.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from runner.adapters.base import Deletion, ReportsDeletions
from runner.metrics import CATEGORIES, QUALITY, quality_metrics
from runner.metrics.scoring import QueryScore
from runner.results.samples import DELETIONS, QUERIES, UNREPORTED, Samples
from workloads import Observe, Query


class Recorder:
    """Collects one job's evidence as its events pass (``runner.job.run.RecordingRun``
    calls it). Holds the stream's observations (time, text, truth) to name what a query
    returned and what a deletion removed."""

    def __init__(self, memory: Any) -> None:
        self.memory = memory
        self.reports = isinstance(memory, ReportsDeletions)
        self.obs: list[Observe] = []
        self.q: dict[str, list[Any]] = {name: [] for name in QUERIES.names}
        self.d: dict[str, list[Any]] = {name: [] for name in DELETIONS.names}
        self.d_asked: list[int] = []  # per deletion: the questions asked before it
        self.by_slot: dict[str, list[int]] = {}  # slot -> its questions' indexes
        self.asked_t: list[int] = []
        self.held: dict[str, set[int]] = {}  # slot -> observations thought held (partial)
        if self.reports:
            memory.deletions()  # (the memory starts keeping them)

    def observed(self, obs_id: int, ev: Observe) -> None:
        self.obs.append(ev)
        slot = ev.truth.slot
        if not self.reports and slot is not None:
            self.held.setdefault(slot, set()).add(obs_id)

    def removed(self, t: int, current_obs: dict[str, int]) -> None:
        """The removals the memory reports since the last event (after each event)."""
        if self.reports:
            for d in self.memory.deletions():
                self._deletion(t, d, current_obs)

    def _deletion(self, t: int, d: Deletion, current_obs: dict[str, int]) -> None:
        ev = self.obs[d.obs_id]
        slot = ev.truth.slot
        score = None if d.score is None or math.isnan(d.score) else float(d.score)
        for name, value in (("t", t), ("obs_id", d.obs_id), ("text", ev.text),
                            ("reason", d.reason), ("score", score), ("age", t - ev.t),
                            ("still_current", slot is not None
                             and current_obs.get(slot) == d.obs_id),
                            ("category", ev.truth.kind), ("slot", slot)):
            self.d[name].append(value)
        self.d_asked.append(len(self.asked_t))

    def asked(self, ev: Query, ids: Sequence[int], scores: Sequence[float | None],
              fields: tuple[Any, ...], current_obs: dict[str, int]) -> None:
        """One scored question: what came back and its score's fields
        (``QueryScore.key``)."""
        truth = ev.truth
        if not self.reports:
            self._seen_missing(ev.t, truth.slot, current_obs)
        labels, texts, ages = [], [], []
        for o in ids:
            seen = self.obs[o].truth if 0 <= o < len(self.obs) else None
            labels.append("noise" if seen is None or seen.slot != truth.slot
                          else "current" if seen.value == truth.value else "stale")
            texts.append(self.obs[o].text if 0 <= o < len(self.obs) else "")
            ages.append(ev.t - self.obs[o].t if 0 <= o < len(self.obs) else None)
        _, correct, stale, top1, forgotten, top5, current = fields
        index = len(self.asked_t)
        row = {"t": ev.t, "query_index": index, "category": truth.category,
               "text": ev.text, "slot": truth.slot, "value": truth.value,
               "current_obs": current_obs.get(truth.slot),
               "retrieved": list(ids), "retrieved_text": texts, "retrieved_label": labels,
               "retrieved_score": [None if s is None or math.isnan(s) else float(s)
                                   for s in scores],
               "retrieved_age": ages, "correct": correct, "stale": stale,
               "current": current, "top1_correct": top1, "top5_correct": top5,
               "current_forgotten": forgotten}
        for name, value in row.items():
            self.q[name].append(value)
        self.by_slot.setdefault(truth.slot, []).append(index)
        self.asked_t.append(ev.t)

    def _seen_missing(self, t: int, slot: str, current_obs: dict[str, int]) -> None:
        """A memory that does not report removals: the slot's observations it no longer
        holds, dated when the slot is asked."""
        held = self.held.get(slot)
        if not held:
            return
        gone = sorted(o for o in held if not self.memory.holds(o))
        for o in gone:
            held.discard(o)
            self._deletion(t, Deletion(o, UNREPORTED), current_obs)

    def samples(self) -> Samples:
        """The two tables (the deletions' next questions filled in)."""
        self.d["next_asked_t"] = [self._next_asked(slot, after)
                                  for slot, after in zip(self.d["slot"], self.d_asked,
                                                         strict=True)]
        return Samples(pa.table(self.q, schema=QUERIES), pa.table(self.d, schema=DELETIONS),
                       self.reports)

    def _next_asked(self, slot: str | None, after: int) -> int | None:
        """The time of the first question on ``slot`` asked after ``after`` questions."""
        mine = self.by_slot.get(slot or "", [])
        i = bisect_left(mine, after)
        return self.asked_t[mine[i]] if i < len(mine) else None


def recompute_quality(queries: pa.Table, categories: Sequence[str] = ()) -> dict[str, float]:
    """Every quality metric (``runner.metrics.quality_metrics``), overall and per
    category as a shard's final row holds them, recomputed from a queries table: each
    the mean of its per-query value, summed in the order the job counted them."""
    rows = queries.select(["category", "retrieved", "correct", "stale", "top1_correct",
                           "current_forgotten", "top5_correct", "current"]).to_pylist()
    metrics = [(m.name, m.per_query) for m in quality_metrics() if m.per_query is not None]
    cats = ("all", *CATEGORIES, *categories)
    sums = {c: [0.0] * len(metrics) for c in cats}
    counts = dict.fromkeys(cats, 0)
    for r in rows:
        score = QueryScore(len(r["retrieved"]), r["correct"], r["stale"], r["top1_correct"],
                           r["current_forgotten"], r["top5_correct"], r["current"])
        values = [f(score) for _, f in metrics]
        for cat in ("all", r["category"]):
            if cat in counts:
                counts[cat] += 1
                sums[cat] = [s + v for s, v in zip(sums[cat], values, strict=True)]
    out: dict[str, float] = {}
    for cat in cats:
        suffix = "" if cat == "all" else f"_{cat}"
        for (name, _), total in zip(metrics, sums[cat], strict=True):
            if cat == "all" or name in QUALITY:
                out[name + suffix] = total / counts[cat] if counts[cat] else math.nan
    return out

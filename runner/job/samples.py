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

The files (``write_samples``) are written whole or not at all, like shards, and carry
the job's id and spec in their metadata; ``samples_problem`` checks one.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from runner.adapters.base import Deletion, ReportsDeletions
from runner.metrics import CATEGORIES, QUALITY, quality_metrics
from runner.metrics.scoring import QueryScore
from runner.results.atomic import write_parquet
from runner.results.shard import partition
from runner.results.where import Loc, arrow_source
from runner.spec.jobspec import JobSpec
from workloads import Observe, Query

QUERIES_FILE, DELETIONS_FILE = "queries.parquet", "deletions.parquet"
REPORTED, PARTIAL = "reported", "partial"
UNREPORTED = "unreported"  # the reason of a removal the harness saw, not the memory said
LABELS = ("current", "stale", "noise")

QUERIES = pa.schema([
    ("t", pa.int64()),
    ("query_index", pa.int64()),      # among the job's scored questions, from 0
    ("category", pa.string()),
    ("text", pa.string()),
    ("slot", pa.string()),
    ("value", pa.string()),           # the slot's current value
    ("current_obs", pa.int64()),      # the observation that asserted it last
    ("retrieved", pa.list_(pa.int64())),
    ("retrieved_text", pa.list_(pa.string())),
    ("retrieved_label", pa.list_(pa.string())),
    ("retrieved_score", pa.list_(pa.float64())),  # null: the memory gave none
    ("retrieved_age", pa.list_(pa.int64())),
    ("correct", pa.int64()),
    ("stale", pa.int64()),
    ("current", pa.int64()),
    ("top1_correct", pa.bool_()),
    ("top5_correct", pa.bool_()),     # null: fewer than 5 items were asked for
    ("current_forgotten", pa.bool_()),
])
DELETIONS = pa.schema([
    ("t", pa.int64()),
    ("obs_id", pa.int64()),
    ("text", pa.string()),
    ("reason", pa.string()),
    ("score", pa.float64()),          # null: the memory gave none
    ("age", pa.int64()),
    ("still_current", pa.bool_()),
    ("category", pa.string()),
    ("slot", pa.string()),            # null: the observation asserted no slot
    ("next_asked_t", pa.int64()),     # null: its slot was not asked again
])
SCHEMAS = {QUERIES_FILE: QUERIES, DELETIONS_FILE: DELETIONS}


@dataclass(frozen=True)
class Samples:
    """One job's evidence: its queries and deletions tables, and whether the memory
    reported its deletions (else the table is partial)."""

    queries: pa.Table
    deletions: pa.Table
    reported: bool


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


SAMPLES = "samples"


def samples_paths(out: Loc, spec: JobSpec) -> tuple[Loc, Loc]:
    """Where a sweep keeps a job's evidence: ``OUT/samples/workload=W/policy=P/`` then
    ``JOB.queries.parquet`` and ``JOB.deletions.parquet``."""
    folder = out / SAMPLES / partition(spec.workload, spec.policy)
    return (folder / f"{spec.job_id}.{QUERIES_FILE}",
            folder / f"{spec.job_id}.{DELETIONS_FILE}")


def write_samples(samples: Samples, spec: JobSpec, queries: Loc, deletions: Loc) -> None:
    """The two tables to ``queries`` and ``deletions``, each written whole (a crash leaves
    the old file or none), the job's id and spec in their metadata."""
    meta = {"fbench.job_id": spec.job_id, "fbench.spec": spec.canonical_json(),
            "fbench.deletions": REPORTED if samples.reported else PARTIAL}
    for table, path, name in ((samples.queries, queries, QUERIES_FILE),
                              (samples.deletions, deletions, DELETIONS_FILE)):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(path, table.replace_schema_metadata({**meta, "fbench.table": name}))


def samples_problem(path: Loc, kind: str, job_id: str | None = None) -> str | None:
    """Why the samples file at ``path`` (``kind``: ``QUERIES_FILE`` or
    ``DELETIONS_FILE``) is not one whole table of that kind (of job ``job_id`` when
    given), or None."""
    try:
        schema = pq.read_schema(arrow_source(path))
    except (OSError, pa.ArrowException) as exc:
        return f"it cannot be read ({str(exc).strip().splitlines()[0] if str(exc) else exc})"
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    if meta.get("fbench.table") != kind or not schema.remove_metadata().equals(SCHEMAS[kind]):
        return f"it is not an fbench {kind.removesuffix('.parquet')} table"
    if job_id is not None and meta.get("fbench.job_id") != job_id:
        return f"it holds job {meta.get('fbench.job_id')!r}, not {job_id!r}"
    return None


def spec_of(path: Loc) -> dict[str, Any]:
    """The job spec a samples file records."""
    meta = pq.read_schema(arrow_source(path)).metadata or {}
    return dict(json.loads(meta[b"fbench.spec"]))

"""A job's story from its evidence (``runner.job.samples``): its worst queries, its false
forgets, what it deleted by reason and over time, and, against another memory on the
same stream, the questions one answers and the other does not.

A question *fails* when its top-k holds a stale value of the slot or misses the current
value (``stale > 0 or correct == 0``), and succeeds otherwise: the two ways the quality
metrics count a question against a memory (``contradiction_rate``, ``recall_at_k``).
Everything here is a pure function of the two tables, so the command line, ``--json``
and the report's drill-down tell the same story.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

TIME_BINS = 10  # deletions over time: the horizon cut in this many equal spans


@dataclass(frozen=True)
class Retrieved:
    """One item a question got back, as the story shows it."""

    rank: int
    obs_id: int
    text: str
    label: str
    age: int | None
    score: float | None


@dataclass(frozen=True)
class WorstQuery:
    """A failed question: what was asked, the current value, and what came back up to
    and beside the first current item (all of it when none came back)."""

    t: int
    query_index: int
    category: str
    text: str
    value: str
    stale_above: int  # stale items ranked above the first current one (all, if none)
    forgotten: bool  # the slot's current assertion had been deleted already
    items: list[Retrieved]


def failed(queries: pa.Table) -> np.ndarray:
    """Per question: its top-k holds a stale value or misses the current one."""
    stale = queries.column("stale").to_numpy()
    correct = queries.column("correct").to_numpy()
    return np.asarray((stale > 0) | (correct == 0))


def _stale_above(labels: list[str]) -> tuple[int, int]:
    """Stale items ranked above the first current one, and that one's rank (the list's
    length when no current item came back)."""
    first = labels.index("current") if "current" in labels else len(labels)
    return labels[:first].count("stale"), first


def worst_queries(queries: pa.Table, n: int = 5) -> list[WorstQuery]:
    """The ``n`` worst failed questions: most stale items above the current value first,
    then those that lost the current assertion, then those missing it, earliest first."""
    rows = queries.filter(pa.array(failed(queries))).to_pylist()
    ranked = []
    for r in rows:
        above, first = _stale_above(r["retrieved_label"])
        ranked.append(((-above, not r["current_forgotten"], r["correct"] > 0, r["t"],
                        r["query_index"]), r, above, first))
    ranked.sort(key=lambda x: x[0])
    out = []
    for _, r, above, first in ranked[:n]:
        upto = min(len(r["retrieved"]), first + 2)  # (the first current item and the next)
        items = [Retrieved(i + 1, r["retrieved"][i], r["retrieved_text"][i],
                           r["retrieved_label"][i], r["retrieved_age"][i],
                           r["retrieved_score"][i]) for i in range(upto)]
        out.append(WorstQuery(r["t"], r["query_index"], r["category"], r["text"], r["value"],
                              above, bool(r["current_forgotten"]), items))
    return out


def false_forgets(deletions: pa.Table, n: int = 5) -> list[dict[str, Any]]:
    """The first ``n`` removals of a slot's current assertion (``still_current``), those
    whose slot was asked again first: the fact, when and why it went, and when it was
    next asked."""
    rows = deletions.filter(pc.field("still_current")).to_pylist()
    rows.sort(key=lambda r: (r["next_asked_t"] is None, r["t"], r["obs_id"]))
    keep = ("t", "obs_id", "text", "reason", "score", "age", "category", "next_asked_t")
    return [{k: r[k] for k in keep} for r in rows[:n]]


def by_reason(deletions: pa.Table) -> dict[str, dict[str, int]]:
    """Per reason: how many removals, and how many of a slot's current assertion."""
    out: dict[str, dict[str, int]] = {}
    for reason, current in zip(deletions.column("reason").to_pylist(),
                               deletions.column("still_current").to_pylist(), strict=True):
        counts = out.setdefault(reason, {"removed": 0, "still_current": 0})
        counts["removed"] += 1
        counts["still_current"] += bool(current)
    return dict(sorted(out.items(), key=lambda kv: (-kv[1]["removed"], kv[0])))


def over_time(deletions: pa.Table, horizon: int, bins: int = TIME_BINS
              ) -> list[dict[str, Any]]:
    """Removals per equal span of the horizon: each span's end and its count per
    reason."""
    edges = [round(horizon * (i + 1) / bins) for i in range(bins)]
    spans: list[dict[str, int]] = [{} for _ in edges]
    for t, reason in zip(deletions.column("t").to_pylist(),
                         deletions.column("reason").to_pylist(), strict=True):
        i = min(int(np.searchsorted(edges, t)), bins - 1)
        spans[i][reason] = spans[i].get(reason, 0) + 1
    return [{"until": e, "removed": dict(sorted(s.items()))}
            for e, s in zip(edges, spans, strict=True)]


@dataclass(frozen=True)
class Against:
    """Two memories on the same stream, question by question: the indexes where only
    the first fails, and where only the second does."""

    only_first_fails: list[int]
    only_second_fails: list[int]
    both_fail: int
    neither_fails: int


class DifferentStreams(ValueError):
    """The two jobs were not asked the same questions."""


def against(first: pa.Table, second: pa.Table) -> Against:
    """Question by question, which of two memories on one stream fails; an error when
    they were not asked the same questions in the same order."""
    keys = ("t", "text", "slot", "value")
    if first.num_rows != second.num_rows or not all(
            first.column(k).equals(second.column(k)) for k in keys):
        raise DifferentStreams("the two jobs were not asked the same questions")
    a, b = failed(first), failed(second)
    index = first.column("query_index").to_numpy()
    return Against(index[a & ~b].tolist(), index[b & ~a].tolist(),
                   int((a & b).sum()), int((~a & ~b).sum()))

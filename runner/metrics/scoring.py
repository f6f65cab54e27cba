"""Scoring one query against ground truth the memory never saw.

Each retrieved item is judged by the true slot and value of the observation it
came from (never by extraction): the queried slot with the current value is
correct, the queried slot with another value is stale, anything else neither.

A correct item is also *current* when it was asserted since the slot last took its
value (its observation id is at least ``since``). An older entry whose value merely
came back (A, then B, then A again) is correct but not current: the seeds' recall
credits it, which inflates hoarding (docs/reference.md, "Known flaws of the seeds"),
so ``recall_current_at_k`` credits only the current assertions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class QueryScore:
    retrieved: int
    correct: int
    stale: int
    top1_correct: bool
    current_forgotten: bool
    top5_correct: bool | None = None  # None: fewer than 5 items were asked for
    current: int = 0  # correct items asserted since the slot last took its value

    def key(self) -> tuple[Any, ...]:
        """The fields, in order (``QueryScore(*score.key()) == score``): what a job keeps
        a kind of score's per-query values by."""
        return (self.retrieved, self.correct, self.stale, self.top1_correct,
                self.current_forgotten, self.top5_correct, self.current)

    def values(self) -> dict[str, float]:
        """The per-query values of the quality metrics (their mean is the metric), as
        ``runner.metrics.declare`` declares them."""
        from runner.metrics.declare import quality_metrics  # declare imports this module

        return {m.name: m.per_query(self) for m in quality_metrics()
                if m.per_query is not None}


def score_query(
    hits: Sequence[int],
    slot: str,
    value: str,
    truth_of: Mapping[int, tuple[str, str]],
    current_forgotten: bool,
    k: int = 5,
    since: int = 0,
) -> QueryScore:
    """Judge the retrieved observation ids ``hits`` (best first) for ``slot=value``.

    ``truth_of`` maps an observation id to its true ``(slot, value)``; ids absent
    from it carry no slot. ``k`` is how many items were asked for; ``since`` is the
    first observation id of the slot's current run of its value.
    """
    return QueryScore(*score_key(hits, slot, value, truth_of, current_forgotten, k, since))


def score_key(
    hits: Sequence[int],
    slot: str,
    value: str,
    truth_of: Mapping[int, tuple[str, str]],
    current_forgotten: bool,
    k: int = 5,
    since: int = 0,
) -> tuple[Any, ...]:
    """``score_query(...).key()``, with no score made (a job keeps per-query values by
    it)."""
    correct = stale = current = 0
    top1 = False
    top5 = False
    for i, obs in enumerate(hits):
        truth = truth_of.get(obs)
        if truth is None or truth[0] != slot:
            continue
        if truth[1] == value:
            correct += 1
            current += obs >= since
            top1 = top1 or i == 0
            top5 = top5 or i < 5
        else:
            stale += 1
    return (len(hits), correct, stale, top1, current_forgotten, top5 if k >= 5 else None,
            current)

"""Scoring one query against ground truth the memory never saw.

Each retrieved item is judged by the true slot and value of the observation it
came from (never by extraction): the queried slot with the current value is
correct, the queried slot with another value is stale, anything else neither.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class QueryScore:
    retrieved: int
    correct: int
    stale: int
    top1_correct: bool
    current_forgotten: bool
    top5_correct: bool | None = None  # None: fewer than 5 items were asked for

    def values(self) -> dict[str, float]:
        """The per-query values of the quality metrics (their mean is the metric)."""
        n = self.retrieved
        return {
            "contradiction_rate": float(self.stale > 0),
            "stale_fraction": self.stale / n if n else 0.0,
            "recall_at_k": float(self.correct > 0),
            "recall_at_5": float("nan") if self.top5_correct is None else float(self.top5_correct),
            "accuracy_at_1": float(self.top1_correct),
            "precision": self.correct / n if n else 0.0,
            "false_forget_rate": float(self.current_forgotten),
        }


def score_query(
    hits: Sequence[int],
    slot: str,
    value: str,
    truth_of: Mapping[int, tuple[str, str]],
    current_forgotten: bool,
    k: int = 5,
) -> QueryScore:
    """Judge the retrieved observation ids ``hits`` (best first) for ``slot=value``.

    ``truth_of`` maps an observation id to its true ``(slot, value)``; ids absent
    from it carry no slot. ``k`` is how many items were asked for.
    """
    correct = stale = 0
    top1 = False
    top5 = False
    for i, obs in enumerate(hits):
        truth = truth_of.get(obs)
        if truth is None or truth[0] != slot:
            continue
        if truth[1] == value:
            correct += 1
            top1 = top1 or i == 0
            top5 = top5 or i < 5
        else:
            stale += 1
    return QueryScore(len(hits), correct, stale, top1, current_forgotten,
                      top5 if k >= 5 else None)

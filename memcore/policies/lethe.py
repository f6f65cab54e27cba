"""lethe: the Lethe store's lifecycle, as a policy: scored on capture, decayed by a
half-life, reinforced when recalled, consolidated daily.

- **Capture.** ``score = w_recency·1 + w_source·source + w_explicit·explicit``, where
  ``source`` is the highest source signal among the entry's tags (``SOURCE``; an entry
  with no known tag gets ``unknown_source``) and ``explicit`` is 1 for an
  ``explicit_feedback`` tag. New entries are short-term.
- **Decay.** ``decayed = score × (1 + min(access_bonus·accesses, bonus_cap))
  × 2^(-(now - last_access) / half_life)``.
- **Recall.** Each retrieved entry gains ``reinforce × relevance`` (capped at 1); the
  store refreshes its last access and access count.
- **Consolidation, at each Tick** (a day boundary), all vectorized:
  promote short-term entries with ``decayed >= promote_at``; demote short-term *and*
  long-term entries with ``decayed < demote_below`` to cold (unlike the seed's library,
  whose never-promoted short-term items lived forever); merge near-duplicate live
  entries (cosine >= ``merge_cosine``; the older goes, "merged" into the newer, which
  keeps the higher score and the summed accesses) — one blocked matrix product of the
  candidates with the entries added since the last consolidation, not an O(n²)
  Python loop nor an all-pairs product every day; delete cold entries after
  ``cold_grace``. Every removal carries its decayed score at the moment of removal.
- Ranking is the store's retrieval score (relevance, recency, importance); the policy
  changes what is kept, not the order. A workload without Tick events
  (``contradiction@1``) never consolidates, so there lethe forgets nothing; the current
  turn streams tick every ``turns_per_day`` turns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fbench.clock import duration
from memcore.columns import Columns
from memcore.policies.base import Policy, Removal, register_policy

SOURCE = {
    "explicit_feedback": 0.95, "fact": 0.85, "preference": 0.80, "tool_result": 0.75,
    "definition": 0.70, "instruction": 0.70, "remark": 0.20, "chitchat": 0.15,
    "small_talk": 0.15,
}
SHORT, LONG, COLD = 0, 1, 2
MERGE_BLOCK = 1024


@dataclass(frozen=True)
class LetheParams:
    """Every constant of the lifecycle (the seed's DecayConfig defaults)."""

    half_life: float = duration("7d", "7t")
    access_bonus: float = 0.1
    bonus_cap: float = 1.0
    reinforce: float = 0.2
    promote_at: float = 0.6
    demote_below: float = 0.1
    cold_grace: float = duration("1d", "1t")
    merge_cosine: float = 0.95
    w_recency: float = 0.2
    w_source: float = 0.5
    w_explicit: float = 0.3
    unknown_source: float = 0.5

    def __post_init__(self) -> None:
        for name in ("half_life", "merge_cosine"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("access_bonus", "bonus_cap", "reinforce", "cold_grace", "w_recency",
                     "w_source", "w_explicit"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be non-negative, got {getattr(self, name)}")
        if not 0 <= self.demote_below < self.promote_at:
            raise ValueError(
                f"need 0 <= demote_below < promote_at, got {self.demote_below} and "
                f"{self.promote_at}")
        if not 0 <= self.unknown_source <= 1:
            raise ValueError(f"unknown_source must be in [0, 1], got {self.unknown_source}")


@register_policy("lethe")
class Lethe(Policy):
    access_reranks = True  # a retrieval reinforces score and access: strength reads them
    description = (
        "Lethe lifecycle: source-scored capture, half-life decay with access bonus, "
        "reinforcement on recall, daily promote/demote/merge/prune."
    )
    Params = LetheParams
    params: LetheParams

    def __init__(self, params: LetheParams | None = None) -> None:
        super().__init__(params)
        # entries up to this id were compared for merging (-1: none yet). Not restored
        # by MemoryStore.open: a reopened store compares everything once, which finds
        # no pair an earlier tick had not merged.
        self._checked_eid = -1

    def decayed(self, cols: Columns, now: int) -> np.ndarray:
        p, n = self.params, cols.n
        bonus = 1.0 + np.minimum(p.access_bonus * cols.access_count[:n], p.bonus_cap)
        return cols.score[:n] * bonus * np.exp2(-(now - cols.last_access[:n]) / p.half_life)

    def _source(self, cols: Columns, mask: int) -> float:
        known = [SOURCE[name] for bit, name in enumerate(cols.tag_names)
                 if mask >> bit & 1 and name in SOURCE]
        return max(known) if known else self.params.unknown_source

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        p = self.params
        mask = int(cols.tags[row])
        explicit = cols.tag_mask(["explicit_feedback"], add=False) & mask != 0
        cols.score[row] = min(1.0, p.w_recency + p.w_source * self._source(cols, mask)
                              + p.w_explicit * explicit)
        cols.tier[row] = SHORT
        return None

    def on_access(self, cols: Columns, rows: np.ndarray, now: int,
                  relevance: np.ndarray | None = None) -> Removal | None:
        if relevance is not None:
            cols.score[rows] = np.minimum(
                1.0, cols.score[rows] + self.params.reinforce * np.maximum(relevance, 0.0))
        return None

    def on_tick(self, cols: Columns, now: int) -> list[Removal]:
        p, n = self.params, cols.n
        live = cols.live[:n]
        d = self.decayed(cols, now)
        tier = cols.tier[:n]
        promote = live & (tier == SHORT) & (d >= p.promote_at)
        tier[promote] = LONG
        demote = live & (tier != COLD) & (d < p.demote_below)
        tier[demote] = COLD
        cols.since[:n][demote] = now
        removals = []
        merged = self._merges(cols, live & (tier != COLD), d)
        if merged is not None:
            removals.append(merged)
        cold = live & (tier == COLD) & (now - cols.since[:n] >= p.cold_grace)
        if merged is not None:
            cold[merged.rows] = False  # (merged, not gone cold)
        gone = np.flatnonzero(cold)
        if len(gone):
            removals.append(Removal(gone, "cold", d[gone]))
        return removals

    def _merges(self, cols: Columns, candidates: np.ndarray, d: np.ndarray) -> Removal | None:
        """Each candidate with a near-duplicate *newer* candidate is merged into the newest
        such one. Incremental: only pairs with an entry added since the last check are
        compared (one blocked product, candidates × new candidates). Pairs of older
        entries were compared at an earlier tick and embeddings never change: every older
        member of a duplicate pair was merged away then, and an entry that was no
        candidate then is cold now and for good."""
        rows = np.flatnonzero(candidates)
        checked, self._checked_eid = self._checked_eid, (
            int(cols.eid[cols.n - 1]) if cols.n else self._checked_eid)
        if len(rows) < 2:
            return None
        m = len(rows)
        first_new = int(np.searchsorted(cols.eid[rows], checked, side="right"))
        if first_new == m:
            return None
        # the new entries' dimensions: the others add exact zeros
        new_rows = rows[first_new:].tolist()
        dims = (cols.dims[new_rows[0]] if len(new_rows) == 1  # (sorted and unique)
                else np.unique(np.concatenate([cols.dims[r] for r in new_rows])))
        emb = cols.dense(dims, rows)
        new = emb[:, first_new:]
        into = np.full(m, -1)
        newer = np.arange(first_new, m)[None, :]
        for start in range(0, m, MERGE_BLOCK):
            block = emb[:, start:start + MERGE_BLOCK].T @ new  # (block, new) cosines
            later = newer > np.arange(start, start + len(block))[:, None]
            dup = (block >= self.params.merge_cosine) & later
            has = dup.any(axis=1)
            # the newest duplicate: the last True column of each row
            last = m - 1 - np.argmax(dup[:, ::-1], axis=1)
            into[start:start + len(block)] = np.where(has, last, -1)
        src = np.flatnonzero(into >= 0)
        if len(src) == 0:
            return None
        old, target = rows[src], rows[into[src]]
        np.maximum.at(cols.score, target, cols.score[old])
        np.add.at(cols.access_count, target, cols.access_count[old])
        return Removal(old, "merged", d[old], merged_into=cols.eid[target].copy())

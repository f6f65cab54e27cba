"""ebbinghaus: importance-weighted exponential decay with supersession.

Retention ``R = exp(-age/S)`` with ``S = tau·(1 + gain·importance)``, times
``superseded_strength`` for a superseded entry; entries with ``R`` below
``prune_threshold`` are pruned after each add. Ranking strength is
``superseded_strength`` for a superseded entry, else 1: supersession ranks,
time decay only prunes (so a fresh irrelevant entry never outranks an old
correct one on decay alone).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fbench.clock import duration
from memcore.columns import Columns, RowsKept
from memcore.policies.base import Policy, Removal, make_removal, register_policy
from memcore.policies.due import DueSchedule, early


@dataclass(frozen=True)
class EbbinghausParams:
    tau: float = duration("150t", "18d")
    gain: float = 4.0
    superseded_strength: float = 0.05
    prune_threshold: float = 0.02

    def __post_init__(self) -> None:
        if self.tau <= 0:
            raise ValueError(f"tau must be positive, got {self.tau}")
        if self.gain < 0:
            raise ValueError(f"gain must be non-negative, got {self.gain}")
        if not 0 < self.superseded_strength <= 1:
            raise ValueError(
                f"superseded_strength must be in (0, 1], got {self.superseded_strength}"
            )
        if not 0 <= self.prune_threshold < 1:
            raise ValueError(f"prune_threshold must be in [0, 1), got {self.prune_threshold}")


@register_policy("ebbinghaus")
class Ebbinghaus(Policy):
    access_reranks = False  # strength never reads access state; on_access removes nothing
    description = (
        "Ebbinghaus retention exp(-age/S), S = tau(1 + gain·importance); prunes R < threshold."
    )
    Params = EbbinghausParams
    params: EbbinghausParams

    def __init__(self, params: EbbinghausParams | None = None) -> None:
        super().__init__(params)
        p = self.params
        # ln(factor / threshold) of a fresh and of a superseded entry (inf: never due)
        self._log_fresh = math.inf if p.prune_threshold == 0 else -math.log(p.prune_threshold)
        self._log_superseded = (math.inf if p.prune_threshold == 0
                                else math.log(p.superseded_strength / p.prune_threshold))
        self._due = DueSchedule()
        # the least stability x ln(1 / threshold), at importance 0 (importances are in
        # [0, 1], ``memcore.importance``): the soonest a fresh entry is due
        self._min_fresh = p.tau * self._log_fresh
        # (importance, superseded) -> stability x ln(factor / threshold): an entry's due
        # turn is its turn plus this (``_offset``; importances recur)
        self._offsets: dict[tuple[float, bool], float] = {}
        # ``strength`` of rows [0, n), kept between calls (a row's strength changes only
        # when an add supersedes it, which ``on_add`` hears of)
        self._strength = np.empty(0)
        self._strength_view = self._strength  # (read-only, of the same buffer)
        self._strength_rows = RowsKept()
        self._factors = np.array([1.0, p.superseded_strength])  # by the flag
        # rows handed out by ``newer_rows`` but not scheduled yet: the first's entry id
        # (None: none), their least turn and their number
        self._waiting: int | None = None
        self._waiting_turn, self._waiting_n = math.inf, 0

    def retention(self, cols: Columns, now: int, rows: np.ndarray) -> np.ndarray:
        """``R`` of ``rows`` at ``now``."""
        p = self.params
        stability = p.tau * (1.0 + p.gain * cols.importance[rows])
        r = np.exp(-(now - cols.turn[rows]) / stability)
        return np.where(cols.superseded[rows], r * p.superseded_strength, r)

    def _prune_few(self, cols: Columns, now: int, rows: list[int]) -> Removal | None:
        """``on_add``'s pruning of a few candidate rows, one by one: ``retention``'s
        operations on each row's numbers (the same results: ``tests/test_due.py``)."""
        p = self.params
        gone, scores = [], []
        importance, turn, superseded = cols.importance, cols.turn, cols.superseded
        for row in rows:
            stability = p.tau * (1.0 + p.gain * importance.item(row))
            r = float(np.exp(-(now - turn.item(row)) / stability))
            if superseded.item(row):
                r = r * p.superseded_strength
            if r < p.prune_threshold:
                gone.append(row)
                scores.append(r)
        if not gone:
            return None
        self._due.removed([cols.eid.item(row) for row in gone])
        return make_removal(np.array(gone, dtype=np.int64), "decayed", np.array(scores))

    def _offset(self, importance: float, superseded: bool) -> float:
        """Stability x ln(factor / threshold) of an entry (inf: never due), kept."""
        offset = self._offsets.get((importance, superseded))
        if offset is None:
            p = self.params
            scale = p.tau * (1.0 + p.gain * importance)
            log_ratio = self._log_superseded if superseded else self._log_fresh
            offset = self._offsets[importance, superseded] = (
                math.inf if math.isinf(log_ratio) else scale * log_ratio)
        return offset

    WAITING = 32  # new rows scheduled together once this many wait

    def _schedule_waiting(self, cols: Columns, first_eid: int) -> None:
        """Schedule the waiting rows (from the first's entry id to the last row), each
        at its (importance, superseded) offset, as ``_offset`` and ``DueSchedule.bound``
        compute it, element for element (the same numbers). A row removed meanwhile is
        scheduled too: it is dropped when its turn comes (``DueSchedule.candidates``)."""
        n = cols.n
        first = int(np.searchsorted(cols.eid[:n], first_eid))
        self._waiting, self._waiting_turn, self._waiting_n = None, math.inf, 0
        if math.isinf(self._min_fresh):  # (a threshold of 0: nothing is ever due)
            return
        p = self.params
        scale = p.tau * (1.0 + p.gain * cols.importance[first:n])
        due = cols.turn[first:n] + scale * np.where(cols.superseded[first:n],
                                                    self._log_superseded, self._log_fresh)
        self._due.schedule_dues(cols, range(first, n), early(due))  # (elementwise)

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        """The live entries with ``R`` below the threshold, of those that can be
        (``DueSchedule``): the same rows, in the same order, as a check of every row.
        New rows wait to be scheduled together: a fresh entry is not due before
        ``tau · ln(1/threshold)`` turns, and one superseded is scheduled at once."""
        due = self._due
        superseded_col = cols.superseded
        head = cols.superseded_by_newest
        kept = self._strength_rows
        if 0 <= head < kept.count:  # a kept strength that this add changed
            if kept.holds(cols, head):
                self._strength[head] = self.params.superseded_strength
            else:
                kept.forget()
        new = due.newer_rows(cols)
        if new:  # new rows wait to be scheduled together (``_schedule_waiting``)
            if self._waiting is None:
                self._waiting = cols.eid.item(new.start)
            self._waiting_turn = min(self._waiting_turn, *cols.turn[new.start:new.stop].tolist())
            self._waiting_n += len(new)
        if 0 <= head < cols.n and cols.live.item(head) and superseded_col.item(head):
            # superseded by this add (it was waiting, or is scheduled fresh): due sooner
            due.schedule_rows(cols, range(head, head + 1),
                              [self._offset(cols.importance.item(head), True)])
        if self._waiting is not None and (self._waiting_n >= self.WAITING or now >= early(
                self._waiting_turn + self._min_fresh) - 1.0):
            self._schedule_waiting(cols, self._waiting)
        few = due.candidates(cols, now)
        if not few:
            return None
        if len(few) <= due.SCALAR:
            return self._prune_few(cols, now, few)
        rows = np.array(few, dtype=np.int64)
        r = self.retention(cols, now, rows)
        pruned = np.less(r, self.params.prune_threshold)
        if not pruned.any():
            return None
        gone = rows[pruned]
        due.removed(cols.eid[gone].tolist())
        return Removal(gone, "decayed", r[pruned])

    def quiet_until(self, cols: Columns, now: int) -> float:
        """No entry is due before the earliest scheduled bound, and an entry not
        scheduled yet (added from ``now`` on, or waiting since its turn) not before its
        turn plus ``tau · ln(1/threshold)`` (its stability is at least ``tau``): until
        then an add that supersedes nothing prunes nothing (``tests/test_due.py`` checks
        the removals against an ``on_add`` at every add)."""
        return self._due.quiet_until(min(now, self._waiting_turn) + self._min_fresh)

    def strength(self, cols: Columns, now: int) -> np.ndarray:
        """``superseded_strength`` for a superseded row, else 1 (a read-only view of the
        values kept: only the rows added since the last call are computed)."""
        n, done = cols.n, self._strength_rows.first_new(cols)
        if len(self._strength) < n:
            self._strength, done = np.empty(cols.capacity), 0
            self._strength_view = self._strength.view()
            self._strength_view.flags.writeable = False
        if done < n:  # (a superseded flag, as 0 or 1, picks its strength)
            self._factors.take(cols.superseded[done:n].view(np.uint8),
                               out=self._strength[done:n])
            self._strength_rows.filled(cols)
        return self._strength_view[:n]

"""learned_forget: a small PyTorch MLP decides what to forget.

Features per entry: ``[age/1000, importance, superseded, slotted]``. Two outputs:
a ranking-strength logit and a log-retention. The network was trained
(``python -m runner.train forget``) to imitate a rule: slotted entries follow the
Ebbinghaus curve ``R = exp(-age/S)``, ``S = 150·(1 + 4·importance)``, × 0.05 when
superseded; unslotted entries ``R = exp(-age/80)`` (gone after ~313 turns), and
ranking strength 0.05 for a superseded entry, else 1. Unslotted includes every
fact the extractor missed (hard updates), so this policy forgets correct facts
that no slot-based metric sees: what the false-forget metric must expose.

After each add, every live row (dead rows only await compaction and need no
decision) whose predicted retention is below ``prune_threshold`` is pruned;
``strength`` is the sigmoid of the strength head. Both read the network's answers
from a table memoized over its discrete inputs (``memcore.learned.forget_table``):
one gather per decision instead of a forward pass after every add. The weights ship
in ``memcore/weights/forget.safetensors`` and are loaded once per process; loading
never trains. torch is imported on first use.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from memcore.columns import Columns
from memcore.importance import IMPORTANCES
from memcore.learned.strength_index import StrengthIndex
from memcore.policies.base import Policy, Removal, make_removal, register_policy
from memcore.policies.due import DueSchedule

if TYPE_CHECKING:
    from memcore.learned.forget_net import ForgetNet
    from memcore.learned.forget_table import ForgetTable

WEIGHTS = "forget"


@dataclass(frozen=True)
class LearnedForgetParams:
    """``prune_threshold``: prune when the predicted retention falls below it. The
    network's log-retention is trained down to ln(1e-4), so thresholds far below
    that cannot be told apart."""

    prune_threshold: float = 0.02

    def __post_init__(self) -> None:
        if not 0 < self.prune_threshold < 1:
            raise ValueError(f"prune_threshold must be in (0, 1), got {self.prune_threshold}")


@cache
def shipped_forget_net() -> ForgetNet:
    """The shipped network, loaded once per process (``cache_clear()`` reloads)."""
    from memcore.learned.forget_net import forget_from_weights
    from memcore.learned.weights import load_weights, weights_path

    return forget_from_weights(load_weights(weights_path(WEIGHTS)))


@cache
def shipped_forget_table() -> ForgetTable:
    """The shipped network's memoized answers, shared by every job of the process
    (each value is a pure function of the network, see ``memcore.learned.forget_table``)."""
    from memcore.learned.forget_table import ForgetTable

    return ForgetTable(shipped_forget_net())


@register_policy("learned_forget")
class LearnedForget(Policy):
    access_reranks = False  # strength never reads access state; on_access removes nothing
    description = (
        "MLP over [age, importance, superseded, slotted] imitating Ebbinghaus for slotted "
        "entries and exp(-age/80) for unslotted ones; prunes predicted R < threshold."
    )
    Params = LearnedForgetParams
    params: LearnedForgetParams

    def __init__(self, params: LearnedForgetParams | None = None) -> None:
        super().__init__(params)
        from memcore.learned.forget_table import LOG_RETENTION, STRENGTH

        self._k_strength, self._k_log_retention = STRENGTH, LOG_RETENTION
        self._table = shipped_forget_table()
        from memcore.learned.forget_table import AGE_CAP

        self._age_cap = AGE_CAP
        self._due = DueSchedule()
        # every importance there is (``memcore.importance.IMPORTANCES``) in the table
        # from the start; False once an importance the table cannot hold arrives
        self._scheduled = self._table.covers(np.array(IMPORTANCES, dtype=np.float32))
        # importances known to be in the table
        self._held: set[float] = set(IMPORTANCES) if self._scheduled else set()
        self._first_turn = math.inf  # the earliest turn of any entry scheduled
        self._fresh: tuple[int, int] = (-1, 0)  # (table build, ``_soonest_fresh``)
        # Compared in log space: the network predicts log-retention.
        self._log_threshold = np.float32(math.log(self.params.prune_threshold))
        self._threshold = float(self._log_threshold)  # the same, a Python float
        self._index = StrengthIndex(self._table)  # ``strength``'s, into the table

    def _predict(self, cols: Columns, now: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Live rows and the network's output ``k`` for them (a table gather)."""
        rows = np.flatnonzero(cols.live[: cols.n])
        return rows, self._lookup(cols, now, k, rows)

    def _lookup(self, cols: Columns, now: int, k: int, rows: np.ndarray) -> np.ndarray:
        return self._table.lookup(k, now - cols.turn[rows], cols.importance[rows],
                                  cols.superseded[rows], cols.slot[rows] >= 0)

    def every_row(self, cols: Columns, now: int) -> Removal | None:
        """The live rows whose predicted retention is below the threshold, each read."""
        rows, log_r = self._predict(cols, now, self._k_log_retention)
        gone = np.flatnonzero(log_r < self._log_threshold)
        if len(gone) == 0:
            return None
        return Removal(rows[gone], "learned", np.exp(log_r[gone].astype(np.float64)))

    def _combination(self, cols: Columns, row: int) -> int:
        """``row``'s combination in the table (``ForgetTable.combination``)."""
        return self._table.combination(cols.importance.item(row), cols.superseded.item(row),
                                       cols.slot.item(row) >= 0)

    def _due_turn(self, cols: Columns, row: int, from_age: int) -> int:
        """The first turn, at an age from ``from_age`` on, ``row``'s retention is below
        (its importance held)."""
        return self._due_at(cols.turn.item(row), self._combination(cols, row), from_age)

    def _due_at(self, turn: int, combo: int, from_age: int) -> int:
        """``_due_turn`` of an entry added at ``turn``, of combination ``combo``."""
        return turn + self._table.next_below(self._log_threshold, combo, from_age)

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        """``every_row``'s removals, from the rows that can be due (``DueSchedule``, by
        the table's own answers). A table read is a pure function of the entry, so
        reading only those rows gives the same rows, order and scores; whenever
        ``every_row`` would not read the table (an entry older than its ages, more
        importances than it holds), every row is read."""
        due, table, index = self._due, self._table, self._index
        index.superseded(cols)
        for i in due.newer_rows(cols):
            turn = cols.turn.item(i)
            if turn < self._first_turn:
                self._first_turn = turn
            if self._scheduled:
                imp = cols.importance.item(i)
                if imp not in self._held:
                    self._scheduled = table.covers(np.float32(imp))
                    self._held.add(imp)
                if self._scheduled:
                    combo = self._combination(cols, i)
                    index.note(cols, i, combo)
                    due.schedule(cols, i, self._due_at(turn, combo, now - turn))
        superseded = due.newly_superseded(cols)
        if superseded >= 0 and self._scheduled:
            due.schedule(cols, superseded,
                         self._due_turn(cols, superseded, now - cols.turn.item(superseded)))
        n = cols.n
        # an entry as old as the table's ages can only be there once the oldest turn
        # ever added is (every row has passed through ``newer_rows``)
        old = now - self._first_turn >= self._age_cap
        oldest = int(np.argmax(cols.live[:n])) if old and cols.n_live else -1
        if not self._scheduled or (oldest >= 0 and now - cols.turn[oldest] >= self._age_cap):
            return self.every_row(cols, now)
        few = due.candidates(cols, now)
        if not few:
            return None
        if len(few) <= due.SCALAR:
            ages = [now - cols.turn.item(i) for i in few]
            if max(ages) < self._table.width:
                return self._prune_few(cols, now, few, ages)
        rows = np.array(few, dtype=np.int64)
        log_r = self._table.read(self._k_log_retention, now - cols.turn[rows],
                                 cols.importance[rows], cols.superseded[rows],
                                 cols.slot[rows] >= 0)
        pruned = log_r < self._log_threshold
        for i in rows[~pruned].tolist():  # not yet: from the next age on
            due.later(cols, i, self._due_turn(cols, i, now - cols.turn.item(i) + 1))
        if not pruned.any():
            return None
        gone = rows[pruned]
        due.removed(cols.eid[gone].tolist())
        return Removal(gone, "learned", np.exp(log_r[pruned].astype(np.float64)))

    def quiet_until(self, cols: Columns, now: int) -> float:
        """No entry is due before the earliest scheduled bound, and an entry added from
        ``now`` on (of an importance the table holds: every one there is), scheduled at
        the next ``on_add``, not before ``now`` plus the least age at which the table
        puts a fresh entry below the threshold; nor is any entry as old as the table's
        ages before ``_first_turn`` plus them (``tests/test_due.py`` checks the removals
        against an ``on_add`` at every add)."""
        if not self._scheduled:
            return -math.inf
        return min(self._due.quiet_until(now + self._soonest_fresh()),
                   self._first_turn + self._age_cap)

    def _soonest_fresh(self) -> int:
        """The least age from which an unsuperseded entry of any importance there is,
        slotted or not, can be below the threshold (at least the table's width if none
        within it is), kept per build of the table."""
        table = self._table
        if self._fresh[0] != table.builds:
            self._fresh = (table.builds, min(
                table.next_below(self._log_threshold, table.combination(imp, False, slotted), 0)
                for imp in IMPORTANCES for slotted in (False, True)))
        return self._fresh[1]

    def _prune_few(self, cols: Columns, now: int, rows: list[int], ages: list[int]
                   ) -> Removal | None:
        """``on_add``'s reading of a few candidate rows (ages within the table), one by
        one: the same table values, the same rows kept for later and removed, the same
        scores (``tests/test_due.py``)."""
        due, table, threshold = self._due, self._table, self._threshold
        gone, scores = [], []
        for i, age in zip(rows, ages, strict=True):
            combo = self._combination(cols, i)
            log_r, r = table.retentions(combo)
            if log_r[age] < threshold:
                gone.append(i)
                scores.append(r[age])
            else:  # not yet: from the next age on
                due.later(cols, i, self._due_at(now - age, combo, age + 1))
        if not gone:
            return None
        due.removed([cols.eid.item(i) for i in gone])
        return make_removal(np.array(gone, dtype=np.int64), "learned", np.array(scores))

    def strength(self, cols: Columns, now: int) -> np.ndarray:
        n = cols.n
        index = self._index.of(cols) if self._scheduled and n else None
        if index is not None:
            # one gather over rows [0, n) (``StrengthIndex``), a dead row set to 1, as
            # ``_predict`` leaves it; the same values whenever the live rows' ages are in
            # the table (else ``_predict``, which may grow it): no age is above now less
            # the least turn of every row, so the live rows' ages are read only when that
            # is past them
            width = self._table.width
            if (now - self._index.least_turn >= width and cols.n_live
                    and now - int(cols.turn[:n][cols.live[:n]].min()) >= width):
                index = None
            if index is not None:  # (a dead row's index may be past the table: clipped)
                out = self._table.strengths().take(index + now * self._table.combinations,
                                                   mode="clip")
                if cols.n_live < n:
                    dead = cols.dead_rows()
                    out[~cols.live[:n] if dead is None else dead] = 1.0
                return out
        rows, strength = self._predict(cols, now, self._k_strength)
        out = np.ones(cols.n)
        out[rows] = strength
        return out

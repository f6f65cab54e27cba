"""Where each row's ranking strength is in the learned-forget table (``StrengthIndex``).

``learned_forget``'s strength of an entry is the table's (``memcore.learned.
forget_table``) at its combination (importance, superseded, slotted) and age, so at
``now`` it is at ``(now − turn) · combinations + combination`` in the table's strengths
by age (``ForgetTable.strengths``: rows in turn order read nearby ages, so nearby
memory). The part without ``now`` is kept per row: a row's importance, slot and turn
never change, and the policy hears of each supersession (``superseded``); a question
then reads every row's strength in one gather.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from memcore.columns import Columns, RowsKept

if TYPE_CHECKING:  # (torch is imported with the table, on a policy's first use)
    from memcore.learned.forget_table import ForgetTable


class StrengthIndex:
    """Rows ``[0, n)``'s ``combination − turn · combinations`` in one ``ForgetTable``
    (the strength at ``now`` is at this plus ``now · combinations``)."""

    FEW = 32  # this many new rows or fewer are indexed one by one (Python numbers)

    def __init__(self, table: ForgetTable) -> None:
        self._table = table
        self._index = np.zeros(0, dtype=np.int64)
        self._rows, self._build = RowsKept(), -1
        self.least_turn = math.inf  # the least turn of the rows indexed

    def of(self, cols: Columns) -> np.ndarray | None:
        """The index of rows ``[0, n)`` (computed again when the rows move or the table
        is built again), or None if a row's importance is not in the table."""
        kept, table = self._rows, self._table
        if self._build != table.builds:
            kept.forget()
            self._build = table.builds
        n, done = cols.n, kept.first_new(cols)
        if done == 0:
            self.least_turn = math.inf
        if len(self._index) < n:
            self._index = np.resize(self._index, cols.capacity)
        if done < n <= done + self.FEW:
            index, stride, turn = self._index, table.combinations, cols.turn
            importance, superseded, slot = cols.importance, cols.superseded, cols.slot
            for row in range(done, n):
                combo = table.combination(importance.item(row), superseded.item(row),
                                          slot.item(row) >= 0)
                if combo < 0:
                    return None
                index[row] = combo - turn.item(row) * stride
            self.least_turn = min(self.least_turn, *turn[done:n].tolist())
            kept.filled(cols)
        elif done < n:
            imp = cols.importance[done:n].astype(np.float32)
            combos = table.combos(imp, cols.slot[done:n] >= 0)
            if not (table.importances.take(combos // 4, mode="clip") == imp).all():
                return None
            combos += 2 * cols.superseded[done:n]
            turns = cols.turn[done:n]
            np.subtract(combos, turns * table.combinations, out=self._index[done:n])
            self.least_turn = min(self.least_turn, int(turns.min()))
            kept.filled(cols)
        return self._index[:n]

    def note(self, cols: Columns, row: int, combo: int) -> None:
        """A new row's combination, as its policy reads it at an add (rows in order):
        indexed now if every row before it is, so ``of`` has nothing left to do for it."""
        if (self._rows.first_new(cols) == row and combo >= 0 and row < len(self._index)
                and self._build == self._table.builds):
            turn = cols.turn.item(row)
            self._index[row] = combo - turn * self._table.combinations
            self.least_turn = turn if row == 0 else min(self.least_turn, turn)
            self._rows.filled_to(cols, row + 1)

    def superseded(self, cols: Columns) -> None:
        """The newest add superseded ``cols.superseded_by_newest``: its index moves to
        the superseded combination (for other columns, none is kept)."""
        head, kept = cols.superseded_by_newest, self._rows
        if 0 <= head < kept.count:
            if kept.holds(cols, head):
                self._index[head] += 2
            else:
                kept.forget()

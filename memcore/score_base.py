"""The score of a retrieval less its relevance term (``ScoreBase``): ``w_rec·
recency_base ** (now - turn) + w_imp·importance`` of rows ``[0, n)``, the same for every
question of one time, kept from one to the next (``memcore.retrieval`` adds the
relevance term). The recency of an age comes from a table of weighted recencies by age
(read by turn, the table backwards, while every turn is a time of the table), the
weighted importances and the turns' range are kept per row (``RowsKept``): the same
numbers, element for element, as ``w_rec·exp(age·ln base) + w_imp·importance``.
"""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns
from memcore.rows_kept import RowsKept


class ScoreBase:
    """``w_rec·recency + w_imp·importance`` of rows ``[0, n)`` at a time (``at``)."""

    REC_TABLE_MAX = 1 << 22  # recencies of ages below this come from a table

    def __init__(self, w_rec: float, w_imp: float, recency_base: float) -> None:
        self._w_rec, self._w_imp = w_rec, w_imp
        self._log_base = float(np.log(recency_base))
        self._rec = np.empty(0)  # the values at ``_rec_now``, rows [0, ``_rec_n``)
        self._rec_now: int | None = None
        self._rec_n = 0
        self._rec_table = np.empty(0)  # w_rec·recency_base ** age for ages 0, 1, ...
        self._rec_rev = np.empty(0)  # the same, backwards
        # ``_kept``'s: the weighted importances, the rows they and the turns' range cover,
        # and the least and greatest turn
        self._imp, self._rows, self._turns = np.empty(0), RowsKept(), (2**63 - 1, -(2**63))

    def rows_moved(self) -> None:
        """The columns were compacted: the values kept at this time no longer line up."""
        self._rec_now = None

    def at(self, cols: Columns, now: int) -> np.ndarray:
        """``w_rec·recency_base ** (now - turn) + w_imp·importance`` of rows ``[0, n)``,
        the score less its relevance term, kept for the rows already computed at this
        ``now`` (several queries of one day, adds between them)."""
        n = cols.n
        if len(self._rec) < cols.capacity:
            self._rec = np.empty(cols.capacity)
            self._rec_now = None
        if self._rec_now != now:
            self._rec_now, self._rec_n = now, 0
        done = self._rec_n
        if done < n:
            out = self._rec[done:n]
            # the recency of an age is the same number wherever it is computed: from a
            # table of ages 0, 1, 2, ..., weighted
            lo, hi = self._kept(cols)
            rev = self._rec_rev  # (the table backwards: entry now - turn is age turn)
            if lo >= 0 and hi <= now < len(rev):  # every turn a time of the table's
                np.take(rev[len(rev) - 1 - now:], cols.turn[done:n], out=out, mode="clip")
            else:  # (as unsigned, a negative age is out of range)
                age = now - cols.turn[done:n]
                top = now - lo if hi <= now else int(age.view(np.uint64).max())
                table = self._rec_table
                if len(table) <= top < self.REC_TABLE_MAX:
                    size = max(1024, 1 << top.bit_length())
                    table = self._rec_table = np.multiply(
                        np.exp(np.arange(size) * self._log_base), self._w_rec)
                    self._rec_rev = np.ascontiguousarray(table[::-1])
                if top < len(table):  # (in range: "clip" only spares a buffered copy)
                    np.take(table, age, out=out, mode="clip")
                else:
                    np.multiply(np.exp(age * self._log_base), self._w_rec, out=out)
            out += self._imp[done:n]
            self._rec_n = n
        return self._rec[:n]

    def _kept(self, cols: Columns) -> tuple[int, int]:
        """The least and the greatest turn of rows ``[0, n)``, their ``w_imp·importance``
        kept in ``_imp``: only an add writes a row's importance and turn, so only the
        rows added since the last call are read (all of them again after a compaction,
        or for other columns)."""
        n, done = cols.n, self._rows.first_new(cols)
        if len(self._imp) < n:
            self._imp, done = np.empty(cols.capacity), 0
        lo, hi = self._turns if done else (2**63 - 1, -(2**63))
        if done < n:
            np.multiply(cols.importance[done:n], self._w_imp, out=self._imp[done:n])
            new = cols.turn[done:n].tolist()
            lo, hi = self._turns = min(lo, *new), max(hi, *new)
            self._rows.filled(cols)
        return lo, hi

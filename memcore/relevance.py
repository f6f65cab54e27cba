"""Relevance kept per query text: a question asked again sums only the rows added since.

Agents ask the same questions again (a lifecycle stream asks about 130 distinct texts
1,450 times, ``lifecycle.durable_heavy`` 113 texts 8,942 times). ``KeptRelevance``
holds, for the texts asked most recently, their cosine with the rows so far, and a log
of the entries (row, dimension, value) of the rows added since the oldest of them
(``Columns.take_entries``). A text asked again adds the log's entries past its own
last row: the texts of one batch together, in one ``np.bincount`` over (text, row).

Every kept number is the number a fresh ``Columns.dot`` gives: a row's entries arrive
together when it is added, in dimension order, and ``np.bincount`` adds them in that
order, from 0, with no fused multiply-add (the embedder's values are non-negative, so
even a zero's sign agrees). ``tests/test_relevance.py`` checks this against fresh sums
through growth, compaction, eviction and a lost log.

For sparse queries only, of the stores whose relevance is not looked up by text
(``memcore.relevance_table``: a sparse embedder other than hashing, or a store with more
distinct texts than that table keeps); a dense embedder's query is one BLAS product.
The kept values fit a budget of floats; a store too large to keep ``MIN_TEXTS``
texts keeps none (each query sums afresh).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from memcore.columns import Columns


@dataclass
class _Text:
    """One text's query vector and its relevance to rows ``[0, done)`` (0 beyond)."""

    q: np.ndarray
    values: np.ndarray  # capacity-long
    done: int


class KeptRelevance:
    """The relevance of recently asked texts to the rows of one store's columns."""

    BUDGET_FLOATS = 1 << 22  # 32 MiB of kept relevances
    MIN_TEXTS = 64
    LOG_MAX = 1 << 18  # entries in the log before its oldest rows are let go

    def __init__(self) -> None:
        self._texts: OrderedDict[str, _Text] = OrderedDict()  # least recently asked first
        self._floats = 0
        self._log_row = 0  # the log holds the entries of rows [_log_row, _end)
        self._end = 0
        self._rows = self._dims = np.zeros(0, dtype=np.int64)
        self._vals = np.zeros(0)

    def clear(self) -> None:
        """Forget every kept text and the log (the rows moved)."""
        self._texts.clear()
        self._floats = 0
        self._rows = self._dims = np.zeros(0, dtype=np.int64)
        self._vals = np.zeros(0)

    def get_many(self, cols: Columns, texts: list[str], queries: list[np.ndarray]
                 ) -> np.ndarray | None:
        """``cols.dot(nz, q[nz])`` for each text and its query vector, as one ``(m, n)``
        matrix, or ``None`` if the store is too large to keep texts."""
        self._take(cols)
        if cols.capacity > self.BUDGET_FLOATS // self.MIN_TEXTS:
            self.clear()
            return None
        n = cols.n
        asked: list[_Text] = []
        behind: list[_Text] = []  # texts to catch up
        seen: set[int] = set()
        for text, q in zip(texts, queries, strict=True):
            kept = self._texts.pop(text, None)
            if kept is None or kept.done < self._log_row:  # new, or past the log: afresh
                if kept is not None:
                    self._floats -= len(kept.values)
                nz = np.flatnonzero(q)
                kept = _Text(q, np.zeros(cols.capacity), n)
                kept.values[:n] = cols.dot(nz, q[nz])
                self._floats += len(kept.values)
            elif kept.done < n and id(kept) not in seen:
                seen.add(id(kept))
                behind.append(kept)
            self._texts[text] = kept  # the most recently asked last
            asked.append(kept)
        if behind:
            self._catch_up_many(behind, cols)
        out = np.empty((len(texts), n))
        for i, kept in enumerate(asked):
            out[i] = kept.values[:n]
        while self._floats > self.BUDGET_FLOATS:
            self._floats -= len(self._texts.popitem(last=False)[1].values)
        self._trim()
        return out

    CATCH_UP_FLOATS = 1 << 20  # products summed at once (else text by text)

    def _catch_up_many(self, group: list[_Text], cols: Columns) -> None:
        """``_catch_up`` of several texts in one ``np.bincount`` over (text, row): each
        text's rows past its own ``done`` get the same terms, in the same order (log
        order: row, then dimension), from 0, as ``_catch_up`` gives them."""
        n, m = cols.n, len(group)
        done = np.array([kept.done for kept in group])
        first = int(done.min())
        width = n - first
        at = np.searchsorted(self._rows, done)  # each text's first log entry
        counts = len(self._rows) - at
        total = int(counts.sum())
        if m == 1 or max(total, m * width) > self.CATCH_UP_FLOATS:
            for kept in group:
                self._catch_up(kept, cols)
            return
        # the (text, entry) pairs, text by text, each text's entries from its own first
        text = np.repeat(np.arange(m), counts)
        entry = np.arange(total) + np.repeat(at - (np.cumsum(counts) - counts), counts)
        terms = np.stack([kept.q for kept in group])[text, self._dims[entry]]
        terms *= self._vals[entry]
        where = text * width + (self._rows[entry] - first)
        sums = np.bincount(where, terms, minlength=m * width)
        for kept, new in zip(group, sums.reshape(m, width), strict=True):
            self._grow(kept, cols)
            kept.values[kept.done:n] = new[kept.done - first:]  # (rows past done held 0)
            kept.done = n

    def _grow(self, kept: _Text, cols: Columns) -> None:
        if len(kept.values) < cols.capacity:  # the columns grew
            self._floats += cols.capacity - len(kept.values)
            kept.values = np.concatenate([kept.values,
                                          np.zeros(cols.capacity - len(kept.values))])

    def _catch_up(self, kept: _Text, cols: Columns) -> None:
        """Add the log's entries of the rows ``kept`` has not summed yet."""
        self._grow(kept, cols)
        if kept.done < cols.n:
            at = int(np.searchsorted(self._rows, kept.done))
            kept.values[kept.done:cols.n] = np.bincount(  # (rows past done held 0)
                self._rows[at:] - kept.done, kept.q[self._dims[at:]] * self._vals[at:],
                minlength=cols.n - kept.done)
            kept.done = cols.n

    def _take(self, cols: Columns) -> None:
        """Append the entries added since the last call to the log."""
        taken = cols.take_entries()
        if taken is None or taken[0] != self._end:
            self.clear()  # (the log starts, was lost, or the rows moved)
            self._log_row = cols.n
        elif len(taken[1]):
            _, rows, dims, vals = taken
            self._rows = np.concatenate([self._rows, rows])
            self._dims = np.concatenate([self._dims, dims])
            self._vals = np.concatenate([self._vals, vals])
        self._end = cols.n

    def _trim(self) -> None:
        """Let go of the entries no kept text needs, and of the oldest past ``LOG_MAX``
        (a text behind them sums afresh when asked)."""
        # texts are kept in the order they were last asked, each then summed to the rows
        # of that time (rows only grow between two compactions, which drop every text):
        # the least recently asked needs the oldest rows
        needed = next(iter(self._texts.values())).done if self._texts else self._log_row
        if len(self._rows) > self.LOG_MAX:
            needed = max(needed, int(self._rows[len(self._rows) - self.LOG_MAX]))
        if needed > self._log_row:
            at = int(np.searchsorted(self._rows, needed))
            self._rows, self._dims, self._vals = (
                self._rows[at:], self._dims[at:], self._vals[at:])
            self._log_row = needed

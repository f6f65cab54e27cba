"""Relevance kept per query text: a question asked again costs a lookup, not a sum.

Agents ask the same questions again (a lifecycle stream asks about 130 distinct texts
1,450 times, ``lifecycle.durable_heavy`` 113 texts 8,942 times). ``KeptRelevance``
holds, for the texts asked most recently, their cosine with every row, and brings them
up to date with the rows added since (``Columns.take_entries``) in one ``np.add.at``.

Every kept number is the number a fresh ``Columns.dot`` gives: a row's terms arrive
together when it is added, in dimension order, and ``np.add.at`` adds them in that
order, from 0, with no fused multiply-add (the embedder's values are non-negative, so
even a zero's sign agrees). ``tests/test_relevance.py`` checks this against fresh sums
through growth, compaction and eviction.

For sparse queries only (the hashing embedder's); a dense embedder's query is one BLAS
product, as before. The kept rows fit a budget of floats; a store too large to keep
``MIN_TEXTS`` texts keeps none (each query sums afresh).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from memcore.columns import Columns


class KeptRelevance:
    """The relevance of recently asked texts to rows ``[0, n)`` of one store's columns."""

    BUDGET_FLOATS = 1 << 22  # 32 MiB of kept relevances
    MIN_TEXTS = 64
    MAX_TEXTS = 1024

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._slot: OrderedDict[str, int] = OrderedDict()  # least recently asked first
        self._q = np.zeros((0, dim))    # each slot's query vector
        self._rel = np.zeros((0, 0))    # each slot's relevance to the rows, 0 past n
        self._done = 0                  # rows whose entries the kept sums include

    def clear(self) -> None:
        """Forget every kept text (the rows moved)."""
        self._slot.clear()

    def get_many(self, cols: Columns, texts: list[str], queries: list[np.ndarray]
                 ) -> np.ndarray | None:
        """``cols.dot(nz, q[nz])`` for each text and its query vector, as one ``(m, n)``
        matrix, or ``None`` if the store is too large to keep texts."""
        most = min(self.MAX_TEXTS, self.BUDGET_FLOATS // cols.capacity)
        if most < max(self.MIN_TEXTS, len(texts)):
            self.clear()
            self._catch_up(cols)
            return None
        slots, width = self._rel.shape
        wanted = len(self._slot) + sum(t not in self._slot for t in set(texts))
        if slots < wanted and slots < most:  # too few slots: twice as many
            slots = min(most, max(self.MIN_TEXTS // 4, 2 * slots, wanted))
        if (slots, width) != (min(slots, most), cols.capacity) or slots != len(self._rel):
            # (more slots, the columns grew, or the budget shrank as they grew)
            self._resize(min(slots, most), cols.capacity)
        self._catch_up(cols)
        rows: list[int] = []
        for text, q in zip(texts, queries, strict=True):
            slot = self._slot.get(text)
            if slot is None:
                slot = self._free_slot(len(self._rel), keep=rows)
                nz = np.flatnonzero(q)
                self._q[slot] = q
                self._rel[slot] = 0.0
                self._rel[slot, :cols.n] = cols.dot(nz, q[nz])
                self._slot[text] = slot
            else:
                self._slot.move_to_end(text)
            rows.append(slot)
        return self._rel[rows, :cols.n]

    def _free_slot(self, texts: int, keep: list[int]) -> int:
        """An unused slot, else the least recently asked one not in ``keep``."""
        if len(self._slot) < texts:
            used = set(self._slot.values())
            return next(i for i in range(texts) if i not in used)
        victim = next(t for t, slot in self._slot.items() if slot not in keep)
        return self._slot.pop(victim)

    def _resize(self, texts: int, capacity: int) -> None:
        """New matrices of ``texts`` slots × ``capacity`` rows, keeping the most recently
        asked texts that fit."""
        keep = list(self._slot.items())[-texts:]
        q, rel = np.zeros((texts, self.dim)), np.zeros((texts, capacity))
        width = min(capacity, self._rel.shape[1])
        for new, (_, old) in enumerate(keep):
            q[new] = self._q[old]
            rel[new, :width] = self._rel[old, :width]
        self._q, self._rel = q, rel
        self._slot = OrderedDict((text, new) for new, (text, _) in enumerate(keep))

    def _catch_up(self, cols: Columns) -> None:
        """Add the entries of the rows added since the last call to every kept sum."""
        taken = cols.take_entries()
        if not self._slot or taken is None or taken[0] != self._done:
            self.clear()  # (nothing kept, the log was lost, or rows moved)
        elif len(taken[1]):
            _, rows, dims, vals = taken
            slots = np.fromiter(self._slot.values(), dtype=np.int64, count=len(self._slot))
            terms = self._q[slots][:, dims] * vals  # (slots, entries): each row's terms in order
            flat = (slots[:, None] * self._rel.shape[1] + rows).ravel()
            np.add.at(self._rel.reshape(-1), flat, terms.ravel())  # (a view: in place)
        self._done = cols.n

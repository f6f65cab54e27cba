"""The shared base of the capacity-bounded policies (fifo, lru, lfu, lifo).

After an add lifts the live count above ``capacity``, exactly the excess (normally
one entry) is removed, reason ``"capacity"``; a subclass only says which entries
rank first for eviction (``victims``) and the score logged for each, and may find them
without ranking when the rows' order gives them (``in_order``: fifo and lifo, while
``TurnOrder`` holds). Nothing happens on access or tick: only an add can grow the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import Policy, Removal


@dataclass(frozen=True)
class CapacityParams:
    """``capacity``: the most live entries the policy keeps (an integer >= 1).

    ``capacity_fraction`` > 0 asks the harness to set ``capacity`` to that fraction of
    the workload's distinct facts (rounded, at least 1) before building the policy: the
    memory itself never sees the workload, so it is resolved outside memcore.
    """

    capacity: int = 100
    capacity_fraction: float = 0.0

    def __post_init__(self) -> None:
        if not self.capacity_fraction >= 0:
            raise ValueError(
                f"capacity_fraction must be >= 0 (0: use capacity), got {self.capacity_fraction}")
        if isinstance(self.capacity, bool) or not isinstance(self.capacity, int):
            raise ValueError(f"capacity must be an integer, got {self.capacity!r}")
        if self.capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {self.capacity}")


def lowest(keys: Sequence[np.ndarray], k: int) -> np.ndarray:
    """Positions of the ``k`` lexicographically smallest tuples of ``keys`` (primary
    key first; the last key must be unique, e.g. the entry id, so the order is total).

    A partition on the primary key keeps only the candidates that can rank in the
    first ``k``, and only those are sorted: O(n) plus a small sort.
    """
    primary = keys[0]
    m = len(primary)
    if k >= m:
        cand = np.arange(m)
    else:
        kth = np.partition(primary, k - 1)[k - 1]
        cand = np.flatnonzero(primary <= kth)
    order = np.lexsort(tuple(key[cand] for key in reversed(keys)))
    return cand[order[:k]]


class TurnOrder:
    """Whether the rows' turns never decrease along their entry ids (rows keep entry-id
    order): then the oldest inserts by (turn, entry id) are the first live rows and the
    newest the last, with no ranking. Each row is checked once, when first seen."""

    def __init__(self) -> None:
        self._last_eid = -1
        self._last_turn = -1 << 62
        self.holds = True

    def check(self, cols: Columns) -> bool:
        n = cols.n
        if not self.holds or n == 0 or cols.eid[n - 1] <= self._last_eid:
            return self.holds
        start = (n - 1 if n == 1 or cols.eid[n - 2] <= self._last_eid  # (the one just added)
                 else int(np.searchsorted(cols.eid[:n], self._last_eid, side="right")))
        turns = cols.turn[start:n]
        self.holds = bool(turns[0] >= self._last_turn) and (
            len(turns) == 1 or bool(np.all(turns[1:] >= turns[:-1])))
        self._last_eid, self._last_turn = int(cols.eid[n - 1]), int(turns[-1])
        return self.holds


class CapacityPolicy(Policy):
    """Keeps at most ``capacity`` live entries; a subclass ranks the eviction order."""

    # access counts and times order the evictions (at add), never the ranking
    access_reranks = False

    Params = CapacityParams
    params: CapacityParams

    def __init__(self, params: CapacityParams | None = None) -> None:
        super().__init__(params)
        self.capacity = self.params.capacity

    def victims(self, cols: Columns, live: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` rows among the live rows ``live`` to evict, and their scores."""
        raise NotImplementedError

    def in_order(self, cols: Columns, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """``victims`` found without ranking the live rows, when the order of the rows
        gives them (``TurnOrder``); None: rank them."""
        return None

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        excess = cols.n_live - self.params.capacity
        if excess <= 0:
            return None
        fast = self.in_order(cols, excess)
        if fast is not None:
            return Removal(fast[0], "capacity", fast[1].astype(np.float64))
        live = np.flatnonzero(cols.live[: cols.n])
        rows, scores = self.victims(cols, live, excess)
        return Removal(rows, "capacity", scores.astype(np.float64))

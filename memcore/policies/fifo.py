"""fifo: a capacity-bounded store that evicts its oldest insert (lowest turn, then eid)."""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import register_policy
from memcore.policies.capacity import CapacityParams, CapacityPolicy, TurnOrder, lowest


@register_policy("fifo")
class Fifo(CapacityPolicy):
    description = "Keeps `capacity` entries; evicts the oldest insert (score = its turn)."

    def __init__(self, params: CapacityParams | None = None) -> None:
        super().__init__(params)
        self._order = TurnOrder()

    def in_order(self, cols: Columns, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The first ``k`` live rows, when turns never decrease along the rows."""
        if not self._order.check(cols):
            return None
        rows = np.flatnonzero(cols.live[: cols.n])[:k]
        return rows, cols.turn[rows]

    def victims(self, cols: Columns, live: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        turn = cols.turn[live]
        pos = lowest((turn, cols.eid[live]), k)
        return live[pos], turn[pos]

"""lifo: a capacity-bounded store that evicts its newest insert.

Once full, the entry just added is the one removed (highest turn, then highest
eid): a full LIFO store keeps its oldest entries and refuses new ones.
"""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import register_policy
from memcore.policies.capacity import CapacityParams, CapacityPolicy, TurnOrder, lowest


@register_policy("lifo")
class Lifo(CapacityPolicy):
    description = (
        "Keeps `capacity` entries; once full, refuses new ones (evicts the newest insert)."
    )

    def __init__(self, params: CapacityParams | None = None) -> None:
        super().__init__(params)
        self._order = TurnOrder()

    def in_order(self, cols: Columns, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The last ``k`` live rows, newest first, when turns never decrease along the
        rows."""
        if not self._order.check(cols):
            return None
        rows = np.flatnonzero(cols.live[: cols.n])[-k:][::-1]
        return rows, cols.turn[rows]

    def victims(self, cols: Columns, live: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        turn = cols.turn[live]
        pos = lowest((-turn, -cols.eid[live]), k)
        return live[pos], turn[pos]

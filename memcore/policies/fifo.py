"""fifo: a capacity-bounded store that evicts its oldest insert (lowest turn, then eid)."""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import register_policy
from memcore.policies.capacity import CapacityPolicy, lowest


@register_policy("fifo")
class Fifo(CapacityPolicy):
    description = "Keeps `capacity` entries; evicts the oldest insert (score = its turn)."

    def victims(self, cols: Columns, live: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        turn = cols.turn[live]
        pos = lowest((turn, cols.eid[live]), k)
        return live[pos], turn[pos]

"""lfu: a capacity-bounded store that evicts the least frequently retrieved entry.

Ranked by ``access_count`` (retrievals that returned the entry), ties by the least
recent ``last_access``, then the lowest entry id.
"""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import register_policy
from memcore.policies.capacity import CapacityPolicy, lowest


@register_policy("lfu")
class Lfu(CapacityPolicy):
    description = (
        "Keeps `capacity` entries; evicts the least often retrieved (score = access count)."
    )

    def victims(self, cols: Columns, live: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        count = cols.access_count[live]
        pos = lowest((count, cols.last_access[live], cols.eid[live]), k)
        return live[pos], count[pos]

"""lru: a capacity-bounded store that evicts the least recently accessed entry.

An entry's ``last_access`` is its insert time until a retrieval returns it (the
store refreshes it); ties go to the lowest entry id.
"""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import register_policy
from memcore.policies.capacity import CapacityPolicy, lowest


@register_policy("lru")
class Lru(CapacityPolicy):
    description = (
        "Keeps `capacity` entries; evicts the least recently retrieved (score = last access)."
    )

    def victims(self, cols: Columns, live: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        last = cols.last_access[live]
        pos = lowest((last, cols.eid[live]), k)
        return live[pos], last[pos]

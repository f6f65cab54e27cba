"""lifo: a capacity-bounded store that evicts its newest insert.

Once full, the entry just added is the one removed (highest turn, then highest
eid): a full LIFO store keeps its oldest entries and refuses new ones.
"""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import register_policy
from memcore.policies.capacity import CapacityPolicy, lowest


@register_policy("lifo")
class Lifo(CapacityPolicy):
    description = (
        "Keeps `capacity` entries; once full, refuses new ones (evicts the newest insert)."
    )

    def victims(self, cols: Columns, live: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        turn = cols.turn[live]
        pos = lowest((-turn, -cols.eid[live]), k)
        return live[pos], turn[pos]

"""last_write_wins: a newer fact for the same extracted slot removes the older one."""

from __future__ import annotations

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import Policy, Removal, register_policy


@register_policy("last_write_wins")
class LastWriteWins(Policy):
    access_reranks = False  # strength never reads access state; on_access removes nothing
    description = (
        "Per-slot dedup (mem0-style): a superseded entry is removed at once; "
        "unslotted entries are kept forever."
    )

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        n = cols.n
        gone = np.flatnonzero(cols.live[:n] & cols.superseded[:n])
        if len(gone) == 0:
            return None
        return Removal(gone, "superseded", np.zeros(len(gone)))

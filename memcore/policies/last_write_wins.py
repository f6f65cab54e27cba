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

    def __init__(self, params: object = None) -> None:
        super().__init__(params)
        self._last_eid = -1  # the newest entry a call has seen

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        """The live superseded entries. Only an add supersedes (the older entry of its
        slot) and every call removes all of them, so when the only entry new since the
        last call is this one, they are this slot's: the rest need no check."""
        n = cols.n
        only_this = (self._last_eid >= 0 and row == n - 1
                     and (row == 0 or cols.eid[row - 1] <= self._last_eid))
        self._last_eid = int(cols.eid[n - 1])
        if not only_this:
            gone = np.flatnonzero(cols.live[:n] & cols.superseded[:n])
        elif cols.slot[row] < 0:
            return None
        else:
            gone = np.flatnonzero((cols.slot[:n] == cols.slot[row]) & cols.live[:n]
                                  & cols.superseded[:n])
        if len(gone) == 0:
            return None
        return Removal(gone, "superseded", np.zeros(len(gone)))

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
        slot, named in ``cols.superseded_by_newest``) and every call removes all of
        them, so when the only entry new since the last call is this one, the entry it
        superseded is the only one there can be: the rest need no check."""
        n = cols.n
        only_this = (self._last_eid >= 0 and row == n - 1
                     and (row == 0 or cols.eid.item(row - 1) <= self._last_eid))
        self._last_eid = cols.eid.item(n - 1)
        if only_this:
            head = cols.superseded_by_newest
            if head < 0 or not cols.live[head]:  # (a wrapper's view may hide it)
                return None
            return Removal(np.array([head], dtype=np.int64), "superseded", np.zeros(1))
        gone = np.flatnonzero(cols.live[:n] & cols.superseded[:n])
        if len(gone) == 0:
            return None
        return Removal(gone, "superseded", np.zeros(len(gone)))

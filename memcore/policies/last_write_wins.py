"""last_write_wins: a newer fact for the same extracted slot removes the older one."""

from __future__ import annotations

import math

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import Policy, Removal, make_removal, register_policy


@register_policy("last_write_wins")
class LastWriteWins(Policy):
    access_reranks = False  # strength never reads access state; on_access removes nothing
    description = (
        "Per-slot dedup (mem0-style): a superseded entry is removed at once; "
        "unslotted entries are kept forever."
    )

    def __init__(self, params: object = None) -> None:
        super().__init__(params)
        self._checked = False  # a call has removed every live superseded entry

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        """The live superseded entries. Only an add supersedes (the older entry of its
        slot, named in ``cols.superseded_by_newest``), every add that does calls this
        (the others may skip it: ``quiet_until``) and every call removes all of them, so
        after a first call the one there can be is the one this add superseded."""
        if self._checked:
            head = cols.superseded_by_newest
            if head < 0 or not cols.live[head]:  # (a wrapper's view may hide it)
                return None
            return make_removal(np.array([head], dtype=np.int64), "superseded", np.zeros(1))
        self._checked = True
        n = cols.n
        gone = np.flatnonzero(cols.live[:n] & cols.superseded[:n])
        if len(gone) == 0:
            return None
        return Removal(gone, "superseded", np.zeros(len(gone)))

    def quiet_until(self, cols: Columns, now: int) -> float:
        """An add that supersedes nothing removes nothing: never a call for it."""
        return math.inf

"""ttl: an entry lives ``max_age`` time units (turns or days, the workload's unit).

On every add and every tick, live entries with ``now - turn > max_age`` are removed
(reason ``"expired"``, score = age). Between two hook calls an entry may outlive
its age a little: queries do not prune.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fbench.clock import duration
from memcore.columns import Columns
from memcore.policies.base import Policy, Removal, register_policy


@dataclass(frozen=True)
class TtlParams:
    """``max_age``: the age (in the workload's time unit) past which an entry expires."""

    max_age: float = duration("7t", "7d")

    def __post_init__(self) -> None:
        if not self.max_age > 0:
            raise ValueError(f"max_age must be positive, got {self.max_age}")


def expired(cols: Columns, now: int, max_age: float) -> Removal | None:
    """Live entries older than ``max_age`` at ``now``, reason ``"expired"``."""
    n = cols.n
    age = now - cols.turn[:n]
    gone = np.flatnonzero(cols.live[:n] & (age > max_age))
    if len(gone) == 0:
        return None
    return Removal(gone, "expired", age[gone].astype(np.float64))


@register_policy("ttl")
class Ttl(Policy):
    access_reranks = False  # strength never reads access state; on_access removes nothing
    description = "Removes entries older than max_age (on add and at each tick)."
    Params = TtlParams
    params: TtlParams

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        return expired(cols, now, self.params.max_age)

    def on_tick(self, cols: Columns, now: int) -> Removal | None:
        return expired(cols, now, self.params.max_age)

"""ebbinghaus: importance-weighted exponential decay with supersession.

Retention ``R = exp(-age/S)`` with ``S = tau·(1 + gain·importance)``, times
``superseded_strength`` for a superseded entry; entries with ``R`` below
``prune_threshold`` are pruned after each add. Ranking strength is
``superseded_strength`` for a superseded entry, else 1: supersession ranks,
time decay only prunes (so a fresh irrelevant entry never outranks an old
correct one on decay alone).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import Policy, Removal, register_policy


@dataclass(frozen=True)
class EbbinghausParams:
    tau: float = 150.0
    gain: float = 4.0
    superseded_strength: float = 0.05
    prune_threshold: float = 0.02

    def __post_init__(self) -> None:
        if self.tau <= 0:
            raise ValueError(f"tau must be positive, got {self.tau}")
        if self.gain < 0:
            raise ValueError(f"gain must be non-negative, got {self.gain}")
        if not 0 < self.superseded_strength <= 1:
            raise ValueError(
                f"superseded_strength must be in (0, 1], got {self.superseded_strength}"
            )
        if not 0 <= self.prune_threshold < 1:
            raise ValueError(f"prune_threshold must be in [0, 1), got {self.prune_threshold}")


@register_policy("ebbinghaus")
class Ebbinghaus(Policy):
    access_reranks = False  # strength never reads access state; on_access removes nothing
    description = (
        "Ebbinghaus retention exp(-age/S), S = tau(1 + gain·importance); prunes R < threshold."
    )
    Params = EbbinghausParams
    params: EbbinghausParams

    def retention(self, cols: Columns, now: int) -> np.ndarray:
        p = self.params
        n = cols.n
        stability = p.tau * (1.0 + p.gain * cols.importance[:n])
        r = np.exp(-(now - cols.turn[:n]) / stability)
        return np.where(cols.superseded[:n], r * p.superseded_strength, r)

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        r = self.retention(cols, now)
        gone = np.flatnonzero(cols.live[: cols.n] & (r < self.params.prune_threshold))
        if len(gone) == 0:
            return None
        return Removal(gone, "decayed", r[gone])

    def strength(self, cols: Columns, now: int) -> np.ndarray:
        return np.where(cols.superseded[: cols.n], self.params.superseded_strength, 1.0)

"""learned_forget: a small PyTorch MLP decides what to forget.

Features per entry: ``[age/1000, importance, superseded, slotted]``. Two outputs:
a ranking-strength logit and a log-retention. The network was trained
(``python -m runner.train forget``) to imitate a rule: slotted entries follow the
Ebbinghaus curve ``R = exp(-age/S)``, ``S = 150·(1 + 4·importance)``, × 0.05 when
superseded; unslotted entries ``R = exp(-age/80)`` (gone after ~313 turns), and
ranking strength 0.05 for a superseded entry, else 1. Unslotted includes every
fact the extractor missed (hard updates), so this policy forgets correct facts
that no slot-based metric sees: what the false-forget metric must expose.

After each add, one batched forward over the live rows prunes those whose
predicted retention is below ``prune_threshold``; ``strength`` is the sigmoid of
the strength head. The weights ship in ``memcore/weights/forget.safetensors`` and
are loaded once per process; loading never trains. torch is imported on first use.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from memcore.columns import Columns
from memcore.policies.base import Policy, Removal, register_policy

if TYPE_CHECKING:
    from memcore.learned.forget_net import ForgetNet

WEIGHTS = "forget"


@dataclass(frozen=True)
class LearnedForgetParams:
    """``prune_threshold``: prune when the predicted retention falls below it. The
    network's log-retention is trained down to ln(1e-4), so thresholds far below
    that cannot be told apart."""

    prune_threshold: float = 0.02

    def __post_init__(self) -> None:
        if not 0 < self.prune_threshold < 1:
            raise ValueError(f"prune_threshold must be in (0, 1), got {self.prune_threshold}")


@cache
def shipped_forget_net() -> ForgetNet:
    """The shipped network, loaded once per process (``cache_clear()`` reloads)."""
    from memcore.learned.forget_net import forget_from_weights
    from memcore.learned.weights import load_weights, weights_path

    return forget_from_weights(load_weights(weights_path(WEIGHTS)))


@register_policy("learned_forget")
class LearnedForget(Policy):
    description = (
        "MLP over [age, importance, superseded, slotted] imitating Ebbinghaus for slotted "
        "entries and exp(-age/80) for unslotted ones; prunes predicted R < threshold."
    )
    Params = LearnedForgetParams
    params: LearnedForgetParams

    def __init__(self, params: LearnedForgetParams | None = None) -> None:
        super().__init__(params)
        import torch

        from memcore.learned.forget_net import FEATURES, forget_features

        self._torch = torch
        self._features = forget_features
        self._net = shipped_forget_net()
        self._x = np.empty((256, len(FEATURES)), dtype=np.float32)

    def _forward(self, cols: Columns, now: int) -> tuple[np.ndarray, np.ndarray]:
        """Live rows and the network's ``(rows, 2)`` outputs for them, in one forward."""
        rows = np.flatnonzero(cols.live[: cols.n])
        m = len(rows)
        if m > len(self._x):
            self._x = np.empty((2 * m, self._x.shape[1]), dtype=np.float32)
        x = self._features(
            now - cols.turn[rows], cols.importance[rows], cols.superseded[rows],
            cols.slot[rows] >= 0, out=self._x,
        )
        torch = self._torch
        with torch.inference_mode():
            out = self._net(torch.from_numpy(x)).numpy()
        return rows, out

    def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
        rows, out = self._forward(cols, now)
        retention = np.exp(out[:, 1].astype(np.float64))
        gone = retention < self.params.prune_threshold
        if not gone.any():
            return None
        return Removal(rows[gone], "learned", retention[gone])

    def strength(self, cols: Columns, now: int) -> np.ndarray:
        rows, out = self._forward(cols, now)
        strength = np.ones(cols.n)
        strength[rows] = 1.0 / (1.0 + np.exp(-out[:, 0].astype(np.float64)))
        return strength

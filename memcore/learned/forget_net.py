"""The learned-forget network and its features.

Input features, one row per entry: ``[age / 1000, importance, superseded, slotted]``.
Outputs: column 0 is the ranking-strength logit, column 1 the log-retention.
"""

from __future__ import annotations

import json

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from memcore.learned.weights import WeightsFile

FEATURES = ("age_k", "importance", "superseded", "slotted")
OUTPUTS = ("strength_logit", "log_retention")
AGE_SCALE = 1000.0
HIDDEN = 64
FEATURES_KEY = "features"  # metadata key: JSON list of the input features, in order


def forget_features(
    age: np.ndarray,
    importance: np.ndarray,
    superseded: np.ndarray,
    slotted: np.ndarray,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """The ``(n, 4)`` float32 feature matrix (written into ``out`` if given)."""
    n = len(age)
    x = np.empty((n, len(FEATURES)), dtype=np.float32) if out is None else out[:n]
    np.multiply(age, 1.0 / AGE_SCALE, out=x[:, 0], casting="unsafe")
    x[:, 1] = importance
    x[:, 2] = superseded
    x[:, 3] = slotted
    return x


class ForgetNet(nn.Module):
    """4 features -> one hidden ReLU layer -> (strength logit, log-retention).

    One wide layer rather than two narrow ones: as accurate on the rule, and a
    forward is three torch ops, which matters at one forward per add.
    """

    def __init__(self, hidden: int = HIDDEN) -> None:
        super().__init__()
        self.l1 = nn.Linear(len(FEATURES), hidden)
        self.head = nn.Linear(hidden, len(OUTPUTS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Functional calls on the layers' parameters: the same maths as calling the
        # submodules, without their per-call hook overhead (this runs on every add).
        h = F.linear(x, self.l1.weight, self.l1.bias).relu_()
        return F.linear(h, self.head.weight, self.head.bias)


def forget_weights(net: ForgetNet) -> WeightsFile:
    """The file contents for a trained forget network."""
    tensors = {k: v.detach().clone() for k, v in net.state_dict().items()}
    meta = {FEATURES_KEY: json.dumps(list(FEATURES)), "outputs": json.dumps(list(OUTPUTS))}
    return WeightsFile(tensors, meta)


def forget_from_weights(weights: WeightsFile) -> ForgetNet:
    """Rebuild the network from its tensors; never trains."""
    features = json.loads(weights.metadata.get(FEATURES_KEY, "null"))
    if features != list(FEATURES):
        raise ValueError(f"forget weights expect features {features}, this code feeds {FEATURES}")
    net = ForgetNet(int(weights.tensors["l1.weight"].shape[0]))
    net.load_state_dict(weights.tensors, strict=True)
    net.eval()
    net.requires_grad_(False)
    return net

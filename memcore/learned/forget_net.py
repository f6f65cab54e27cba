"""The learned-forget network and its features.

Input features, one row per entry: ``[age / 1000, importance, superseded, slotted]``.
Outputs: column 0 is the ranking-strength logit, column 1 the log-retention.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from memcore.learned.weights import WeightsFile

FEATURES = ("age_k", "importance", "superseded", "slotted")
OUTPUTS = ("strength_logit", "log_retention")
AGE_SCALE = 1000.0
HIDDEN = 32
FEATURES_KEY = "features"  # metadata: the input features, in order


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


STRENGTH, LOG_RETENTION = 0, 1  # output columns


class _Parts(NamedTuple):
    """The parameter slices a forward uses (views while training, copies once frozen)."""

    bias: torch.Tensor
    columns: tuple[torch.Tensor, ...]     # first layer, one (hidden,) vector per feature
    head_bias: tuple[torch.Tensor, ...]   # one scalar per output
    head_rows: tuple[torch.Tensor, ...]   # one (hidden,) vector per output


class ForgetNet(nn.Module):
    """4 features -> one hidden ReLU layer -> (strength logit, log-retention).

    The two ``nn.Linear`` layers are applied without a matrix-matrix product: the
    first as one broadcast multiply-add per feature (there are 4), the second as
    one matrix-vector product per output. On CPU a matrix product enters an
    OpenMP parallel region even for a handful of rows, and with more than one
    torch thread on a busy machine such a region waits for a core. Matrix-vector
    products and elementwise ops below torch's grain size run inline, so ``predict``
    feeds at most ``rows_per_op`` rows per op: inference never waits on another
    thread and gives the same numbers whatever the thread count.
    """

    GRAIN = 32768  # torch's intra-op grain size: smaller elementwise ops run inline

    def __init__(self, hidden: int = HIDDEN) -> None:
        super().__init__()
        self.l1 = nn.Linear(len(FEATURES), hidden)
        self.head = nn.Linear(hidden, len(OUTPUTS))
        self.rows_per_op = max(1, self.GRAIN // hidden)
        self._frozen: _Parts | None = None

    def freeze(self) -> ForgetNet:
        """Inference only from now on: no gradients, and the weight slices the ops
        need are taken once instead of on every call (fewer torch calls per add)."""
        self.eval()
        self.requires_grad_(False)
        self._frozen = _Parts(
            self.l1.bias, tuple(self.l1.weight.t().contiguous().unbind(0)),
            tuple(self.head.bias.unbind(0)), tuple(self.head.weight.unbind(0)),
        )
        return self

    def _parts(self) -> _Parts:
        if self._frozen is not None:
            return self._frozen
        return _Parts(self.l1.bias, tuple(self.l1.weight.unbind(1)),
                       tuple(self.head.bias.unbind(0)), tuple(self.head.weight.unbind(0)))

    def hidden(self, features: torch.Tensor, parts: _Parts | None = None) -> torch.Tensor:
        """The ``(rows, hidden)`` ReLU activations of ``(rows, 4)`` features."""
        p = self._parts() if parts is None else parts
        cols = features.unsqueeze(2).unbind(1)
        h = torch.addcmul(p.bias, cols[0], p.columns[0])
        for col, w_col in zip(cols[1:], p.columns[1:], strict=True):
            h = h.addcmul_(col, w_col)
        return h.relu_()

    def output(self, h: torch.Tensor, k: int, parts: _Parts | None = None) -> torch.Tensor:
        """Output ``k`` (``STRENGTH`` or ``LOG_RETENTION``) for hidden activations."""
        p = self._parts() if parts is None else parts
        return torch.addmv(p.head_bias[k], h, p.head_rows[k])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(rows, 2)`` outputs for ``(rows, 4)`` features (training and tests)."""
        p = self._parts()
        h = self.hidden(x, p)
        return torch.stack([self.output(h, k, p) for k in range(len(OUTPUTS))], dim=1)

    def predict(self, x: torch.Tensor, k: int) -> torch.Tensor:
        """Output ``k`` for ``(rows, 4)`` features, ``rows_per_op`` rows at a time."""
        p = self._parts()
        if len(x) <= self.rows_per_op:
            return self.output(self.hidden(x, p), k, p)
        return torch.cat([self.output(self.hidden(b, p), k, p) for b in x.split(self.rows_per_op)])


def forget_from_weights(weights: WeightsFile[torch.Tensor]) -> ForgetNet:
    """Rebuild the network from its tensors; never trains."""
    features = weights.metadata.get(FEATURES_KEY)
    if features != list(FEATURES):
        raise ValueError(f"forget weights expect features {features}, this code feeds {FEATURES}")
    net = ForgetNet(int(weights.tensors["l1.weight"].shape[0]))
    net.load_state_dict(weights.tensors, strict=True)
    return net.freeze()

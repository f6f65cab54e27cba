"""Train the learned-forget network to imitate a retention rule on synthetic rows.

The rule (the network's teacher): slotted entries follow the Ebbinghaus curve
``R = exp(-age/S)``, ``S = 150·(1 + 4·importance)``, times 0.05 when superseded;
unslotted entries ``R = exp(-age/80)`` (so they fall below 0.02 after ~313 turns).
The log-retention target is clipped below at ``ln(1e-4)``. The ranking strength
target is 0.05 for a superseded entry, else 1.

Rows are sampled from a seeded generator; training is full-batch L-BFGS under
``deterministic``, in the pinned subprocess of ``runner.train.isolated``.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from memcore.learned.forget_net import (
    AGE_SCALE,
    FEATURES,
    FEATURES_KEY,
    HIDDEN,
    OUTPUTS,
    ForgetNet,
)
from runner.train.common import deterministic

TAU = 150.0
GAIN = 4.0
SUPERSEDED_FACTOR = 0.05
UNSLOTTED_TAU = 80.0
LOG_FLOOR = math.log(1e-4)

SEED = 0
ROWS = 8192
ITERATIONS = 2000
MAX_AGE = 8000.0   # the rule is flat (clipped) beyond ~6,900 turns for any importance
NEAR_AGE = 1000.0  # a share of rows is drawn densely where the short lifetimes end


def rule_log_retention(x: torch.Tensor) -> torch.Tensor:
    """The rule's clipped log-retention of feature rows ``[age/1000, imp, sup, slotted]``."""
    age = x[:, 0].double() * AGE_SCALE
    imp, sup, slotted = x[:, 1].double(), x[:, 2].double() > 0.5, x[:, 3].double() > 0.5
    stability = TAU * (1.0 + GAIN * imp)
    slotted_log = -age / stability + torch.where(sup, math.log(SUPERSEDED_FACTOR), 0.0)
    log_r = torch.where(slotted, slotted_log, -age / UNSLOTTED_TAU)
    return log_r.clamp(min=LOG_FLOOR)


def rule_strength(x: torch.Tensor) -> torch.Tensor:
    """The rule's ranking strength: 0.05 when superseded, else 1."""
    return torch.where(x[:, 2] > 0.5, SUPERSEDED_FACTOR, 1.0).double()


def sample_rows(n: int, generator: torch.Generator) -> torch.Tensor:
    """``n`` synthetic feature rows: ages up to ``MAX_AGE`` (a third of them below
    ``NEAR_AGE``), uniform importance, and the (superseded, slotted) cases a store
    produces (slotted fresh, slotted superseded, unslotted) plus a few unslotted
    superseded rows so the network is defined there too."""
    u = torch.rand(n, 4, generator=generator, dtype=torch.float64)
    near = u[:, 3] < 1 / 3
    age = torch.where(near, u[:, 0] * NEAR_AGE, u[:, 0] * MAX_AGE)
    case = (u[:, 2] * 10).floor()  # 0-2 fresh slotted, 3-5 superseded, 6-8 unslotted, 9 both
    sup = (case >= 3) & (case <= 5) | (case == 9)
    slotted = case <= 5
    x = torch.stack([age / AGE_SCALE, u[:, 1], sup.double(), slotted.double()], dim=1)
    return x.float()


def train_forget() -> dict[str, torch.Tensor]:
    """Train the forget network from scratch; returns its state dict (deterministic).

    Full-batch L-BFGS (strong-Wolfe line search) on the squared error of the
    log-retention plus the cross-entropy of the strength against its soft target.
    """
    with deterministic(SEED):
        gen = torch.Generator().manual_seed(SEED)
        x = sample_rows(ROWS, gen)
        log_r = rule_log_retention(x).float()
        strength = rule_strength(x).float()
        net = ForgetNet(HIDDEN)
        opt = torch.optim.LBFGS(
            net.parameters(), lr=1.0, max_iter=ITERATIONS, history_size=50,
            tolerance_grad=1e-12, tolerance_change=1e-15, line_search_fn="strong_wolfe",
        )

        def closure() -> torch.Tensor:
            opt.zero_grad(set_to_none=True)
            out = net(x)
            loss = F.mse_loss(out[:, 1], log_r) + F.binary_cross_entropy_with_logits(
                out[:, 0], strength
            )
            loss.backward()
            return loss

        opt.step(closure)
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def forget_metadata() -> dict[str, Any]:
    """The metadata shipped with the forget network: its features, outputs and rule."""
    return {
        FEATURES_KEY: list(FEATURES),
        "outputs": list(OUTPUTS),
        "rule": {"tau": TAU, "gain": GAIN, "superseded_factor": SUPERSEDED_FACTOR,
                 "unslotted_tau": UNSLOTTED_TAU, "log_floor": LOG_FLOOR},
        "trainer": "runner.train.forget",
    }

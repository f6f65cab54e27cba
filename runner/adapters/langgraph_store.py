"""``langgraph_store``: LangGraph's long-term memory store (``langgraph.store``), the
``BaseStore`` agents built on LangGraph keep their memories in, offline.

What is exercised: ``InMemoryStore`` with semantic search through its ``index`` config
(``{"dims", "embed", "fields": ["text"]}``), embedding with fbench's own embedders
(``policy.embedder``: the hashing bag of words or all-MiniLM-L6-v2 from the local
package, the same vectors fbench's policies rank with), ``put`` / ``search`` / ``get``
in one namespace. Each observation is one item: its key is ``obs-<id>`` and its value
holds the text and the observation id, which come back from ``search``.

What is not: TTL. LangGraph's TTL lives in ``SqliteStore`` / ``PostgresStore``
(``TTLConfig``: ``default_ttl``, ``refresh_on_read``, ``sweep_ttl``), where expiry is
computed by the database's ``CURRENT_TIMESTAMP``: the wall clock, which a job cannot set
from Python. ``InMemoryStore`` has no TTL at all. So this is the store every LangGraph
user starts with: it never forgets, and fbench scores exactly that (never by real elapsed
time). Item timestamps (``created_at``) are the real time; nothing ranks by them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memcore import EMBEDDERS
from memcore.embed import BatchEmbedder
from memcore.text import whitespace_tokens
from runner.adapters.base import Hit, MemoryKind
from runner.adapters.probe import require
from runner.errors import FbenchError
from workloads import Vocabulary

NAME = "langgraph_store"
NAMESPACE = ("fbench",)
EMBEDDER_NAMES = ("hashing", "minilm")


@dataclass(frozen=True)
class LangGraphStoreParams:
    """``embedder``: the embedder its ``index`` config is given (fbench's)."""

    embedder: str = "hashing"

    def __post_init__(self) -> None:
        if self.embedder not in EMBEDDER_NAMES:
            raise ValueError(f"{NAME} embedder {self.embedder!r} is not one of "
                             f"{', '.join(EMBEDDER_NAMES)}")


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


def build(policy_params: LangGraphStoreParams, store_params: Any, vocab: Vocabulary) -> Any:
    memory_module = require("langgraph.store.memory", "langgraph", NAME)
    try:
        return LangGraphStoreAdapter(memory_module, policy_params)
    except ValueError as exc:
        raise FbenchError(str(exc)) from None


# Registered through fbench's own entry point (fbench.memories), as a plugin is.
MEMORY = (MemoryKind(
    name=NAME, family="incumbent",
    description="LangGraph's long-term memory store (langgraph 1.2 InMemoryStore) with "
                "semantic search on fbench's embedders; no TTL offline (see README): never "
                "forgets",
    Params=LangGraphStoreParams, StoreParams=None, build=build,
    embedder=lambda policy, store: str(policy.embedder)))

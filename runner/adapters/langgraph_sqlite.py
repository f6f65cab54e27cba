"""LangGraph's ``SqliteStore`` with TTL, built in a process on the simulated clock
(``fbench.faketime``): the store computes expiry with SQLite's
``CURRENT_TIMESTAMP`` and Python's ``datetime.now``, both the simulated time there.

Its connection is ``pysqlite3``'s (``SqliteStore`` accepts a caller's connection): its
semantic search needs the ``sqlite-vec`` extension, which the standard ``sqlite3`` of a
Python built without extension loading cannot load. Plain values in and out.
"""

from __future__ import annotations

from typing import Any

NAMESPACE = ("fbench",)
ALL = 1 << 30


class TTLStore:
    """One job's ``SqliteStore`` (in memory), TTL from ``TTLConfig``. Its index embeds
    with the vectors the parent sends with each text (fbench's embedder runs in the
    job's process, where its batches are shared with the job's other memories)."""

    def __init__(self, dims: int, ttl_minutes: float | None,
                 refresh_on_read: bool) -> None:
        from langgraph.store.sqlite import SqliteStore
        from pysqlite3 import dbapi2

        self._given: dict[str, list[float]] = {}  # the vector of the text being stored
        conn = dbapi2.connect(":memory:", check_same_thread=False, isolation_level=None)
        # SqliteStore reads the fields to embed from "text_fields", which its IndexConfig
        # does not declare, not from the declared "fields" InMemoryStore reads: given only
        # "fields" it embeds each whole JSON value
        index: Any = {"dims": dims, "fields": ["text"], "text_fields": ["text"],
                      "embed": lambda texts: [self._given[t] for t in texts]}
        self.store = SqliteStore(
            conn, index=index,
            ttl={"default_ttl": ttl_minutes, "refresh_on_read": refresh_on_read})
        self.store.setup()

    def put(self, obs_id: int, text: str, vector: list[float]) -> None:
        self._given = {text: vector}
        self.store.put(NAMESPACE, f"obs-{obs_id}", {"text": text, "obs": obs_id})

    def search(self, text: str, k: int, vector: list[float]) -> list[tuple[int, float]]:
        self._given = {text: vector}
        items = self.store.search(NAMESPACE, query=text, limit=k)
        # an item the index has no vector for comes back unscored (None): nan here
        return [(int(i.value["obs"]), float("nan") if i.score is None else float(i.score))
                for i in items]

    def held(self) -> list[int]:
        """The observations the store holds (listed without refreshing any TTL)."""
        items: list[Any] = self.store.search(NAMESPACE, limit=ALL, refresh_ttl=False)
        return sorted(int(i.value["obs"]) for i in items)

    def sweep(self) -> int:
        """LangGraph's own sweep of expired items: how many it deleted."""
        return int(self.store.sweep_ttl())

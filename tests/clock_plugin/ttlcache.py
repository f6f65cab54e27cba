"""A stand-in for an outside memory library that reads the wall clock: entries stamped
with ``time.time()`` at ``put``, dropped by ``expire`` once older than ``ttl`` seconds."""

from __future__ import annotations

import time


class TtlCache:
    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self.items: dict[int, tuple[float, set[str]]] = {}

    def put(self, key: int, text: str) -> None:
        self.items[key] = (time.time(), set(text.lower().split()))

    def expire(self) -> list[int]:
        now = time.time()
        gone = [k for k, (stamp, _) in self.items.items() if now - stamp > self.ttl]
        for k in gone:
            del self.items[k]
        return gone

    def search(self, text: str, k: int) -> list[int]:
        words = set(text.lower().split())
        ranked = sorted(((len(words & w), key) for key, (_, w) in self.items.items()),
                        reverse=True)
        return [key for _, key in ranked[:k]]

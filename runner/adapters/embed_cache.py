"""A library's own text embedder, cached by text for one job and run on one torch
thread: the same text gives the same vector (bit for bit) whatever ran before it and
whichever executor runs the job (Ray gives a worker one thread, a shell two)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memcore.torch_threads import one_torch_thread


class CachedEmbed:
    """Wraps ``encode(text, *args) -> list[float]``; usable as a function (mem0's
    ``embed(text, memory_action)``) or as an object with ``embed(text)`` (lethe-agent's
    embedder protocol)."""

    def __init__(self, encode: Callable[..., Any]) -> None:
        self._encode = encode
        self._cache: dict[str, list[float]] = {}

    def __call__(self, text: str, *args: Any) -> list[float]:
        vec = self._cache.get(text)
        if vec is None:
            with one_torch_thread():
                vec = [float(x) for x in self._encode(text, *args)]
            self._cache[text] = vec
        return list(vec)

    def embed(self, text: str) -> list[float]:
        return self(text)

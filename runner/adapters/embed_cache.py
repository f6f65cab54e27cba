"""A library's own text embedder, cached by text for the process and run on one torch
thread: the same text gives the same vector (bit for bit) whatever ran before it and
whichever executor runs the job (Ray gives a worker one thread, a shell two).

The cache is shared by every job of the process, so it holds only for an encoder that
embeds one text at a time (a text's vector is then a function of the text alone, as
mem0's and lethe-agent's sentence-transformers embedders are): each cache is named by
the encoder it stands for, and keeps its ``TEXTS`` most recently used vectors.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from memcore.torch_threads import one_torch_thread

TEXTS = 65_536  # vectors a process keeps per encoder (384-d: 200 MB)
_CACHES: dict[str, OrderedDict[tuple[Any, ...], np.ndarray]] = {}


class CachedEmbed:
    """Wraps ``encode(text, *args) -> list[float]`` (one text at a time), cached under
    ``name``; usable as a function (mem0's ``embed(text, memory_action)``) or as an
    object with ``embed(text)`` (lethe-agent's embedder protocol)."""

    def __init__(self, encode: Callable[..., Any], name: str) -> None:
        self._encode = encode
        self._cache = _CACHES.setdefault(name, OrderedDict())

    def __call__(self, text: str, *args: Any) -> list[float]:
        key = (text, *args)
        vec = self._cache.get(key)
        if vec is None:
            with one_torch_thread():
                vec = np.array([float(x) for x in self._encode(text, *args)])
            self._cache[key] = vec
            if len(self._cache) > TEXTS:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return vec.tolist()

    def embed(self, text: str) -> list[float]:
        return self(text)

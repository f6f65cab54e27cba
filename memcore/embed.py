"""Embedders turn text into a dense unit vector; cosine similarity is a dot product.

``hashing`` is the seed's dependency-free bag of words: 32-bit FNV-1a of each
token's UTF-8 bytes modulo the dimension, bucket weight ``1 + ln(count)``,
L2-normalised (an empty text is the zero vector, so its cosine is 0).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Protocol, runtime_checkable

import numpy as np

from fbench.registry import Registry
from memcore.text import tokenize

FNV_OFFSET = 2166136261
FNV_PRIME = 16777619


def fnv1a_32(data: bytes) -> int:
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & 0xFFFFFFFF
    return h


class Embedder(Protocol):
    dim: int

    def embed(self, text: str) -> np.ndarray: ...


@runtime_checkable
class BatchEmbedder(Protocol):
    """An embedder that encodes a block of upcoming texts in one batch (``prefetch``)
    and then serves ``embed`` from its cache."""

    dim: int

    def embed(self, text: str) -> np.ndarray: ...

    def prefetch(self, texts: Iterable[str]) -> None: ...


EMBEDDERS: Registry[Callable[[], Embedder]] = Registry("embedder")


register_embedder = EMBEDDERS.register


@lru_cache(maxsize=65536)
def _bucket(token: str, dim: int) -> int:
    return fnv1a_32(token.encode("utf-8")) % dim


@lru_cache(maxsize=16384)
def hashing_vector(text: str, dim: int) -> np.ndarray:
    """The hashing embedder's unit vector of ``text`` in ``dim`` dimensions, read-only,
    made once per process: texts recur (questions asked daily, repeated chitchat), within
    a job and across the jobs a worker runs, and the vector depends on nothing else."""
    vec = np.zeros(dim)
    counts = Counter(_bucket(tok, dim) for tok in tokenize(text))
    if counts:
        for bucket, count in counts.items():
            vec[bucket] = 1.0 + math.log(count)
        vec /= math.sqrt(float(vec @ vec))
    vec.flags.writeable = False
    return vec


@register_embedder("hashing")
class HashingEmbedder:
    """Bag-of-words hashing embedder (deterministic, no dependencies)."""

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim

    def embed(self, text: str) -> np.ndarray:
        """The unit vector of ``text`` (read-only: it is shared between callers)."""
        return hashing_vector(text, self.dim)

"""An outside adapter built from fbench's toolkit (``runner.adapters.toolkit``): an
embedder ranks, and a memory-side extractor keys supersession (a new observation of a
slot replaces the older ones, as a keyed library's ``key=`` would)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from memcore.embed import BatchEmbedder
from memcore.text import whitespace_tokens
from runner.adapters import Hit, MemoryKind
from runner.adapters.toolkit import embedder, extractor


@dataclass(frozen=True)
class Params:
    embedder: str = "hashing"
    extractor: str = "auto"


class SlotMem:
    def __init__(self, p: Params, vocab: Any) -> None:
        self.embed = embedder(p.embedder)
        self.slot_of = extractor(p.extractor, vocab).extract
        self.items: dict[int, tuple[np.ndarray, int]] = {}  # obs -> (vector, tokens)
        self.newest: dict[str, int] = {}  # slot -> its newest observation
        self.superseded = 0

    def prefetch(self, texts: list[str]) -> None:
        if isinstance(self.embed, BatchEmbedder):
            self.embed.prefetch(texts)

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        slot = self.slot_of(text)
        if slot is not None:
            old = self.newest.get(slot)
            if old is not None and self.items.pop(old, None) is not None:
                self.superseded += 1
            self.newest[slot] = obs_id
        self.items[obs_id] = (self.embed.embed(text), whitespace_tokens(text))

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        q = self.embed.embed(text)
        scored = sorted(((-float(v @ q), i) for i, (v, _) in self.items.items()))[:k]
        return [Hit(i, -s) for s, i in scored]

    def tick(self, t: int) -> None:
        pass

    def holds(self, obs_id: int) -> bool:
        return obs_id in self.items

    def size(self) -> int:
        return len(self.items)

    def tokens(self) -> int:
        return sum(n for _, n in self.items.values())

    def forgotten(self) -> dict[str, int]:
        return {"superseded": self.superseded} if self.superseded else {}


MEMORY = MemoryKind(
    name="slotmem", family="outside",
    description="the newest observation of each slot the memory itself extracts",
    Params=Params, StoreParams=None,
    build=lambda policy, store, vocab: SlotMem(policy, vocab),
    embedder=lambda policy, store: str(policy.embedder))

"""Extractors the harness provides, because they read ground truth (memcore never does):
``oracle`` links every observation to the slot it truly asserts; ``noisy`` does too,
except that a share ``store.extract_miss`` of slot assertions is linked to nothing (a
miss) and a share ``store.extract_false_merge`` to another attribute of the same
entity (a false merge: supersession then removes or demotes a fact still true).

They are registered in memcore's extractor registry, so a store takes them like any
other (``--param extractor=oracle``); the job hands each observation's true slot to
the store's extractor just before the store reads the text (``hint``). The noise of an
observation is a pure function of (job seed, observation id): the same job draws the
same misses and merges wherever it runs.
"""

from __future__ import annotations

import hashlib
from typing import Protocol, runtime_checkable

from memcore.extract import Lexicon, register_extractor

HARNESS_EXTRACTORS = ("oracle", "noisy")


@runtime_checkable
class HarnessExtractor(Protocol):
    """An extractor the harness tells the truth (``hint``) and configures with the
    store's noise rates (``configure``)."""

    def configure(self, miss: float, false_merge: float) -> None: ...

    def hint(self, slot: str | None, seed: int, obs_id: int) -> None: ...

    def extract(self, text: str) -> str | None: ...


def uniforms(seed: int, obs_id: int) -> tuple[float, float]:
    """Two independent uniforms in [0, 1) of (seed, observation)."""
    d = hashlib.blake2b(f"{seed}:{obs_id}".encode(), digest_size=16).digest()
    scale = float(1 << 64)
    return int.from_bytes(d[:8], "big") / scale, int.from_bytes(d[8:], "big") / scale


@register_extractor("oracle")
class OracleExtractor:
    """The true slot of the observation being stored (``None`` for distractors)."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.attributes = tuple(a for _, a in lexicon.phrases)
        self.miss = 0.0
        self.false_merge = 0.0
        self._next: str | None = None

    def configure(self, miss: float, false_merge: float) -> None:
        self.miss, self.false_merge = miss, false_merge

    def hint(self, slot: str | None, seed: int, obs_id: int) -> None:
        """The truth of the next ``extract`` call (the harness calls this)."""
        self._next = self.perturb(slot, seed, obs_id)

    def perturb(self, slot: str | None, seed: int, obs_id: int) -> str | None:
        return slot

    def extract(self, text: str) -> str | None:
        slot, self._next = self._next, None  # never reused for an unhinted text
        return slot


@register_extractor("noisy")
class NoisyExtractor(OracleExtractor):
    """The oracle with misses and false merges at the configured rates."""

    def perturb(self, slot: str | None, seed: int, obs_id: int) -> str | None:
        if slot is None:
            return None
        u, v = uniforms(seed, obs_id)
        if u < self.miss:
            return None
        if u < self.miss + self.false_merge:
            entity, _, attr = slot.rpartition(".")
            others = [a for a in self.attributes if a != attr]
            if others:
                return f"{entity}.{others[int(v * len(others))]}"
        return slot

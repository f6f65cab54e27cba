"""The extractor interface, the lexicon it is configured with, and the registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from fbench.registry import Registry


@dataclass(frozen=True)
class Lexicon:
    """Entity names and (canonical phrase, attribute) pairs an extractor knows."""

    entities: tuple[str, ...]
    phrases: tuple[tuple[str, str], ...]

    def slots(self) -> tuple[str, ...]:
        """Every slot key, entity-major: the label set of a learned extractor."""
        return tuple(f"{e}.{a}" for e in self.entities for _, a in self.phrases)


class Extractor(Protocol):
    def extract(self, text: str) -> str | None:
        """The slot key ``"entity.attribute"`` the text asserts, or ``None``."""
        ...


Factory = Callable[[Lexicon], Extractor]

EXTRACTORS: Registry[Factory] = Registry("extractor")


register_extractor = EXTRACTORS.register

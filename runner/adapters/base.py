"""The one small interface the harness talks to any memory through."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from workloads import Vocabulary


@dataclass(frozen=True)
class Hit:
    """A retrieved item, carrying the observation id the harness passed in."""

    obs_id: int
    score: float


class MemoryAdapter(Protocol):
    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None: ...

    def query(self, t: int, text: str, k: int) -> list[Hit]: ...

    def tick(self, t: int) -> None: ...

    def holds(self, obs_id: int) -> bool:
        """Whether the observation is still stored (not deleted)."""
        ...

    def size(self) -> int: ...

    def tokens(self) -> int: ...

    def linked_slot(self, obs_id: int) -> str | None:
        """The slot the memory's extractor gave a stored observation, for the
        extractor diagnostics; ``None`` when unknown or unsupported."""
        ...

    def forgotten(self) -> dict[str, int]:
        """Removals so far, per reason."""
        ...


@dataclass(frozen=True)
class MemoryKind:
    """A registered memory under test: its parameters and how to build it.

    ``Params`` is the ``policy.*`` namespace; ``StoreParams`` the ``store.*``
    namespace, or ``None`` when the memory has no reference store.
    """

    name: str
    family: str
    description: str
    Params: type
    StoreParams: type | None
    build: Callable[[Any, Any, Vocabulary], MemoryAdapter]


MEMORIES: dict[str, MemoryKind] = {}


def register_memory(kind: MemoryKind) -> MemoryKind:
    if kind.name in MEMORIES:
        raise ValueError(f"memory {kind.name!r} is registered twice")
    MEMORIES[kind.name] = kind
    return kind

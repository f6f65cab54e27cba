"""Workloads registered by name; lookups with suggestions live at the CLI boundary."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from workloads.events import Event


class Workload(Protocol):
    """A named, versioned, seeded event generator.

    ``Params`` is a frozen dataclass whose fields are the workload's parameters
    (defaults, and validation in ``__post_init__``); ``events`` yields lazily.
    ``description`` is a one-paragraph summary (shown by ``fbench list workloads``);
    ``categories`` maps each query category the workload emits to a one-line description.
    """

    name: str
    version: str
    horizon_unit: str
    default_horizon: int
    Params: type
    description: str
    categories: dict[str, str]

    def events(self, seed: int, horizon: int, params: Any) -> Iterator[Event]: ...

    def vocabulary(self) -> Vocabulary: ...

    def distinct_facts(self, params: Any) -> int:
        """How many distinct facts (slots) a stream holds: the unit of a capacity
        given as a fraction."""
        ...


@dataclass(frozen=True)
class Vocabulary:
    """The domain words an extractor is configured with (no ground truth):
    entity names, and each attribute's canonical phrase."""

    entities: tuple[str, ...]
    phrases: tuple[tuple[str, str], ...]  # (canonical phrase, attribute)


WORKLOADS: dict[str, Workload] = {}


def register_workload(obj: Any) -> Any:
    """Class decorator: instantiate and register a workload under its ``name``."""
    inst = obj()
    if inst.name in WORKLOADS:
        raise ValueError(f"workload {inst.name!r} is registered twice")
    WORKLOADS[inst.name] = inst
    return obj



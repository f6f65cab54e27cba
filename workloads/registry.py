"""Workloads registered by name; lookups with suggestions live at the CLI boundary."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from fbench.registry import Registry
from workloads.events import Event


class Workload(Protocol):
    """A named, versioned, seeded event generator.

    ``Params`` is a frozen dataclass whose fields are the workload's parameters
    (defaults, and validation in ``__post_init__``); ``events`` yields lazily.
    ``description`` is a one-paragraph summary (shown by ``fbench list workloads``);
    ``categories`` maps each query category the workload emits to a one-line description;
    ``update_kinds`` maps each observation kind (``ObserveTruth.kind``) the workload emits
    for a change of a slot's value to how it is phrased: ``"canonical"`` (the attribute's
    canonical phrase, which the keyword extractor links) or ``"hard"`` (a paraphrase it
    cannot link). Kinds that are not updates (first facts, noise) are absent.
    """

    name: str
    version: str
    horizon_unit: str
    default_horizon: int
    Params: type
    description: str
    categories: dict[str, str]
    update_kinds: dict[str, str]

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


REQUIRED = ("name", "version", "horizon_unit", "default_horizon", "Params", "description",
            "categories", "update_kinds", "events", "vocabulary", "distinct_facts")


def as_workload(obj: Any, name: str) -> Workload:
    """A plugin object as a workload: a ``Workload`` instance, or a class making one
    with no arguments (TypeError naming what is missing otherwise)."""
    inst = obj() if isinstance(obj, type) else obj
    missing = [a for a in REQUIRED if not hasattr(inst, a)]
    if missing:
        raise TypeError(f"{obj!r} is not a workload: it lacks {', '.join(missing)} "
                        "(see workloads.registry.Workload)")
    return inst


WORKLOADS: Registry[Workload] = Registry("workload", group="fbench.workloads",
                                         adapt=as_workload)


def register_workload(obj: Any) -> Any:
    """Class decorator: instantiate and register a workload under its ``name``."""
    inst = obj()
    WORKLOADS.add(inst.name, inst)
    return obj



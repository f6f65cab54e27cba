"""Workloads registered by name; lookups with suggestions live at the CLI boundary."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from fbench.registry import Registry
from workloads.events import Event


class Workload(Protocol):
    """A named, versioned, seeded event generator.

    ``name`` is the workload's name without a version; ``version`` its stream's version.
    A change that alters any stream of a workload is a new version: the current one is
    registered under ``name`` (and ``name@version``), a retired one under
    ``name@version`` only, so its streams stay reproducible (``lifecycle@1``).

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


@runtime_checkable
class FromData(Protocol):
    """A workload whose streams come from data its parameters name (``trace``): its
    horizon, unit, categories, update kinds and vocabulary are the data's.

    ``bind(params, seed)`` is the workload of that data (raising ``ValueError`` or
    ``OSError`` with one line when it cannot be read); ``data_identity(params, seed)``
    identifies its content (a hash), and is part of a job's identity."""

    def bind(self, params: Any, seed: int) -> Workload: ...

    def data_identity(self, params: Any, seed: int) -> str: ...


@dataclass(frozen=True)
class Vocabulary:
    """The domain words an extractor is configured with (no ground truth):
    entity names, and each attribute's canonical phrase."""

    entities: tuple[str, ...]
    phrases: tuple[tuple[str, str], ...]  # (canonical phrase, attribute)


# A query category's name: it is the suffix of the metrics split by it (recall_at_k_fact).
CATEGORY_NAME = re.compile(r"[a-z][a-z0-9_]*")

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


VERSION_MARK = "@"


def _derive(name: str) -> Workload | None:
    """``name@version`` for the current version of ``name`` (a plugin's included)."""
    base, mark, version = name.rpartition(VERSION_MARK)
    if not mark or VERSION_MARK in base or base not in WORKLOADS:
        return None
    current = WORKLOADS[base]
    return current if current.version == version else None


WORKLOADS: Registry[Workload] = Registry("workload", group="fbench.workloads",
                                         adapt=as_workload, derive=_derive,
                                         derived_origin=lambda name: WORKLOADS.origin(
                                             name.rpartition(VERSION_MARK)[0]))


def register_workload(obj: Any) -> Any:
    """Class decorator: instantiate and register the current version of a workload under
    its ``name`` (``name@version`` resolves to it too)."""
    inst = obj()
    WORKLOADS.add(inst.name, inst)
    return obj


def register_retired_workload(obj: Any) -> Any:
    """Class decorator: register a retired version of a workload under
    ``name@version`` only, so its old streams can still be asked for by name."""
    inst = obj()
    WORKLOADS.add(f"{inst.name}{VERSION_MARK}{inst.version}", inst)
    return obj


def is_retired(name: str) -> bool:
    """Whether ``name`` pins a version (``lifecycle@1``): left out of default sweeps."""
    return VERSION_MARK in name


def current_builtin_names() -> list[str]:
    """fbench's own generators at their current versions (the default sweep's; a workload
    that reads data, ``trace``, runs only when named, with its file)."""
    return [n for n in WORKLOADS.builtin_names()
            if not is_retired(n) and not isinstance(WORKLOADS[n], FromData)]



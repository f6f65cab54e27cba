"""The forgetting-policy interface and its registry.

A policy only reacts; the store owns the loop. It gets the store's columns and
returns what to remove (a ``Removal``, a list of them, or ``None``); it never removes
anything itself, so every
removal goes through ``MemoryStore`` and lands in the forget log.

Hooks, all optional (the base class does nothing):
- ``on_add(cols, row, now)``: after supersession marking and the insert
  (``cols.superseded_by_newest``: the row this add superseded, -1 if none).
- ``on_access(cols, rows, now, relevance)``: after a retrieval returned ``rows``
  (``relevance``: their cosine with the query).
- ``on_tick(cols, now)``: at a day boundary.
- ``strength(cols, now)``: ranking strength of rows ``[0, n)``, or ``None`` for 1.
- ``quiet_until(cols, now)``: asked right after each ``on_add``, a turn before which an
  add that supersedes nothing (at a turn from ``now`` on) need not call ``on_add``.
A capacity-bounded policy sets ``capacity``.

``access_reranks`` declares whether answering a query can change what a later query
at the same time ranks or finds: reinforcement that feeds ``strength`` (lethe), or a
removal from ``on_access``. A policy that declares ``False`` lets the store answer a
run of queries in one batch (``MemoryStore.retrieve_many``); the default, ``True``,
answers them one by one, which is right for any policy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fbench.registry import Registry
from memcore.columns import Columns


@dataclass(frozen=True)
class NoParams:
    """A policy without parameters."""


@dataclass(frozen=True, slots=True)
class Removal:
    """Rows to remove, why, and the score each had when it was judged."""

    rows: np.ndarray
    reason: str
    scores: np.ndarray
    merged_into: np.ndarray | None = None  # entry ids the rows were merged into


# the slots' own setters, field by field (``make_removal``)
_SET_REMOVAL = tuple(vars(Removal)[f].__set__
                     for f in ("rows", "reason", "scores", "merged_into"))


def make_removal(rows: np.ndarray, reason: str, scores: np.ndarray) -> Removal:
    """``Removal(rows, reason, scores)``, the same frozen value, its fields set through
    their slots, cheaper than the ``object.__setattr__`` call per field of a frozen
    dataclass's ``__init__`` (a decay policy makes one an add)."""
    removal = object.__new__(Removal)
    set_rows, set_reason, set_scores, set_into = _SET_REMOVAL
    set_rows(removal, rows)
    set_reason(removal, reason)
    set_scores(removal, scores)
    set_into(removal, None)
    return removal


Removals = Removal | list[Removal] | None  # what a hook may return


class Policy:
    """Base class: never forgets, ranks everything at strength 1."""

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    Params: ClassVar[type] = NoParams
    wrapper: ClassVar[bool] = False  # wraps another policy (left out of default sweeps)
    capacity: int | None = None
    # answering a query can change a later query's answer (see the module docstring)
    access_reranks: ClassVar[bool] = True

    def __init__(self, params: Any = None) -> None:
        self.params = params if params is not None else self.Params()

    def on_add(self, cols: Columns, row: int, now: int) -> Removals:
        return None

    def on_access(self, cols: Columns, rows: np.ndarray, now: int,
                  relevance: np.ndarray | None = None) -> Removals:
        return None

    def on_tick(self, cols: Columns, now: int) -> Removals:
        return None

    def strength(self, cols: Columns, now: int) -> np.ndarray | None:
        return None

    def quiet_until(self, cols: Columns, now: int) -> float:
        """Asked right after ``on_add`` at ``now``: a turn before which an add at a turn
        from ``now`` on that supersedes nothing may skip ``on_add``, because that call
        would remove nothing and what it would note can wait for the next one (which
        must then see every row added since). -inf, the default: every add calls it."""
        return -math.inf


def as_policy(obj: Any, name: str) -> type[Policy]:
    """A plugin object as a policy class: a subclass of ``Policy`` (TypeError otherwise)."""
    if not (isinstance(obj, type) and issubclass(obj, Policy)):
        raise TypeError(f"{obj!r} is not a subclass of memcore.policies.Policy")
    return obj


def _derive(name: str) -> type[Policy] | None:
    """``pinned.<inner>`` for any policy ``<inner>`` that is not itself a wrapper."""
    from memcore.policies.pinned import wrap  # pinned imports this module

    inner_name = name.removeprefix("pinned.")
    if inner_name == name or inner_name not in POLICIES:  # (a plugin inner included)
        return None
    inner = POLICIES[inner_name]
    return None if inner.wrapper else wrap(inner_name, inner)


def _derived_names() -> list[str]:
    return [f"pinned.{n}" for n in POLICIES.entry_names()
            if ":" not in n and not n.startswith("pinned.")]


POLICIES: Registry[type[Policy]] = Registry(
    "policy", group="fbench.policies", adapt=as_policy, derive=_derive,
    derived_names=_derived_names,
    derived_origin=lambda name: POLICIES.origin(name.removeprefix("pinned.")))


def register_policy(name: str) -> Callable[[type[Policy]], type[Policy]]:
    """Class decorator registering a policy under ``name`` (duplicates raise)."""

    def deco(cls: type[Policy]) -> type[Policy]:
        POLICIES.add(name, cls)
        cls.name = name
        return cls

    return deco

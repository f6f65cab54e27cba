"""The events a workload yields: what a memory may see, and the truth it never sees."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ObserveTruth:
    """Ground truth of one observation; never shown to a memory.

    ``slot`` is ``"entity.attribute"`` (or ``None`` for noise), ``kind`` one of the
    workload's observation kinds (for ``contradiction``: fact, canonical_update,
    hard_update, distractor).
    """

    slot: str | None
    value: str | None
    kind: str


@dataclass(frozen=True, slots=True)
class QueryTruth:
    """Ground truth of one query: the slot asked for, its current value, the values
    it held before (stale), and the category of the slot's last write."""

    slot: str
    value: str
    stale: frozenset[str]
    category: str


@dataclass(frozen=True, slots=True)
class Observe:
    """Something the agent saw. ``meta`` is visible to the memory, ``truth`` is not."""

    t: int
    text: str
    truth: ObserveTruth
    meta: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Query:
    """A question asked at time ``t``; it is never stored in memory."""

    t: int
    text: str
    truth: QueryTruth


@dataclass(frozen=True, slots=True)
class Tick:
    """A day boundary at time ``t``, where a memory may consolidate."""

    t: int


Event = Observe | Query | Tick

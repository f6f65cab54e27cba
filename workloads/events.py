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

_new = object.__new__
# the slots' own setters, field by field (``make_observe``)
_SET_OBSERVE = tuple(vars(Observe)[f].__set__ for f in ("t", "text", "truth", "meta"))


def make_observe(t: int, text: str, truth: ObserveTruth,
                 meta: dict[str, str] | None = None) -> Observe:
    """``Observe(t, text, truth, meta or {})``, the same frozen event, its fields set
    through their slots, cheaper than the ``object.__setattr__`` call per field of a
    frozen dataclass's ``__init__`` (a stream makes thousands)."""
    ev = _new(Observe)
    set_t, set_text, set_truth, set_meta = _SET_OBSERVE
    set_t(ev, t)
    set_text(ev, text)
    set_truth(ev, truth)
    set_meta(ev, {} if meta is None else meta)
    return ev


TICKS_KEPT = 1 << 16  # ``tick_at`` keeps the ticks of times below this
_TICKS: list[Tick] = []


def tick_at(t: int) -> Tick:
    """``Tick(t)``: one instance per time below ``TICKS_KEPT``, made once a process (a
    tick is immutable, and a turn-based stream yields one a turn)."""
    if 0 <= t < TICKS_KEPT:
        if t >= len(_TICKS):
            end = min(TICKS_KEPT, max(t + 1, 2 * len(_TICKS)))
            _TICKS.extend(Tick(i) for i in range(len(_TICKS), end))
        return _TICKS[t]
    return Tick(t)

"""The current ``contradiction`` and ``contradiction.retrievable`` (version 2): version
1's streams (``workloads.contradiction``), draw for draw, with day boundaries. A turn
stream of ``turns_per_day`` turns a day gets a ``Tick`` just before the first capture of
each new day, so a memory that consolidates at day boundaries (lethe) does so here too.
The Tick comes right before a capture, at that capture's turn, so a policy that expires
at ticks as well as at adds (ttl, window) removes at the tick exactly what the capture's
add would have removed: nothing any query sees changes, only lethe's consolidation runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fbench.clock import Clock
from workloads.contradiction import (
    ContradictionParams,
    ContradictionRetrievableV1,
    ContradictionV1,
    RetrievableParams,
    stream,
)
from workloads.events import Event, Observe, Tick
from workloads.registry import register_workload

TURNS_PER_DAY = 1
DAYS = (
    " Version 2: version 1's stream draw for draw, plus a Tick (a day boundary, where a "
    "memory may consolidate) just before the first capture of each day of "
    "`turns_per_day` turns (default 1, 0: no Tick). Default 1 because one turn is one "
    "day of the Lethe seed's clock, the clock lethe_agent runs turn streams on (one "
    "step a day, consolidating every step): lethe's half-life of 7 and cold grace of 1 "
    "are in the workload's unit, turns here, and a longer day only delays the deletions "
    "its decay has already decided. A Tick sits at its capture's turn, so ttl and "
    "window, which also expire at Ticks, remove there what the capture would have: "
    "every reference policy but lethe (and pinned.lethe) scores as on version 1 (a test "
    "checks it); lethe_agent, which consolidated at every step of a stream without "
    "Ticks, consolidates at the Ticks instead."
)


def with_days(events: Iterator[Event], turns_per_day: int) -> Iterator[Event]:
    """``events`` with a ``Tick(t)`` before the first capture of each new day of
    ``turns_per_day`` turns (days without a capture collapse into the next Tick)."""
    if turns_per_day <= 0:
        yield from events
        return
    day = 0
    for ev in events:
        if isinstance(ev, Observe) and ev.t // turns_per_day > day:
            day = ev.t // turns_per_day
            yield Tick(ev.t)
        yield ev


def _check_days(turns_per_day: int) -> None:
    if turns_per_day < 0:
        raise ValueError(f"turns_per_day must be >= 0 (0: no Tick), got {turns_per_day}")


@dataclass(frozen=True)
class ContradictionDayParams(ContradictionParams):
    """Parameters of ``contradiction`` (version 2): version 1's and the day length."""

    turns_per_day: int = TURNS_PER_DAY

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_days(self.turns_per_day)


@dataclass(frozen=True)
class RetrievableDayParams(RetrievableParams):
    """Parameters of ``contradiction.retrievable`` (version 2)."""

    turns_per_day: int = TURNS_PER_DAY

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_days(self.turns_per_day)


@register_workload
class Contradiction(ContradictionV1):
    """Forgetting-Bench with day boundaries (version 2)."""

    version = "2"
    Params: type[ContradictionParams] = ContradictionDayParams
    description = ContradictionV1.description.removeprefix(
        "Version 1 (no Tick) of contradiction. ") + DAYS

    def events(self, seed: int, horizon: int, params: ContradictionParams) -> Iterator[Event]:
        assert isinstance(params, ContradictionDayParams | RetrievableDayParams)
        return stream(seed, horizon, params, params.turns_per_day)

    def clock(self, params: ContradictionParams) -> Clock:
        """Turns, ``turns_per_day`` of them a day (no days at 0)."""
        days = getattr(params, "turns_per_day", 0)
        return Clock("turns", days or None)


@register_workload
class ContradictionRetrievable(Contradiction):
    """The retrievable variant with day boundaries (version 2)."""

    name = "contradiction.retrievable"
    Params = RetrievableDayParams
    description = ContradictionRetrievableV1.description.removeprefix(
        "Version 1 (no Tick) of contradiction.retrievable. ") + DAYS

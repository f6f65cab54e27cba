"""Time in fbench: a workload's clock, and the durations a policy's parameters hold.

A stream's time ``t`` is a count of its clock's ``unit``: ``turns`` (one observation or
question a turn: ``contradiction``, StateBench) or ``days`` (a day index, every capture
of a day at the same ``t``: the lifecycle family). ``turns_per_day`` is how many turns
make a day on a turn clock that has days (``contradiction``'s ``turns_per_day``); it is
None where a day means nothing (StateBench), and on a day clock, whose captures per day
vary. A workload declares its clock with a ``clock(params)`` method; one without it has
the clock of its ``horizon_unit``, with no days on a turn clock.

A policy parameter that is a length of time (a half-life, a time constant, a window, a
maximum age, a grace period) is declared with ``duration(default)``. Its value is a
number of the stream's unit, and that is what the policy reads. At the command line and
in a sweep's config it may also carry a unit, ``30d`` or ``150t``: the harness converts
it on the workload's clock (``convert``) before the policy sees it.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

DURATION = "fbench.duration"  # the field metadata key marking a duration
UNITS = {"t": "turns", "d": "days"}
_TEXT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*([tTdD]?)\s*$")


def duration(default: float) -> Any:
    """A dataclass field holding a duration in the stream's unit, ``default`` by default."""
    return dataclasses.field(default=default, metadata={DURATION: True})


def is_duration(cls: type, name: str) -> bool:
    """Whether field ``name`` of the params dataclass ``cls`` is a duration."""
    fields = {f.name: f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) \
        else {}
    return name in fields and bool(fields[name].metadata.get(DURATION))


@dataclass(frozen=True)
class Clock:
    """The unit of a stream's time and, on a turn clock with days, the turns in a day."""

    unit: str
    turns_per_day: int | None = None

    def per(self, unit: str) -> float | None:
        """How many of this clock's units make one ``unit`` ("turns" or "days"); None
        when this clock cannot express it."""
        if unit == self.unit:
            return 1.0
        if self.unit == "turns" and unit == "days" and self.turns_per_day:
            return float(self.turns_per_day)
        return None

    def describe(self) -> str:
        days = f", {self.turns_per_day} a day" if self.turns_per_day else ""
        return f"{self.unit}{days}"


def clock_of(workload: Any, params: Any) -> Clock:
    """The clock of ``workload`` run with ``params``."""
    declare = getattr(workload, "clock", None)
    if callable(declare):
        clock = declare(params)
        if isinstance(clock, Clock):
            return clock
    return Clock(str(getattr(workload, "horizon_unit", "")))


def parse(text: str) -> tuple[float, str | None] | None:
    """``30d`` -> (30.0, "days"), ``150t`` -> (150.0, "turns"), ``7`` -> (7.0, None);
    None when ``text`` is not a duration."""
    match = _TEXT.match(text)
    if match is None:
        return None
    number = float(text.strip().rstrip("tTdD"))
    suffix = match.group(2).lower()
    return number, UNITS[suffix] if suffix else None


def convert(key: str, text: str, clock: Clock, workload: str) -> float | None:
    """The number of ``clock`` units ``text`` (a duration with a unit) is; None for a bare
    number, which is already in the stream's unit. A duration the clock cannot express
    raises ``ValueError`` with one line naming the fix."""
    number, unit = parse(text) or (0.0, None)
    if unit is None:
        return None
    factor = clock.per(unit)
    if factor is None:
        own = {"turns": "t", "days": "d"}.get(clock.unit)
        hint = (f"; give {key} in {clock.unit} ({key}=N{own}, or a bare N)" if own
                else f"; give {key} as a bare number, in {clock.unit or 'its unit'}")
        raise ValueError(f"parameter {key}={text!r}: workload {workload!r} counts "
                         f"{clock.describe()} and has no {unit}{hint}")
    return number * factor

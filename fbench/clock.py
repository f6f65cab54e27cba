"""Time in fbench: a workload's clock, and the durations a policy's parameters hold.

A stream's time ``t`` is a count of its clock's ``unit``: ``turns`` (one observation or
question a turn: ``contradiction``, StateBench) or ``days`` (a day index, every capture
of a day at the same ``t``: the lifecycle family). ``turns_per_day`` is how many turns
make a day on a turn clock that has days (``contradiction``'s ``turns_per_day``); it is
None where a day means nothing (StateBench), and on a day clock, whose captures per day
vary. A workload declares its clock with a ``clock(params)`` method; one without it has
the clock of its ``horizon_unit``, with no days on a turn clock.

A policy parameter that is a length of time (a half-life, a time constant, a window, a
maximum age, a grace period) is declared with ``duration("150t", "18d")``: its
defaults with units, the first the workload's clock can express applying there. Its
value is a number of the stream's unit, and that is what the policy reads. At the command line and
in a sweep's config it may also carry a unit, ``30d`` or ``150t``: the harness converts
it on the workload's clock (``convert``) before the policy sees it.

A memory that wraps a library reading the wall clock (``time.time()``,
``datetime.now()``) runs it on the stream's clock: the harness gives the adapter the
workload's ``Clock`` (``runner.adapters.UsesClock``), and ``simulate(library, clock)``
makes the library's time ``EPOCH`` plus ``t`` turns or days (``seconds_per_unit``).
"""

from __future__ import annotations

import dataclasses
import datetime as _real_datetime
import re
import time as _real_time
import types
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from typing import Any

DURATION = "fbench.duration"  # the field metadata key marking a duration
UNITS = {"t": "turns", "d": "days"}
_TEXT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*([tTdD]?)\s*$")


def duration(*defaults: str) -> Any:
    """A dataclass field holding a duration in the stream's unit. ``defaults`` are its
    default with a unit, in order of preference (``"150t", "18d"``): on a workload's
    clock the first that clock can express is the default (``default_on``). The field's
    own default is the first's number, for a clock that can express none of them."""
    first = parse(defaults[0]) if defaults else None
    if first is None:
        raise ValueError(f"duration defaults must be numbers with a unit, got {defaults}")
    return dataclasses.field(default=first[0], metadata={DURATION: defaults})


def default_on(field: dataclasses.Field[Any], clock: Clock) -> float:
    """The default of the duration ``field`` on ``clock``: its first default the clock
    can express, converted; the field's own default if none."""
    for text in field.metadata.get(DURATION, ()):
        number, unit = parse(text) or (0.0, None)
        factor = clock.per(unit) if unit is not None else None
        if factor is not None:
            return number * factor
    return float(field.default)  # type: ignore[arg-type]


def is_duration(cls: type, name: str) -> bool:
    """Whether field ``name`` of the params dataclass ``cls`` is a duration."""
    return dataclasses.is_dataclass(cls) and any(
        f.name == name and DURATION in f.metadata for f in dataclasses.fields(cls))


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


DAYS = Clock("days")  # a day clock: the one an adapter starts on until it is given one


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


def convert(key: str, text: str, clock: Clock, workload: str) -> float:
    """The number of ``clock`` units the duration ``text`` is (a bare number is one of
    the stream's units already). A duration the clock cannot express raises
    ``ValueError`` with one line naming the fix."""
    parsed = parse(text)
    if parsed is None:
        raise ValueError(f"parameter {key}={text!r} is not a duration (N, Nt or Nd)")
    number, unit = parsed
    factor = 1.0 if unit is None else clock.per(unit)
    if factor is None:
        own = {"turns": "t", "days": "d"}.get(clock.unit)
        hint = (f"; give {key} in {clock.unit} ({key}=N{own}, or a bare N)" if own
                else f"; give {key} as a bare number, in {clock.unit or 'its unit'}")
        raise ValueError(f"parameter {key}={text!r}: workload {workload!r} counts "
                         f"{clock.describe()} and has no {unit}{hint}")
    return number * factor


# ---------------------------------------------------------------- the wall clock

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)  # stream time 0 on a simulated wall clock
DAY_SECONDS = 86_400.0


def seconds_per_unit(clock: Clock) -> float:
    """Wall seconds of one unit of ``clock``: a day is a day; a turn is a day over
    ``turns_per_day``, and a day where the stream has no days (a wall-clock library
    then sees one step of its stream a day, as fbench's incumbents do)."""
    if clock.unit == "turns" and clock.turns_per_day:
        return DAY_SECONDS / clock.turns_per_day
    return DAY_SECONDS


_now: list[float] = []  # the simulated time in seconds since the Unix epoch; []: real


class _SimulatedDatetime(datetime):
    """``datetime`` whose ``now``, ``utcnow`` and ``today`` read the simulated clock."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> _SimulatedDatetime:
        if not _now:
            return super().now(tz)
        if tz is not None:
            return cls.fromtimestamp(_now[0], tz)
        return cls.fromtimestamp(_now[0], UTC).replace(tzinfo=None)

    @classmethod
    def utcnow(cls) -> _SimulatedDatetime:
        return cls.now(UTC).replace(tzinfo=None) if _now else super().utcnow()

    @classmethod
    def today(cls) -> _SimulatedDatetime:
        return cls.now()


class _SimulatedDate(date):
    @classmethod
    def today(cls) -> _SimulatedDate:
        day = _SimulatedDatetime.now().date()
        return cls(day.year, day.month, day.day)


def _time() -> float:
    return _now[0] if _now else _real_time.time()


def _time_ns() -> int:
    return round(_now[0] * 1e9) if _now else _real_time.time_ns()


class _Module(types.ModuleType):
    """A stand-in for ``time`` or ``datetime`` in one library module: the clock's
    functions replaced, everything else the real module's."""

    def __init__(self, real: types.ModuleType, replaced: dict[str, Any]) -> None:
        super().__init__(real.__name__)
        self.__dict__.update(replaced)
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_real"], name)


_STAND_INS: dict[Any, Any] = {
    _real_time: _Module(_real_time, {"time": _time, "time_ns": _time_ns}),
    _real_time.time: _time,
    _real_time.time_ns: _time_ns,
    _real_datetime: _Module(_real_datetime, {"datetime": _SimulatedDatetime,
                                             "date": _SimulatedDate}),
    datetime: _SimulatedDatetime,
    date: _SimulatedDate,
}


class SimulatedClock:
    """A library's wall clock made the stream's: ``simulate(library_module, clock)``
    points the module's names for the time (``time``, ``time.time``, ``time.time_ns``,
    ``datetime``, ``datetime.datetime``, ``date``: however it imported them) at this
    clock, and ``at(t)`` before each call into the library sets it to stream time ``t``
    (``EPOCH`` plus ``t`` units, and one second more for each call at the same ``t``,
    so what the library stamps stays in stream order). One clock per process: a job
    runs alone in its process, inline or in a Ray worker. Only the named modules
    change; a library reading the time in native code needs a process of its own under
    libfaketime instead (``fbench.faketime``)."""

    def __init__(self, clock: Clock, modules: tuple[types.ModuleType, ...] = ()) -> None:
        self.use_clock(clock)
        self._t: float | None = None
        self._within = 0
        _now[:] = [EPOCH.timestamp()]  # (not a clock a job before this one left)
        for module in modules:
            for name, value in list(vars(module).items()):
                stand_in = _stand_in(value)
                if stand_in is not None:
                    setattr(module, name, stand_in)

    def use_clock(self, clock: Clock) -> None:
        """Count ``t`` on ``clock`` from the next ``at`` on (a clock made before the
        adapter is given the workload's)."""
        self.clock = clock
        self._unit = seconds_per_unit(clock)

    def at(self, t: float) -> datetime:
        """Set the clock to stream time ``t``; the wall time it now reads."""
        if t != self._t:
            self._t, self._within = t, 0
        self._within += 1
        seconds = EPOCH.timestamp() + t * self._unit + self._within
        _now[:] = [seconds]
        return datetime.fromtimestamp(seconds, UTC)


def _stand_in(value: Any) -> Any:
    try:
        return _STAND_INS.get(value)
    except TypeError:  # (unhashable)
        return None


def simulate(library: types.ModuleType, clock: Clock, *more: types.ModuleType
             ) -> SimulatedClock:
    """Run ``library`` (and the modules in ``more``) on ``clock``: one line in an
    adapter's ``use_clock``, then ``.at(t)`` before each call into it."""
    return SimulatedClock(clock, (library, *more))

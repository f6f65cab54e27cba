"""mem0's "today", on the simulated clock.

mem0 2.2 decides expiry in ``mem0.memory.main._payload_is_expired``:
``date.fromisoformat(expiration_date) < datetime.now(timezone.utc).date()``, reading the
module's global name ``datetime``. ``install(main)`` replaces that one name with
``SimulatedDatetime``, a ``datetime`` subclass whose ``now()`` is the time ``set_now``
last gave (one clock per process: the harness runs one job at a time in a process, and
each job sets it before every call into mem0). mem0's ``created_at`` and ``updated_at``
stamps, read through the same name, follow the simulated clock too. Nothing of mem0's
is edited; no other module's ``datetime`` changes.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from types import ModuleType

_now: datetime | None = None  # aware; None: the real time (a naive now() is in UTC)


class SimulatedDatetime(datetime):
    """``datetime`` whose ``now()`` is the simulated clock once a job has set it."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> SimulatedDatetime:
        if _now is None:
            return super().now(tz)
        if tz is not None:
            return cls.fromtimestamp(_now.timestamp(), tz)
        return cls.fromtimestamp(_now.timestamp(), UTC).replace(tzinfo=None)


def install(main: ModuleType) -> None:
    """Point mem0's ``main`` module at the simulated clock (idempotent)."""
    if getattr(main, "datetime", None) is not SimulatedDatetime:
        main.datetime = SimulatedDatetime  # type: ignore[attr-defined]


def set_now(now: datetime) -> None:
    """The time mem0 reads from now on (aware)."""
    global _now
    _now = now

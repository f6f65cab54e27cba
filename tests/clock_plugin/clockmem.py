"""An outside adapter for ``ttlcache`` (which reads ``time.time()``), on the workload's
clock through fbench's public helper: ``simulate`` in ``use_clock``, ``at(t)`` before
each call into the library."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import ttlcache

from fbench.clock import Clock, SimulatedClock, simulate
from runner.adapters import Hit


@dataclass(frozen=True)
class Params:
    ttl_days: float = 3.0


class ClockMem:
    """ttlcache with a time-to-live of ``ttl_days`` days of the stream."""

    Params = Params

    def __init__(self, params: Params) -> None:
        self.cache = ttlcache.TtlCache(params.ttl_days * 86_400)
        self.clock: SimulatedClock | None = None
        self.expired = 0
        self.lengths: dict[int, int] = {}

    def use_clock(self, clock: Clock) -> None:
        self.clock = simulate(ttlcache, clock)

    def _now(self, t: int) -> None:
        assert self.clock is not None, "the harness gives the clock before any event"
        self.clock.at(t)
        for key in self.cache.expire():
            del self.lengths[key]
            self.expired += 1

    def observe(self, obs_id: int, t: int, text: str, meta: Mapping[str, str]) -> None:
        self._now(t)
        self.cache.put(obs_id, text)
        self.lengths[obs_id] = len(text.split())

    def query(self, t: int, text: str, k: int) -> list[Hit]:
        self._now(t)
        return [Hit(key, 1.0) for key in self.cache.search(text, k)]

    def tick(self, t: int) -> None:
        self._now(t)

    def holds(self, obs_id: int) -> bool:
        return obs_id in self.cache.items

    def size(self) -> int:
        return len(self.cache.items)

    def tokens(self) -> int:
        return sum(self.lengths.values())

    def forgotten(self) -> dict[str, int]:
        return {"expired": self.expired} if self.expired else {}

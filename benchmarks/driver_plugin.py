"""The trivial job ``bench_driver`` runs by the 100,000: a memory that keeps nothing and a
workload of 10 events. What a sweep of them costs is the driver's (and the executor's)
own cost per job, not the jobs'. Named as file plugins: ``benchmarks.driver_plugin:Noop``
and ``benchmarks.driver_plugin:TenEvents``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from workloads import Observe, ObserveTruth, Query, QueryTruth, Tick, Vocabulary


class Noop:
    """Keeps nothing, answers nothing."""

    description = "a memory that keeps nothing (the driver benchmark's job)"

    def observe(self, obs_id: int, t: int, text: str, meta: Any) -> None:
        pass

    def query(self, t: int, text: str, k: int) -> list[Any]:
        return []

    def tick(self, t: int) -> None:
        pass

    def holds(self, obs_id: int) -> bool:
        return False

    def size(self) -> int:
        return 0

    def tokens(self) -> int:
        return 0

    def forgotten(self) -> dict[str, int]:
        return {}


@dataclass(frozen=True)
class TenParams:
    pass


class TenEvents:
    """Two days: four observations and a question a day, then the day's tick."""

    name = "bench.ten_events"
    version = "1"
    horizon_unit = "days"
    default_horizon = 2
    Params = TenParams
    description = "10 events: the driver benchmark's workload"
    categories: ClassVar = {"fact": "a fact"}
    update_kinds: ClassVar = {"fact": "canonical"}

    def vocabulary(self) -> Vocabulary:
        return Vocabulary(("x",), (("is", "value"),))

    def distinct_facts(self, params: TenParams) -> int:
        return 1

    def events(self, seed: int, horizon: int, params: TenParams) -> Iterator[Any]:
        for day in range(1, horizon + 1):
            for i in range(3):
                yield Observe(day, f"x is {seed + i}", ObserveTruth("x.is", str(seed + i),
                                                                    "fact"))
            yield Query(day, "what is x?", QueryTruth("x.is", str(seed + 2), frozenset(),
                                                      "fact"))
            yield Tick(day)

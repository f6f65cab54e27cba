"""A workload of people who move between cities: does the memory answer with the
city they live in now?"""

import random
from dataclasses import dataclass
from typing import ClassVar

from workloads import Observe, ObserveTruth, Query, QueryTruth, Tick, Vocabulary

PEOPLE = ("ana", "ben", "chloe", "dev", "eli", "fay", "gus", "hana")
CITIES = ("lisbon", "oslo", "quito", "lagos", "hanoi", "perth", "leeds", "cusco")


@dataclass(frozen=True)
class MovesParams:
    p_move: float = 0.3   # chance per person per day of a move
    questions: int = 4    # questions per day

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_move <= 1.0:
            raise ValueError(f"p_move must be in [0, 1], got {self.p_move}")


class Moves:
    name = "example.moves"
    version = "1"
    horizon_unit = "days"
    default_horizon = 60
    Params = MovesParams
    description = "People move between cities; each day asks where some of them live now."
    categories: ClassVar = {"fact": "people who never moved", "canonical": "people who moved"}
    update_kinds: ClassVar = {"update": "canonical"}

    def vocabulary(self) -> Vocabulary:
        return Vocabulary(PEOPLE, (("lives in", "city"),))

    def distinct_facts(self, params: MovesParams) -> int:
        return len(PEOPLE)

    def events(self, seed, horizon, params):
        rng = random.Random(seed)
        city = {p: rng.choice(CITIES) for p in PEOPLE}
        history = {p: set() for p in PEOPLE}
        for p in PEOPLE:
            yield Observe(0, f"{p} lives in {city[p]}.", ObserveTruth(f"{p}.city", city[p], "fact"))
        for day in range(1, horizon + 1):
            for p in PEOPLE:
                if rng.random() < params.p_move:
                    history[p].add(city[p])
                    city[p] = rng.choice([c for c in CITIES if c != city[p]])
                    yield Observe(day, f"{p} lives in {city[p]} now.",
                                  ObserveTruth(f"{p}.city", city[p], "update"))
            for _ in range(params.questions):
                p = rng.choice(PEOPLE)
                category = "canonical" if history[p] else "fact"
                yield Query(day, f"where does {p} live?", QueryTruth(
                    f"{p}.city", city[p], frozenset(history[p] - {city[p]}), category))
            yield Tick(day)

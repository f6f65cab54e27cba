"""The lifecycle generator, version 2: version 1's day stream plus what makes retrieval
and forgetting choices matter (``LifecycleParams2``):

- **Interfering mentions** (``p_interfere`` of the noise): one person asks about another
  person's captured fact, "Marco asked whether Priya's favorite drink is still tea." It
  asserts nothing (no slot), but it holds the attribute's phrase and names two people:
  the keyword extractor links it to the *asker's* slot (the first entity it reads), so a
  policy that deletes superseded entries deletes the asker's true fact; and it shares
  every word of a question about either person's attribute, so it competes for the
  top k.
- **Oblique questions** (``p_oblique`` of the questions): "Remind me, what drink for
  Priya?" names the subject and one word of the attribute's phrase only, so the
  fact's own capture does not stand out from the mentions and the clutter.
- **Rarely asked facts** (``rare_share`` of the durable facts, asked with weight
  ``rare_weight`` against 1): access signals (recency of use, frequency) mislead about
  what is still needed.

Everything else (captures, updates, ephemeral items, late facts, the category of a
question) is version 1's rule; the random draws differ from version 1's from the start
(the rarely asked facts are drawn when the stream begins).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from itertools import accumulate

from workloads.events import Observe, Query
from workloads.lifecycle.params import LifecycleParams
from workloads.lifecycle.stream import DayStream
from workloads.lifecycle.vocab import NOISE_TAGS, PEOPLE, Fact, capitalize

OBLIQUE = "Remind me, what {noun} for {E}?"
INTERFERE = "{A} asked whether {E}'s {phrase} is still {v}."


@dataclass(frozen=True)
class LifecycleParams2(LifecycleParams):
    """Version 2's parameters: version 1's, and interference, oblique questions and
    rarely asked facts."""

    p_interfere: float = 0.25
    p_oblique: float = 0.3
    rare_share: float = 0.3
    rare_weight: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("p_interfere", "p_oblique", "rare_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v}")
        if not 0.0 < self.rare_weight <= 1.0:
            raise ValueError(f"rare_weight must be in (0, 1], got {self.rare_weight}")


class DayStream2(DayStream):
    """Version 2's day stream (see the module doc)."""

    p: LifecycleParams2

    def __init__(self, rng: random.Random, horizon: int, p: LifecycleParams2) -> None:
        super().__init__(rng, horizon, p)
        facts = [f for day in sorted(self.schedule) for f in self.schedule[day]]
        n_rare = round(p.rare_share * len(facts))
        self.rare = frozenset(f.slot for f in rng.sample(facts, n_rare))
        self._captured_people: tuple[int, list[Fact]] = (0, [])
        self._cum_weights: tuple[list[Fact], int, list[float]] = ([], 0, [])

    def _people(self) -> list[Fact]:
        """The captured facts about a person, in capture order (``captured`` only grows)."""
        if self._captured_people[0] != len(self.captured):
            self._captured_people = (len(self.captured),
                                     [f for f in self.captured if f.entity in PEOPLE])
        return self._captured_people[1]

    def noise(self, t: int) -> Observe:
        rng = self.rng
        people = self._people()
        if people and rng.random() < self.p.p_interfere:
            fact = rng.choice(people)
            asker = rng.choice([p for p in PEOPLE if p != fact.entity])
            text = INTERFERE.format(A=asker.title(), E=fact.display, phrase=fact.attr.phrase,
                                    v=rng.choice(fact.attr.values))
            return self._observe(t, text, None, None, "interference", rng.choice(NOISE_TAGS))
        return super().noise(t)

    def pick(self, pool: list[Fact]) -> Fact:
        # ``choices(pool, weights)`` accumulates the weights, then draws as with these
        # cumulative weights: the same draw, the sums made once per pool
        kept = self._cum_weights
        if kept[0] is not pool or kept[1] != len(pool):
            cum = list(accumulate(self.p.rare_weight if f.slot in self.rare else 1.0
                                  for f in pool))
            kept = self._cum_weights = (pool, len(pool), cum)
        return self.rng.choices(pool, cum_weights=kept[2])[0]

    def question(self, fact: Fact, t: int) -> Query:
        q = super().question(fact, t)
        if self.rng.random() >= self.p.p_oblique:
            return q
        return Query(t, oblique(fact), q.truth)


@cache
def oblique(fact: Fact) -> str:
    """The oblique question about ``fact``: its subject and one word of its phrase."""
    noun = fact.attr.phrase.split()[-1]
    return capitalize(OBLIQUE.format(noun=noun, E=fact.display))

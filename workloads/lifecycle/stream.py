"""The lifecycle generator: the seeded random source of a stream and the per-day state
machine that draws its captures, questions and ticks."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator

from workloads.events import (
    Event,
    Observe,
    ObserveTruth,
    Query,
    QueryTruth,
    make_observe,
    tick_at,
)
from workloads.lifecycle.params import LifecycleParams
from workloads.lifecycle.vocab import (
    CAPTURE_FRAMES,
    DURABLE_BANK,
    EPHEMERAL_BANK,
    EPHEMERAL_FRAMES,
    EPHEMERAL_TAGS,
    NOISE_LINES,
    NOISE_PREDICATES,
    NOISE_TAGS,
    PEOPLE,
    TAGS,
    UPDATE_FRAMES,
    Fact,
    capitalize,
)


def stream_seed(name: str, seed: int) -> int:
    """The generator seed of (workload name, seed): stable across processes."""
    return int.from_bytes(hashlib.sha256(f"{name}:{seed}".encode()).digest()[:8], "big")


class DayStream:
    """The state of one stream while it flows: one day at a time."""

    def __init__(self, rng: random.Random, horizon: int, p: LifecycleParams) -> None:
        self.rng = rng
        self.p = p
        facts = rng.sample(DURABLE_BANK, p.n_durable)
        n_late = round(p.late_share * p.n_durable)
        self.schedule: dict[int, list[Fact]] = {}
        early_end = min(p.early_days, horizon)
        for i, fact in enumerate(facts):
            day = rng.randrange(horizon // 2, horizon) if i < n_late else rng.randrange(early_end)
            self.schedule.setdefault(day, []).append(fact)
        self.late = frozenset(f.slot for f in facts[:n_late])
        self.hot: Fact | None = rng.choice(facts[n_late:] or facts) if p.hot_per_day else None
        self.current: dict[str, str] = {}
        self.history: dict[str, set[str]] = {}
        self.written: dict[str, int] = {}  # slot -> day its current value was written
        self.captured: list[Fact] = []  # durable facts in capture order
        self.valid_until: dict[str, int] = {}  # ephemeral slot -> last valid day
        # slot -> ((value, values it held), the values it held before ``value``)
        self._stale: dict[str, tuple[tuple[str, int], frozenset[str]]] = {}

    def _write(self, fact: Fact, value: str, t: int) -> None:
        self.current[fact.slot] = value
        self.history.setdefault(fact.slot, set()).add(value)
        self.written[fact.slot] = t

    def _new_value(self, fact: Fact) -> str:
        old = self.current.get(fact.slot)
        return self.rng.choice([v for v in fact.attr.values if v != old])

    def _observe(self, t: int, text: str, fact: Fact | None, value: str | None, kind: str,
                 tags: str) -> Observe:
        slot = fact.slot if fact is not None else None
        return make_observe(t, text, ObserveTruth(slot, value, kind),
                            {"tags": tags, "session": f"day-{t}"})

    def durable(self, fact: Fact, t: int) -> Observe:
        rng = self.rng
        value = self._new_value(fact)
        text = rng.choice(CAPTURE_FRAMES).format(c=fact.fill(fact.attr.capture, value))
        tags = rng.choice(TAGS[fact.attr.kind])
        self._write(fact, value, t)
        self.captured.append(fact)
        return self._observe(t, capitalize(text), fact, value, "durable", tags)

    def update(self, t: int) -> Observe:
        rng = self.rng
        fact = rng.choice(self.captured)
        value = self._new_value(fact)
        if rng.random() < self.p.p_paraphrase:
            kind, template = "hard_update", fact.attr.paraphrase
        else:
            kind, template = "update", fact.attr.update
        text = rng.choice(UPDATE_FRAMES).format(c=fact.fill(template, value))
        tags = rng.choice(TAGS[fact.attr.kind])
        self._write(fact, value, t)
        return self._observe(t, capitalize(text), fact, value, kind, tags)

    def ephemeral(self, t: int) -> Observe:
        rng = self.rng
        fact = rng.choice(EPHEMERAL_BANK)
        value = self._new_value(fact)
        text = rng.choice(EPHEMERAL_FRAMES).format(c=fact.fill(fact.attr.capture, value))
        tags = rng.choice(EPHEMERAL_TAGS)
        self._write(fact, value, t)
        self.valid_until[fact.slot] = t + self.p.ephemeral_days - 1
        return self._observe(t, capitalize(text), fact, value, "ephemeral", tags)

    def noise(self, t: int) -> Observe:
        rng = self.rng
        if rng.random() < self.p.p_noise_mention:
            text = f"{rng.choice(PEOPLE).title()} {rng.choice(NOISE_PREDICATES)}."
        else:
            text = rng.choice(NOISE_LINES)
        return self._observe(t, text, None, None, "noise", rng.choice(NOISE_TAGS))

    def question(self, fact: Fact, t: int) -> Query:
        slot = fact.slot
        value = self.current[slot]
        ephemeral = slot in self.valid_until
        recent = ephemeral or t - self.written[slot] < self.p.recent_days
        text = self.rng.choice(fact.questions)
        return Query(t, text, QueryTruth(
            slot, value, self.stale(slot, value), "recent" if recent else "durable"))

    def stale(self, slot: str, value: str) -> frozenset[str]:
        """The values ``slot`` held before its current ``value``, made once per write
        (a fact is asked about many times between writes)."""
        key = (value, len(self.history[slot]))  # a slot's history only grows
        kept = self._stale.get(slot)
        if kept is None or kept[0] != key:
            kept = self._stale[slot] = (key, frozenset(self.history[slot] - {value}))
        return kept[1]

    def pick(self, pool: list[Fact]) -> Fact:
        """The fact a question asks about, from its pool (uniform)."""
        return self.rng.choice(pool)

    def recent_pool(self, t: int) -> list[Fact]:
        pool = [f for f in EPHEMERAL_BANK if self.valid_until.get(f.slot, -1) >= t]
        pool += [f for f in self.captured if t - self.written[f.slot] < self.p.recent_days]
        return pool

    def day(self, t: int) -> Iterator[Event]:
        rng, p = self.rng, self.p
        burst = p.burst_share > 0 and rng.random() < p.burst_share
        n_captures = p.burst_captures if burst else rng.randint(p.captures_min, p.captures_max)
        plan: list[Fact | None] = list(self.schedule.pop(t, []))
        plan += [None] * max(0, n_captures - len(plan))
        rng.shuffle(plan)
        for fact in plan:
            if fact is not None:
                yield self.durable(fact, t)
                continue
            r = rng.random()
            if r < p.p_update and self.captured:
                yield self.update(t)
            elif p.p_update <= r < p.p_update + p.p_ephemeral:
                yield self.ephemeral(t)
            else:
                yield self.noise(t)

        targets: list[Fact] = list(self.captured) if p.ask_all_durable else []
        if self.hot is not None and self.hot.slot in self.current:
            targets += [self.hot] * p.hot_per_day
        n_questions = p.burst_questions if burst else rng.randint(p.questions_min,
                                                                   p.questions_max)
        # nothing a question draws changes the pools: made once a day
        recent = self.recent_pool(t) if n_questions else []
        for _ in range(n_questions):
            if rng.random() < p.p_recent_question:
                pool = recent or self.captured
            else:
                pool = self.captured or recent
            if pool:
                targets.append(self.pick(pool))
        rng.shuffle(targets)
        for fact in targets:
            yield self.question(fact, t)
        yield tick_at(t)

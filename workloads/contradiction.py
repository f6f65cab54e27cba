"""The Forgetting-Bench stream: facts, value updates (some phrased to defeat an
extractor), distractors and interleaved queries, with the current value of every
slot known at every turn. Faithful draw-for-draw to the seed's generator.

This module holds version 1 (``contradiction@1``, ``contradiction.retrievable@1``: no
Tick); the current version 2, the same streams with day boundaries, is
``workloads.contradiction_days``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from workloads.events import (
    Event,
    Observe,
    ObserveTruth,
    Query,
    QueryTruth,
    make_observe,
    tick_at,
)
from workloads.registry import Vocabulary, register_retired_workload

ENTITIES = ("alice", "bob", "carol", "dan", "erin", "frank", "grace", "heidi", "ivan", "judy")


@dataclass(frozen=True)
class Attribute:
    name: str
    phrase: str
    values: tuple[str, ...]
    hard: tuple[str, str]
    noun: str  # a frame word a question shares, never the whole canonical phrase


ATTRIBUTES = (
    Attribute("home_city", "home city",
              ("boston", "denver", "austin", "seattle", "miami", "portland"),
              ("{E} relocated to {v}.", "{E} settled down in {v}."), "city"),
    Attribute("job_title", "job title",
              ("engineer", "teacher", "nurse", "pilot", "chef", "lawyer"),
              ("{E} started working as a {v}.", "{E} was promoted to {v}."), "job"),
    Attribute("favorite_food", "favorite food",
              ("ramen", "tacos", "sushi", "pizza", "curry", "falafel"),
              ("{E} cannot stop eating {v} lately.", "{E} is obsessed with {v} now."), "food"),
    Attribute("phone_model", "phone model",
              ("pixel", "iphone", "galaxy", "nokia", "oneplus", "moto"),
              ("{E} switched to a {v}.", "{E} upgraded to a {v}."), "phone"),
    Attribute("current_project", "current project",
              ("atlas", "orbit", "delta", "nimbus", "vertex", "cobalt"),
              ("{E} moved onto {v}.", "{E} now leads {v}."), "project"),
    Attribute("salary", "salary",
              ("90k", "100k", "110k", "120k", "130k", "140k"),
              ("{E} got a raise to {v}.", "{E} now earns {v}."), "pay"),
)

SUBJECTS = ("the weather", "a coworker", "the team", "a stranger", "the news", "a podcast")
PREDICATES = (
    "mentioned a delayed train this morning",
    "was surprisingly cheerful today",
    "talked about a movie over lunch",
    "spotted a hawk near the parking lot",
    "recommended a new coffee shop downtown",
    "complained about the printer again",
)

# Distractors of the retrievable variant: they name a person and an attribute's frame
# word (so they share vocabulary with questions) but assert no value.
OVERLAP = (
    "{E} complained about the {n} again.",
    "{E} talked about a {n} documentary over lunch.",
    "{E} asked the team for {n} advice.",
)

# Entity-major: the order of the query pool.
SLOTS = tuple((e, a) for e in ENTITIES for a in ATTRIBUTES)
# a distractor's text by (subject, predicate), made once; its truth, shared
DISTRACTOR_TEXT = {(s, p): f"{s[0].upper()}{s[1:]} {p}." for s in SUBJECTS for p in PREDICATES}
DISTRACTOR = ObserveTruth(None, None, "distractor")

# Query categories: the kind of the slot's last write.
CATEGORY = {"fact": "fact", "canonical_update": "canonical", "hard_update": "hard"}
CATEGORIES = {
    "fact": "slots never updated since their first fact",
    "canonical": "slots last updated in canonical phrasing",
    "hard": "slots last updated in a paraphrase the extractor cannot link",
}
# Observation kinds that change a slot's value, and how each is phrased.
UPDATE_KINDS = {"canonical_update": "canonical", "hard_update": "hard"}


def slot_key(entity: str, attr: Attribute) -> str:
    return f"{entity}.{attr.name}"


@dataclass(frozen=True)
class ContradictionParams:
    """Parameters of the ``contradiction`` workload."""

    p_query: float = 0.12
    p_update: float = 0.18
    p_hard: float = 0.4
    # Off by default (the seed's stream, draw for draw); the retrievable variant's knobs:
    hard_frame: bool = False    # hard updates open with the question's frame words
    noise_overlap: float = 0.0  # share of distractors naming a person and a frame word

    def __post_init__(self) -> None:
        for name in ("p_query", "p_update", "p_hard", "noise_overlap"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v}")
        if self.p_query + self.p_update > 1.0:
            raise ValueError(
                f"p_query + p_update must be at most 1, got {self.p_query + self.p_update}"
            )


def chooser(rng: random.Random) -> Callable[[int], int]:
    """``below(n)``: the index ``rng.choice`` of a sequence of ``n`` draws, with the same
    bits (CPython's ``choice`` is ``seq[rng._randbelow(len(seq))]``, and ``_randbelow``
    draws ``n.bit_length()`` bits until one is below ``n``), in one call instead of two."""
    getrandbits = rng.getrandbits

    def below(n: int) -> int:
        k = n.bit_length()
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return r

    return below


class _Slot:
    """One (entity, attribute) of a stream: its texts and truths, made once a stream."""

    __slots__ = ("attr", "key", "others", "question", "title", "truths")

    def __init__(self, entity: str, attr: Attribute) -> None:
        self.title = entity.title()
        self.attr = attr
        self.key = slot_key(entity, attr)
        self.question = f"What is {self.title}'s {attr.phrase}?"
        # the values an update may draw: after none, all; after ``old``, the others
        self.others = {old: tuple(v for v in attr.values if v != old)
                       for old in (None, *attr.values)}
        self.truths: dict[tuple[str, str], ObserveTruth] = {}

    def truth(self, value: str, kind: str) -> ObserveTruth:
        truth = self.truths.get((value, kind))
        if truth is None:
            truth = self.truths[value, kind] = ObserveTruth(self.key, value, kind)
        return truth


def stream(seed: int, horizon: int, params: ContradictionParams,
           turns_per_day: int) -> Iterator[Event]:
    """The Forgetting-Bench stream of ``seed``, draw for draw the seed's generator, with
    a ``Tick`` before the first capture of each day of ``turns_per_day`` turns (0: none;
    ``workloads.contradiction_days.with_days`` of the stream without them)."""
    rng = random.Random(seed)
    below, draw = chooser(rng), rng.random
    slots = [_Slot(e, a) for e, a in SLOTS]
    current: list[str | None] = [None] * len(slots)
    history: list[set[str]] = [set() for _ in slots]
    last_kind: list[str] = [""] * len(slots)
    p_hard, hard_frame = params.p_hard, params.hard_frame
    day = 0

    def assign(i: int, t: int) -> Observe:
        s = slots[i]
        old = current[i]
        values = s.others[old]
        value = values[below(len(values))]
        if old is None:
            kind, text = "fact", f"{s.title}'s {s.attr.phrase} is {value}."
        elif draw() < p_hard:
            hard = s.attr.hard
            kind, text = "hard_update", hard[below(len(hard))].format(E=s.title, v=value)
            if hard_frame:
                text = f"{s.title}'s {s.attr.noun} changed: {text}"
        else:
            kind, text = "canonical_update", f"{s.title}'s {s.attr.phrase} is now {value}."
        current[i] = value
        history[i].add(value)
        last_kind[i] = kind
        return make_observe(t, text, s.truth(value, kind))

    order = list(range(len(slots)))
    rng.shuffle(order)
    n_seed = min(len(order), horizon)  # (the turns after it: every slot is asserted)
    p_query, p_upd = params.p_query, params.p_query + params.p_update
    overlap = params.noise_overlap
    n_slots, n_subjects, n_predicates = len(slots), len(SUBJECTS), len(PREDICATES)
    n_entities, n_attributes, n_overlap = len(ENTITIES), len(ATTRIBUTES), len(OVERLAP)
    for t in range(horizon):
        if t < n_seed:
            ev = assign(order[t], t)
        else:
            r = draw()
            if r < p_query:
                i = below(n_slots)
                s, value = slots[i], current[i]
                assert value is not None
                yield Query(t, s.question, QueryTruth(
                    s.key, value, frozenset(history[i] - {value}), CATEGORY[last_kind[i]]))
                continue
            if r < p_upd:
                ev = assign(below(n_slots), t)
            elif overlap and draw() < overlap:
                entity, attr = ENTITIES[below(n_entities)], ATTRIBUTES[below(n_attributes)]
                text = OVERLAP[below(n_overlap)].format(E=entity.title(), n=attr.noun)
                ev = make_observe(t, text, DISTRACTOR)
            else:
                subject = SUBJECTS[below(n_subjects)]
                ev = make_observe(t, DISTRACTOR_TEXT[subject, PREDICATES[below(n_predicates)]],
                             DISTRACTOR)
        if turns_per_day and t // turns_per_day > day:  # a capture opens a new day
            day = t // turns_per_day
            yield tick_at(t)
        yield ev


@register_retired_workload
class ContradictionV1:
    """Forgetting-Bench: 10 entities × 6 attributes, updates, distractors, queries
    (version 1: no day boundaries)."""

    name = "contradiction"
    version = "1"
    horizon_unit = "turns"
    default_horizon = 3000
    Params: type[ContradictionParams] = ContradictionParams
    description = (
        "Version 1 (no Tick) of contradiction. "
        "Forgetting-Bench's stream, draw for draw: 10 people × 6 attributes, each slot "
        "asserted once in the first 60 turns; then every turn is a query (12%), a value "
        "update (18%; 40% of them hard paraphrases the keyword extractor cannot link) or a "
        "distractor that never matches a question. Horizon in turns (default 3,000). "
        "Measures whether stale values stop being retrieved once a slot is updated."
    )
    categories = CATEGORIES
    update_kinds = UPDATE_KINDS

    def distinct_facts(self, params: ContradictionParams) -> int:
        """The number of distinct slots (entity × attribute)."""
        return len(SLOTS)

    def vocabulary(self) -> Vocabulary:
        return Vocabulary(ENTITIES, tuple((a.phrase, a.name) for a in ATTRIBUTES))

    def events(self, seed: int, horizon: int, params: ContradictionParams) -> Iterator[Event]:
        return stream(seed, horizon, params, 0)


@dataclass(frozen=True)
class RetrievableParams(ContradictionParams):
    hard_frame: bool = True
    noise_overlap: float = 0.3


@register_retired_workload
class ContradictionRetrievableV1(ContradictionV1):
    """The contradiction stream where a hard update can be found and noise competes
    (version 1: no day boundaries)."""

    name = "contradiction.retrievable"
    Params = RetrievableParams
    description = (
        "Version 1 (no Tick) of contradiction.retrievable. "
        "The contradiction stream with two changes, so that retrieval and bloat matter: a "
        "hard update opens with the question's frame words (\"Alice's city changed: Alice "
        "relocated to denver.\"; still no canonical phrase, so the keyword extractor "
        "cannot link it, but a retriever can find it), and 30% of distractors name a "
        "person and an attribute's frame word without asserting a value (\"Bob asked the "
        "team for job advice.\"), so a hoarded distractor can crowd a question's top k."
    )

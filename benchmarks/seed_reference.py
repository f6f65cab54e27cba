"""A pure-Python re-implementation of the Forgetting-Bench seed: its stream, memory and
three analytic policies, written from ``docs/reference.md`` ("The seed's stream,
exactly" and "Its memory and scoring") and nothing else.

It is the baseline ``benchmarks/bench_seed.py`` times fbench against: the same
3,000-turn job, in the same process, in plain Python with no numpy. The seed's own code
re-embeds and re-sorts more than this (about twice the time: docs/reference.md, "Costs
and performance targets"), so a ratio against this baseline understates fbench's lead
over the seed. ``tests/test_seed_reference.py`` checks it reproduces the seed's
published seed-0 table, so the baseline is the seed's job and not an easier one.

Usage: ``python -m benchmarks.seed_reference [--seed 0] [--policy ebbinghaus]``.
"""

from __future__ import annotations

import argparse
import math
import random
import re
from dataclasses import dataclass, field

ENTITIES = ("alice", "bob", "carol", "dan", "erin", "frank", "grace", "heidi", "ivan", "judy")
ATTRIBUTES: tuple[tuple[str, str, tuple[str, ...], tuple[str, str]], ...] = (
    ("home_city", "home city", ("boston", "denver", "austin", "seattle", "miami", "portland"),
     ("{E} relocated to {v}.", "{E} settled down in {v}.")),
    ("job_title", "job title", ("engineer", "teacher", "nurse", "pilot", "chef", "lawyer"),
     ("{E} started working as a {v}.", "{E} was promoted to {v}.")),
    ("favorite_food", "favorite food", ("ramen", "tacos", "sushi", "pizza", "curry", "falafel"),
     ("{E} cannot stop eating {v} lately.", "{E} is obsessed with {v} now.")),
    ("phone_model", "phone model", ("pixel", "iphone", "galaxy", "nokia", "oneplus", "moto"),
     ("{E} switched to a {v}.", "{E} upgraded to a {v}.")),
    ("current_project", "current project",
     ("atlas", "orbit", "delta", "nimbus", "vertex", "cobalt"),
     ("{E} moved onto {v}.", "{E} now leads {v}.")),
    ("salary", "salary", ("90k", "100k", "110k", "120k", "130k", "140k"),
     ("{E} got a raise to {v}.", "{E} now earns {v}.")),
)
SUBJECTS = ("the weather", "a coworker", "the team", "a stranger", "the news", "a podcast")
PREDICATES = ("mentioned a delayed train this morning", "was surprisingly cheerful today",
              "talked about a movie over lunch", "spotted a hawk near the parking lot",
              "recommended a new coffee shop downtown", "complained about the printer again")
SALIENT = frozenset("prefers favorite always never allergic birthday deadline password lives "
                    "works married now changed moved switched important".split())
POLICIES = ("keep_everything", "last_write_wins", "ebbinghaus")
_TOKEN = re.compile(r"[a-z0-9]+")
_PHRASES = sorted(((a[1], a[0]) for a in ATTRIBUTES), key=lambda p: -len(p[0]))

Slot = tuple[str, str]


@dataclass(frozen=True)
class Event:
    """One turn: an observation (``query`` False) or a question, with its truth."""

    turn: int
    text: str
    query: bool
    slot: Slot | None
    value: str | None


def stream(seed: int = 0, turns: int = 3000, p_query: float = 0.12, p_update: float = 0.18,
           p_hard: float = 0.4) -> list[Event]:
    """The seed's stream: every draw of ``random.Random(seed)`` in the seed's order."""
    rng = random.Random(seed)
    slots = [(e, a[0]) for e in ENTITIES for a in ATTRIBUTES]
    attr = {a[0]: a for a in ATTRIBUTES}
    current: dict[Slot, str] = {}
    events: list[Event] = []

    def assign(turn: int, slot: Slot) -> Event:
        _, phrase, values, hard = attr[slot[1]]
        before = current.get(slot)
        value = rng.choice([v for v in values if v != before])
        who = slot[0].title()
        if before is None:
            text = f"{who}'s {phrase} is {value}."
        elif rng.random() < p_hard:
            text = rng.choice(hard).format(E=who, v=value)
        else:
            text = f"{who}'s {phrase} is now {value}."
        current[slot] = value
        return Event(turn, text, False, slot, value)

    order = list(slots)
    rng.shuffle(order)
    for turn, slot in enumerate(order[:turns]):
        events.append(assign(turn, slot))
    for turn in range(len(order), turns):
        r = rng.random()
        if r < p_query:
            slot = rng.choice([s for s in slots if s in current])
            phrase = attr[slot[1]][1]
            events.append(Event(turn, f"What is {slot[0].title()}'s {phrase}?", True,
                                slot, current[slot]))
        elif r < p_query + p_update:
            events.append(assign(turn, rng.choice(slots)))
        else:
            subject, predicate = rng.choice(SUBJECTS), rng.choice(PREDICATES)
            events.append(Event(turn, f"{subject[0].upper()}{subject[1:]} {predicate}.",
                                False, None, None))
    return events


def _fnv1a(token: str) -> int:
    h = 2166136261
    for byte in token.encode("utf-8"):
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def embed(text: str) -> dict[int, float]:
    """The hashing embedder, L2-normalized: bucket -> weight (empty for no tokens)."""
    counts: dict[int, int] = {}
    for tok in _TOKEN.findall(text.lower()):
        b = _fnv1a(tok) % 512
        counts[b] = counts.get(b, 0) + 1
    vec = {b: 1.0 + math.log(c) for b, c in counts.items()}
    norm = math.sqrt(sum(w * w for w in vec.values()))
    return {b: w / norm for b, w in vec.items()} if norm else {}


def importance(text: str) -> float:
    toks = _TOKEN.findall(text.lower())
    hits = sum(1 for t in toks if t in SALIENT)
    return min(1.0, min(1.0, 0.3 + 0.25 * hits) + min(0.2, 0.02 * len(toks)))


def extract(text: str) -> Slot | None:
    """The keyword teacher: the first known entity, plus the longest canonical phrase."""
    low = text.lower()
    entity = next((t for t in _TOKEN.findall(low) if t in ENTITIES), None)
    if entity is None:
        return None
    attribute = next((name for phrase, name in _PHRASES if phrase in low), None)
    return None if attribute is None else (entity, attribute)


@dataclass
class Entry:
    id: int
    turn: int
    text: str
    vec: dict[int, float]
    importance: float
    slot: Slot | None
    truth: Slot | None
    value: str | None
    superseded: bool = False


@dataclass
class Memory:
    """The seed's store under one policy (``POLICIES``); Ebbinghaus at the experiment's
    tau 150, gain 4, supersession factor 0.05, prune threshold 0.02."""

    policy: str
    tau: float = 150.0
    live: list[Entry] = field(default_factory=list)
    added: int = 0

    def add(self, event: Event) -> None:
        slot = extract(event.text)
        if slot is not None:
            for e in self.live:
                if e.slot == slot and not e.superseded:
                    e.superseded = True
        self.live.append(Entry(self.added, event.turn, event.text, embed(event.text),
                               importance(event.text), slot, event.slot, event.value))
        self.added += 1
        if self.policy == "last_write_wins":
            self.live = [e for e in self.live if not e.superseded]
        elif self.policy == "ebbinghaus":
            now = event.turn
            self.live = [e for e in self.live if self._retention(e, now) >= 0.02]

    def _retention(self, e: Entry, now: int) -> float:
        r = math.exp(-(now - e.turn) / (self.tau * (1 + 4 * e.importance)))
        return r * 0.05 if e.superseded else r

    def retrieve(self, text: str, now: int, k: int = 5) -> list[Entry]:
        q = embed(text)
        scored = []
        for e in self.live:
            rel = sum(w * e.vec.get(b, 0.0) for b, w in q.items())
            strength = 0.05 if (self.policy == "ebbinghaus" and e.superseded) else 1.0
            score = (0.15 * 0.999 ** (now - e.turn) + 0.15 * e.importance + 0.7 * rel) * strength
            scored.append((-score, -e.id, e))
        scored.sort(key=lambda s: (s[0], s[1]))
        return [s[2] for s in scored[:k]]


def run(seed: int = 0, policy: str = "ebbinghaus", turns: int = 3000) -> dict[str, float]:
    """One job: the seed's metrics (rates over queries) and the final size and tokens."""
    memory = Memory(policy)
    sums = {"contradiction_rate": 0.0, "stale_context_fraction": 0.0, "recall": 0.0,
            "top1_accuracy": 0.0, "precision": 0.0}
    queries = 0
    for event in stream(seed, turns):
        if not event.query:
            memory.add(event)
            continue
        hits = memory.retrieve(event.text, event.turn)
        correct = [e.truth == event.slot and e.value == event.value for e in hits]
        stale = [e.truth == event.slot and e.value != event.value for e in hits]
        queries += 1
        n = len(hits)
        sums["recall"] += any(correct)
        sums["contradiction_rate"] += any(stale)
        sums["top1_accuracy"] += bool(correct and correct[0])
        sums["precision"] += sum(correct) / n if n else 0.0
        sums["stale_context_fraction"] += sum(stale) / n if n else 0.0
    out = {m: s / queries for m, s in sums.items()}
    out["final_size"] = float(len(memory.live))
    out["final_tokens"] = float(sum(len(e.text.split()) for e in memory.live))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--policy", choices=POLICIES, default="ebbinghaus")
    ap.add_argument("--turns", type=int, default=3000)
    args = ap.parse_args()
    for metric, value in run(args.seed, args.policy, args.turns).items():
        print(f"{metric:<24}{value:.3f}")


if __name__ == "__main__":
    main()

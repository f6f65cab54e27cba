"""The ``statebench`` workload: StateBench's generated timelines, replayed as one fbench
stream and scored the fbench way (retrieval against ground truth, no LLM).

StateBench (``pip install 'fbench[statebench]'``; MIT) generates seeded timelines of
conversation turns, ``state_write`` and ``supersession`` events, and queries whose ground
truth is phrases a correct answer must mention and must not mention. fbench generates
them offline with the installed package's ``TimelineGenerator(seed)`` (never its Hugging
Face loader) and lays them out one after another on one clock of turns:

- every observation is one turn: a timeline's initial facts and environment, then its
  events in time order (turns as the speaker said them, each write's value; the writes'
  layer, event type and ``supersedes`` key are the memory's meta);
- a ``tick`` opens each timeline (a session boundary);
- ``distance`` StateBench filler facts (``statebench.runner.fact_padding``, the padding its own
  harness uses for compaction stress) come just before each query;
- each query is a slot of its own; an observation of the timeline before it holds the
  slot's *stale* value when it contains one of the query's ``must_not_mention`` phrases
  (those StateBench scores, ``phrase_quality.is_discriminative``), else its *current*
  value when it contains a ``must_mention`` phrase, both matched with StateBench's own
  ``contains_phrase``; anything else is noise. An observation belongs to the first later
  query it matches. So recall is a top-k holding what the answer must mention, and
  contradiction a top-k holding what it must not.

The query's category is its timeline's track. The stream runs until the horizon.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from fbench.extras import require
from workloads.events import Event, Observe, ObserveTruth, Query, QueryTruth, Tick
from workloads.registry import CATEGORY_NAME, Vocabulary

DEFAULT_TRACKS = "supersession,supersession_detection,environmental_freshness,supersession_maintain"
CURRENT, STALE = "current", "stale"


@dataclass(frozen=True)
class StateBenchParams:
    """``tracks``: StateBench tracks, comma-separated, taken in turn (one timeline each);
    ``distance``: filler facts between a timeline's last event and each of its queries."""

    tracks: str = DEFAULT_TRACKS
    distance: int = 0

    def __post_init__(self) -> None:
        names = self.track_list
        if not names or not all(CATEGORY_NAME.fullmatch(n) for n in names):
            raise ValueError(f"tracks must be comma-separated track names, got {self.tracks!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"tracks names a track twice: {self.tracks!r}")
        if self.distance < 0:
            raise ValueError(f"distance must be >= 0, got {self.distance}")

    @property
    def track_list(self) -> tuple[str, ...]:
        return tuple(n.strip() for n in self.tracks.split(",") if n.strip())


def statebench_version() -> str:
    """The installed StateBench's version (``fbench.extras.MissingExtra`` naming the
    statebench extra when it is absent)."""
    require("workload 'statebench'", ["statebench"])
    return metadata.version("statebench")


def known_tracks() -> tuple[str, ...]:
    import typing

    from statebench.schema.timeline import Track

    return typing.get_args(Track)


def _phrase(item: Any) -> str:
    return item if isinstance(item, str) else item.phrase


@dataclass(frozen=True)
class _Item:
    """One fbench event of a timeline before timing: an observation or a query."""

    text: str
    meta: dict[str, str]
    kind: str  # an observation's kind; "query" for a query
    query: int = -1  # a query's index in its timeline


def _items(tl: Any, distance: int, filler_seed: int) -> list[_Item]:
    from statebench.runner.fact_padding import generate_filler_facts

    items = [_Item(f.value, {"tags": "initial_state,persistent_facts"}, "initial")
             for f in tl.initial_state.persistent_facts]
    items += [_Item(v, {"tags": "initial_state,environment"}, "initial")
              for k, v in sorted(tl.initial_state.environment.items()) if k != "now"]
    n_query = 0
    for ev in sorted(tl.events, key=lambda e: e.ts):  # stable: StateBench's order in a tie
        if ev.type == "conversation_turn":
            items.append(_Item(ev.text, {"tags": "turn", "speaker": ev.speaker}, "turn"))
        elif ev.type in ("state_write", "supersession"):
            for w in ev.writes:
                meta = {"tags": f"{ev.type},{w.layer}", "key": w.key}
                if w.supersedes:
                    meta["supersedes"] = w.supersedes
                items.append(_Item(w.value, meta, ev.type))
        else:
            for pad in generate_filler_facts(distance, seed=filler_seed + n_query):
                items += [_Item(w.value, {"tags": "filler,persistent_facts"}, "filler")
                          for w in pad.writes]
            items.append(_Item(ev.prompt, {}, "query", n_query))
            n_query += 1
    return items


def _labels(tl: Any, items: list[_Item]) -> dict[int, tuple[int, str]]:
    """item index -> (its query, ``CURRENT`` or ``STALE``), for the observations a later
    query's phrases match (the first such query)."""
    from statebench.evaluation.phrase_quality import is_discriminative
    from statebench.evaluation.rubric import contains_phrase

    queries = tl.get_queries()
    labels: dict[int, tuple[int, str]] = {}
    for qi, q in enumerate(items):
        if q.kind != "query":
            continue
        gt = queries[q.query].ground_truth
        must = [_phrase(m) for m in gt.must_mention]
        must_not = [p for p in map(_phrase, gt.must_not_mention) if is_discriminative(p)]
        for i in range(qi):
            if i in labels or items[i].kind in ("query", "filler"):
                continue
            text = items[i].text
            if any(contains_phrase(text, p) for p in must_not):
                labels[i] = (q.query, STALE)
            elif any(contains_phrase(text, p) for p in must):
                labels[i] = (q.query, CURRENT)
    return labels


def timelines(seed: int, tracks: tuple[str, ...]) -> Iterator[Any]:
    """StateBench's timelines for ``seed``, a track at a time in turn, without end."""
    from statebench.generator.engine import TimelineGenerator

    gen = TimelineGenerator(seed=seed)
    while True:
        for track in tracks:
            yield from gen.generate_track(track, count=1)


def timeline_events(tl: Any, t: int, distance: int, filler_seed: int) -> list[Event]:
    """One timeline's fbench events from turn ``t``: a tick, then one observation a turn;
    a query at the turn of the observation before it (none before any: left out)."""
    items = _items(tl, distance, filler_seed)
    labels = _labels(tl, items)
    out: list[Event] = [Tick(t)]
    start = t
    for i, item in enumerate(items):
        if item.kind == "query":
            if t > start:
                out.append(Query(t - 1, item.text, QueryTruth(
                    f"{tl.id}.q{item.query}", CURRENT, frozenset({STALE}), tl.track)))
            continue
        label = labels.get(i)
        truth = (ObserveTruth(f"{tl.id}.q{label[0]}", label[1], item.kind) if label
                 else ObserveTruth(None, None, item.kind))
        out.append(Observe(t, item.text, truth, item.meta))
        t += 1
    return out


def timeline_filler_seed(seed: int, n: int) -> int:
    """The seed of the filler facts of the stream's ``n``-th timeline (one per query)."""
    return seed * 1_000_003 + n * 1_009


def stream(seed: int, horizon: int, params: StateBenchParams) -> Iterator[Event]:
    """The timelines of ``seed`` one after another, up to the horizon."""
    t = 0
    for n, tl in enumerate(timelines(seed, params.track_list)):
        for ev in timeline_events(tl, t, params.distance, timeline_filler_seed(seed, n)):
            if ev.t >= horizon:
                return
            yield ev
            t = ev.t + 1 if isinstance(ev, Observe) else t


class _Bound:
    """The statebench workload at one set of parameters."""

    name = "statebench"
    version = "1"
    horizon_unit = "turns"
    default_horizon = 2000
    Params = StateBenchParams
    def __init__(self, params: StateBenchParams, description: str) -> None:
        # a superseding write is an update; its key is not phrased: nothing links it
        self.update_kinds = {"supersession": "hard"}
        self.categories = {t: f"StateBench's {t} track" for t in params.track_list}
        self.description = description

    def events(self, seed: int, horizon: int, params: StateBenchParams) -> Iterator[Event]:
        return iter(_stream(seed, horizon, params))

    def vocabulary(self) -> Vocabulary:
        return Vocabulary((), ())  # StateBench's keys are not phrased: nothing to link

    def distinct_facts(self, params: StateBenchParams) -> int:
        return _slots(params)


@functools.lru_cache(maxsize=16)
def _stream(seed: int, horizon: int, params: StateBenchParams) -> tuple[Event, ...]:
    """A stream, kept for the process's next jobs of the same seed (every policy of a
    sweep replays it; generating and matching phrases is most of a short job's time)."""
    return tuple(stream(seed, horizon, params))


@functools.lru_cache(maxsize=32)
def _slots(params: StateBenchParams) -> int:
    """The queried slots of seed 0's stream at the default horizon (the unit of a
    capacity given as a fraction)."""
    return max(1, sum(isinstance(ev, Query) for ev in stream(0, _Bound.default_horizon,
                                                             params)))


class StateBench(_Bound):
    """StateBench's generated timelines (``pip install 'fbench[statebench]'``)."""

    description = (
        "StateBench's seeded timelines (supersession, implicit supersession, environmental "
        "freshness, should-not-supersede, ...; --param workload.tracks=...), replayed one "
        "after another on a clock of turns and scored by retrieval: a top-k holding a "
        "must_not_mention phrase is a contradiction, one holding a must_mention phrase is "
        "recall. --param workload.distance=N puts N of StateBench's filler facts before "
        "each query. Needs the statebench extra; its version is part of each job's identity."
    )

    def __init__(self) -> None:
        super().__init__(StateBenchParams(), self.description)

    def bind(self, params: StateBenchParams, seed: int) -> _Bound:
        statebench_version()
        unknown = [t for t in params.track_list if t not in known_tracks()]
        if unknown:
            raise ValueError(f"unknown StateBench track {unknown[0]!r}; known: "
                             f"{', '.join(known_tracks())}")
        return _Bound(params, self.description)

    def data_identity(self, params: StateBenchParams, seed: int) -> str:
        return f"statebench=={statebench_version()}"


WORKLOAD = StateBench()



def track_counts(seed: int, horizon: int, params: StateBenchParams) -> dict[str, dict[str, int]]:
    """Per track, what one stream holds: timelines, observations (and those labelled
    current and stale), queries, and answerable ones (a current observation before)."""
    keys = ("timelines", "observations", "current", "stale", "queries", "answerable")
    counts = {t: dict.fromkeys(keys, 0) for t in params.track_list}
    t = 0
    for n, tl in enumerate(timelines(seed, params.track_list)):
        events = [ev for ev in timeline_events(tl, t, params.distance,
                                               timeline_filler_seed(seed, n)) if ev.t < horizon]
        if not events:
            return counts
        c = counts[tl.track]
        c["timelines"] += 1
        current: set[str | None] = set()
        for ev in events:
            if isinstance(ev, Observe):
                c["observations"] += 1
                t = ev.t + 1
                if ev.truth.value in (CURRENT, STALE):
                    c[str(ev.truth.value)] += 1
                if ev.truth.value == CURRENT:
                    current.add(ev.truth.slot)
            elif isinstance(ev, Query):
                c["queries"] += 1
                c["answerable"] += ev.truth.slot in current
    return counts

"""The contradiction workload reproduces the seed's stream draw for draw (version 1, and
version 2's events but its Ticks: tests/test_workload_versions.py)."""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter

import pytest

from workloads import WORKLOADS, Observe, Query
from workloads.contradiction import ATTRIBUTES, ENTITIES

W = WORKLOADS["contradiction@1"]


def kinds(seed: int, horizon: int = 3000, **params: float) -> Counter[str]:
    c: Counter[str] = Counter()
    for ev in W.events(seed, horizon, W.Params(**params)):
        c["query" if isinstance(ev, Query) else ev.truth.kind] += 1
    return c


def test_seed0_counts_match_the_seed_stream() -> None:
    """Prevents a drift in draw order: the seed's stream on seed 0 has exactly 367 queries,
    308 canonical and 221 hard updates and 2,044 distractors (docs/reference.md,
    "Forgetting-Bench: seed-0 stream counts")."""
    assert kinds(0) == Counter(
        {"fact": 60, "query": 367, "canonical_update": 308, "hard_update": 221, "distractor": 2044}
    )


def test_seed0_first_events_are_exact() -> None:
    """Prevents silent changes of phrasing or seeding order (exact golden of the first turns)."""
    evs = W.events(0, 3000, W.Params())
    first = [next(evs) for _ in range(62)]
    assert [e.text for e in first[:3]] == [
        "Carol's home city is denver.",
        "Frank's phone model is iphone.",
        "Erin's salary is 130k.",
    ]
    assert all(isinstance(e, Observe) and e.truth.kind == "fact" for e in first[:60])
    assert len({e.truth.slot for e in first[:60]}) == 60
    assert [e.t for e in first] == list(range(62))


def test_events_are_lazy() -> None:
    """Prevents materialising a whole horizon in memory: events() must be a generator."""
    gen = W.events(0, 10**9, W.Params())
    assert inspect.isgenerator(gen)
    assert next(gen).t == 0


def test_same_seed_same_stream_and_seeds_differ() -> None:
    """Prevents hidden global randomness, which would unpair policies across seeds."""
    a = list(W.events(3, 500, W.Params()))
    b = list(W.events(3, 500, W.Params()))
    c = list(W.events(4, 500, W.Params()))
    assert a == b
    assert a != c


def test_query_truth_tracks_current_and_stale_values() -> None:
    """Prevents scoring against the wrong value: a query's truth must be the slot's latest
    write, its stale set every earlier distinct value, its category the last write's kind."""
    current: dict[str, str] = {}
    history: dict[str, set[str]] = {}
    last: dict[str, str] = {}
    n = 0
    for ev in W.events(1, 3000, W.Params()):
        if isinstance(ev, Observe) and ev.truth.slot is not None:
            assert ev.truth.value != current.get(ev.truth.slot)
            current[ev.truth.slot] = ev.truth.value  # type: ignore[assignment]
            history.setdefault(ev.truth.slot, set()).add(ev.truth.value)  # type: ignore[arg-type]
            last[ev.truth.slot] = ev.truth.kind
        elif isinstance(ev, Query):
            n += 1
            slot = ev.truth.slot
            assert ev.truth.value == current[slot]
            assert ev.truth.stale == frozenset(history[slot] - {current[slot]})
            expected = {"fact": "fact", "canonical_update": "canonical", "hard_update": "hard"}
            assert ev.truth.category == expected[last[slot]]
    assert n > 300


def test_hard_updates_never_restate_the_attribute_phrase() -> None:
    """Prevents a hard update that an exact-phrase extractor could link (it would remove the
    contradiction floor the benchmark is built on)."""
    phrases = [p for p, _ in W.vocabulary().phrases]
    for ev in W.events(2, 3000, W.Params(p_hard=1.0)):
        if isinstance(ev, Observe) and ev.truth.kind == "hard_update":
            assert not any(p in ev.text.lower() for p in phrases)


def test_probabilities_are_parameters() -> None:
    """Prevents ignored parameters: p_hard=0 gives no hard updates, p_query=0 no queries."""
    assert kinds(0, p_hard=0.0)["hard_update"] == 0
    assert kinds(0, p_query=0.0)["query"] == 0


@pytest.mark.parametrize(
    "params", [{"p_query": -0.1}, {"p_hard": 1.5}, {"p_query": 0.6, "p_update": 0.6}]
)
def test_bad_probabilities_are_rejected(params: dict[str, float]) -> None:
    """Prevents a stream silently generated from impossible probabilities."""
    with pytest.raises(ValueError):
        W.Params(**params)


def test_short_horizon_is_cut_during_seeding() -> None:
    """Prevents a horizon shorter than the 60 seeding turns from yielding extra events."""
    evs = list(W.events(0, 10, W.Params()))
    assert [e.t for e in evs] == list(range(10))


class TestRetrievableVariant:
    V = WORKLOADS["contradiction.retrievable@1"]

    def events(self) -> list:
        return list(self.V.events(4, 3000, self.V.Params()))

    def test_hard_updates_carry_the_frame_but_no_canonical_phrase(self) -> None:
        """Prevents a variant whose hard updates a keyword extractor can link (then they
        are not hard) or that shares no frame word with the question (then it is the
        seed's stream again)."""
        from memcore import Lexicon
        from memcore.extract.teacher import KeywordTeacher

        teacher = KeywordTeacher(Lexicon(*dataclasses.astuple(self.V.vocabulary())))
        hard = [e for e in self.events()
                if isinstance(e, Observe) and e.truth.kind == "hard_update"]
        assert len(hard) > 100
        for e in hard:
            entity, attr = e.truth.slot.split(".")
            noun = next(a.noun for a in ATTRIBUTES if a.name == attr)
            assert e.text.startswith(f"{entity.title()}'s {noun} changed: "), e.text
            assert teacher.extract(e.text) is None, e.text

    def test_a_share_of_distractors_overlaps_the_questions(self) -> None:
        """Prevents noise_overlap that does nothing, or overlapping distractors that
        assert a value."""
        from memcore.text import tokenize

        distractors = [e for e in self.events()
                       if isinstance(e, Observe) and e.truth.kind == "distractor"]
        names = set(ENTITIES)
        overlapping = [e for e in distractors if names & set(tokenize(e.text))]
        assert 0.25 < len(overlapping) / len(distractors) < 0.35
        assert all(e.truth.slot is None for e in overlapping)

    def test_the_oracle_can_now_retrieve_hard_updates(self) -> None:
        """Prevents a variant where hard updates stay unretrievable: with a perfect
        extractor, last-write-wins finds the hard-updated value there, not on the seed's
        stream."""
        from runner.job.run import run_job
        from runner.spec.resolve import make_spec

        def hard_recall(workload: str) -> float:
            spec = make_spec(workload, "last_write_wins", 0, horizon=1500,
                             params=[("extractor", "oracle")])
            return float(run_job(spec).metrics()["recall_at_k_hard"])

        assert hard_recall("contradiction") == 0.0
        assert hard_recall("contradiction.retrievable") > 0.2

    def test_the_default_stream_is_untouched(self) -> None:
        """Prevents the variant's knobs from changing the seed's stream (they draw only
        when switched on)."""
        base = list(W.events(4, 600, W.Params()))
        same = list(W.events(4, 600, dataclasses.replace(W.Params(), hard_frame=False,
                                                          noise_overlap=0.0)))
        assert base == same
        assert list(self.V.events(4, 600, self.V.Params())) != base

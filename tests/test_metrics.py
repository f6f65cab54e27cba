"""Scoring of one query, the metric declarations, checkpoints, and run_job's bookkeeping."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from runner.job.run import checkpoints, run_job
from runner.metrics import CATEGORIES, METRICS, QUALITY, QueryScore, score_query
from runner.metrics.declare import declare
from runner.spec.resolve import make_spec
from workloads import WORKLOADS, Observe, Query

# Observation id -> its true (slot, value). The queried slot is "alice.city", current "austin";
# "boston" and "denver" are its stale values.
TRUTH = {
    0: ("alice.city", "boston"),
    1: ("alice.city", "denver"),
    2: ("alice.city", "austin"),
    3: ("alice.city", "austin"),   # the current value asserted a second time
    4: ("bob.city", "austin"),     # another slot with the same value
    5: ("alice.job", "boston"),    # another slot of the same entity
}
ABSENT = 99  # a noise observation: no slot, so absent from TRUTH


def score(hits: list[int], forgotten: bool = False) -> QueryScore:
    return score_query(hits, "alice.city", "austin", TRUTH, forgotten)


# ---------------------------------------------------------------- score_query / values


def test_all_correct() -> None:
    """Guards against correct hits being miscounted: every hit holds the current value."""
    s = score([2, 3])
    assert s == QueryScore(retrieved=2, correct=2, stale=0, top1_correct=True,
                           current_forgotten=False, top5_correct=True, current=2)
    assert s.values() == {
        "contradiction_rate": 0.0, "stale_fraction": 0.0, "recall_at_k": 1.0, "recall_at_5": 1.0,
        "recall_current_at_k": 1.0,
        "accuracy_at_1": 1.0, "precision": 1.0, "false_forget_rate": 0.0,
    }


def test_all_stale() -> None:
    """Guards against stale hits (queried slot, an older value) not being counted as stale."""
    s = score([0, 1])
    assert s == QueryScore(2, 0, 2, False, False, False)
    assert s.values() == {
        "contradiction_rate": 1.0, "stale_fraction": 1.0, "recall_at_k": 0.0, "recall_at_5": 0.0,
        "recall_current_at_k": 0.0,
        "accuracy_at_1": 0.0, "precision": 0.0, "false_forget_rate": 0.0,
    }


def test_mixed_with_noise() -> None:
    """Guards against noise, other slots or same-value-other-slot hits leaking into the
    correct/stale counts, and against dividing by something other than the items retrieved."""
    s = score([0, 2, ABSENT, 4, 1])
    assert s == QueryScore(5, 1, 2, False, False, True, 1)
    assert s.values() == {
        "contradiction_rate": 1.0, "stale_fraction": 2 / 5, "recall_at_k": 1.0, "recall_at_5": 1.0,
        "recall_current_at_k": 1.0,
        "accuracy_at_1": 0.0, "precision": 1 / 5, "false_forget_rate": 0.0,
    }


def test_current_recall_credits_only_the_current_run() -> None:
    """Guards against recall_current_at_k crediting an older entry whose value came back
    (austin at 2, replaced, then austin again at 3): only ids from ``since`` on count,
    while the seeds' recall_at_k still credits both."""
    old = score_query([2, 0], "alice.city", "austin", TRUTH, False, since=3)
    assert (old.correct, old.current) == (1, 0)
    assert old.values()["recall_at_k"] == 1.0
    assert old.values()["recall_current_at_k"] == 0.0
    new = score_query([0, 3], "alice.city", "austin", TRUTH, False, since=3)
    assert (new.correct, new.current) == (1, 1)
    assert new.values()["recall_current_at_k"] == 1.0


def test_top1_rule_correct_only_at_rank_two() -> None:
    """Guards against accuracy_at_1 crediting a correct item below rank 1 (recall still does)."""
    v = score([0, 2]).values()
    assert v["accuracy_at_1"] == 0.0
    assert v["recall_at_k"] == 1.0
    assert v["precision"] == 0.5
    assert v["contradiction_rate"] == 1.0


def test_top1_rule_correct_at_rank_one() -> None:
    """Guards against the top-1 flag being lost when later hits are stale."""
    s = score([2, 0])
    assert s.top1_correct is True
    assert s.values()["accuracy_at_1"] == 1.0


def test_empty_retrieval() -> None:
    """Guards against a ZeroDivisionError or NaN when a memory returns nothing: the
    fractions are 0, and nothing retrieved is neither correct nor stale."""
    s = score([])
    assert s == QueryScore(0, 0, 0, False, False, False)
    assert s.values() == {
        "contradiction_rate": 0.0, "stale_fraction": 0.0, "recall_at_k": 0.0, "recall_at_5": 0.0,
        "recall_current_at_k": 0.0,
        "accuracy_at_1": 0.0, "precision": 0.0, "false_forget_rate": 0.0,
    }


def test_fractions_divide_by_retrieved_not_k() -> None:
    """Guards against precision/stale_fraction dividing by k when fewer items came back:
    2 hits, 1 correct and 1 stale, give 0.5 each (not 1/5)."""
    v = score([2, 0]).values()
    assert v["precision"] == 0.5
    assert v["stale_fraction"] == 0.5


def test_absent_observation_counts_as_neither() -> None:
    """Guards against an id missing from truth_of (a noise observation) raising KeyError or
    being judged correct/stale."""
    s = score([ABSENT])
    assert s == QueryScore(1, 0, 0, False, False, False)
    assert s.values()["precision"] == 0.0
    assert s.values()["stale_fraction"] == 0.0


def test_same_value_on_other_slot_counts_as_neither() -> None:
    """Guards against judging by value alone: bob.city=austin is not alice.city=austin,
    and alice.job=boston is not a stale alice.city."""
    s = score([4, 5])
    assert s == QueryScore(2, 0, 0, False, False, False)
    assert s.values()["recall_at_k"] == 0.0
    assert s.values()["contradiction_rate"] == 0.0


def test_current_forgotten_flag() -> None:
    """Guards against false_forget_rate ignoring the flag (or the flag leaking elsewhere)."""
    v = score([2], forgotten=True).values()
    assert v["false_forget_rate"] == 1.0
    assert v["recall_at_k"] == 1.0
    assert score([], forgotten=True).values()["false_forget_rate"] == 1.0
    assert score([2], forgotten=False).values()["false_forget_rate"] == 0.0


def test_values_keys_are_the_quality_metrics() -> None:
    """Guards against values() and the QUALITY declarations drifting apart (the harness
    averages values() into exactly the declared quality metrics)."""
    v = score([0, 2, ABSENT]).values()
    assert set(v) == set(QUALITY)
    assert all(type(x) is float for x in v.values())


# ---------------------------------------------------------------- declarations


def test_every_metric_has_a_valid_direction() -> None:
    """Guards against a metric the report cannot rank (unknown direction) or a name/key
    mismatch in the registry."""
    assert METRICS
    for name, m in METRICS.items():
        assert m.name == name
        assert m.direction in ("lower", "higher", "none")
        assert m.arrow == {"lower": "↓", "higher": "↑", "none": ""}[m.direction]
        assert m.description.strip()


def test_declaring_twice_raises() -> None:
    """Guards against a second declaration silently overwriting a metric."""
    before = dict(METRICS)
    with pytest.raises(ValueError, match="declared twice"):
        declare("n_queries", "lower", "a duplicate")
    assert dict(METRICS) == before


def test_bad_direction_raises_and_registers_nothing() -> None:
    """Guards against a metric with a direction the aggregator cannot interpret."""
    name = "zz_test_bad_direction"
    with pytest.raises(ValueError, match="bad direction"):
        declare(name, "sideways", "nonsense")
    assert name not in METRICS


def test_quality_metrics_have_per_category_variants() -> None:
    """Guards against a category missing a quality metric (or its query count), which
    would leave holes in the per-category tables."""
    for name, metric in QUALITY.items():
        direction = metric.direction
        assert METRICS[name].direction == direction
        for cat in CATEGORIES:
            assert METRICS[f"{name}_{cat}"].direction == direction
    for cat in CATEGORIES:
        assert METRICS[f"n_queries_{cat}"].direction == "none"


def test_only_times_are_timing_metrics() -> None:
    """Guards against a deterministic metric being excluded from determinism checks (or a
    wall-clock time being included in them)."""
    assert {n for n, m in METRICS.items() if m.timing} == {
        "wall_s", "query_ms_mean", "query_ms_p95"}


# ---------------------------------------------------------------- checkpoints


def test_checkpoints_default_horizon() -> None:
    """Guards against uneven, duplicated or missing checkpoints at the default horizon."""
    assert checkpoints(3000) == [150 * i for i in range(1, 21)]


def test_checkpoints_short_horizon() -> None:
    """Guards against duplicate checkpoint times (or a missing final one) when the horizon
    is shorter than the number of checkpoints."""
    cps = checkpoints(7)
    assert cps == [1, 2, 3, 4, 5, 6, 7]
    assert len(cps) < 20


# ---------------------------------------------------------------- run_job


def _stream(seed: int, horizon: int) -> list:
    w = WORKLOADS["contradiction"]
    return list(w.events(seed, horizon, w.Params()))


def test_final_row_has_exactly_the_declared_metrics() -> None:
    """Guards against run_job emitting an undeclared column or omitting a declared one
    (reports and the aggregator read the declarations)."""
    result = run_job(make_spec("contradiction", "keep_all", 0, horizon=300))
    assert set(result.final) == set(METRICS) | {"t", "fraction"}
    for row in result.rows:
        assert set(row) == set(result.final)
    assert set(result.metrics()) == set(METRICS)


def test_rows_are_at_the_checkpoints() -> None:
    """Guards against rows at the wrong times or fractions; the last row is the horizon."""
    result = run_job(make_spec("contradiction", "keep_all", 0, horizon=300))
    assert [r["t"] for r in result.rows] == checkpoints(300)
    assert [r["fraction"] for r in result.rows] == [t / 300 for t in checkpoints(300)]
    assert result.final["t"] == 300
    assert result.final["fraction"] == 1.0


def test_keep_all_bookkeeping() -> None:
    """Guards against the harness miscounting: with keep_all nothing is forgotten, every
    Observe is stored, every Query is scored into exactly one category."""
    seed, horizon = 0, 300
    events = _stream(seed, horizon)
    n_obs = sum(isinstance(e, Observe) for e in events)
    cats = Counter(e.truth.category for e in events if isinstance(e, Query))
    final = run_job(make_spec("contradiction", "keep_all", seed, horizon=horizon)).final
    assert final["false_forget_rate"] == 0.0
    assert final["n_forgotten"] == 0
    assert final["final_size"] == n_obs
    assert final["peak_size"] == n_obs
    assert final["n_queries"] == sum(cats.values())
    for cat in CATEGORIES:
        assert final[f"n_queries_{cat}"] == cats[cat]
    assert (final["n_queries_fact"] + final["n_queries_canonical"] + final["n_queries_hard"]
            == final["n_queries"])


def test_checkpoint_rows_see_only_earlier_events() -> None:
    """Guards against an off-by-one in checkpointing: the row at time t reflects exactly the
    events with time < t (checked with keep_all, where size counts observations)."""
    seed, horizon = 1, 300
    events = _stream(seed, horizon)
    rows = run_job(make_spec("contradiction", "keep_all", seed, horizon=horizon)).rows
    for row in rows:
        t = row["t"]
        assert row["final_size"] == sum(isinstance(e, Observe) and e.t < t for e in events)
        assert row["n_queries"] == sum(isinstance(e, Query) and e.t < t for e in events)


def test_last_write_wins_forgets_one_entry_per_canonical_update() -> None:
    """Guards against lww (or the forget accounting) removing too much or too little.

    With store.extractor=teacher, facts and canonical updates are linked to their slot
    and hard paraphrases to none; distractors name no entity. Every slot's first write
    is a fact, so each canonical update finds exactly one live, linked head for its slot
    (the fact or the previous canonical update, since a hard update never becomes the
    head) and lww removes exactly that entry. Hence n_forgotten == #canonical_update,
    all with reason "superseded", and the memory keeps the current assertion of every
    slot (false_forget_rate 0). Verified on this stream before being written down.
    """
    seed, horizon = 0, 300
    events = _stream(seed, horizon)
    kinds = Counter(e.truth.kind for e in events if isinstance(e, Observe))
    n_obs = sum(kinds.values())
    spec = make_spec("contradiction", "last_write_wins", seed, horizon=horizon,
                     params=[("store.extractor", "teacher")])
    result = run_job(spec)
    final = result.final
    assert kinds["canonical_update"] > 0
    assert final["n_forgotten"] == kinds["canonical_update"]
    assert result.forgotten == {"superseded": kinds["canonical_update"]}
    assert final["final_size"] == n_obs - kinds["canonical_update"]
    assert final["false_forget_rate"] == 0.0
    assert final["extract_link_canonical"] == 1.0
    assert final["extract_link_hard"] == 0.0
    assert final["extract_false_link"] == 0.0


def test_run_job_is_deterministic() -> None:
    """Guards against hidden nondeterminism (unseeded randomness, set/dict order) in a job:
    two runs of one spec agree on every non-timing value of every row."""
    spec = make_spec("contradiction", "ebbinghaus", 3, horizon=300)
    a, b = run_job(spec).rows, run_job(spec).rows
    timing = {n for n, m in METRICS.items() if m.timing}
    assert len(a) == len(b)
    for ra, rb in zip(a, b, strict=True):
        for key in ra:
            if key in timing:
                continue
            va, vb = ra[key], rb[key]
            both_nan = isinstance(va, float) and math.isnan(va) and math.isnan(vb)
            assert both_nan or va == vb, key


class _ReturnsFirst:
    """A memory that holds everything and always returns observation 0 (the first)."""

    def observe(self, obs_id: int, t: int, text: str, meta: object) -> None: ...

    def query(self, t: int, text: str, k: int) -> list:
        from runner.adapters.base import Hit

        return [Hit(0, 1.0)]

    def holds(self, obs_id: int) -> bool:
        return True

    def size(self) -> int:
        return 3


def test_run_tracks_the_current_run_of_a_value() -> None:
    """Guards against the harness passing the wrong ``since``: after austin, boston, then
    austin again, the first austin is correct (recall_at_k) but not current
    (recall_current_at_k); asked before the change it was both."""
    from runner.job.run import JobRun
    from workloads import ObserveTruth, QueryTruth

    def obs(t: int, value: str) -> Observe:
        return Observe(t, f"alice lives in {value}", ObserveTruth("alice.city", value, "fact"))

    def ask(t: int) -> Query:
        return Query(t, "where?", QueryTruth("alice.city", "austin", frozenset(), "fact"))

    run = JobRun(_ReturnsFirst(), k=5)  # type: ignore[arg-type]
    for ev in (obs(0, "austin"), ask(1), obs(2, "boston"), obs(3, "austin"), ask(4)):
        run.handlers()[type(ev)](ev)
    assert run.counts["all"] == 2
    sums = dict(zip([name for name, _ in run.quality], run.sums["all"], strict=True))
    assert sums["recall_at_k"] == 2.0
    assert sums["recall_current_at_k"] == 1.0


@pytest.mark.parametrize("k", [1, 3, 5, 8])
def test_judging_a_block_at_once_equals_judging_each(k: int) -> None:
    """Prevents the array judgement of a block of questions (``JobRun.judge_many``) from
    scoring any question unlike ``score_query``: random hits (short lists, observations
    with no truth, unknown slots and values, repeats of a value) for every k."""
    import random

    from runner.job.streaming import TruthTable

    rng = random.Random(k)
    table = TruthTable()
    slots, values = ["a.x", "a.y", "b.x"], ["1", "2", "3"]
    for obs in range(0, 300, 2):  # odd ids carry no truth
        table.set(obs, rng.choice(slots), rng.choice(values))
    questions = [(rng.choice([*slots, "c.z"]), rng.choice([*values, "9"]),
                  [rng.randrange(-5, 320) for _ in range(rng.randrange(0, k + 1))])
                 for _ in range(400)]
    questions = [(s, v, [h for h in hits if h >= 0]) for s, v, hits in questions]
    obs = np.full((len(questions), k), -1, dtype=np.int64)
    for i, (_, _, hits) in enumerate(questions):
        obs[i, : len(hits)] = hits
    correct, stale = table.judge(obs, [q[0] for q in questions], [q[1] for q in questions])
    for i, (slot, value, hits) in enumerate(questions):
        want = score_query(hits, slot, value, table, False, k, 100)
        assert (int(correct[i].sum()), int(stale[i].sum())) == (want.correct, want.stale)
        assert bool(correct[i, 0]) == want.top1_correct
        assert int((correct[i] & (obs[i] >= 100)).sum()) == want.current


def test_a_scores_key_is_its_fields_in_order() -> None:
    """Prevents a job's kept per-query values being read for the wrong kind of score:
    a batch of questions keys them by its fields in ``QueryScore``'s order, so a field
    added or reordered without ``key`` following would mix two kinds up."""
    import dataclasses

    score = QueryScore(5, 2, 1, True, False, True, 1)
    assert score.key() == dataclasses.astuple(score)
    assert QueryScore(*score.key()) == score
    assert [f.name for f in dataclasses.fields(QueryScore)] == [
        "retrieved", "correct", "stale", "top1_correct", "current_forgotten", "top5_correct",
        "current"]

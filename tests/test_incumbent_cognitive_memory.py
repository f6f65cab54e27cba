"""The cognitive-memory incumbent (``runner.adapters.cognitive_memory``): its own decay,
cold tier and consolidation, on the stream's clock, offline, with the ids travelling."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fbench.clock import EPOCH, Clock
from runner.adapters.cognitive_memory import CognitiveMemoryAdapter
from runner.adapters.contract import FAST_STREAMS, check_memory
from runner.spec.params import Scalar
from runner.spec.resolve import make_spec, materialize

pytestmark = pytest.mark.incumbents

NAME = "runner.adapters.cognitive_memory:MEMORY"
QUARTERS = Clock("turns", turns_per_day=4)
START = EPOCH.replace(tzinfo=None)


def build(workload: str = "contradiction", **params: Scalar) -> CognitiveMemoryAdapter:
    spec = make_spec(workload, NAME, 0, horizon=50, params=list(params.items()))
    r = materialize(spec)
    mem = r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())
    assert isinstance(mem, CognitiveMemoryAdapter)
    return mem


def test_the_library_sees_stream_time() -> None:
    """Prevents stamping memories with the wall clock, or a turn read as a day where
    the workload has 4 turns a day: a capture at turn 3 is 18 hours (plus a second
    per call within the step) after the epoch."""
    mem = build()
    mem.use_clock(QUARTERS)
    mem.observe(0, 3, "alice lives in paris", {"session": "s-1"})
    mem.observe(1, 3, "bob lives in rome", {})
    a, b = mem.store.hot.values()
    assert a.created_at == START + timedelta(hours=18, seconds=1)
    assert b.created_at == START + timedelta(hours=18, seconds=2)
    assert a.session_ids == {"s-1"} and b.session_ids == set()


def test_decay_to_the_floor_moves_memories_to_the_cold_tier_and_counts_them() -> None:
    """Prevents forgetting that is not the library's: a memory decays to its floor on
    stream time, the engine's maintenance moves it to the cold tier after
    ``cold_migration_days`` ticks there, search no longer serves it, and it is counted
    ("cold"); on a 4-turns-a-day clock this takes days, not turns."""
    mem = build(episodic_decay_days=1.0, cold_migration_days=2)
    mem.use_clock(QUARTERS)
    mem.observe(0, 0, "alice lives in paris", {})
    for t in range(1, 9):  # at the floor (0.02) from ~1.96 days: turn 8 is its first tick
        mem.tick(t)
    assert mem.holds(0) and mem.forgotten() == {}
    mem.tick(9)  # its second tick at the floor
    assert not mem.holds(0) and mem.size() == 0 and mem.tokens() == 0
    assert mem.forgotten() == {"cold": 1}
    assert list(mem.store.cold) and not mem.store.hot
    assert mem.query(17, "alice lives in paris", 3) == []


def test_consolidation_summary_holds_and_returns_its_observations() -> None:
    """Prevents losing the ids through the library's consolidation: five similar fading
    memories become one summary (the engine's own text, no LLM), their observations
    stay held through it and a search returns their ids, not the summary's."""
    mem = build(embedder="hashing", episodic_decay_days=1.0, cold_migration_days=100)
    for i in range(5):
        mem.observe(i, 0, f"alice lives in paris note {i}", {})
    mem.tick(1)
    (summary,) = mem.store.hot.values()
    assert summary.content.startswith("Summary: alice lives in paris note 0 | ")
    assert len(mem.store.cold) == 5 and mem.size() == 5 and mem.forgotten() == {}
    hits = mem.query(1, "alice lives in paris", 5)
    assert sorted(h.obs_id for h in hits) == [0, 1, 2, 3, 4]


def test_library_hash_embedder_matches_exact_text_only() -> None:
    """Prevents mistaking the library's own default embedder for a semantic one (a
    measured quirk, not patched): a seeded random vector per exact text."""
    mem = build()
    mem.observe(0, 0, "alice lives in paris", {})
    mem.observe(1, 0, "bob lives in rome", {})
    assert mem.query(1, "alice lives in paris", 1)[0].obs_id == 0
    assert mem.memory.embedder.embed("a") == mem.memory.embedder.embed("a")


def test_contract_holds() -> None:
    """Prevents breaking the adapter contract (ids, holds against size and tokens,
    counted removals, determinism) on short streams of both workload families."""
    report = check_memory(NAME, (), streams=FAST_STREAMS, compare=False)
    assert [v.rule.name for v in report.verdicts if not v.ok] == []
    assert report.streams[0].forgotten  # the default forgets within 240 turns

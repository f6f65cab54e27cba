"""The memware incumbent (``runner.adapters.memware``): its belief ledger's own
supersession, on the stream's clock, offline, with the ids travelling."""

from __future__ import annotations

import pytest

from fbench.clock import Clock
from runner.adapters.contract import FAST_STREAMS, check_memory
from runner.adapters.memware import MemwareAdapter
from runner.spec.params import Scalar
from runner.spec.resolve import make_spec, materialize

pytestmark = pytest.mark.incumbents

NAME = "runner.adapters.memware:MEMORY"
QUARTERS = Clock("turns", turns_per_day=4)


def build(workload: str = "contradiction", **params: Scalar) -> MemwareAdapter:
    spec = make_spec(workload, NAME, 0, horizon=50, params=list(params.items()))
    r = materialize(spec)
    mem = r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())
    assert isinstance(mem, MemwareAdapter)
    return mem


def beliefs(mem: MemwareAdapter) -> list[dict[str, object]]:
    return [dict(r) for r in mem.store.conn.execute("SELECT * FROM belief ORDER BY id")]


def test_the_ledger_sees_stream_time() -> None:
    """Prevents the ledger stamping beliefs (event time, record time, last use: the
    activation's age) with the wall clock, or reading a turn as a day where the
    workload has 4 turns a day: turn 3 is 18 hours after the epoch."""
    mem = build()
    mem.use_clock(QUARTERS)
    mem.observe(0, 3, "Dan's phone model is oneplus.", {})
    (b,) = beliefs(mem)
    assert b["valid_from"] == b["recorded_at"] == "2026-01-01T18:00:01Z"
    assert b["source"] == "fbench:obs=0"
    mem.query(8, "What phone model does Dan use?", 3)
    assert beliefs(mem)[0]["last_used"] == "2026-01-03T00:00:01Z"
    assert beliefs(mem)[0]["use_count"] == 1


def test_a_newer_value_supersedes_and_is_counted() -> None:
    """Prevents forgetting that is not the ledger's: a newer value for the same
    (subject, relation) retires the old belief, recall never returns it again, and
    the removal is counted ("superseded")."""
    mem = build()
    mem.observe(0, 0, "Dan's phone model is oneplus.", {})
    mem.observe(1, 1, "Dan's phone model is galaxy.", {})
    old, new = beliefs(mem)
    assert old["valid_to"] == new["valid_from"] and old["superseded_by"] == new["id"]
    assert not mem.holds(0) and mem.holds(1) and mem.size() == 1
    assert mem.forgotten() == {"superseded": 1}
    assert [h.obs_id for h in mem.query(2, "Dan phone model", 5)] == [1]


def test_a_restated_value_reinforces_and_both_observations_travel() -> None:
    """Prevents losing a restatement's id: the same value reinforces the one belief,
    which stands for both observations and is returned as the newest."""
    mem = build()
    mem.observe(0, 0, "Dan's phone model is oneplus.", {})
    mem.observe(1, 5, "Dan's phone model is oneplus.", {})
    (b,) = beliefs(mem)
    assert b["use_count"] == 1 and mem.holds(0) and mem.holds(1) and mem.size() == 2
    assert [h.obs_id for h in mem.query(6, "Dan phone model", 5)] == [1]


def test_what_names_no_slot_is_no_belief() -> None:
    """Prevents storing what the ledger has no key for, uncounted: an observation
    fbench's extractor links to no (subject, relation) is not asserted."""
    mem = build()
    mem.observe(0, 0, "The team talked about a movie over lunch.", {})
    assert beliefs(mem) == [] and mem.size() == 0 and mem.tokens() == 0
    assert mem.forgotten() == {"not_a_belief": 1}


def test_await_confirmation_parks_the_challenger() -> None:
    """Prevents patching the ledger's review gate: under ``await_confirmation`` a
    newer value is a review candidate recall never returns; the old one stays."""
    mem = build(conflicts="await_confirmation")
    mem.observe(0, 0, "Dan's phone model is oneplus.", {})
    mem.observe(1, 1, "Dan's phone model is galaxy.", {})
    assert [b["status"] for b in beliefs(mem)] == ["committed", "candidate"]
    assert mem.forgotten() == {"pending_review": 1}
    assert [h.obs_id for h in mem.query(2, "Dan phone model galaxy", 5)] == [0]


@pytest.mark.parametrize("params", [(), (("policy.conflicts", "await_confirmation"),)],
                         ids=["default", "await_confirmation"])
def test_contract_holds(params: tuple[tuple[str, Scalar], ...]) -> None:
    """Prevents breaking the adapter contract (ids, holds against size and tokens,
    counted removals, determinism) on short streams of both workload families."""
    report = check_memory(NAME, params, streams=FAST_STREAMS, compare=False)
    assert [v.rule.name for v in report.verdicts if not v.ok] == []
    assert report.streams[0].forgotten

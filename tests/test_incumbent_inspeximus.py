"""The inspeximus incumbent: the library on the simulated clock, its own forgetting
counted, observation ids travelling, and the adapter contract on short streams."""

from __future__ import annotations

from typing import Any

import pytest

from fbench.clock import EPOCH, Clock
from runner.adapters.contract import FAST_STREAMS, check_memory
from runner.errors import FbenchError
from runner.spec.params import Scalar
from runner.spec.resolve import make_spec, materialize

pytestmark = pytest.mark.incumbents
MEMORY = "runner.adapters.inspeximus:MEMORY"


def build(workload: str = "contradiction", **params: Scalar) -> Any:
    spec = make_spec(workload, MEMORY, 0, horizon=50, params=list(params.items()))
    r = materialize(spec)
    return r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())


def record(memory: Any, obs_id: int) -> dict[str, Any]:
    lid = memory._id_of[obs_id]
    return next(r for r in memory.m._items if r["id"] == lid)


def test_library_sees_stream_time() -> None:
    """Prevents the library stamping records with the wall clock: on a 4-turns-a-day
    clock turn 6 is a day and a half after the epoch, and that is what it records."""
    memory = build()
    memory.use_clock(Clock("turns", turns_per_day=4))
    memory.observe(1, 0, "Carol's home city is denver.", {})
    memory.observe(2, 6, "Carol's home city is boston.", {})
    first, second = record(memory, 1)["ts"], record(memory, 2)["ts"]
    assert abs(first - EPOCH.timestamp()) < 10
    assert abs(second - first - 1.5 * 86_400) < 10
    assert record(memory, 2)["iso"].startswith("2026-01-02T12:00")


def test_retention_is_its_own_and_counted() -> None:
    """Prevents retention being reimplemented or left uncounted: the library's
    sleep(retention_days) removes what is older than that in simulated days, and the
    adapter reports it as retention, with holds, size and tokens following."""
    memory = build(retention_days=2.0)
    memory.use_clock(Clock("days"))
    memory.observe(1, 0, "Carol's home city is denver.", {"tags": "fact", "session": "day-0"})
    memory.tick(1)
    assert memory.holds(1) and memory.forgotten() == {}
    memory.observe(2, 3, "Bob's job title is pilot.", {"tags": "fact", "session": "day-3"})
    memory.tick(3)
    assert not memory.holds(1) and memory.holds(2)
    assert memory.forgotten() == {"retention": 1}
    assert memory.size() == memory.stored() == 1 and memory.tokens() == 5
    assert [h.obs_id for h in memory.query(3, "what is Carol's home city?", 5)] != [1]


def test_capacity_evicts_and_ids_travel() -> None:
    """Prevents evictions going unseen or hits carrying the library's ids: capacity 3
    keeps three records, counts the rest as capacity, and recall returns observation
    ids only of what it holds."""
    memory = build(capacity=3)
    for i in range(6):
        memory.observe(100 + i, i, f"Note {i}: the user's code formatter is fmt{i}.", {})
    assert memory.size() == memory.stored() == 3
    assert memory.forgotten() == {"capacity": 3}
    hits = memory.query(6, "what is the user's code formatter?", 5)
    assert hits and all(memory.holds(h.obs_id) for h in hits)
    assert {h.obs_id for h in hits} <= {100 + i for i in range(6)}


def test_keyed_supersession_by_the_memory_side_teacher() -> None:
    """Prevents the key coming from anywhere but the memory's own extractor, or the
    library's supersession going uncounted: two writes the keyword teacher gives one
    slot retire the first (superseded), and an unslotted text is written unkeyed."""
    memory = build(key_by="teacher")
    memory.observe(1, 0, "Carol's home city is denver.", {})
    memory.observe(2, 1, "Carol's home city is boston.", {})
    memory.observe(3, 2, "The weather is nice today.", {})
    assert memory.linked_slot(2) == "carol.home_city" and memory.linked_slot(3) is None
    assert not memory.holds(1) and memory.holds(2) and memory.holds(3)
    assert memory.forgotten() == {"superseded": 1}
    assert memory.query(3, "Carol home city", 5)[0].obs_id == 2


def test_rejects_bad_params() -> None:
    """Prevents a typo'd setting from running silently as something else."""
    with pytest.raises(FbenchError):
        make_spec("contradiction", MEMORY, 0, params=[("key_by", "truth")])
    with pytest.raises(FbenchError):
        make_spec("contradiction", MEMORY, 0, params=[("capacity", -1)])


@pytest.mark.parametrize("params", [{}, {"capacity": 100}, {"retention_days": 7.0},
                                    {"key_by": "teacher"}], ids=str)
def test_contract(params: dict[str, Scalar]) -> None:
    """Prevents a setting breaking the adapter contract (ids, k, holds, size, tokens,
    forgotten, determinism) on short streams of both workload families."""
    report = check_memory(MEMORY, [(f"policy.{k}", v) for k, v in params.items()],
                          streams=FAST_STREAMS, compare=False)
    assert [v.rule.name for v in report.verdicts if not v.ok] == []

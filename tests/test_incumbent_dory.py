"""The dory-memory incumbent: offline (no LLM, no Ollama), on the simulated clock, its
own consolidation counted, ids travelling through its own API, the contract held."""

from __future__ import annotations

from typing import Any

import pytest

from fbench.clock import EPOCH, Clock
from runner.adapters.contract import FAST_STREAMS, check_memory
from runner.spec.resolve import make_spec, materialize

pytestmark = pytest.mark.incumbents

NAME = "runner.adapters.dory:MEMORY"


def build(workload: str = "contradiction", **params: bool | float | str) -> Any:
    spec = make_spec(workload, NAME, 0, horizon=50, params=list(params.items()))
    r = materialize(spec)
    return r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())


def seconds(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp() - EPOCH.timestamp()


def test_clock_is_simulated() -> None:
    """Prevents dory reading the wall clock: on a 4-turns-a-day clock a node observed
    at turn t is created t * 6 hours after the epoch (plus a second per call within
    the step)."""
    mem = build()
    mem.use_clock(Clock("turns", turns_per_day=4))
    for i, t in enumerate([0, 0, 1, 5]):
        mem.observe(i, t, f"note number {i} about topic{i}", {})
    stamps = [seconds(mem.graph.get_node(mem._id_of[i]).created_at) for i in range(4)]
    assert [s // 3600 for s in stamps] == [0, 0, 6, 30]
    assert stamps == sorted(set(stamps)) and all(s % 3600 < 60 for s in stamps)


def test_ids_travel_through_its_query_and_tags_are_kept() -> None:
    """Prevents parsing dory's context string or scoring anything it would not
    return: hits are the nodes its own query activated, as its serializer ranks
    them, mapped back to observation ids; the capture's tags are the node's tags."""
    mem = build()
    mem.observe(0, 0, "alice lives in paris", {"tags": "fact,pin"})
    mem.observe(1, 0, "bob drinks green tea", {})
    mem.observe(2, 0, "carol works at acme", {})
    assert mem.graph.get_node(mem._id_of[0]).tags == ["fact", "pin"]
    hits = mem.query(0, "where does alice live in paris", 3)
    assert hits and hits[0].obs_id == 0
    assert {h.obs_id for h in hits} <= {0, 1, 2} and len(hits) == len({h.obs_id for h in hits})
    assert mem.graph.get_node(mem._id_of[0]).activation_count == 1  # it reinforces


def test_supersession_archives_the_older_node_and_is_counted() -> None:
    """Prevents forgetting that is not dory's, or uncounted: its Reflector archives the
    older of two similar statements that substitute a word (SUPERSEDES edge), and
    query never returns the archived node again."""
    mem = build()
    mem.observe(0, 0, "alice lives in paris these days", {})
    mem.observe(1, 1, "alice lives in rome these days", {})
    assert {h.obs_id for h in mem.query(1, "alice lives", 5)} == {0, 1}
    mem.tick(1)
    assert not mem.holds(0) and mem.holds(1)
    assert mem.forgotten() == {"superseded": 1}
    assert [h.obs_id for h in mem.query(2, "alice lives", 5)] == [1]
    assert mem.size() == mem.stored() == 1 and mem.tokens() == 6


def test_exact_duplicates_are_merged() -> None:
    """Prevents hiding dory's hard delete: a repeated statement is merged into one
    node at consolidation and the other observation is forgotten ("merged")."""
    mem = build()
    mem.observe(0, 0, "the vault code is 1234", {})
    mem.observe(1, 1, "the vault code is 1234", {})
    mem.tick(1)
    assert mem.size() == 1 and mem.forgotten() == {"merged": 1}
    assert len(mem.query(2, "vault code", 5)) == 1


def test_contract_holds() -> None:
    """Prevents breaking the adapter contract (ids, holds against size and tokens,
    counted removals, determinism) on short streams of both workload families."""
    report = check_memory(NAME, (), streams=FAST_STREAMS, compare=False)
    assert [v.rule.name for v in report.verdicts if not v.ok] == []
    assert all(s.forgotten for s in report.streams)

"""The isotope-zero incumbent: offline with no daemon and no model download, on the
simulated clock, its own consolidation counted, ids travelling, the contract held."""

from __future__ import annotations

from typing import Any

import pytest

from fbench.clock import EPOCH, Clock
from runner.adapters.contract import FAST_STREAMS, check_memory
from runner.spec.resolve import make_spec, materialize

pytestmark = pytest.mark.incumbents

NAME = "runner.adapters.isotope_zero:MEMORY"


def build(workload: str = "contradiction", **params: bool | float | str) -> Any:
    spec = make_spec(workload, NAME, 0, horizon=50, params=list(params.items()))
    r = materialize(spec)
    return r.memory.build(r.policy_params, r.store_params, r.workload.vocabulary())


def test_no_daemon_and_no_model_download(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents the library spawning its embedding daemon or building its in-process
    ONNX engine (which downloads MiniLM from the hub): neither may be constructed,
    and the client, its store and its consolidator embed with the adapter's engine."""
    from isotope_zero.daemon import client as daemon_client
    from isotope_zero.embeddings import onnx_embed

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the library built its own embedder")

    monkeypatch.setattr(onnx_embed.EmbeddingEngine, "__init__", refuse)
    monkeypatch.setattr(daemon_client.DaemonClient, "_spawn_daemon", refuse)
    for embedder in ("hashing", "own"):
        mem = build(embedder=embedder)
        assert mem.client.engine is mem.engine is mem.client.store.embedder
        mem.observe(0, 0, "alice lives in paris", {})
        mem.tick(1)
        assert [h.obs_id for h in mem.query(1, "where does alice live", 1)] == [0]


def test_clock_is_simulated() -> None:
    """Prevents the library reading the wall clock: on a 4-turns-a-day clock a card
    written at turn t is stamped t * 6 hours after the epoch (plus a second per call
    within the step), and its TTL and decay read the same clock."""
    mem = build()
    mem.use_clock(Clock("turns", turns_per_day=4))
    for i, t in enumerate([0, 0, 1, 5]):
        mem.observe(i, t, f"note number {i} about topic {i}", {})
    stamps = [mem.client.store.get(f"obs-{i}").timestamp - EPOCH.timestamp()
              for i in range(4)]
    assert [s // 3600 for s in stamps] == [0, 0, 6, 30]  # hours
    assert stamps == sorted(set(stamps)) and all(s % 3600 < 60 for s in stamps)


def test_decay_prunes_never_recalled_cards_and_counts_them() -> None:
    """Prevents forgetting that is not the library's, or uncounted: its consolidator
    deletes a never-touched card once its Ebbinghaus retention (24-hour constant) is
    below 0.15 (about 1.9 days), keeps a card recall touched, and each deletion is
    counted as decayed."""
    mem = build()
    mem.observe(0, 0, "alice lives in paris", {})
    mem.observe(1, 0, "bob drinks green tea every morning", {})
    assert [h.obs_id for h in mem.query(0, "where does alice live", 1)] == [0]
    mem.tick(1)
    assert mem.size() == 2 and mem.forgotten() == {}
    mem.tick(2)
    assert mem.holds(0) and not mem.holds(1)
    assert mem.forgotten() == {"decayed": 1}
    assert mem.size() == mem.stored() == 1 and mem.tokens() == 4


def test_dedup_supersedes_the_older_card() -> None:
    """Prevents hiding the library's dedup: a card whose words mostly repeat a newer
    one (token overlap >= 0.7) is folded into it as SUPERSEDED at consolidation
    (the newest wins), kept for audit but never recalled, counted superseded."""
    mem = build()
    mem.observe(0, 0, "the launch code for the vault is 1234", {})
    mem.observe(1, 0, "the launch code for the vault is 9876", {})
    mem.tick(0)
    assert not mem.holds(0) and mem.holds(1)
    assert mem.client.store.get("obs-0").superseded_by == "obs-1"
    assert mem.forgotten() == {"superseded": 1}
    assert [h.obs_id for h in mem.query(0, "vault launch code", 5)] == [1]


def test_ttl_hides_then_prunes() -> None:
    """Prevents a TTL judged by anything but the client's rule: with ttl_days=3 a
    recalled (so never decay-pruned) card is returned while timestamp + ttl >= now,
    hidden after, counted expired once, and deleted by the next consolidation."""
    mem = build(ttl_days=3.0)
    mem.observe(0, 0, "alice lives in paris", {})
    assert [h.obs_id for h in mem.query(0, "where does alice live", 1)] == [0]
    mem.tick(1)
    assert [h.obs_id for h in mem.query(2, "where does alice live", 1)] == [0]
    assert mem.query(4, "where does alice live", 1) == []
    assert not mem.holds(0) and mem.forgotten() == {"expired": 1}
    assert mem.stored() == 1  # hidden by recall, still in the store
    mem.tick(4)
    assert mem.stored() == 0 and mem.forgotten() == {"expired": 1}


def test_ids_travel_and_tags_are_kept() -> None:
    """Prevents scoring anything but what the library returns: the card id carries
    the observation id back from recall, and the capture's tags are its tags."""
    mem = build()
    mem.observe(7, 0, "carol works at acme", {"tags": "fact,pin"})
    mem.observe(9, 0, "dave plays the violin", {})
    assert mem.client.store.get("obs-7").tags == ["fact", "pin"]
    hits = mem.query(0, "where does carol work", 2)
    assert hits[0].obs_id == 7 and len(hits) == 2


def test_contract_holds() -> None:
    """Prevents breaking the adapter contract (ids, holds against size and tokens,
    counted removals, determinism) on short streams of both workload families."""
    for params in ((), (("ttl_days", 7.0),)):
        report = check_memory(NAME, params, streams=FAST_STREAMS, compare=False)
        assert [v.rule.name for v in report.verdicts if not v.ok] == []
        assert all(s.forgotten for s in report.streams)

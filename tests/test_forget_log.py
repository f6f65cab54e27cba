"""The forget log's bounded memory: exact counts, the newest records held."""

from __future__ import annotations

import numpy as np
import pytest

from memcore import POLICIES, HashingEmbedder, MemoryStore, StoreParams
from memcore.forget_log import ForgetLog


def _batch(log: ForgetLog, first: int, n: int, reason: str) -> None:
    eids = np.arange(first, first + n)
    log.append(eid=eids, obs_id=eids, reason=reason, score=np.zeros(n), turn=first, age=eids,
               last_access=eids, texts=[f"t{e}" for e in eids])


def test_a_bounded_log_keeps_counts_and_the_newest_records() -> None:
    """Prevents a long run's forget log from growing without bound, or from losing
    removals from its counts when it drops old records."""
    log = ForgetLog(keep=5)
    _batch(log, 0, 3, "decayed")
    _batch(log, 3, 4, "learned")
    _batch(log, 7, 2, "decayed")
    assert len(log) == 9
    assert log.counts() == {"decayed": 5, "learned": 4}
    assert log.held == 6  # whole batches: the newest 5 need the last two batches
    assert [r.eid for r in log.records()] == [3, 4, 5, 6, 7, 8]


def test_store_log_keep() -> None:
    """Prevents ``store.log_keep`` from being ignored: a store that removed 300 entries
    holds only the newest 100 records but counts all 300; -1 holds every record."""
    for keep, held in ((100, 100), (-1, 300)):
        store = MemoryStore(POLICIES["fifo"](POLICIES["fifo"].Params(capacity=10)),
                            HashingEmbedder(), None, StoreParams(log_keep=keep))
        for i in range(310):
            store.add(f"note number {i}", i)
        assert store.forget_log.counts() == {"capacity": 300}
        assert store.forget_log.held == held
        assert store.forget_log.records()[-1].obs_id == 299


def test_log_keep_must_be_minus_one_or_more() -> None:
    """Prevents a silently meaningless negative ``log_keep``."""
    with pytest.raises(ValueError, match="log_keep"):
        StoreParams(log_keep=-2)


def test_a_removal_logged_as_its_records_is_logged_as_its_batch_would_be() -> None:
    """Prevents the records' fields (``ForgetLog.add_records``, no arrays made) from
    differing from the batch the store made before: the same stream through a store that
    logs them so and one made to build every batch gives records equal in every field and
    type, the same entry ids and counts, and the same bounded holding, with removals of
    one entry and of several."""
    from workloads import WORKLOADS, Observe, Tick

    w = WORKLOADS["contradiction"]

    def run(policy: str, one: bool, keep: int) -> ForgetLog:
        cls = POLICIES[policy]
        params = cls.Params(tau=20) if policy == "ebbinghaus" else cls.Params()
        store = MemoryStore(cls(params), HashingEmbedder(), None, StoreParams(log_keep=keep))
        store._log_only = one
        for ev in w.events(3, 1500, w.Params()):
            if isinstance(ev, Observe):
                store.add(ev.text, ev.t)
            elif isinstance(ev, Tick):
                store.tick(ev.t)
        return store.forget_log

    merged = False
    for policy in ("ebbinghaus", "lethe"):
        for keep in (-1, 50):
            ones, batches = run(policy, True, keep), run(policy, False, keep)
            assert {len(b) for b in ones._batches if isinstance(b, list)} >= {1, 2}
            assert not any(isinstance(b, list) for b in batches._batches)
            recs = ones.records()
            assert recs == batches.records() and len(recs) > 20
            assert ([[type(v) for v in vars(r).values()] for r in recs]
                    == [[type(v) for v in vars(r).values()] for r in batches.records()])
            assert ones.eids().tolist() == batches.eids().tolist()
            assert (len(ones), ones.held, ones.counts()) == (
                len(batches), batches.held, batches.counts())
            merged = merged or any(r.merged_into >= 0 for r in recs)
    assert merged  # (lethe's merges: their ``merged_into`` logged too)

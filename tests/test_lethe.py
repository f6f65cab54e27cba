"""lethe's daily consolidation: merging near-duplicates."""

from __future__ import annotations

import numpy as np

from memcore import POLICIES, HashingEmbedder, MemoryStore
from memcore.columns import Columns
from memcore.policies.base import Removals
from memcore.policies.lethe import Lethe
from workloads import WORKLOADS, Observe, Query, Tick


class FullCheckLethe(Lethe):
    """lethe comparing every pair of candidates at every tick (no incremental skip)."""

    def on_tick(self, cols: Columns, now: int) -> Removals:
        self._checked_eid = -1
        return super().on_tick(cols, now)


def _run(policy: Lethe, days: int) -> MemoryStore:
    store = MemoryStore(policy, HashingEmbedder(), None)
    wl = WORKLOADS["lifecycle"]
    for i, ev in enumerate(wl.events(5, days, wl.Params())):
        if isinstance(ev, Observe):
            store.add(ev.text, ev.t, i, ev.meta)
        elif isinstance(ev, Query):
            store.retrieve(ev.text, ev.t)
        elif isinstance(ev, Tick):
            store.tick(ev.t)
    return store


def test_incremental_merging_equals_comparing_every_pair() -> None:
    """Prevents the incremental merge check (only pairs with a new entry) from missing
    a duplicate that comparing every pair of candidates each day would merge."""
    fast = _run(Lethe(), 120)
    full = _run(FullCheckLethe(), 120)
    fast_log, full_log = fast.forget_log.records(), full.forget_log.records()
    assert sum(r.reason == "merged" for r in full_log) > 20
    assert fast_log == full_log
    assert np.array_equal(fast.cols.score[: fast.cols.n], full.cols.score[: full.cols.n])


def test_older_duplicates_merge_into_the_newest() -> None:
    """Prevents merging into the wrong entry or losing the merged entry's score and
    accesses: the two older copies go, the newest keeps the higher score and the
    summed access counts, on the day after they were added and every later one."""
    store = MemoryStore(POLICIES["lethe"](), HashingEmbedder(), None)
    store.add("the cafe opens at nine", 0, 10, {"tags": "fact"})
    store.add("the cafe opens at nine", 0, 11, {"tags": "chitchat"})
    store.add("a different remark entirely", 0, 12, {"tags": "remark"})
    store.retrieve("the cafe opens at nine", 0)  # accesses both copies
    store.tick(0)
    store.add("the cafe opens at nine", 1, 13, {"tags": "chitchat"})
    store.tick(1)
    merged = [(r.obs_id, r.merged_into) for r in store.forget_log.records()
              if r.reason == "merged"]
    assert merged == [(10, 1), (11, 3)]
    row = store._row_of_obs[13]
    assert store.cols.access_count[row] == 2
    # the fact copy's capture score (0.2 + 0.5·0.85) plus one reinforcement (0.2 × cos 1)
    assert abs(store.cols.score[row] - 0.825) < 1e-9
    assert store.holds(12) and store.holds(13) and not store.holds(10)

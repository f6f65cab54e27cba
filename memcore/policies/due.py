"""When an entry can first be due for pruning, so a decay policy checks only those.

A decay policy (``ebbinghaus``) prunes a live entry once its retention, a decreasing
function of age, falls below a threshold. Checking every live entry after every add
is O(n) an add; but an entry's retention only ever changes through its age and its
supersession, so the first turn at which it can fall below the threshold is known
when it is added (and again when it is superseded). ``DueSchedule`` keeps those turns
in a heap keyed by entry id and hands the policy, at each add, only the entries that
may be due: the policy then decides those exactly, with its own formula, so the rows
it removes (and their order and scores) are the ones a check of every row would give.
An entry whose bound has passed but which its formula keeps (the bound is set a little
early on purpose, below floating-point error) stays a candidate until it goes.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from memcore.columns import Columns

EARLY = 1e-7  # the bound is this much (relative) early, far beyond rounding error


class DueSchedule:
    """Candidate entries for a decay policy, by the first turn each can be due."""

    SCALAR = 4  # up to this many entries are looked up one by one (no array made)

    def __init__(self) -> None:
        self._heap: list[tuple[float, int]] = []   # (earliest due turn, entry id)
        self._watch: set[int] = set()   # entry ids past their bound, not yet removed
        self._last_eid = -1             # the newest entry scheduled
        self._superseded: set[int] = set()  # entries scheduled as superseded
        # slot -> its entries scheduled while not superseded (``newly_superseded``)
        self._fresh: dict[int, list[int]] = {}
        self._gone: set[int] = set()  # removed, with a heap entry still to come up

    @staticmethod
    def bound(turn: float, scale: float, log_ratio: float) -> float:
        """The earliest turn ``now`` with ``exp(-(now - turn)/scale) * factor <
        threshold`` (``log_ratio = ln(factor/threshold)``), minus the margin."""
        if math.isinf(log_ratio):
            return math.inf
        due = turn + scale * log_ratio
        return due - EARLY * (abs(due) + 1.0)

    def schedule(self, eid: int, due: float) -> None:
        if not math.isinf(due):
            heapq.heappush(self._heap, (due, eid))

    def later(self, eid: int, due: float) -> None:
        """A candidate its policy kept: no longer one, until ``due``."""
        self._watch.discard(eid)
        self.schedule(eid, due)

    def removed(self, eids: list[int]) -> None:
        """Entries the policy is removing (its ``on_add`` removal, which is applied whole
        or fails the job): candidates no more, and the heap entry of theirs still to come
        (the fresh bound of one removed at its superseded bound) is dropped when it comes
        up, instead of being looked up among the rows and found gone."""
        watch, superseded, gone = self._watch, self._superseded, self._gone
        for eid in eids:
            watch.discard(eid)
            if eid in superseded:
                superseded.discard(eid)
                gone.add(eid)

    def newer_rows(self, cols: Columns) -> list[int]:
        """Rows added since the last call (by entry id: rows keep id order); those
        already superseded are marked as seen (``newly_superseded`` skips them)."""
        n = cols.n
        if n == 0 or cols.eid[n - 1] <= self._last_eid:
            return []
        if n == 1 or cols.eid[n - 2] <= self._last_eid:  # the usual: the one just added
            start = n - 1
        else:
            start = int(np.searchsorted(cols.eid[:n], self._last_eid, side="right"))
        self._last_eid = int(cols.eid[n - 1])
        rows = list(range(start, n))
        for r in rows:
            if cols.superseded[r]:
                self._superseded.add(int(cols.eid[r]))
            elif cols.slot[r] >= 0:
                self._fresh.setdefault(int(cols.slot[r]), []).append(int(cols.eid[r]))
        return rows

    def seen_all(self, cols: Columns) -> bool:
        """Whether every row has been handed out by ``newer_rows``."""
        return cols.n == 0 or int(cols.eid[cols.n - 1]) <= self._last_eid

    def newly_superseded(self, cols: Columns, sid: int) -> list[int]:
        """Rows of slot ``sid`` superseded since they were scheduled, marked as seen."""
        fresh = self._fresh.get(sid)
        if not fresh or cols.n == 0:
            return []
        # the slot's rows not superseded when scheduled (a row's slot never changes,
        # and only an add of its slot supersedes it), found by entry id
        n = cols.n
        if len(fresh) <= self.SCALAR:
            return self._newly_superseded_few(cols, sid, fresh)
        eids = np.array(fresh, dtype=np.int64)
        rows = np.minimum(np.searchsorted(cols.eid[:n], eids), n - 1)
        found = cols.eid[rows] == eids
        live = found & cols.live[rows]
        now = live & cols.superseded[rows]
        self._fresh[sid] = eids[live & ~now].tolist()  # gone or superseded: done with them
        out = rows[now].tolist()
        self._superseded.update(eids[now].tolist())
        return out

    def _row_of(self, cols: Columns, eid: int) -> int | None:
        """The row of live entry ``eid``, or None if it is gone (rows keep entry-id
        order: one lookup, as ``np.searchsorted`` finds it for many)."""
        n = cols.n
        row = min(int(cols.eid[:n].searchsorted(eid)), n - 1)
        return row if cols.eid[row] == eid and cols.live[row] else None

    def _newly_superseded_few(self, cols: Columns, sid: int, fresh: list[int]) -> list[int]:
        """``newly_superseded`` of a slot with a few entries, one by one."""
        keep, out = [], []
        for eid in fresh:
            row = self._row_of(cols, eid)
            if row is None:
                continue
            if cols.superseded[row]:
                out.append(row)
                self._superseded.add(eid)
            else:
                keep.append(eid)
        self._fresh[sid] = keep
        return out

    def candidates(self, cols: Columns, now: int) -> np.ndarray:
        """Live rows that may be due at ``now``, increasing."""
        heap, watch, gone = self._heap, self._watch, self._gone
        while heap and heap[0][0] <= now:
            eid = heapq.heappop(heap)[1]
            if eid in gone:
                gone.discard(eid)
            else:
                watch.add(eid)
        if not watch:
            return np.zeros(0, dtype=np.int64)
        n = cols.n
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if len(watch) <= self.SCALAR:  # (the usual few: one by one)
            few = []
            for eid in list(watch):
                row = self._row_of(cols, eid)
                if row is None:  # removed, or never removable: done
                    watch.discard(eid)
                    self._superseded.discard(eid)
                else:
                    few.append(row)
            few.sort()
            return np.array(few, dtype=np.int64)
        eids = np.fromiter(watch, dtype=np.int64, count=len(watch))
        # rows keep entry-id order: an entry's row is where its id sorts (one past the
        # last row for an id newer than every row's, compared at the last row instead)
        rows = np.minimum(np.searchsorted(cols.eid[:n], eids), n - 1)
        found = (cols.eid[rows] == eids) & cols.live[rows]
        if not found.all():
            for eid in eids[~found].tolist():  # removed, or never removable: done
                watch.discard(eid)
                self._superseded.discard(eid)
            rows = rows[found]
        rows.sort()
        return rows

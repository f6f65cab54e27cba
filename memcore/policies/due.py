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

An entry is held by its id and the row it had when scheduled: that row is read while
the rows have not moved since (``Columns.layout``), else the entry's row is looked up by
its id (rows keep id order). Supersession is learned from the add that causes it
(``Columns.superseded_by_newest``, which the policy asks about at every add that
supersedes: ``Policy.quiet_until`` lets only the others skip ``on_add``): an add
supersedes at most one entry, once.
"""

from __future__ import annotations

import heapq
import math
from typing import TypeVar

import numpy as np

from memcore.columns import Columns

EARLY = 1e-7  # the bound is this much (relative) early, far beyond rounding error


F = TypeVar("F", float, np.ndarray)


def early(due: F) -> F:
    """``due`` less the margin (``EARLY``, relative): a number, or an array element by
    element (the same operations, so the same numbers)."""
    return due - EARLY * (abs(due) + 1.0)


class DueSchedule:
    """Candidate entries for a decay policy, by the first turn each can be due."""

    SCALAR = 4  # a policy decides up to this many candidates one by one (no array made)

    def __init__(self) -> None:
        # (earliest due turn, entry id, its row, the layout the row is of)
        self._heap: list[tuple[float, int, int, int]] = []
        # entry ids past their bound, not yet removed: their row and its layout
        self._watch: dict[int, tuple[int, int]] = {}
        self._last_eid = -1  # the newest entry handed out by ``newer_rows``
        self._first_new = 0  # the first row the last ``newer_rows`` handed out
        # the columns, their layout and row count at the last ``newer_rows``
        self._cols: Columns | None = None
        self._layout = -1
        self._n = 0

    @staticmethod
    def bound(turn: float, scale: float, log_ratio: float) -> float:
        """The earliest turn ``now`` with ``exp(-(now - turn)/scale) * factor <
        threshold`` (``log_ratio = ln(factor/threshold)``), minus the margin."""
        if math.isinf(log_ratio):
            return math.inf
        return early(turn + scale * log_ratio)

    def schedule(self, cols: Columns, row: int, due: float) -> None:
        """``row``'s entry can be due from ``due`` on."""
        if not math.isinf(due):
            heapq.heappush(self._heap, (due, cols.eid.item(row), row, cols.layout))

    def schedule_rows(self, cols: Columns, rows: range, offsets: list[float]) -> None:
        """``schedule(cols, row, bound(turn, 1, offset))`` of each row of ``rows``, its
        turn and its offset (``scale * log_ratio``; inf: never due), in one call: a
        policy schedules every new row."""
        heap, layout = self._heap, cols.layout
        turn, eid = cols.turn, cols.eid
        for row, offset in zip(rows, offsets, strict=True):
            if not math.isinf(offset):
                heapq.heappush(heap, (early(turn.item(row) + offset), eid.item(row), row,
                                      layout))

    def schedule_dues(self, cols: Columns, rows: range, dues: np.ndarray) -> None:
        """``schedule(cols, row, due)`` of each row and its due turn (inf: never due)."""
        heap, layout, push = self._heap, cols.layout, heapq.heappush
        for due, eid, row in zip(dues.tolist(), cols.eid[rows.start:rows.stop].tolist(),
                                 rows, strict=True):
            if due < math.inf:
                push(heap, (due, eid, row, layout))

    def quiet_until(self, unscheduled: float) -> float:
        """A turn before which no entry can be due: the earliest scheduled bound, and
        ``unscheduled`` (the earliest turn an entry not scheduled yet can be due) less
        the margin and a turn more; -inf while a candidate past its bound waits."""
        if self._watch:
            return -math.inf
        top = self._heap[0][0] if self._heap else math.inf
        return top if math.isinf(unscheduled) else min(top, early(unscheduled) - 1.0)

    def later(self, cols: Columns, row: int, due: float) -> None:
        """A candidate its policy kept: no longer one, until ``due``."""
        self._watch.pop(cols.eid.item(row), None)
        self.schedule(cols, row, due)

    def removed(self, eids: list[int]) -> None:
        """Entries the policy is removing (its ``on_add`` removal, which is applied whole
        or fails the job): candidates no more (a heap entry of theirs still to come, such
        as the fresh bound of one removed at its superseded bound, finds its row dead)."""
        watch = self._watch
        for eid in eids:
            watch.pop(eid, None)

    def newer_rows(self, cols: Columns) -> range:
        """Rows added since the last call (rows keep entry-id order, and between two
        compactions rows are only appended). A policy calls it at each ``on_add``,
        before ``newly_superseded``."""
        n = cols.n
        last = self._last_eid
        if cols is self._cols and cols.layout == self._layout:
            start = self._n  # (the rows have not moved: the new ones are the last)
        elif n == 0 or cols.eid.item(n - 1) <= last:
            start = n
        elif n == 1 or cols.eid.item(n - 2) <= last:  # the usual: the one just added
            start = n - 1
        else:
            start = int(np.searchsorted(cols.eid[:n], last, side="right"))
        self._cols, self._layout, self._n = cols, cols.layout, n
        if start < n:
            self._last_eid = cols.eid.item(n - 1)
        self._first_new = start
        return range(start, n)

    def newly_superseded(self, cols: Columns) -> int:
        """The live row the newest add superseded, if ``newer_rows`` handed it out
        before (scheduled unsuperseded: its policy schedules it again), else -1. Only an
        add supersedes, at most one entry, and the policy asks at every add that does
        (``Policy.quiet_until`` skips only adds that supersede nothing)."""
        row = cols.superseded_by_newest
        if row < 0 or row >= self._first_new or not cols.live[row]:
            return -1
        return row

    def _row_of(self, cols: Columns, eid: int) -> int | None:
        """The row of live entry ``eid``, or None if it is gone (rows keep entry-id
        order: one lookup, as ``np.searchsorted`` finds it)."""
        n = cols.n
        row = min(int(cols.eid[:n].searchsorted(eid)), n - 1)
        return row if cols.eid[row] == eid and cols.live[row] else None

    def candidates(self, cols: Columns, now: int) -> list[int]:
        """Live rows that may be due at ``now``, increasing."""
        heap, watch = self._heap, self._watch
        if not watch and heap and heap[0][0] <= now and cols.n:
            _, eid, row, layout = heapq.heappop(heap)
            if not heap or heap[0][0] > now:  # the usual: one entry, none waiting
                one = ((row if cols.live[row] else None) if layout == cols.layout
                       else self._row_of(cols, eid))
                if one is None:  # removed, or never removable: done
                    return []
                watch[eid] = (one, cols.layout)
                return [one]
            watch[eid] = (row, layout)
        while heap and heap[0][0] <= now:
            _, eid, row, layout = heapq.heappop(heap)
            watch[eid] = (row, layout)
        if not watch or cols.n == 0:
            return []
        live, layout = cols.live, cols.layout
        out = []
        for eid, (row, at) in list(watch.items()):
            if at == layout:  # (the rows have not moved: the row is the entry's)
                found: int | None = row if live[row] else None
            else:
                found = self._row_of(cols, eid)
                if found is not None:
                    watch[eid] = (found, layout)
            if found is None:  # removed, or never removable: done
                del watch[eid]
            else:
                out.append(found)
        out.sort()
        return out

"""``ebbinghaus`` checks only the entries that can be due (``memcore.policies.due``):
at every add, its removals must be exactly those of a check of every live row."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from memcore.columns import Columns
from memcore.policies.base import Policy, Removal, Removals
from memcore.policies.due import DueSchedule
from memcore.policies.ebbinghaus import Ebbinghaus
from runner.job.run import run_job
from runner.spec.jobspec import JobSpec
from runner.spec.resolve import make_spec


def every_row(policy: Ebbinghaus, cols: Columns, now: int) -> tuple[list[int], list[float]]:
    """The removals of the former check: retention of every row, live and below."""
    rows = np.arange(cols.n)
    r = policy.retention(cols, now, rows)
    gone = np.flatnonzero(cols.live[: cols.n] & (r < policy.params.prune_threshold))
    return gone.tolist(), r[gone].tolist()


def as_lists(removals: Removals) -> tuple[list[int], list[float]]:
    if removals is None:
        return [], []
    assert isinstance(removals, Removal)
    return removals.rows.tolist(), np.asarray(removals.scores).tolist()


def check_every_add(monkeypatch: pytest.MonkeyPatch, cls: type[Policy],
                    want: Callable[[Any, Columns, int], tuple[list[int], list[float]]],
                    spec: JobSpec) -> int:
    """Run ``spec`` with ``cls.on_add`` checked against ``want`` (the full check, from
    the same columns) at every add; the number of rows removed."""
    removed = []
    original = cls.on_add

    def on_add(self: Any, cols: Columns, row: int, now: int) -> Any:
        expected = want(self, cols, now)
        got = original(self, cols, row, now)
        assert as_lists(got) == expected
        removed.append(len(expected[0]))
        return got

    monkeypatch.setattr(cls, "on_add", on_add)
    run_job(spec)
    return sum(removed)


@pytest.mark.parametrize(("workload", "policy", "params"), [
    ("contradiction", "ebbinghaus", ()),
    ("contradiction", "ebbinghaus", (("policy.tau", "30"),)),
    ("contradiction", "pinned.ebbinghaus", (("policy.tau", "60"),)),
    ("lifecycle", "ebbinghaus", (("policy.tau", "20"),)),
    ("lifecycle", "pinned.ebbinghaus", (("policy.tau", "20"),)),
    ("lifecycle", "ebbinghaus", (("policy.tau", "10"), ("store.budget", "300"))),
])
@pytest.mark.parametrize("waiting", [Ebbinghaus.WAITING, 10**6])
def test_scheduled_removals_equal_a_check_of_every_row(
        monkeypatch: pytest.MonkeyPatch, workload: str, policy: str,
        params: tuple[tuple[str, str], ...], waiting: int) -> None:
    """Prevents a decay policy that misses a due entry, removes one early, or reorders
    its removals: the schedule must give, at every add of a whole job (supersession,
    pins, a budget's removals and compactions included), the rows and scores a check
    of every row gives; with new rows scheduled in groups, or only when one of them
    could be due (``Ebbinghaus.WAITING`` out of reach)."""
    monkeypatch.setattr(Ebbinghaus, "WAITING", waiting)
    spec = make_spec(workload, policy, 1, params=params)
    assert check_every_add(monkeypatch, Ebbinghaus, every_row, spec) > 50  # it prunes, often


@pytest.mark.parametrize("scalar", [0, 10**6])
@pytest.mark.parametrize(("workload", "params"), [
    ("contradiction", ()), ("lifecycle", (("policy.tau", "10"),))])
def test_one_by_one_and_array_paths_each_equal_a_check_of_every_row(
        monkeypatch: pytest.MonkeyPatch, scalar: int, workload: str,
        params: tuple[tuple[str, str], ...]) -> None:
    """Prevents the one-by-one path of ebbinghaus's pruning (a few candidates: Python
    numbers, no arrays) or the array path from differing from a check of every row by a
    row or a bit of a score: each path alone, over a whole job."""
    monkeypatch.setattr(DueSchedule, "SCALAR", scalar)
    spec = make_spec(workload, "ebbinghaus", 2, params=params)
    assert check_every_add(monkeypatch, Ebbinghaus, every_row, spec) > 50


def test_the_bound_is_early_and_close() -> None:
    """Prevents a bound that is late (an entry removed later than its formula says) or
    so early that every entry is a candidate at every add."""
    tau, threshold = 150.0, 0.02
    for imp in (0.3, 0.55, 1.0):
        scale = tau * (1 + 4 * imp)
        due = DueSchedule.bound(100.0, scale, -np.log(threshold))
        first = next(t for t in range(100, 10_000)
                     if np.exp(-(t - 100) / scale) < threshold)
        assert first - 1 < due <= first


def test_rows_scheduled_together_are_due_as_one_by_one() -> None:
    """Prevents ``schedule_rows`` (a policy's new rows in one call) from giving any row
    another due turn than ``bound`` of its turn and offset (the margin included), or
    from scheduling a row that is never due."""
    cols = Columns(dim=8)
    for t in (0, 3, 7, 10**6, 2 * 10**9):
        row = cols.append(np.eye(8)[t % 8])
        cols.turn[row], cols.eid[row] = t, 100 + row
    offsets = [0.0, 1e-9, 1234.5678, math.inf, 7.25]
    one, together = DueSchedule(), DueSchedule()
    for row, offset in enumerate(offsets):
        one.schedule(cols, row, DueSchedule.bound(cols.turn.item(row), 1.0, offset))
    together.schedule_rows(cols, range(cols.n), offsets)
    assert sorted(together._heap) == sorted(one._heap) and len(one._heap) == 4


@pytest.mark.parametrize("others", [0, 1, 2])
def test_a_candidate_its_policy_keeps_stays_one_until_removed(others: int) -> None:
    """Prevents a candidate that its policy keeps (past its bound, not yet below the
    threshold) from being forgotten by the schedule: alone or among others due at the
    same turn, it is handed out again at every later call until the policy removes it,
    and an entry whose row died is handed out no more."""
    cols = Columns(dim=8)
    for t in range(1 + others):
        row = cols.append(np.eye(8)[t])
        cols.turn[row], cols.eid[row] = t, 10 + t
    due = DueSchedule()
    due.schedule_rows(cols, range(cols.n), [100.0 - t for t in range(cols.n)])
    assert due.candidates(cols, 99) == []
    want = list(range(cols.n))
    for now in (100, 101, 150):  # kept: handed out again
        assert due.candidates(cols, now) == want
        assert due.quiet_until(math.inf) == -math.inf  # (a candidate waits)
    cols.live[0] = False  # its row died (another removal)
    cols.n_live -= 1
    assert due.candidates(cols, 151) == want[1:]
    due.removed([cols.eid.item(r) for r in want[1:]])
    assert due.candidates(cols, 152) == [] and due.quiet_until(math.inf) == math.inf


@pytest.mark.parametrize(("workload", "policy", "params"), [
    ("contradiction", "last_write_wins", ()),
    ("lifecycle", "last_write_wins", ()),
    ("lifecycle", "pinned.last_write_wins", ()),
    ("lifecycle", "last_write_wins", (("store.budget", "100"),)),
])
def test_last_write_wins_checks_only_the_new_entrys_slot(
        monkeypatch: pytest.MonkeyPatch, workload: str, policy: str,
        params: tuple[tuple[str, str], ...]) -> None:
    """Prevents a last_write_wins that keeps a superseded entry: taking only the entry
    the add superseded (``Columns.superseded_by_newest``) must remove, at every call,
    what a check of every row removes; and the adds that skip the call (they supersede
    nothing: ``quiet_until``) leave no live superseded entry behind."""
    from memcore.bookkeeping import Bookkeeping
    from memcore.policies.last_write_wins import LastWriteWins

    def superseded(_: Any, cols: Columns, now: int) -> tuple[list[int], list[float]]:
        gone = np.flatnonzero(cols.live[: cols.n] & cols.superseded[: cols.n])
        return gone.tolist(), [0.0] * len(gone)

    adds = []
    original_add = Bookkeeping.add

    def add(self: Any, *args: Any, **kwargs: Any) -> int:
        eid = original_add(self, *args, **kwargs)
        adds.append(eid)
        if not policy.startswith("pinned."):  # (a pinned superseded entry stays)
            assert superseded(None, self.cols, 0)[0] == []
        return eid

    monkeypatch.setattr(Bookkeeping, "add", add)
    spec = make_spec(workload, policy, 1, params=params)
    calls = []
    original_on_add = LastWriteWins.on_add

    def on_add(self: Any, cols: Columns, row: int, now: int) -> Any:
        calls.append(row)
        return original_on_add(self, cols, row, now)

    monkeypatch.setattr(LastWriteWins, "on_add", on_add)
    assert check_every_add(monkeypatch, LastWriteWins, superseded, spec) > 50
    assert policy.startswith("pinned.") or len(calls) < len(adds) / 2  # adds skip it


@pytest.mark.parametrize(("workload", "policy", "params"), [
    ("contradiction", "learned_forget", ()),
    ("contradiction", "learned_forget", (("policy.prune_threshold", "0.2"),)),
    ("lifecycle", "learned_forget", ()),
    ("lifecycle", "pinned.learned_forget", ()),
    ("lifecycle", "learned_forget", (("store.budget", "300"), ("policy.prune_threshold", "0.05"))),
])
@pytest.mark.parametrize("scalar", [0, 10**6])
def test_learned_forget_reads_only_the_rows_that_can_be_due(
        monkeypatch: pytest.MonkeyPatch, workload: str, policy: str,
        params: tuple[tuple[str, str], ...], scalar: int) -> None:
    """Prevents a learned_forget that misses a due entry or reorders its removals:
    reading the network's table only for the entries it says can be due must remove,
    at every add, what reading every live row removes; with the candidates read one by
    one (Python numbers) and as arrays, each path alone."""
    from memcore.policies.learned_forget import LearnedForget

    monkeypatch.setattr(DueSchedule, "SCALAR", scalar)

    def read_every_row(policy: LearnedForget, cols: Columns, now: int
                       ) -> tuple[list[int], list[float]]:
        return as_lists(policy.every_row(cols, now))

    spec = make_spec(workload, policy, 1, params=params)
    assert check_every_add(monkeypatch, LearnedForget, read_every_row, spec) > 50


@pytest.mark.parametrize(("workload", "policy", "params"), [
    ("contradiction", "learned_forget", ()),
    ("lifecycle", "learned_forget", ()),
    ("lifecycle", "pinned.learned_forget", ()),
    ("lifecycle", "learned_forget", (("store.budget", "300"),)),
])
@pytest.mark.parametrize("few", [0, 10**6])
def test_learned_forget_strength_from_one_gather_equals_the_live_rows_lookup(
        monkeypatch: pytest.MonkeyPatch, workload: str, policy: str,
        params: tuple[tuple[str, str], ...], few: int) -> None:
    """Prevents a ranking strength that differs from the network's table answers for the
    live rows: at every query of whole jobs (dead rows awaiting compaction, a budget's
    removals and compactions, supersessions, a pinned wrapper's views included), the one
    gather over every row (``StrengthIndex``, its new rows indexed as arrays or one by
    one) equals the lookup of the live rows only, dead rows at 1, bit for bit."""
    from memcore.learned.strength_index import StrengthIndex
    from memcore.policies.learned_forget import LearnedForget

    monkeypatch.setattr(StrengthIndex, "FEW", few)

    original = LearnedForget.strength
    calls = []

    def strength(self: LearnedForget, cols: Columns, now: int) -> np.ndarray:
        got = original(self, cols, now)
        rows, live = self._predict(cols, now, self._k_strength)
        want = np.ones(cols.n)
        want[rows] = live
        assert got.dtype == want.dtype and np.array_equal(got, want)
        calls.append(cols.n_live < cols.n)
        return got

    monkeypatch.setattr(LearnedForget, "strength", strength)
    run_job(make_spec(workload, policy, 2, params=params))
    assert len(calls) > 100 and any(calls)  # asked often, with dead rows among them


def test_learned_forget_reads_every_row_once_an_entry_is_past_the_tables_ages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents the shortcut that skips looking for the oldest live entry from skipping
    the fall-back it guards: with the table's age cap lowered to 40 days, a lifecycle job
    keeps entries past it, and from then on every add reads every row, as the full check
    does (removals equal at every add)."""
    from memcore.learned import forget_table
    from memcore.policies.learned_forget import LearnedForget

    monkeypatch.setattr(forget_table, "AGE_CAP", 40)
    every_row = LearnedForget.every_row
    full_reads = []

    def counted(self: LearnedForget, cols: Columns, now: int) -> Removal | None:
        full_reads.append(now)
        return every_row(self, cols, now)

    def read_every_row(policy: LearnedForget, cols: Columns, now: int
                       ) -> tuple[list[int], list[float]]:
        return as_lists(every_row(policy, cols, now))

    monkeypatch.setattr(LearnedForget, "every_row", counted)
    spec = make_spec("lifecycle", "learned_forget", 1, 120,
                     params=(("policy.prune_threshold", "0.001"),))
    check_every_add(monkeypatch, LearnedForget, read_every_row, spec)
    assert full_reads and min(full_reads) >= 40


@pytest.mark.parametrize(("workload", "params"), [
    ("contradiction", ()),
    ("contradiction", (("policy.tau", "30"),)),
    ("lifecycle", (("policy.tau", "20"),)),
    ("lifecycle", (("policy.tau", "10"), ("store.budget", "300"))),
    ("lifecycle", (("policy.prune_threshold", "0"),)),
])
@pytest.mark.parametrize("waiting", [Ebbinghaus.WAITING, 10**6])
def test_an_add_in_the_quiet_turns_would_have_removed_nothing(
        monkeypatch: pytest.MonkeyPatch, workload: str,
        params: tuple[tuple[str, str], ...], waiting: int) -> None:
    """Prevents the quiet turns (``Policy.quiet_until``: adds that skip ebbinghaus's
    ``on_add``) from leaving a due entry in the store or changing a number: after every
    add of a whole job no live row is below the threshold (as after an ``on_add``), adds
    do skip it, and every checkpoint's metrics equal the job's with an ``on_add`` at
    every add; new rows waiting to be scheduled in groups, or as long as none of them
    could be due."""
    monkeypatch.setattr(Ebbinghaus, "WAITING", waiting)
    check_quiet_turns(monkeypatch, Ebbinghaus, every_row,
                      make_spec(workload, "ebbinghaus", 3, params=params))


def test_ebbinghaus_quiet_turns_end_before_a_waiting_entry_can_be_due() -> None:
    """Prevents quiet turns that outlast an entry not scheduled yet (new rows wait to be
    scheduled together; whole jobs rarely tell, an older entry bounds the turns first):
    an entry of importance 0 added at turn 0 and still waiting at turn 5 can be due at
    ``tau · ln(1/threshold)``, and the quiet turns end a turn before."""
    policy = Ebbinghaus(Ebbinghaus.Params(tau=10.0))
    cols = Columns(dim=8)
    for t in (0, 5):
        row = cols.append(np.eye(8)[t])
        cols.turn[row], cols.eid[row], cols.importance[row] = t, row, 0.0
        assert policy.on_add(cols, row, t) is None
    first_due = 10.0 * math.log(1 / policy.params.prune_threshold)
    assert first_due - 2 < policy.quiet_until(cols, 5) <= first_due - 1


@pytest.mark.parametrize(("workload", "params"), [
    ("contradiction", ()),
    ("contradiction", (("policy.prune_threshold", "0.2"),)),
    ("lifecycle", ()),
    ("lifecycle", (("store.budget", "300"),)),
])
def test_learned_forget_quiet_turns_would_have_removed_nothing(
        monkeypatch: pytest.MonkeyPatch, workload: str,
        params: tuple[tuple[str, str], ...]) -> None:
    """Prevents learned_forget's quiet turns (an entry of any importance there is not
    due before the least age its table puts a fresh entry below the threshold) from
    leaving a due entry in the store or changing a number, as for ebbinghaus."""
    from memcore.policies.learned_forget import LearnedForget

    def read_every_row(policy: LearnedForget, cols: Columns, now: int
                       ) -> tuple[list[int], list[float]]:
        return as_lists(policy.every_row(cols, now))

    check_quiet_turns(monkeypatch, LearnedForget, read_every_row,
                      make_spec(workload, "learned_forget", 3, params=params))


def test_learned_forget_quiet_turns_end_before_a_fresh_entry_can_be_due() -> None:
    """Prevents quiet turns that outlast the soonest a fresh entry can be due (the
    whole jobs above rarely tell: an entry due soon is mostly scheduled already): with
    one slotted entry of importance 1 scheduled (due late), ``quiet_until`` ends a turn
    before the least age at which the network, read age by age for every importance
    there is, slotted or not, puts a fresh entry below the threshold."""
    from memcore.importance import IMPORTANCES
    from memcore.learned.forget_table import LOG_RETENTION
    from memcore.policies.learned_forget import LearnedForget

    policy = LearnedForget()
    cols = Columns(dim=8)
    row = cols.append(np.eye(8)[0])
    cols.turn[row], cols.eid[row], cols.importance[row], cols.slot[row] = 0, 0, 1.0, 0
    assert policy.on_add(cols, row, 0) is None
    ages = np.arange(2048)

    def first_below(importance: float, slotted: bool) -> float:
        log_r = policy._table.lookup(LOG_RETENTION, ages, np.full(len(ages), importance),
                                     np.zeros(len(ages), dtype=bool),
                                     np.full(len(ages), slotted))
        below = np.flatnonzero(log_r < policy._log_threshold)
        return int(below[0]) if len(below) else math.inf

    first = min(first_below(imp, slotted) for imp in IMPORTANCES for slotted in (False, True))
    assert 0 < first < 1000
    assert first - 2 < policy.quiet_until(cols, 0) <= first - 1


def check_quiet_turns(monkeypatch: pytest.MonkeyPatch, cls: type[Policy],
                      every: Callable[[Any, Columns, int], tuple[list[int], list[float]]],
                      spec: JobSpec) -> None:
    """Run ``spec`` checking that after every add ``every`` (the full check) removes
    nothing, that adds skip ``cls.on_add``, and that its metrics equal those of the job
    with an ``on_add`` at every add."""
    from memcore.bookkeeping import Bookkeeping
    from runner.metrics import METRICS

    def metrics() -> list[dict[str, float | None]]:
        return [{k: None if v != v else v for k, v in row.items()  # (NaN: an empty category)
                 if k in METRICS and not METRICS[k].timing} for row in run_job(spec).rows]

    calls = {"add": 0, "on_add": 0}
    original_add, original_on_add = Bookkeeping.add, cls.on_add

    def add(self: Any, text: str, t: int, *args: Any, **kwargs: Any) -> int:
        eid = original_add(self, text, t, *args, **kwargs)
        calls["add"] += 1
        assert every(self.policy, self.cols, t)[0] == []
        return eid

    def on_add(self: Any, cols: Columns, row: int, now: int) -> Any:
        calls["on_add"] += 1
        return original_on_add(self, cols, row, now)

    with monkeypatch.context() as m:
        m.setattr(Bookkeeping, "add", add)
        m.setattr(cls, "on_add", on_add)
        quiet = metrics()
    assert calls["on_add"] < 0.9 * calls["add"]
    with monkeypatch.context() as m:
        m.setattr(cls, "quiet_until", Policy.quiet_until)
        assert metrics() == quiet


@pytest.mark.parametrize(("workload", "policy", "params"), [
    ("contradiction", "ebbinghaus", (("policy.tau", "30"),)),
    ("contradiction", "pinned.ebbinghaus", (("policy.tau", "30"),)),
    ("lifecycle", "ebbinghaus", (("policy.tau", "10"), ("store.budget", "300"))),
])
def test_ebbinghaus_kept_strength_equals_the_superseded_column(
        monkeypatch: pytest.MonkeyPatch, workload: str, policy: str,
        params: tuple[tuple[str, str], ...]) -> None:
    """Prevents a ranking strength kept between queries from missing a supersession or
    a compaction: at every call of whole jobs (supersessions, removals, compactions, a
    budget's removals, a pinned wrapper's views in ``on_add``) the kept values equal
    ``superseded_strength`` where the column says superseded, else 1, and cannot be
    written through."""
    calls = []
    original = Ebbinghaus.strength

    def strength(self: Ebbinghaus, cols: Columns, now: int) -> np.ndarray:
        got = original(self, cols, now)
        want = np.where(cols.superseded[: cols.n], self.params.superseded_strength, 1.0)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert not got.flags.writeable
        calls.append((cols.layout, int(np.count_nonzero(cols.superseded[: cols.n]))))
        return got

    monkeypatch.setattr(Ebbinghaus, "strength", strength)
    run_job(make_spec(workload, policy, 2, params=params))
    layouts, superseded = zip(*calls, strict=True)
    assert len(calls) > 100 and max(layouts) > 0 and max(superseded) > 0


def test_a_removal_made_through_its_slots_is_the_dataclass_value() -> None:
    """Prevents ``make_removal`` (the decay policies' hot path) from making something
    other than ``Removal(rows, reason, scores)``: the same fields, no merge, equal as
    a value, and as frozen."""
    import dataclasses

    from memcore.policies.base import make_removal

    rows, scores = np.array([3, 1], dtype=np.int64), np.array([0.25, 0.5])
    fast, slow = make_removal(rows, "decayed", scores), Removal(rows, "decayed", scores)
    assert type(fast) is Removal and fast == slow and fast.merged_into is None
    assert [getattr(fast, f.name) is getattr(slow, f.name)
            for f in dataclasses.fields(Removal)] == [True] * 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.reason = "other"  # type: ignore[misc]

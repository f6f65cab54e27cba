"""Storage backends: memory (default) and sqlite (durable, transactional).

The invariant every backend and every policy must keep: each entry ever added is either
live or in the forget log, exactly once. On sqlite it must also hold in the file, the
file must mirror the in-memory store, a consolidation must commit all or nothing, and a
process killed mid-run must leave every committed entry behind.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memcore import POLICIES, HashingEmbedder, Lexicon, MemoryStore, Policy, Removal, StoreParams
from memcore.backends import BACKENDS, SqliteBackend, StoredEntry
from memcore.columns import Columns
from memcore.extract.teacher import KeywordTeacher
from runner.errors import FbenchError
from runner.job.run import run_job
from runner.metrics import METRICS
from runner.spec.resolve import make_spec
from workloads import WORKLOADS, Observe, Query, Tick

ROOT = Path(__file__).resolve().parent.parent
TIMING = {name for name, m in METRICS.items() if m.timing}
LEX = Lexicon(("alice", "bob"), (("home city", "home_city"), ("salary", "salary")))


def sqlite_of(store: MemoryStore) -> SqliteBackend:
    assert isinstance(store.backend, SqliteBackend)
    return store.backend


def live_eids(store: MemoryStore) -> list[int]:
    n = store.cols.n
    return sorted(store.cols.eid[:n][store.cols.live[:n]].tolist())


def expected_entries(store: MemoryStore) -> list[StoredEntry]:
    """The live entries as the sqlite file must hold them (by entry id)."""
    c = store.cols
    out = []
    for r in np.flatnonzero(c.live[: c.n]).tolist():
        sid = int(c.slot[r])
        tags = tuple(name for bit, name in enumerate(c.tag_names) if int(c.tags[r]) >> bit & 1)
        out.append(StoredEntry(
            int(c.eid[r]), int(c.obs_id[r]), int(c.turn[r]), c.texts[r], tags,
            store._slot_names[sid] if sid >= 0 else None, float(c.importance[r]),
            bool(c.superseded[r]), int(c.last_access[r]), int(c.access_count[r]),
            float(c.score[r]), int(c.tier[r]), int(c.since[r])))
    return sorted(out, key=lambda e: e.eid)


def assert_invariant(store: MemoryStore, added: list[int]) -> None:
    """Live ∪ logged == added, disjoint, no entry logged twice; on sqlite, the file holds
    exactly the same (after a flush) and is gap-free."""
    live = live_eids(store)
    logged = store.forget_log.eids().tolist()
    assert len(logged) == len(set(logged)), "an entry is in the forget log twice"
    assert not set(live) & set(logged), "an entry is both live and forgotten"
    assert sorted(live + logged) == sorted(added), "an added entry vanished"
    assert store.size == len(live) and len(store.forget_log) == len(logged)
    if store.backend.durable:
        store.flush()
        backend = sqlite_of(store)
        conn = backend.conn
        assert sorted(e for (e,) in conn.execute("SELECT eid FROM entries")) == live
        assert [e for (e,) in conn.execute("SELECT eid FROM forget_log ORDER BY seq")] == logged
        assert backend.problems() == []
        snap = backend.load()
        assert snap.entries == expected_entries(store)
        assert snap.forgotten == store.forget_log.records()


# -- errors and parameters ----------------------------------------------------------


def test_backends_are_registered_and_unknown_names_are_one_line() -> None:
    """Prevents an if/elif on backend names and an unhelpful error for a typo."""
    assert sorted(BACKENDS) == ["memory", "sqlite"]
    with pytest.raises(ValueError, match=r"^unknown backend 'x'; known: memory, sqlite$"):
        StoreParams(backend="x")
    with pytest.raises(FbenchError) as err:
        make_spec("contradiction", "fifo", 0, 50, params=[("store.backend", "sqlit")])
    assert "\n" not in str(err.value) and "did you mean 'sqlite'" in str(err.value)


def test_path_rules(tmp_path: Path) -> None:
    """Prevents a path silently ignored (memory backend), two stores (or two jobs)
    sharing one file, and a job loading someone else's store."""
    with pytest.raises(ValueError, match="needs a durable backend"):
        StoreParams(path=str(tmp_path / "x.sqlite"))
    path = tmp_path / "s.sqlite"
    spec = make_spec("contradiction", "fifo", 0, 60,
                     params=[("store.backend", "sqlite"), ("store.path", str(path))])
    run_job(spec)
    assert path.exists()
    with pytest.raises(FbenchError, match="already exists"):
        run_job(spec)
    with pytest.raises(ValueError, match="no store at"):
        MemoryStore.open(str(tmp_path / "missing.sqlite"), POLICIES["fifo"](), HashingEmbedder())
    junk = tmp_path / "junk"
    junk.write_text("not a database")
    with pytest.raises(ValueError, match="not an fbench store"):
        MemoryStore.open(str(junk), POLICIES["fifo"](), HashingEmbedder())
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE t (x)")
    other.close()
    with pytest.raises(ValueError, match="not an fbench store"):
        MemoryStore.open(str(tmp_path / "other.sqlite"), POLICIES["fifo"](), HashingEmbedder())


def test_an_open_store_is_not_opened_twice(tmp_path: Path) -> None:
    """Prevents two writers interleaving in one file (the mirror would be wrong)."""
    path = str(tmp_path / "s.sqlite")
    store = MemoryStore(POLICIES["keep_all"](), HashingEmbedder(), None,
                        StoreParams(backend="sqlite", path=path))
    store.add("hello", 0)
    with pytest.raises(ValueError, match="in use"):
        MemoryStore.open(path, POLICIES["keep_all"](), HashingEmbedder())
    store.close()
    with MemoryStore.open(path, POLICIES["keep_all"](), HashingEmbedder()) as again:
        assert again.size == 1


def test_a_job_level_store_leaves_no_file(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Prevents sweeps filling the disk: without a path the sqlite file is temporary and
    deleted when the store is closed or collected."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    store = MemoryStore(POLICIES["fifo"](), HashingEmbedder(), None,
                        StoreParams(backend="sqlite"))
    store.add("hello", 0)
    assert Path(sqlite_of(store).path).exists()
    store.close()
    assert list(tmp_path.iterdir()) == []
    run_job(make_spec("lifecycle", "lethe", 0, 5, params=[("store.backend", "sqlite")]))
    gc.collect()
    assert list(tmp_path.iterdir()) == []


# -- parity -------------------------------------------------------------------------


def deterministic_rows(workload: str, policy: str, horizon: int,
                       backend: str) -> list[dict[str, Any]]:
    params = [] if backend == "memory" else [("store.backend", backend)]
    spec = make_spec(workload, policy, 1, horizon, params=params)
    return [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v)
             for k, v in row.items() if k not in TIMING}
            for row in run_job(spec).rows]


@pytest.mark.parametrize(("workload", "horizon"), [("contradiction", 400), ("lifecycle", 40)])
@pytest.mark.parametrize("policy", ["keep_all", "fifo", "lru", "ttl", "lethe", "pinned.lethe"])
def test_sqlite_job_metrics_equal_memory(workload: str, horizon: int, policy: str) -> None:
    """Prevents the durable backend from changing what a store does: the same job gives
    identical checkpoint rows (timing columns aside) on both backends."""
    memory = deterministic_rows(workload, policy, horizon, "memory")
    assert deterministic_rows(workload, policy, horizon, "sqlite") == memory
    if policy == "fifo":
        assert memory[-1]["n_forgotten"] > 0  # the parity covers removals


# -- the forget-log invariant, every policy, every backend ----------------------------

WORDS = ("alice", "bob", "home", "city", "salary", "is", "now", "boston", "denver",
         "ramen", "movie")
SENTENCES = ("Alice's home city is boston.", "Alice's home city is now denver.",
             "Bob's salary is 100.", "The team talked about a movie.")
TEXTS = st.one_of(st.sampled_from(SENTENCES),
                  st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join))
TAGS = st.lists(st.sampled_from(("fact", "chitchat", "remark", "instruction")),
                max_size=2, unique=True).map(",".join)
DT = st.sampled_from((0, 0, 0, 1, 1, 2, 3, 10, 50, 400))
ADD = st.tuples(st.just("add"), TEXTS, TAGS, DT)
OPS = st.lists(st.one_of(   # adds weigh 3: enough live entries to evict and merge
    ADD, ADD, ADD,
    st.tuples(st.just("again"), st.integers(0, 30), DT),   # re-add an earlier text
    st.tuples(st.just("retrieve"), TEXTS, st.integers(1, 5), DT),
    st.tuples(st.just("tick"), DT),
), max_size=30)

# Small bounds so that a short sequence exercises every kind of removal.
SMALL = {"capacity": 3, "max_age": 4.0, "window": 6.0, "tau": 3.0, "half_life": 2.0}


def small_policy(name: str) -> Policy:
    cls = POLICIES[name]
    fields = {f.name for f in dataclasses.fields(cls.Params)}
    return cls(cls.Params(**{k: v for k, v in SMALL.items() if k in fields}))


def run_ops(store: MemoryStore, ops: list[tuple[Any, ...]]) -> list[int]:
    """Apply ``ops`` with non-decreasing times; returns the entry ids added."""
    added: list[int] = []
    texts: list[tuple[str, str]] = []
    now = 0
    for op in ops:
        now += op[-1]
        if op[0] == "add" or (op[0] == "again" and texts):
            text, tags = (op[1], op[2]) if op[0] == "add" else texts[op[1] % len(texts)]
            texts.append((text, tags))
            added.append(store.add(text, now, meta={"tags": tags}))
        elif op[0] == "retrieve":
            hits = store.retrieve(op[1], now, op[2])
            assert all(store.holds(h.obs_id) for h in hits)
        elif op[0] == "tick":
            store.tick(now)
    return added


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("policy", sorted(POLICIES))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_every_added_entry_is_live_or_logged_once(policy: str, backend: str,
                                                  ops: list[tuple[Any, ...]]) -> None:
    """Prevents silent forgetting, double logging and a file that drifts from the store:
    after any sequence of adds, retrievals and ticks, live ∪ logged == added (disjoint, no
    duplicates), in memory and, on sqlite, in the database tables too."""
    store = MemoryStore(small_policy(policy), HashingEmbedder(), KeywordTeacher(LEX),
                        StoreParams(backend=backend))
    try:
        assert_invariant(store, run_ops(store, ops))
    finally:
        store.close()


# -- transactions ----------------------------------------------------------------------


class TwoStep(Policy):
    """At a tick, removes every live entry in two removals (a consolidation)."""

    name = "two_step"

    def on_tick(self, cols: Columns, now: int) -> list[Removal]:
        live = np.flatnonzero(cols.live[: cols.n])
        half = len(live) // 2
        return [Removal(live[:half], "first", np.zeros(half)),
                Removal(live[half:], "second", np.ones(len(live) - half))]


def test_a_consolidation_commits_all_or_nothing(tmp_path: Path) -> None:
    """Prevents the seed's failure (its log crashed mid-consolidation, leaving half of it
    applied): a write that fails inside a tick leaves the file at its last commit, and
    the next successful commit writes the whole consolidation."""
    store = MemoryStore(TwoStep(), HashingEmbedder(), None,
                        StoreParams(backend="sqlite", path=str(tmp_path / "s.sqlite")))
    added = [store.add(f"entry {i}", i) for i in range(6)]
    conn = sqlite_of(store).conn
    conn.execute("CREATE TRIGGER boom BEFORE INSERT ON forget_log WHEN NEW.eid = 4 "
                 "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END")
    with pytest.raises(sqlite3.DatabaseError, match="disk on fire"):
        store.tick(10)   # the second removal's write fails
    assert sorted(e for (e,) in conn.execute("SELECT eid FROM entries")) == added
    assert conn.execute("SELECT count(*) FROM forget_log").fetchone() == (0,)
    assert not conn.in_transaction
    conn.execute("DROP TRIGGER boom")
    store.flush()
    assert conn.execute("SELECT count(*) FROM entries").fetchone() == (0,)
    assert [r for (r,) in conn.execute("SELECT reason FROM forget_log ORDER BY seq")] == \
        ["first"] * 3 + ["second"] * 3
    assert_invariant(store, added)
    store.close()


def test_a_bad_removal_applies_nothing() -> None:
    """Prevents a half-applied consolidation in memory: removals naming one entry twice
    are refused before any of them is applied."""

    class Twice(Policy):
        def on_tick(self, cols: Columns, now: int) -> list[Removal]:
            rows = np.flatnonzero(cols.live[: cols.n])
            return [Removal(rows, "a", np.zeros(len(rows))),
                    Removal(rows[:1], "b", np.zeros(1))]

    store = MemoryStore(Twice(), HashingEmbedder(), None, StoreParams(backend="sqlite"))
    added = [store.add(f"entry {i}", i) for i in range(3)]
    with pytest.raises(RuntimeError, match="twice"):
        store.tick(5)
    assert_invariant(store, added)
    assert store.size == 3
    store.close()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_a_removal_of_one_dead_row_is_refused(backend: str) -> None:
    """Prevents the one-row removal path (the usual one) from removing, logging or
    counting a dead entry: a policy that names the row it removed at the last add again
    is refused before anything changes."""

    class Again(Policy):
        def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
            return Removal(np.array([0]), "again", np.zeros(1)) if now >= 1 else None

    store = MemoryStore(Again(), HashingEmbedder(), None, StoreParams(backend=backend))
    added = [store.add("entry 0", 0)]
    added.append(store.add("entry 1", 1))  # removes entry 0
    assert store.size == 1 and store.forget_log.counts() == {"again": 1}
    with pytest.raises(RuntimeError, match="dead entry"):
        store.add("entry 2", 2)
    assert store.forget_log.counts() == {"again": 1} and store.live_tokens == 4
    store.close()


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
@pytest.mark.parametrize(("rows", "refused"), [([2, 0], "dead entry"), ([1, 2, 1], "twice")])
def test_a_removal_of_a_few_rows_is_checked_before_any_goes(
        backend: str, rows: list[int], refused: str) -> None:
    """Prevents the few-rows removal path (rows read as numbers) from removing, logging
    or counting anything of a removal that names a dead row or one row twice: it is
    refused before any of its rows goes, whatever the order."""

    class Few(Policy):
        def on_add(self, cols: Columns, row: int, now: int) -> Removal | None:
            if now == 1:
                return Removal(np.array([0]), "first", np.zeros(1))
            if now == 3:
                return Removal(np.array(rows), "few", np.zeros(len(rows)))
            return None

    store = MemoryStore(Few(), HashingEmbedder(), None, StoreParams(backend=backend))
    for t in range(3):
        store.add(f"entry {t}", t)  # (entry 0 goes at the second add)
    assert store.size == 2 and store.forget_log.counts() == {"first": 1}
    with pytest.raises(RuntimeError, match=refused):
        store.add("entry 3", 3)
    assert store.forget_log.counts() == {"first": 1} and store.size == 3
    assert store.live_tokens == 6
    store.close()


def test_reinforcement_is_written_at_the_next_boundary() -> None:
    """Prevents a retrieval costing a transaction (the hot path) and reinforcement never
    being written: it reaches the file at the next add, tick or flush."""
    store = MemoryStore(POLICIES["lethe"](), HashingEmbedder(), None,
                        StoreParams(backend="sqlite", path=":memory:"))
    store.add("Alice likes ramen.", 0, meta={"tags": "fact"})
    store.add("Bob likes tacos.", 0, meta={"tags": "remark"})
    conn = sqlite_of(store).conn

    def stored() -> list[tuple[int, int, float]]:
        return conn.execute(
            "SELECT access_count, last_access, score FROM entries ORDER BY eid").fetchall()

    before = stored()
    store.retrieve("ramen", 3, 1)
    assert stored() == before
    store.tick(4)
    after = stored()
    assert after[0][:2] == (1, 3) and after[0][2] > before[0][2] and after[1] == before[1]
    store.close()


# -- reopening -------------------------------------------------------------------------


def feed(store: MemoryStore, events: list[Any], start: int = 0) -> list[list[Any]]:
    out = []
    for i, ev in enumerate(events, start):
        if isinstance(ev, Observe):
            store.add(ev.text, ev.t, obs_id=i, meta=ev.meta)
        elif isinstance(ev, Query):
            out.append(store.retrieve(ev.text, ev.t, 5))
        elif isinstance(ev, Tick):
            store.tick(ev.t)
    return out


@pytest.mark.parametrize("policy", ["keep_all", "fifo", "lru", "lfu", "ttl", "lethe",
                                    "pinned.fifo", "window"])
def test_a_reopened_store_continues_exactly(policy: str, tmp_path: Path) -> None:
    """Prevents a lossy reopen: closing a sqlite store half-way and reopening it gives the
    same retrievals (ids and scores) and the same forget log as never stopping."""
    W = WORKLOADS["lifecycle"]
    vocab = W.vocabulary()
    events = list(W.events(2, 30, W.Params()))
    half = len(events) // 2

    def make() -> tuple[Policy, HashingEmbedder, KeywordTeacher]:
        return (small_policy(policy) if policy != "lethe" else POLICIES[policy](),
                HashingEmbedder(), KeywordTeacher(Lexicon(vocab.entities, vocab.phrases)))

    whole = MemoryStore(*make())
    expected = feed(whole, events)

    path = str(tmp_path / "s.sqlite")
    first = MemoryStore(*make(), StoreParams(backend="sqlite", path=path))
    got = feed(first, events[:half])
    first.close()
    second = MemoryStore.open(path, *make())
    got += feed(second, events[half:], half)
    assert got == expected   # every hit: entry id, observation id, text and score
    assert second.forget_log.records() == whole.forget_log.records()
    assert live_eids(second) == live_eids(whole)
    assert second.live_tokens == whole.live_tokens
    assert_invariant(second, list(range(whole._next_eid)))
    second.close()


def test_an_inconsistent_file_is_refused(tmp_path: Path) -> None:
    """Prevents reopening a file whose log has a gap as if nothing were lost."""
    path = str(tmp_path / "s.sqlite")
    with MemoryStore(POLICIES["fifo"](POLICIES["fifo"].Params(capacity=1)), HashingEmbedder(),
                     None, StoreParams(backend="sqlite", path=path)) as store:
        for i in range(4):
            store.add(f"entry {i}", i)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM forget_log WHERE eid = 1")
    conn.commit()
    conn.close()
    with pytest.raises(ValueError, match=r"1 entry ids in \[0, 3\] are missing"):
        MemoryStore.open(path, POLICIES["fifo"](), HashingEmbedder())


# -- crash -------------------------------------------------------------------------------

CHILD = """
import sys
from memcore import POLICIES, HashingEmbedder, Lexicon, MemoryStore, StoreParams
from memcore.extract.teacher import KeywordTeacher
from workloads import WORKLOADS, Observe, Query
path, policy = sys.argv[1], sys.argv[2]
W = WORKLOADS["lifecycle"]
v = W.vocabulary()
store = MemoryStore(POLICIES[policy](), HashingEmbedder(),
                    KeywordTeacher(Lexicon(v.entities, v.phrases)),
                    StoreParams(backend="sqlite", path=path))
for ev in W.events(0, 100000, W.Params()):
    if isinstance(ev, Observe):
        store.add(ev.text, ev.t, meta=ev.meta)
    elif isinstance(ev, Query):
        store.retrieve(ev.text, ev.t, 5)
    else:
        store.tick(ev.t)
        print(ev.t, store._next_eid, flush=True)   # every entry below is committed
"""


@pytest.mark.parametrize("policy", ["lethe", "fifo"])
def test_a_killed_process_leaves_every_committed_entry(policy: str, tmp_path: Path) -> None:
    """Prevents lost or half-written transactions: a child feeding a long lifecycle stream
    is killed with SIGKILL mid-run; the file passes SQLite's integrity check, holds every
    entry the child reported committed, live or logged, and its log has no gap."""
    path = tmp_path / "crash.sqlite"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), policy], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    committed = 0
    for line in child.stdout:
        day, committed = map(int, line.split())
        if day >= 60:
            break
    assert child.poll() is None, "the child finished before it was killed"
    os.kill(child.pid, signal.SIGKILL)
    for line in child.stdout:   # reported before the kill: committed too
        committed = int(line.split()[1])
    assert child.wait() == -signal.SIGKILL
    assert committed > 0

    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    live = [e for (e,) in conn.execute("SELECT eid FROM entries")]
    logged = [e for (e,) in conn.execute("SELECT eid FROM forget_log ORDER BY seq")]
    conn.close()
    everything = sorted(live + logged)
    assert everything == list(range(len(everything))), "a gap or a duplicate"
    assert len(everything) >= committed
    assert logged, "the run was long enough to forget"

    v = WORKLOADS["lifecycle"].vocabulary()
    store = MemoryStore.open(str(path), POLICIES[policy](), HashingEmbedder(),
                             KeywordTeacher(Lexicon(v.entities, v.phrases)))
    assert live_eids(store) == sorted(live)
    assert store.forget_log.eids().tolist() == logged
    added = everything + [store.add("A new day begins.", 10_000) for _ in range(3)]
    store.tick(10_001)
    assert_invariant(store, added)
    store.close()

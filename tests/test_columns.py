"""The sparse embedding storage of memcore.columns, and the one column declaration."""

from __future__ import annotations

import numpy as np
import pytest

from memcore.backends import SqliteBackend
from memcore.columns import Columns
from memcore.fields import ARRAYS, PERSISTED


@pytest.mark.parametrize("every", [50, 1200])
def test_dense_equals_the_dense_matrix_through_appends_and_compactions(every: int) -> None:
    """Prevents the posting lists from losing, misplacing or duplicating a value: after
    appends, removals and compactions, ``dense`` must be exactly the dimension-major
    matrix of the surviving rows' vectors (relevance and lethe's merges read it). Rows
    are posted only when a posting list is read: read every 50 appends (compactions
    meet posted and unposted rows) and only at the end (after four compactions of rows
    never posted)."""
    rng = np.random.default_rng(11)
    dim = 64
    cols = Columns(dim, capacity=8)
    kept: list[np.ndarray] = []  # the vector of each row, in row order
    for step in range(1200):
        vec = np.zeros(dim)
        nz = rng.choice(dim, rng.integers(0, 6), replace=False)
        vec[nz] = rng.random(len(nz))
        cols.append(vec)
        kept.append(vec)
        if step % 7 == 3:  # remove a random live row
            row = int(rng.choice(np.flatnonzero(cols.live[: cols.n])))
            cols.live[row] = False
            cols.n_live -= 1
        if step % 250 == 249:
            old = cols.compact()
            kept = [kept[i] for i in old]
        if (step + 1) % every == 0:
            reference = np.array(kept).T
            dims = np.sort(rng.choice(dim, 10, replace=False))
            assert np.array_equal(cols.dense(dims), reference[dims])
            rows = np.sort(rng.choice(cols.n, min(5, cols.n), replace=False))
            assert np.array_equal(cols.dense(dims, rows), reference[dims][:, rows])
            assert all(np.array_equal(cols.dims[r], np.flatnonzero(kept[r]))
                       for r in range(cols.n))


def test_the_sqlite_entries_table_is_the_column_declaration() -> None:
    """Prevents the SQLite schema drifting from ``memcore.fields.FIELDS`` (a column
    added to, dropped from, renamed, reordered or retyped in one and not the other): the
    ``entries`` table of a fresh store must have exactly the persisted fields, in order,
    with their declared SQL types, and ``Columns`` one array of each declared dtype."""
    backend = SqliteBackend(":memory:")
    try:
        info = backend.conn.execute("PRAGMA table_info(entries)").fetchall()
    finally:
        backend.close()
    table = [(name, " ".join([kind, *(["PRIMARY KEY"] if pk else []),
                              *(["NOT NULL"] if notnull else [])]))
             for _, name, kind, notnull, _, pk in info]
    assert table == [(f.name, f.sql) for f in PERSISTED]
    cols = Columns(4)
    assert [(f.name, getattr(cols, f.name).dtype) for f in ARRAYS] == [
        (f.name, np.dtype(f.dtype)) for f in ARRAYS]


def test_an_add_names_the_row_it_superseded() -> None:
    """Prevents the policies that read ``Columns.superseded_by_newest`` instead of looking
    for supersession (last_write_wins, the decay schedule) from missing or inventing
    one: after each add it is the row that add marked superseded, else -1, and an append
    outside an add (a reopened store's) or a compaction (its row moved) resets it."""
    from memcore import HashingEmbedder, Lexicon, MemoryStore
    from memcore.extract.teacher import KeywordTeacher
    from memcore.policies.keep_all import KeepAll

    lexicon = Lexicon(("alice", "bob"), (("home city", "home_city"), ("salary", "salary")))
    store = MemoryStore(KeepAll(), HashingEmbedder(), KeywordTeacher(lexicon))
    cols = store.cols
    named = []
    for t, text in enumerate(["Alice's home city is boston.", "Bob's salary is 10.",
                              "Alice's home city is denver.", "The weather is nice.",
                              "Alice's home city is paris.", "Bob's salary is 20."]):
        store.add(text, t)
        named.append(cols.superseded_by_newest)
    assert named == [-1, -1, 0, -1, 2, 1]
    assert np.flatnonzero(cols.superseded[: cols.n]).tolist() == [0, 1, 2]
    cols.append(np.zeros(cols.dim))
    assert cols.superseded_by_newest == -1
    store.add("Alice's home city is rome.", 6)
    assert cols.superseded_by_newest == 4
    cols.compact()
    assert cols.superseded_by_newest == -1

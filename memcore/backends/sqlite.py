"""sqlite: a durable store in one SQLite file (stdlib ``sqlite3``, WAL journal).

The file's layout and the row codec are ``memcore.backends.sqlite_schema``: the live
entries in ``entries`` (one column per persisted field of ``memcore.fields.FIELDS``),
the forget records in ``forget_log``, the schema version and peak size in ``meta``. A
removal deletes the entry from ``entries`` and inserts its record into ``forget_log``
in the same transaction, so every entry id ever committed is in exactly one of the two
tables (``problems()`` checks it).

**Transactions.** Changes are buffered and written at the store's ``commit``, in one
``BEGIN IMMEDIATE … COMMIT``: the removals (in order), the new live entries, and an
``UPDATE`` of every persisted live entry whose mutable columns (``MUTABLE``) differ
from what was last written (a vectorised diff against a shadow copy, so any column a
policy changes is persisted without the policy knowing about backends). If the write
fails the transaction is rolled back, the file keeps its last committed state and the
buffer is kept, so the next successful commit writes everything.

**Durability.** ``synchronous=NORMAL`` in WAL mode: a committed transaction survives
the process being killed (the crash test sends SIGKILL); an OS crash or power loss may
lose the last few transactions but never leaves a partial one. The connection holds
an exclusive lock (``locking_mode=EXCLUSIVE``) from its first access until it is closed:
one process writes a store, and another opening it meanwhile gets a clear error.

**Paths.** ``path=""`` (the default) is a private temporary file, deleted when the
backend is closed or garbage-collected (a job-level store leaves nothing behind; only a
process killed with SIGKILL leaves its ``fbench-store-*`` temporary folder);
``":memory:"`` is SQLite's in-memory database (transactional, not durable); any other
path must not exist yet (it is claimed atomically, so two jobs never share one file)
unless the store is *reopened* (``MemoryStore.open``), and is kept after close.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Sequence

import numpy as np

from memcore.backends.base import Backend, Snapshot, register_backend
from memcore.backends.sqlite_schema import (
    DELETE_ENTRY,
    INSERT_ENTRY,
    INSERT_FORGET,
    SELECT_ENTRIES,
    SELECT_FORGET,
    UPDATE_ENTRY,
    EntryCodec,
    decode_entries,
    decode_forgotten,
    forget_rows,
    init_schema,
    stored_peak,
)
from memcore.columns import Columns
from memcore.fields import ARRAYS, MUTABLE
from memcore.forget_log import ForgetBatch


def _release(conn: sqlite3.Connection, tmpdir: str | None) -> None:
    conn.close()
    if tmpdir is not None:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _claim(path: str) -> None:
    """Create ``path`` empty, failing if it exists (atomic: O_CREAT | O_EXCL)."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        raise ValueError(
            f"store path {path!r} already exists; a new store needs a fresh path "
            f"(reopen an existing one with MemoryStore.open)") from None
    except OSError as exc:
        raise ValueError(f"cannot create a store at {path!r}: {exc.strerror}") from None
    os.close(fd)


class SqliteBackend(Backend):
    """Mirrors the store's live entries and forget log in one SQLite file."""

    name = "sqlite"
    durable = True

    def __init__(self, path: str = "", reopen: bool = False) -> None:
        tmpdir = None
        if reopen and path in ("", ":memory:"):
            raise ValueError("reopening a store needs the path of its SQLite file")
        if path == "":
            tmpdir = tempfile.mkdtemp(prefix="fbench-store-")
            file = os.path.join(tmpdir, "store.sqlite")
        elif path == ":memory:":
            file = path
        elif reopen:
            if not os.path.isfile(path):
                raise ValueError(f"no store at {path!r}")
            file = path
        else:
            _claim(path)
            file = path
        self.path = file
        try:
            conn = sqlite3.connect(file, isolation_level=None, check_same_thread=False,
                                   timeout=0.2)
        except sqlite3.Error as exc:
            if tmpdir is not None:
                shutil.rmtree(tmpdir, ignore_errors=True)
            raise ValueError(f"cannot open a store at {path!r}: {exc}") from None
        self.conn = conn
        self._finalizer = weakref.finalize(self, _release, conn, tmpdir)
        try:
            if file != ":memory:":
                conn.execute("PRAGMA locking_mode=EXCLUSIVE")
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            init_schema(conn, reopen)
        except sqlite3.DatabaseError as exc:
            self._finalizer()
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise ValueError(
                    f"store {path!r} is in use (open in another store or process)") from None
            raise ValueError(f"{path!r} is not an fbench store ({exc})") from None
        self._pending: list[ForgetBatch] = []
        self._m = 0   # rows [0, _m) of the columns are persisted (live) or logged
        self._shadow: dict[str, np.ndarray] = {
            f.name: np.zeros(0, dtype=f.dtype) for f in ARRAYS if f.mutable}
        self._peak = stored_peak(conn)
        self._codec = EntryCodec()
        self._changed = self._ne = np.zeros(0, dtype=bool)   # diff buffers

    # -- the hooks ----------------------------------------------------------
    def on_remove(self, batch: ForgetBatch) -> None:
        self._pending.append(batch)

    def on_compact(self, keep: np.ndarray) -> None:
        k = int(np.searchsorted(keep, self._m))
        for arr in self._shadow.values():
            arr[:k] = arr[keep[:k]]
        self._m = k

    def resync(self, cols: Columns, changed: list[int] | None = None) -> None:
        """The shadow now mirrors the columns: rows ``[0, n)``, or only ``changed`` and
        the new rows ``[_m, n)`` when the other rows are known to be unchanged."""
        n, m = cols.n, self._m if changed is not None else 0
        if len(self._changed) < n:
            cap = max(n, 2 * len(self._changed))
            self._changed, self._ne = np.zeros(cap, dtype=bool), np.zeros(cap, dtype=bool)
            for name, arr in self._shadow.items():
                grown = np.zeros(cap, dtype=arr.dtype)
                grown[:self._m] = arr[:self._m]
                self._shadow[name] = grown
        for name, arr in self._shadow.items():
            col = getattr(cols, name)
            arr[m:n] = col[m:n]
            if changed:
                arr[changed] = col[changed]
        self._m = n

    def commit(self, cols: Columns, slot_names: Sequence[str], peak_size: int) -> None:
        n, m = cols.n, self._m
        live = cols.live
        if m:
            changed, ne = self._changed[:m], self._ne[:m]
            first, *rest = MUTABLE
            np.not_equal(getattr(cols, first)[:m], self._shadow[first][:m], out=changed)
            for name in rest:
                np.not_equal(getattr(cols, name)[:m], self._shadow[name][:m], out=ne)
                changed |= ne
            changed &= live[:m]
            upd = np.flatnonzero(changed).tolist()
        else:
            upd = []
        if n == m + 1:   # the common case: one add
            new = [m] if live[m] else []
        else:
            new = (np.flatnonzero(live[m:n]) + m).tolist() if n > m else []
        if not (self._pending or upd or new or peak_size != self._peak):
            return
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for b in self._pending:
                conn.executemany(DELETE_ENTRY, zip(b.eid.tolist()))
                conn.executemany(INSERT_FORGET, forget_rows(b))
            if new:
                conn.executemany(INSERT_ENTRY, self._codec.inserts(cols, new, slot_names))
            if upd:
                conn.executemany(UPDATE_ENTRY, self._codec.updates(cols, upd))
            if peak_size != self._peak:
                conn.execute("UPDATE meta SET value = ? WHERE key = 'peak_size'",
                             (str(peak_size),))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self._pending.clear()
        self._peak = peak_size
        self.resync(cols, upd)

    # -- reopening ----------------------------------------------------------
    def load(self) -> Snapshot:
        conn = self.conn
        entries = decode_entries(conn.execute(SELECT_ENTRIES).fetchall())
        forgotten = decode_forgotten(conn.execute(SELECT_FORGET))
        return Snapshot(entries, forgotten, stored_peak(conn))

    def problems(self) -> list[str]:
        """Violations of the invariant "every entry id in [0, max] is in exactly one of
        ``entries`` and ``forget_log``" (duplicates within a table are impossible: both
        ``eid`` columns are unique). Empty when the file is consistent."""
        conn = self.conn
        out = []
        both = conn.execute(
            "SELECT count(*) FROM entries JOIN forget_log USING (eid)").fetchone()[0]
        if both:
            out.append(f"{both} entry ids are both live and in the forget log")
        n, lo, hi = conn.execute(
            "SELECT count(*), min(eid), max(eid) FROM "
            "(SELECT eid FROM entries UNION ALL SELECT eid FROM forget_log)").fetchone()
        if n and lo < 0:
            out.append(f"negative entry id {lo}")
        if n and n - both != hi + 1:
            out.append(f"{hi + 1 - (n - both)} entry ids in [0, {hi}] are missing")
        return out

    def close(self) -> None:
        self._finalizer()


@register_backend("sqlite")
def sqlite_backend(path: str, reopen: bool) -> Backend:
    return SqliteBackend(path, reopen)

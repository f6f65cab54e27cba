"""sqlite: a durable store in one SQLite file (stdlib ``sqlite3``, WAL journal).

Tables::

    entries(eid PRIMARY KEY, obs_id, turn, text, tags, slot, importance, superseded,
            last_access, access_count, score, tier, since)          -- LIVE entries
    forget_log(seq INTEGER PRIMARY KEY AUTOINCREMENT, eid UNIQUE, obs_id, text, reason,
               score, turn, age, last_access, merged_into)          -- append-only
    meta(key PRIMARY KEY, value)                                    -- schema, peak_size

``tags`` are the entry's tag names, comma-separated; ``slot`` is the extracted slot
name (NULL for none); ``score``/``tier``/``since`` are a policy's own columns (lethe's
stored score, tier and tier entry time). A removal deletes the entry from ``entries``
and inserts its record into ``forget_log`` in the same transaction, so every entry id
ever committed is in exactly one of the two tables (``problems()`` checks it).

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

import math
import os
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Sequence
from itertools import repeat
from typing import Any

import numpy as np

from memcore.backends.base import MUTABLE, Backend, Snapshot, StoredEntry, register_backend
from memcore.columns import Columns
from memcore.forget_log import ForgetBatch, ForgetRecord

SCHEMA_VERSION = "1"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    eid INTEGER PRIMARY KEY,
    obs_id INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    text TEXT NOT NULL,
    tags TEXT NOT NULL,
    slot TEXT,
    importance REAL NOT NULL,
    superseded INTEGER NOT NULL,
    last_access INTEGER NOT NULL,
    access_count INTEGER NOT NULL,
    score REAL,
    tier INTEGER NOT NULL,
    since INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS forget_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    eid INTEGER NOT NULL UNIQUE,
    obs_id INTEGER NOT NULL,
    text TEXT NOT NULL,
    reason TEXT NOT NULL,
    score REAL,
    turn INTEGER NOT NULL,
    age INTEGER NOT NULL,
    last_access INTEGER NOT NULL,
    merged_into INTEGER NOT NULL DEFAULT -1
);
"""

ENTRY_FIELDS = ("eid", "obs_id", "turn", "text", "tags", "slot", "importance", "superseded",
                "last_access", "access_count", "score", "tier", "since")
INSERT_ENTRY = (f"INSERT INTO entries ({', '.join(ENTRY_FIELDS)}) "
                f"VALUES ({', '.join('?' * len(ENTRY_FIELDS))})")
UPDATE_ENTRY = (f"UPDATE entries SET {', '.join(f'{c} = ?' for c in MUTABLE)} "
                f"WHERE eid = ?")
FORGET_FIELDS = ("eid", "obs_id", "text", "reason", "score", "turn", "age", "last_access",
                 "merged_into")
INSERT_FORGET = (f"INSERT INTO forget_log ({', '.join(FORGET_FIELDS)}) "
                 f"VALUES ({', '.join('?' * len(FORGET_FIELDS))})")
DELETE_ENTRY = "DELETE FROM entries WHERE eid = ?"


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


def _nan_if_none(x: float | None) -> float:
    return math.nan if x is None else x


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
            self._init_schema(reopen)
        except sqlite3.DatabaseError as exc:
            self._finalizer()
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise ValueError(
                    f"store {path!r} is in use (open in another store or process)") from None
            raise ValueError(f"{path!r} is not an fbench store ({exc})") from None
        self._pending: list[ForgetBatch] = []
        self._m = 0   # rows [0, _m) of the columns are persisted (live) or logged
        self._shadow: dict[str, np.ndarray] = {
            name: np.zeros(0, dtype=Columns._FIELDS[name]) for name in MUTABLE}
        self._peak = self._stored_peak()
        self._tag_text: dict[int, str] = {}
        self._changed = self._ne = np.zeros(0, dtype=bool)   # diff buffers

    # -- schema -------------------------------------------------------------
    def _init_schema(self, reopen: bool) -> None:
        conn = self.conn
        if reopen:
            version = None
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                            "AND name = 'meta'").fetchone():
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                version = row[0] if row else None
            if version != SCHEMA_VERSION:
                raise sqlite3.DatabaseError(
                    "no fbench schema" if version is None
                    else f"schema version {version}, expected {SCHEMA_VERSION}")
            return
        conn.executescript(
            "BEGIN IMMEDIATE;" + SCHEMA
            + f"INSERT OR IGNORE INTO meta VALUES ('schema', '{SCHEMA_VERSION}');"
            + "INSERT OR IGNORE INTO meta VALUES ('peak_size', '0');COMMIT;"
        )

    def _stored_peak(self) -> int:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'peak_size'").fetchone()
        return int(row[0]) if row else 0

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

    def _tags(self, cols: Columns, mask: int) -> str:
        text = self._tag_text.get(mask)
        if text is None:
            # bits are never reassigned (tag_names only grows), so the text is stable
            text = ",".join(name for bit, name in enumerate(cols.tag_names) if mask >> bit & 1)
            self._tag_text[mask] = text
        return text

    def _entry(self, cols: Columns, r: int, slot_names: Sequence[str]) -> tuple[Any, ...]:
        sid = int(cols.slot[r])
        return (
            int(cols.eid[r]), int(cols.obs_id[r]), int(cols.turn[r]), cols.texts[r],
            self._tags(cols, int(cols.tags[r])), slot_names[sid] if sid >= 0 else None,
            float(cols.importance[r]), int(cols.superseded[r]), int(cols.last_access[r]),
            int(cols.access_count[r]), float(cols.score[r]), int(cols.tier[r]),
            int(cols.since[r]),
        )

    @staticmethod
    def _update(cols: Columns, r: int) -> tuple[Any, ...]:
        return (int(cols.superseded[r]), int(cols.last_access[r]), int(cols.access_count[r]),
                float(cols.score[r]), int(cols.tier[r]), int(cols.since[r]), int(cols.eid[r]))

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
                eids = b.eid.tolist()
                conn.executemany(DELETE_ENTRY, zip(eids))
                conn.executemany(INSERT_FORGET, zip(
                    eids, b.obs_id.tolist(), b.texts, repeat(b.reason), b.score.tolist(),
                    repeat(b.turn), b.age.tolist(), b.last_access.tolist(),
                    b.merged_into.tolist()))
            if new:
                conn.executemany(INSERT_ENTRY, [self._entry(cols, r, slot_names) for r in new])
            if upd:
                conn.executemany(UPDATE_ENTRY, [self._update(cols, r) for r in upd])
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
        entries = [
            StoredEntry(eid, obs, turn, text, tuple(t for t in tags.split(",") if t), slot,
                        imp, bool(sup), la, ac, _nan_if_none(score), tier, since)
            for eid, obs, turn, text, tags, slot, imp, sup, la, ac, score, tier, since
            in conn.execute(f"SELECT {', '.join(ENTRY_FIELDS)} FROM entries ORDER BY eid")
        ]
        forgotten = [
            ForgetRecord(eid, obs, reason, _nan_if_none(score), turn, age, la, text, into)
            for eid, obs, text, reason, score, turn, age, la, into
            in conn.execute(f"SELECT {', '.join(FORGET_FIELDS)} FROM forget_log ORDER BY seq")
        ]
        return Snapshot(entries, forgotten, self._stored_peak())

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

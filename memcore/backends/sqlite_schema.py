"""The layout of a SQLite store file and the codec between the store's columns and rows.

Tables::

    entries(one column per persisted field of memcore.fields.FIELDS, in that order,
            eid the primary key)                                    -- LIVE entries
    forget_log(seq INTEGER PRIMARY KEY AUTOINCREMENT, eid UNIQUE, obs_id, text, reason,
               score, turn, age, last_access, merged_into)          -- append-only
    meta(key PRIMARY KEY, value)                                    -- schema, peak_size

``entries``, its statements and its codec are derived from ``FIELDS``: a column has its
field's SQL type and holds the value its field's codec encodes (``tags``: the entry's
tag names, comma-separated; ``slot``: the extracted slot's name, NULL for none; a bool
as 0/1, a NaN as NULL). ``score``/``tier``/``since`` are a policy's own columns
(lethe's stored score, tier and tier entry time). Rows are encoded one at a time
(``ndarray.item``: a Python scalar, no numpy scalar in between; an inserted row lists
the fields stored as they are first, then those with a codec) and decoded a column at
a time.
"""

from __future__ import annotations

import math
import operator
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from memcore.columns import Columns
from memcore.fields import MUTABLE, PERSISTED, Field, StoredEntry
from memcore.forget_log import ForgetBatch, ForgetRecord

SCHEMA_VERSION = "1"

_ENTRY_COLUMNS = ",\n".join(f"    {f.name} {f.sql}" for f in PERSISTED)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
{_ENTRY_COLUMNS}
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

ENTRY_FIELDS = tuple(f.name for f in PERSISTED)
# An inserted row: the fields stored as they are first, then those with a codec.
_AS_IS = tuple(f.name for f in PERSISTED if f.codec == "value")
_CODED = tuple(f for f in PERSISTED if f.codec != "value")
_INSERTED = (*_AS_IS, *(f.name for f in _CODED))
INSERT_ENTRY = (f"INSERT INTO entries ({', '.join(_INSERTED)}) "
                f"VALUES ({', '.join('?' * len(_INSERTED))})")
UPDATE_ENTRY = (f"UPDATE entries SET {', '.join(f'{c} = ?' for c in MUTABLE)} "
                f"WHERE eid = ?")
SELECT_ENTRIES = f"SELECT {', '.join(ENTRY_FIELDS)} FROM entries ORDER BY eid"
DELETE_ENTRY = "DELETE FROM entries WHERE eid = ?"
FORGET_FIELDS = ("eid", "obs_id", "text", "reason", "score", "turn", "age", "last_access",
                 "merged_into")
INSERT_FORGET = (f"INSERT INTO forget_log ({', '.join(FORGET_FIELDS)}) "
                 f"VALUES ({', '.join('?' * len(FORGET_FIELDS))})")
SELECT_FORGET = f"SELECT {', '.join(FORGET_FIELDS)} FROM forget_log ORDER BY seq"


def init_schema(conn: sqlite3.Connection, reopen: bool) -> None:
    """Create the tables of a fresh store, or check a reopened one's schema version
    (``sqlite3.DatabaseError`` if it is not an fbench store of this version)."""
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


def stored_peak(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = 'peak_size'").fetchone()
    return int(row[0]) if row else 0


def _nan_if_none(x: float | None) -> float:
    return math.nan if x is None else x


# One C call each: the arrays of the as-is fields, of the mutable fields and the eid.
_as_is = operator.attrgetter(*_AS_IS)
_mutable = operator.attrgetter(*MUTABLE, "eid")

Encoder = Callable[[Columns, int, Sequence[str]], Any]


class EntryCodec:
    """Rows of ``entries`` from the columns, a row at a time (a durable backend keeps
    one: it caches the text of each tag mask)."""

    def __init__(self) -> None:
        self._tag_text: dict[int, str] = {}
        self._coded: tuple[Encoder, ...] = tuple(self._encoder(f) for f in _CODED)

    def _tags(self, cols: Columns, mask: int) -> str:
        text = self._tag_text.get(mask)
        if text is None:
            # bits are never reassigned (tag_names only grows), so the text is stable
            text = ",".join(name for bit, name in enumerate(cols.tag_names) if mask >> bit & 1)
            self._tag_text[mask] = text
        return text

    def _encoder(self, f: Field) -> Encoder:
        """How the field with a codec is written: the value of row ``r``."""
        name = f.name
        if f.codec == "text":
            return lambda cols, r, slot_names: cols.texts[r]
        if f.codec == "tags":
            return lambda cols, r, slot_names: self._tags(cols, getattr(cols, name).item(r))

        # the slot codec
        def slot(cols: Columns, r: int, slot_names: Sequence[str]) -> str | None:
            sid = getattr(cols, name).item(r)
            return slot_names[sid] if sid >= 0 else None

        return slot

    def inserts(self, cols: Columns, rows: Iterable[int],
                slot_names: Sequence[str]) -> list[tuple[Any, ...]]:
        """The ``INSERT_ENTRY`` parameters of ``rows``."""
        arrays, coded = _as_is(cols), self._coded
        out = []
        for r in rows:
            row = [a.item(r) for a in arrays]
            for enc in coded:
                row.append(enc(cols, r, slot_names))
            out.append(tuple(row))
        return out

    @staticmethod
    def updates(cols: Columns, rows: Iterable[int]) -> list[tuple[Any, ...]]:
        """The ``UPDATE_ENTRY`` parameters of ``rows``."""
        arrays = _mutable(cols)
        return [tuple([a.item(r) for a in arrays]) for r in rows]


def _decode(f: Field, values: tuple[Any, ...]) -> Sequence[Any]:
    if f.codec == "tags":
        return [tuple(t for t in v.split(",") if t) for v in values]
    kind = np.dtype(f.dtype).kind if f.codec == "value" else ""
    if kind == "b":
        return [bool(v) for v in values]
    if kind == "f":
        return [_nan_if_none(v) for v in values]
    return values   # an integer, the text, a slot name or None


def decode_entries(rows: list[tuple[Any, ...]]) -> list[StoredEntry]:
    """``StoredEntry``s from ``SELECT_ENTRIES`` rows."""
    if not rows:
        return []
    columns = zip(*rows, strict=True)
    decoded = [_decode(f, values) for f, values in zip(PERSISTED, columns, strict=True)]
    return [StoredEntry(*values) for values in zip(*decoded, strict=True)]


def forget_rows(b: ForgetBatch) -> Iterable[tuple[Any, ...]]:
    """The ``INSERT_FORGET`` parameters of one batch of forget records."""
    return zip(b.eid.tolist(), b.obs_id.tolist(), b.texts, repeat(b.reason), b.score.tolist(),
               repeat(b.turn), b.age.tolist(), b.last_access.tolist(), b.merged_into.tolist())


def decode_forgotten(rows: Iterable[tuple[Any, ...]]) -> list[ForgetRecord]:
    """``ForgetRecord``s from ``SELECT_FORGET`` rows."""
    return [ForgetRecord(eid, obs, reason, _nan_if_none(score), turn, age, la, text, into)
            for eid, obs, text, reason, score, turn, age, la, into in rows]

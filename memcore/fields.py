"""The one declaration of a memory entry's columns: ``FIELDS``.

Everything else that lists the columns is derived from it: the numpy arrays of
``memcore.columns.Columns`` (allocated, grown and compacted field by field), the SQLite
``entries`` table and its statements (``memcore.backends.sqlite_schema``), the row codec
both ways, the columns a durable backend rewrites when they change (``MUTABLE``), and
the restore path of ``MemoryStore.open``. Adding a column is one entry in ``FIELDS``,
plus its name in the two static views below it (``ColumnArrays``: ``cols.<name>``;
``StoredEntry``: a reopened entry), which exist only because mypy cannot see names made
at runtime; importing this module fails if either disagrees with ``FIELDS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import Literal

import numpy as np

# How a persisted value is encoded in a row: ``value`` the array's value as it is (a
# bool as 0/1, a NaN float as NULL), ``text`` the entry's text (``Columns.texts``),
# ``tags`` the comma-separated names of the bits of the mask (``Columns.tag_names``),
# ``slot`` the name of the interned slot (NULL for none, -1 in the array).
Codec = Literal["value", "text", "tags", "slot"]


@dataclass(frozen=True)
class Field:
    """One column of a memory entry.

    ``dtype``: the numpy dtype of its array in ``Columns`` (None for the text, which
    ``Columns.texts`` holds as a list). ``sql``: its column type in the SQLite
    ``entries`` table, "" if it is not persisted (then the store recomputes it). ``codec``:
    how a persisted value is encoded. ``mutable``: it may change after the entry is added
    (by the store or a policy), so a durable backend rewrites it when it does.
    """

    name: str
    dtype: type[np.generic] | None
    sql: str = ""
    codec: Codec = "value"
    mutable: bool = False


# In the order of the ``entries`` table (and of ``StoredEntry``'s fields).
FIELDS: tuple[Field, ...] = (
    Field("eid", np.int64, "INTEGER PRIMARY KEY"),      # entry id, increasing with insertion
    Field("obs_id", np.int64, "INTEGER NOT NULL"),      # the caller's observation id
    Field("turn", np.int64, "INTEGER NOT NULL"),        # time of the observation
    Field("text", None, "TEXT NOT NULL", "text"),
    Field("tags", np.int64, "TEXT NOT NULL", "tags"),   # bit mask over tag_names (meta "tags")
    Field("slot", np.int32, "TEXT", "slot"),            # interned extracted slot, -1 for none
    Field("importance", np.float64, "REAL NOT NULL"),
    Field("superseded", np.bool_, "INTEGER NOT NULL", mutable=True),
    Field("last_access", np.int64, "INTEGER NOT NULL", mutable=True),
    Field("access_count", np.int64, "INTEGER NOT NULL", mutable=True),
    Field("score", np.float64, "REAL", mutable=True),            # a policy's own score (lethe)
    Field("tier", np.int8, "INTEGER NOT NULL", mutable=True),    # lethe: short, long, cold
    Field("since", np.int64, "INTEGER NOT NULL", mutable=True),  # when it entered its tier
    Field("live", np.bool_),   # not persisted: the table holds only live entries
    Field("ntok", np.int64),   # whitespace tokens of the text (recomputed on restore)
    Field("text_id", np.int64),  # the text's id in the process (``memcore.relevance_table``)
)

ARRAYS: tuple[Field, ...] = tuple(f for f in FIELDS if f.dtype is not None)  # Columns' arrays
PERSISTED: tuple[Field, ...] = tuple(f for f in FIELDS if f.sql)             # entries' columns
MUTABLE: tuple[str, ...] = tuple(f.name for f in FIELDS if f.mutable)


class ColumnArrays:
    """The array of each ``ARRAYS`` field, typed for mypy; ``Columns`` inherits it and
    allocates one array of the field's dtype under each name."""

    eid: np.ndarray
    obs_id: np.ndarray
    turn: np.ndarray
    tags: np.ndarray
    slot: np.ndarray
    importance: np.ndarray
    superseded: np.ndarray
    last_access: np.ndarray
    access_count: np.ndarray
    score: np.ndarray
    tier: np.ndarray
    since: np.ndarray
    live: np.ndarray
    ntok: np.ndarray
    text_id: np.ndarray


@dataclass(frozen=True)
class StoredEntry:
    """One live entry as a durable backend keeps it: its ``PERSISTED`` fields, decoded
    (its embedding is recomputed from the text)."""

    eid: int
    obs_id: int
    turn: int
    text: str
    tags: tuple[str, ...]
    slot: str | None
    importance: float
    superseded: bool
    last_access: int
    access_count: int
    score: float
    tier: int
    since: int


def _check() -> None:
    """Refuse an inconsistent declaration at import, naming the view to fix."""
    for f in FIELDS:
        if (f.dtype is None) != (f.codec == "text"):
            raise TypeError(f"field {f.name!r}: only the text has no numpy dtype")
        if f.codec != "value" and not f.sql:
            raise TypeError(f"field {f.name!r}: codec {f.codec!r} needs an SQL type")
        if f.mutable and (not f.sql or f.codec != "value"):
            raise TypeError(f"field {f.name!r}: a mutable field is persisted as a value")
    arrays = [f.name for f in ARRAYS]
    if list(ColumnArrays.__annotations__) != arrays:
        raise TypeError(f"ColumnArrays must declare {arrays} in this order, "
                        f"not {list(ColumnArrays.__annotations__)}")
    stored = [f.name for f in dataclass_fields(StoredEntry)]
    if stored != [f.name for f in PERSISTED]:
        raise TypeError(f"StoredEntry must have the fields {[f.name for f in PERSISTED]} "
                        f"in this order, not {stored}")


_check()

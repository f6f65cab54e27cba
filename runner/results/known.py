"""The shards a sweep wrote, remembered by its driver: it writes each from a table in
hand, or a worker that wrote one sends back its final rows with its stamp
(``runner.job.execute``), so the report that follows need not read them back to check
them or to find their final rows.

At 50 seeds (3,850 shards) the report read every file twice for its final rows (the
summary and the findings) and checked every footer each time: 25 of its 56 seconds.
``remember`` keeps, per shard written, its size and time as written, the query
categories of its columns and its final row; ``runner.results.load`` takes a shard from
here only while the file is still as written (size and time), and reads any other
(another process's, a rerun's, one changed since) from the file. Bounded: past
``KEPT_BYTES`` of final rows nothing more is kept (those shards are read). The rows are
the table's own: ``tests/test_aggregate_report.py`` checks a load from here equals a
load from the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from runner.results.shard import column_categories
from runner.results.where import Loc

KEPT_BYTES = 128 << 20


@dataclass(frozen=True)
class Known:
    stat: tuple[int, int]  # (size, mtime_ns) as written
    categories: tuple[str, ...]
    final: pa.Table  # the shard's final row, in its own schema


_KNOWN: dict[str, Known] = {}
_BYTES = [0]


def _key(path: Loc) -> str:
    """A shard's key: its absolute path (a local OUT given relative), or its URI."""
    return str(path.absolute()) if isinstance(path, Path) else str(path)


def remember(path: Loc, stat: tuple[int, int], table: pa.Table) -> None:
    """A shard just written at ``path`` (``stat`` as ``write_shard`` returns) from
    ``table`` (the shard, or only its final rows)."""
    final = table.filter(pc.field("is_final"))
    if _BYTES[0] + final.nbytes > KEPT_BYTES:
        return
    old = _KNOWN.get(_key(path))
    _BYTES[0] += final.nbytes - (old.final.nbytes if old is not None else 0)
    _KNOWN[_key(path)] = Known(stat, column_categories(table.column_names)[0], final)


def lookup(path: Loc, stat: tuple[int, int]) -> Known | None:
    """What is known of the shard at ``path``, if it is still as written."""
    known = _KNOWN.get(_key(path))
    return known if known is not None and known.stat == tuple(stat) else None


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` in ``schema``: its columns in that order, the categories it lacks null
    (as the files read with that schema give them)."""
    n = table.num_rows
    return pa.table([table.column(f.name) if f.name in table.column_names
                     else pa.nulls(n, f.type) for f in schema], schema=schema)


def forget() -> None:
    """Remember nothing (a test; a process done with its sweep)."""
    _KNOWN.clear()
    _BYTES[0] = 0

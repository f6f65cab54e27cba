"""The one shard validator: is a file one whole job's shard?

Every reader asks this module: a resumed sweep (which jobs are done), compaction
(which shards to fold in), aggregation and the report (which files to refuse). The
answer comes from the Parquet footer: the schema, the row count, and the column
statistics of ``job_id``, ``horizon`` and ``is_final`` (min and max), so checking
10,000 shards reads no rows; a footer without statistics falls back to reading
those three columns.

A shard is whole when it has exactly a shard schema (``SCHEMA``, with its workload's own
categories' columns: ``runner.results.shard.shard_schema``) (or, for ``exact=False``, at least
the coordinate and checkpoint columns: aggregation reads older shards, whose missing
metrics are nulls), holds rows of its own job only (the file's stem), one row per
checkpoint of its horizon, and its final row.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from runner.results.shard import CHECKPOINT, COORDINATES, SCHEMA, expected_rows, is_shard_schema
from runner.results.where import Loc, arrow_source

REQUIRED = tuple(name for name, _ in COORDINATES + CHECKPOINT)
_STATS = ("job_id", "horizon", "is_final")


def _footer_stats(meta: pq.FileMetaData) -> dict[str, list[Any]] | None:
    """min and max of each of ``_STATS`` over the row groups; None when any is missing."""
    stats: dict[str, list[Any]] = {name: [] for name in _STATS}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            col = group.column(c)
            if col.path_in_schema in stats:
                st = col.statistics
                if st is None or not st.has_min_max:
                    return None
                stats[col.path_in_schema] += [st.min, st.max]
    return stats if all(stats.values()) else None


def _read_stats(path: Loc) -> dict[str, list[Any]]:
    table = pq.read_table(arrow_source(path), columns=list(_STATS), use_threads=False)
    return {name: table.column(name).to_pylist() for name in _STATS}


def footer_problem(path: Loc, job_id: str, meta: pq.FileMetaData, schema: pa.Schema,
                   *, exact: bool = True) -> str:
    """What is wrong with the shard ``path`` of job ``job_id`` whose footer is ``meta``
    (its Arrow schema ``schema``); "" when nothing is."""
    if exact and not is_shard_schema(schema):
        missing = [c for c in SCHEMA.names if c not in schema.names]
        return (f"it lacks {', '.join(missing[:3])}{'...' if len(missing) > 3 else ''}"
                if missing else "its columns are not this fbench's shard schema")
    missing = [c for c in REQUIRED if c not in schema.names]
    if missing:
        return f"it lacks {', '.join(missing)}: not an fbench shard"
    if meta.num_rows == 0:
        return "no rows"
    stats = _footer_stats(meta) or _read_stats(path)
    if set(stats["job_id"]) != {job_id}:
        other = min(j for j in stats["job_id"] if j != job_id)
        return f"it holds rows of job {other}, not {job_id}"
    horizons = set(stats["horizon"])
    if len(horizons) != 1:
        return "its rows name several horizons"
    want = expected_rows(int(horizons.pop()))
    if meta.num_rows != want:
        return f"{meta.num_rows} rows, a whole job has {want}"
    if True not in stats["is_final"]:
        return "it has no final row"
    return ""


def shard_problem(path: Loc, job_id: str | None = None, *, exact: bool = True) -> str:
    """What is wrong with the file ``path`` as the shard of ``job_id`` (its stem by
    default); "" when it is a whole shard. An unreadable file says why."""
    try:
        pf = pq.ParquetFile(arrow_source(path))
        return footer_problem(path, job_id or path.stem, pf.metadata, pf.schema_arrow,
                              exact=exact)
    except (OSError, pa.ArrowException) as exc:
        return f"it cannot be read ({(str(exc).strip().splitlines() or [type(exc).__name__])[0]})"


def shard_is_valid(path: Loc, job_id: str) -> bool:
    """The file is a whole shard of ``job_id`` (``shard_problem`` finds nothing)."""
    return not shard_problem(path, job_id)


def read_valid_shard(path: Loc, job_id: str) -> pa.Table | None:
    """Every row of the shard if it validates, else None (the file opened once)."""
    try:
        pf = pq.ParquetFile(arrow_source(path))
        if footer_problem(path, job_id, pf.metadata, pf.schema_arrow):
            return None
        return pf.read(use_threads=False).replace_schema_metadata(None)
    except (OSError, pa.ArrowException):
        return None


def part_problem(path: Loc, rows: int, jobs: set[str]) -> str:
    """What is wrong with a compacted part that its index says holds ``rows`` rows of
    ``jobs``; "" when nothing is."""
    try:
        pf = pq.ParquetFile(arrow_source(path))
        if not is_shard_schema(pf.schema_arrow):
            return "its columns are not this fbench's shard schema"
        if pf.metadata.num_rows != rows:
            return f"{pf.metadata.num_rows} rows, its index says {rows}"
        ids = set(pf.read(columns=["job_id"]).column("job_id").unique().to_pylist())
    except (OSError, pa.ArrowException) as exc:
        return f"it cannot be read ({(str(exc).strip().splitlines() or [type(exc).__name__])[0]})"
    return "" if ids == jobs else "its jobs are not the ones its index names"

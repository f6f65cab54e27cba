"""A published folder: what a sweep keeps of its shards. ``OUT/finals.parquet`` holds the
final row of every job, in ``ROW_ORDER``, with the job's whole identity (workload and its
version, horizon, k, policy, ``params`` and ``params_full``, embedder, the job's
``spec``, the libraries' ``versions``, the fbench version and commit) and every metric it
recorded; ``OUT/checkpoints.parquet`` holds ``CHECKPOINT_COLUMNS`` of every checkpoint
row, the series the report's plots draw.

A few hundred bytes a job, beside the folder's ``sweep.json`` and ``memories.json``: a
folder holding them and no shards reads as the shards would
(``runner.results.load.read_rows``), so its summary, comparisons and report can be
recomputed with any statistics, and another sweep paired with it seed by seed.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from runner.errors import FbenchError
from runner.results.atomic import write_parquet
from runner.results.layout import CHECKPOINT_COLUMNS, CHECKPOINTS, FINALS
from runner.results.load import read_rows
from runner.results.sweep_config import read_sweep_record
from runner.results.where import Loc, location


def write_finals(out: str | Loc) -> pa.Table:
    """Write ``OUT/finals.parquet`` and ``OUT/checkpoints.parquet`` from the sweep's
    shards; return the final rows."""
    out = location(out)
    rows = read_rows(out, final=None, every=CHECKPOINT_COLUMNS)
    write_parquet(out / FINALS, rows.final)
    write_parquet(out / CHECKPOINTS, rows.every)
    return rows.final


def published_rows(folder: Path, left_out: list[str] | None = None) -> pa.Table:
    """The final rows of every whole published sweep under ``folder`` (each subfolder
    holding a ``finals.parquet``, in name order), with a ``source`` column naming its
    sweep; a job two sweeps published (the same ``job_id``) once, from the first. A sweep
    published in part (fewer rows than its ``sweep.json`` lists jobs) is left out, a line
    saying so appended to ``left_out``. One line naming the folder when it holds none."""
    tables = []
    for sweep in sorted(p for p in folder.iterdir() if (p / FINALS).is_file()):
        table = pq.read_table(sweep / FINALS)
        why = _partial(sweep, table.num_rows)
        if why is not None:
            if left_out is not None:
                left_out.append(why)
            continue
        tables.append(table.append_column("source", pa.array([sweep.name] * table.num_rows,
                                                              pa.string())))
    if not tables:
        raise FbenchError(f"no published results in {folder}: it holds no whole sweep folder "
                          f"with a {FINALS} (write one with `fbench aggregate OUT --finals`)")
    rows = pa.concat_tables(tables, promote_options="default")
    seen: set[str] = set()
    keep = []
    for job in rows.column("job_id").to_pylist():
        keep.append(job not in seen)
        seen.add(job)
    return rows.filter(pa.array(keep, pa.bool_()))


def _partial(sweep: Path, rows: int) -> str | None:
    """A line when a published sweep holds fewer final rows than its ``sweep.json`` lists
    jobs (published part by part, not yet whole); None when it is whole or lists none."""
    try:
        wanted = sum(1 for _ in read_sweep_record(location(sweep) / "sweep.json")[2])
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
    if rows >= wanted:
        return None
    return (f"{sweep.name}: {rows:,} of its {wanted:,} jobs are published; it joins the "
            "board once whole")

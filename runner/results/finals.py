"""A sweep's per-seed finals, ``OUT/finals.parquet``: the final row of every job, in
``ROW_ORDER``, with the job's whole identity (workload and its version, horizon, k,
policy, ``params`` and ``params_full``, embedder, the job's ``spec``, the libraries'
``versions``, the fbench version and commit) and every metric it recorded.

It is what a published sweep keeps of its shards: a few hundred bytes a job, enough to
recompute the summary with any statistics (``runner.results.aggregate.aggregate``'s
``final``) and to pair another sweep with it seed by seed.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from runner.errors import FbenchError
from runner.results.atomic import write_parquet
from runner.results.load import load_shards
from runner.results.where import Loc, arrow_source, location

FINALS = "finals.parquet"


def write_finals(out: str | Loc) -> pa.Table:
    """Write ``OUT/finals.parquet`` from the sweep's shards and return it."""
    out = location(out)
    table = load_shards(out, final_only=True)
    write_parquet(out / FINALS, table)
    return table


def read_finals(out: str | Loc) -> pa.Table:
    """``OUT/finals.parquet``; one line naming the file when it is not there."""
    path = location(out) / FINALS
    if not path.is_file():
        raise FbenchError(f"no per-seed finals at {path}; write them with "
                          f"`fbench aggregate {location(out)} --finals`")
    return pq.read_table(arrow_source(path))

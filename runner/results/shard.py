"""One Parquet shard per job: its schema, its path and its atomic write (the job
function that makes one is ``runner.job.execute``; the validator is
``runner.results.validate``).

A shard holds one row per checkpoint (the last row is final): the job's
coordinates, every declared metric, the checkpoint, and provenance. The schema
is built from the metric declarations, so a new metric is a new column and a
shard without it does not validate (a resumed sweep reruns it). A workload with query
categories of its own (a trace's, a plugin's) adds their split metrics after provenance,
categories sorted (``shard_schema``): readers take the union of the shards' categories.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import pyarrow as pa

from runner.metrics import METRICS, Metric, category_columns, own_categories, split_name
from runner.results.atomic import write_parquet
from runner.results.where import Loc
from runner.spec.jobspec import JobSpec

N_CHECKPOINTS = 20

COORDINATES = [
    ("job_id", pa.string()),
    ("workload", pa.string()),
    ("workload_version", pa.string()),  # the version of the workload's stream
    ("policy", pa.string()),
    ("seed", pa.int64()),
    ("horizon", pa.int64()),
    ("k", pa.int64()),
    ("params", pa.string()),       # canonical JSON of the overrides (the grid's coordinates)
    ("params_full", pa.string()),  # every parameter, defaults included
    ("embedder", pa.string()),     # the embedder the memory ranked with ("own": its own)
    ("spec", pa.string()),         # the spec's canonical JSON
]
CHECKPOINT = [("checkpoint", pa.int32()), ("t", pa.int64()), ("fraction", pa.float64()),
              ("is_final", pa.bool_())]
PROVENANCE = [("node", pa.string()), ("fbench_version", pa.string()),
              ("git_commit", pa.string()), ("versions", pa.string())]

SCHEMA = pa.schema(
    [pa.field(n, t, nullable=False) for n, t in COORDINATES + CHECKPOINT]
    + [pa.field(name, pa.float64()) for name in METRICS]
    + [pa.field(n, t) for n, t in PROVENANCE]
)
KNOWN = frozenset(SCHEMA.names)
# Columns that may differ between two runs of the same spec.
NONDETERMINISTIC = frozenset({name for name, m in METRICS.items() if m.timing} | {"node"})


def shard_schema(categories: Iterable[str] = ()) -> pa.Schema:
    """The schema of a shard whose workload has the query ``categories``: ``SCHEMA``, then
    the split columns of each category fbench's own workloads do not have, sorted."""
    extra = [pa.field(n, pa.float64()) for c in own_categories(categories)
             for n in category_columns(c)]
    return pa.schema([*SCHEMA, *extra]) if extra else SCHEMA


def column_categories(names: Iterable[str]) -> tuple[tuple[str, ...], list[str]]:
    """Of columns beyond ``SCHEMA``: the categories whose split metrics they are (sorted),
    and those that are no metric at all (a plugin's, uninstalled since)."""
    cats, unknown = set(), []
    for name in names:
        if name in KNOWN:
            continue
        split = split_name(name)
        if split is None:
            unknown.append(name)
        else:
            cats.add(split[1])
    return tuple(sorted(cats)), unknown


def is_shard_schema(schema: pa.Schema) -> bool:
    """``schema`` is exactly a shard's: ``SCHEMA``, then whole categories' split columns."""
    cats, unknown = column_categories(schema.names)
    return not unknown and schema.equals(shard_schema(cats))


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with ``schema``'s columns: a category's split metrics it lacks are null."""
    if table.schema.equals(schema):
        return table
    have = set(table.column_names)  # (once: column_names is a new list at every call)
    cols = [table.column(f.name) if f.name in have
            else pa.nulls(table.num_rows, f.type) for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def compared_metrics(columns: Sequence[str] = ()) -> list[Metric]:
    """Every declared metric except timing ones (not deterministic, never compared), then
    the split metrics of the other categories among ``columns``."""
    cats, _ = column_categories(columns)
    own = [METRICS[n] for c in cats for n in category_columns(c)]
    return [m for m in METRICS.values() if not m.timing] + own


def checkpoints(horizon: int, n: int = N_CHECKPOINTS) -> list[int]:
    """Distinct, increasing checkpoint times ending at ``horizon``: a shard's rows."""
    return sorted({math.ceil(horizon * i / n) for i in range(1, n + 1)})


def expected_rows(horizon: int) -> int:
    """Rows a whole shard of a job at ``horizon`` holds: one per checkpoint."""
    return len(checkpoints(horizon)) if horizon > 0 else -1


def partition(workload: str, policy: str) -> str:
    """The folder below ``OUT/shards`` of one workload's and policy's shards."""
    return f"workload={workload}/policy={policy}"


def shard_path(out: Loc, spec: JobSpec) -> Loc:
    return out / "shards" / partition(spec.workload, spec.policy) / f"{spec.job_id}.parquet"


def write_shard(path: Loc, table: pa.Table) -> tuple[int, int]:
    """Write via a temporary name in the same folder and an atomic rename (remote: one
    upload); the shard's (size, mtime_ns) as written, its stamp in the commit log."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(path, table)
    st = path.stat()
    return st.st_size, st.st_mtime_ns

"""One Parquet shard per job: its schema, its path and its atomic write (the job
function that makes one is ``runner.job.execute``; the validator is
``runner.results.validate``).

A shard holds one row per checkpoint (the last row is final): the job's
coordinates, every declared metric, the checkpoint, and provenance. The schema
is built from the metric declarations, so a new metric is a new column and a
shard without it no longer validates (a resumed sweep reruns it).
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa

from runner.metrics import METRICS
from runner.results.atomic import write_parquet
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
# Columns that may differ between two runs of the same spec.
NONDETERMINISTIC = frozenset({name for name, m in METRICS.items() if m.timing} | {"node"})


def checkpoints(horizon: int, n: int = N_CHECKPOINTS) -> list[int]:
    """Distinct, increasing checkpoint times ending at ``horizon``: a shard's rows."""
    return sorted({math.ceil(horizon * i / n) for i in range(1, n + 1)})


def expected_rows(horizon: int) -> int:
    """Rows a whole shard of a job at ``horizon`` holds: one per checkpoint."""
    return len(checkpoints(horizon)) if horizon > 0 else -1


def shard_path(out: Path, spec: JobSpec) -> Path:
    return out / "shards" / f"workload={spec.workload}" / f"policy={spec.policy}" / (
        f"{spec.job_id}.parquet")


def write_shard(path: Path, table: pa.Table) -> None:
    """Write via a temporary name in the same folder and an atomic rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_parquet(path, table)

"""One Parquet shard per job: its schema, the job function that makes it, atomic
writes and validation.

A shard holds one row per checkpoint (the last row is final): the job's
coordinates, every declared metric, the checkpoint, and provenance. The schema
is built from the metric declarations, so a new metric is a new column and a
shard without it no longer validates (a resumed sweep reruns it).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from runner.atomic import write_parquet
from runner.job import JobResult, checkpoints, run_job
from runner.metrics import METRICS
from runner.provenance import provenance
from runner.spec import JobSpec

COORDINATES = [
    ("job_id", pa.string()),
    ("workload", pa.string()),
    ("policy", pa.string()),
    ("seed", pa.int64()),
    ("horizon", pa.int64()),
    ("k", pa.int64()),
    ("params", pa.string()),       # canonical JSON of the overrides (the grid's coordinates)
    ("params_full", pa.string()),  # every parameter, defaults included
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


def result_table(result: JobResult, node: str, prov: dict[str, Any] | None = None) -> pa.Table:
    """The shard of one finished job; ``prov`` is the driver's provenance (default: this
    process's)."""
    prov = prov or provenance()
    vers: dict[str, str] = prov["versions"]
    spec = result.spec
    n = len(result.rows)
    cols: dict[str, list[Any]] = {
        "job_id": [spec.job_id] * n,
        "workload": [spec.workload] * n,
        "policy": [spec.policy] * n,
        "seed": [spec.seed] * n,
        "horizon": [spec.horizon] * n,
        "k": [spec.k] * n,
        "params": [json.dumps(dict(spec.params), sort_keys=True)] * n,
        "params_full": [json.dumps(result.resolved_params, sort_keys=True)] * n,
        "spec": [spec.canonical_json()] * n,
        "checkpoint": list(range(n)),
        "t": [row["t"] for row in result.rows],
        "fraction": [row["fraction"] for row in result.rows],
        "is_final": [i == n - 1 for i in range(n)],
    }
    for name in METRICS:
        cols[name] = [float(row[name]) for row in result.rows]
    cols["node"] = [node] * n
    cols["fbench_version"] = [vers["fbench"]] * n
    cols["git_commit"] = [prov["git_commit"]] * n
    cols["versions"] = [json.dumps(vers, sort_keys=True)] * n
    return pa.table(cols, schema=SCHEMA)


@dataclass(frozen=True)
class Outcome:
    """What one job came back with: a shard table, or the error's traceback."""

    job_id: str
    table: pa.Table | None
    error: str | None = None


def execute(spec_json: str, node: str, prov: dict[str, Any] | None = None) -> Outcome:
    """The job function executors ship: never raises; a failure is an outcome."""
    spec = JobSpec.from_dict(json.loads(spec_json))
    try:
        return Outcome(spec.job_id, result_table(run_job(spec), node, prov))
    except Exception:
        return Outcome(spec.job_id, None, traceback.format_exc())


def execute_batch(
    spec_jsons: Sequence[str], node: str, prov: dict[str, Any] | None = None
) -> list[Outcome]:
    """Several jobs in one task (so each task carries enough work to pay its overhead)."""
    return [execute(s, node, prov) for s in spec_jsons]


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


def shard_is_valid(path: Path, job_id: str) -> bool:
    """A shard counts as done if it reads, has exactly the schema, is this job's, and
    holds every checkpoint of its horizon, the last one final."""
    return _read_valid(path, job_id, ["job_id", "is_final", "horizon"]) is not None


def read_valid_shard(path: Path, job_id: str) -> pa.Table | None:
    """Every row of the shard if it validates (as ``shard_is_valid``), else None."""
    return _read_valid(path, job_id, None)


def _read_valid(path: Path, job_id: str, columns: list[str] | None) -> pa.Table | None:
    try:
        pf = pq.ParquetFile(path)
        if not pf.schema_arrow.equals(SCHEMA):
            return None
        table = pf.read(columns=columns, use_threads=False)
    except (OSError, pa.ArrowException):
        return None
    ok = (table.num_rows > 0 and set(table.column("job_id").to_pylist()) == {job_id}
          and table.column("is_final")[-1].as_py()
          and table.num_rows == expected_rows(table.column("horizon")[0].as_py()))
    return table.replace_schema_metadata(None) if ok else None

"""A job's evidence on disk: the two tables' schemas (``QUERIES``, ``DELETIONS``), where
a sweep keeps them (``samples_paths``), writing them whole (``write_samples``) and
checking one (``samples_problem``). What the columns hold, and how a job records them:
``runner.job.samples``."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from runner.results.atomic import write_parquet
from runner.results.shard import partition
from runner.results.where import Loc, arrow_source
from runner.spec.jobspec import JobSpec

QUERIES_FILE, DELETIONS_FILE = "queries.parquet", "deletions.parquet"
REPORTED, PARTIAL = "reported", "partial"
UNREPORTED = "unreported"  # the reason of a removal the harness saw, not the memory said
LABELS = ("current", "stale", "noise")

QUERIES = pa.schema([
    ("t", pa.int64()),
    ("query_index", pa.int64()),      # among the job's scored questions, from 0
    ("category", pa.string()),
    ("text", pa.string()),
    ("slot", pa.string()),
    ("value", pa.string()),           # the slot's current value
    ("current_obs", pa.int64()),      # the observation that asserted it last
    ("retrieved", pa.list_(pa.int64())),
    ("retrieved_text", pa.list_(pa.string())),
    ("retrieved_label", pa.list_(pa.string())),
    ("retrieved_score", pa.list_(pa.float64())),  # null: the memory gave none
    ("retrieved_age", pa.list_(pa.int64())),
    ("correct", pa.int64()),
    ("stale", pa.int64()),
    ("current", pa.int64()),
    ("top1_correct", pa.bool_()),
    ("top5_correct", pa.bool_()),     # null: fewer than 5 items were asked for
    ("current_forgotten", pa.bool_()),
])
DELETIONS = pa.schema([
    ("t", pa.int64()),
    ("obs_id", pa.int64()),
    ("text", pa.string()),
    ("reason", pa.string()),
    ("score", pa.float64()),          # null: the memory gave none
    ("age", pa.int64()),
    ("still_current", pa.bool_()),
    ("category", pa.string()),
    ("slot", pa.string()),            # null: the observation asserted no slot
    ("next_asked_t", pa.int64()),     # null: its slot was not asked again
])
SCHEMAS = {QUERIES_FILE: QUERIES, DELETIONS_FILE: DELETIONS}


@dataclass(frozen=True)
class Samples:
    """One job's evidence: its queries and deletions tables, and whether the memory
    reported its deletions (else the table is partial)."""

    queries: pa.Table
    deletions: pa.Table
    reported: bool


SAMPLES = "samples"


def samples_paths(out: Loc, spec: JobSpec) -> tuple[Loc, Loc]:
    """Where a sweep keeps a job's evidence: ``OUT/samples/workload=W/policy=P/`` then
    ``JOB.queries.parquet`` and ``JOB.deletions.parquet``."""
    folder = out / SAMPLES / partition(spec.workload, spec.policy)
    return (folder / f"{spec.job_id}.{QUERIES_FILE}",
            folder / f"{spec.job_id}.{DELETIONS_FILE}")


def write_samples(samples: Samples, spec: JobSpec, queries: Loc, deletions: Loc) -> None:
    """The two tables to ``queries`` and ``deletions``, each written whole (a crash leaves
    the old file or none), the job's id and spec in their metadata."""
    meta = {"fbench.job_id": spec.job_id, "fbench.spec": spec.canonical_json(),
            "fbench.deletions": REPORTED if samples.reported else PARTIAL}
    for table, path, name in ((samples.queries, queries, QUERIES_FILE),
                              (samples.deletions, deletions, DELETIONS_FILE)):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(path, table.replace_schema_metadata({**meta, "fbench.table": name}))


def samples_problem(path: Loc, kind: str, job_id: str | None = None) -> str | None:
    """Why the samples file at ``path`` (``kind``: ``QUERIES_FILE`` or
    ``DELETIONS_FILE``) is not one whole table of that kind (of job ``job_id`` when
    given), or None."""
    try:
        schema = pq.read_schema(arrow_source(path))
    except (OSError, pa.ArrowException) as exc:
        return f"it cannot be read ({str(exc).strip().splitlines()[0] if str(exc) else exc})"
    meta = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    if meta.get("fbench.table") != kind or not schema.remove_metadata().equals(SCHEMAS[kind]):
        return f"it is not an fbench {kind.removesuffix('.parquet')} table"
    if job_id is not None and meta.get("fbench.job_id") != job_id:
        return f"it holds job {meta.get('fbench.job_id')!r}, not {job_id!r}"
    return None

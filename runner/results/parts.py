"""Compacted parts: writing many jobs' rows into numbered part files, and reading
shards and parts back (``runner.results.compact`` drives them)."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from runner.errors import FbenchError
from runner.results.atomic import write_parquet
from runner.results.layout import ROW_ORDER, Part, Stamp
from runner.results.shard import column_categories, conform, shard_schema
from runner.results.validate import read_valid_shard
from runner.results.where import Loc, arrow_source

READERS = 4  # threads reading shards (IO and parquet decoding release the GIL)
BATCH = 512  # shards read ahead


class PartWriter:
    """Collects whole jobs' rows and writes them as parts of at most ``rows_per_part``
    rows (a larger job gets a part of its own), under fresh names."""

    def __init__(self, folder: Loc, first_number: int, rows_per_part: int) -> None:
        self.folder, self.number, self.limit = folder, first_number, rows_per_part
        self.buffer: list[tuple[tuple[str, str, str], pa.Table]] = []
        self.jobs: dict[str, Stamp] = {}
        self.buffered = 0
        self.parts: list[Part] = []
        self.rows = 0

    def add(self, job_id: str, rows: pa.Table, stamp: Stamp) -> None:
        """One job's rows (in checkpoint order, as its shard holds them)."""
        if self.buffer and self.buffered + rows.num_rows > self.limit:
            self.flush()
        key = (rows.column("workload")[0].as_py(), rows.column("policy")[0].as_py(), job_id)
        self.buffer.append((key, rows))
        self.jobs[job_id] = stamp
        self.buffered += rows.num_rows

    def flush(self) -> None:
        if self.buffer:
            self.buffer.sort(key=lambda kv: kv[0])  # jobs in (workload, policy, job) order
            tables = [rows for _, rows in self.buffer]
            cats, _ = column_categories({n for t in tables for n in t.column_names})
            schema = shard_schema(cats)  # jobs of other categories: null in each other's
            self.write(pa.concat_tables([conform(t, schema) for t in tables]), self.jobs)
        self.buffer, self.jobs, self.buffered = [], {}, 0

    def write(self, table: pa.Table, jobs: dict[str, Stamp]) -> None:
        """Write one part now (temporary name, then rename)."""
        table = table.combine_chunks()
        name = f"part-{self.number:06d}.parquet"
        write_parquet(self.folder / name, table)
        self.parts.append(Part(name, table.num_rows, dict(jobs)))
        self.number += 1
        self.rows += table.num_rows


def read_all(shards: list[tuple[str, Loc, Stamp]]) -> Iterator[pa.Table | None]:
    """Each shard's rows if it validates (None if not), in order; read by a few threads,
    a batch at a time (so that memory holds about one part, not the whole sweep)."""
    with ThreadPoolExecutor(READERS) as pool:
        for i in range(0, len(shards), BATCH):
            yield from pool.map(lambda s: read_valid_shard(s[1], s[0]), shards[i:i + BATCH])


def iter_job_rows(table: pa.Table) -> Iterator[tuple[str, int, int]]:
    """(job_id, first row, row count) of each run of equal job ids in ``table``."""
    ids = table.column("job_id").to_pylist()
    start = 0
    for i in range(1, len(ids) + 1):
        if i == len(ids) or ids[i] != ids[start]:
            yield ids[start], start, i - start
            start = i


def read_part(path: Loc) -> tuple[pa.Table, list[tuple[str, int, int]]]:
    """A compacted part's rows, and each job's (job_id, first row, rows)."""
    try:
        table = pq.read_table(arrow_source(path)).replace_schema_metadata(None)
        runs = list(iter_job_rows(table))
        if len({job for job, _, _ in runs}) != len(runs):  # not one run per job: sort
            table = table.take(pc.sort_indices(
                table, sort_keys=[(c, "ascending") for c in ROW_ORDER]))
            runs = list(iter_job_rows(table))
        return table, runs
    except (OSError, pa.ArrowException) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FbenchError(f"cannot read the compacted part {path}: {first}; resume the sweep "
                          "(it reruns that part's jobs), then compact again") from None

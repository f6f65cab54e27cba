"""``fbench compact OUT``: merge a sweep's per-job shards into a few large Parquet files.

Many small shards are slow to scan (each costs a file open and a footer). Compaction
moves their rows, unchanged, into ``OUT/compacted/part-NNNNNN.parquet`` files of up
to ``ROWS_PER_PART`` rows (whole jobs, sorted by workload, policy, job), listed in
``OUT/compacted/index.parquet`` (see ``runner.results.layout``). The steps, in this order:

1. read every shard not compacted yet, keeping the ones that validate (a shard that
   does not is left in place: a resumed sweep reruns its job);
2. write the new parts (a temporary name, then a rename): with them go the rows of
   the parts under half full (so that compacting after each resume still ends in a
   few full files) and of parts holding a job a rerun has replaced (minus that job);
3. commit: write the new index atomically (the one point where the compacted view
   changes);
4. remove the merged shards (each only if still the file that was read), the
   replaced parts, and what an earlier interrupted compaction left behind.

A crash before 3 leaves parts the index does not list (ignored, removed by the next
run); a crash after it leaves shards beside their compacted copy (the shard is
the copy read, the next run removes it). Either way every job's rows are read
once. Running it again with nothing new changes nothing. Two compactions of one
folder at once are refused (a lock on OUT; a remote OUT has none).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from runner.errors import FbenchError
from runner.results.atomic import write_parquet
from runner.results.layout import (
    COMPACTED,
    PART_NAME,
    ROW_ORDER,
    SHARDS,
    Layout,
    Part,
    PartJobs,
    Stamp,
    write_index,
)
from runner.results.shard import column_categories, conform, is_shard_schema, shard_schema
from runner.results.validate import read_valid_shard
from runner.results.where import ArrowPath, Loc, arrow_source, location

ROWS_PER_PART = 100_000
READERS = 4  # threads reading shards (IO and parquet decoding release the GIL)
BATCH = 512  # shards read ahead


@dataclass(frozen=True)
class Compaction:
    """What one ``compact`` did, and the compacted state after it."""

    out: Loc
    merged: int  # shards whose rows went into new parts (and that were removed)
    merged_rows: int  # their rows
    written: int  # part files written
    rows: int  # rows in the part files written (the merged ones, and moved ones)
    seconds: float
    jobs: int  # jobs in committed parts afterwards
    parts: int  # committed parts afterwards
    replaced: int = 0  # parts rewritten into the new ones (under half full, or rerun jobs)
    leftovers: int = 0  # shards an interrupted compaction had committed but not removed
    unlisted: int = 0  # part files and temporaries no index lists (interrupted runs)
    invalid: int = 0  # shards left in place: they do not validate, or share a job id

    @property
    def changed(self) -> bool:
        return bool(self.written or self.merged or self.leftovers or self.unlisted)

    def line(self) -> str:
        """The one-line summary the CLI prints."""
        held = f"{_n(self.jobs, 'job')} in {_n(self.parts, 'compacted file')}"
        if self.written or self.merged:
            moved = (f", with {self.rows - self.merged_rows:,} rows moved from "
                     f"{_n(self.replaced, 'earlier file')}," if self.replaced else "")
            text = (f"{self.out}: merged {_n(self.merged, 'shard')} ({self.merged_rows:,} rows) "
                    f"into {_n(self.written, 'file')} of {self.rows:,} rows{moved} "
                    f"in {self.seconds:.1f} s; now {held}")
        elif self.changed:
            text = f"{self.out}: no new shards; cleaned up in {self.seconds:.1f} s; now {held}"
        else:
            text = (f"{self.out}: nothing to compact (0 shards merged, 0 files written, "
                    f"{held}); {self.seconds:.1f} s")
        if self.leftovers or self.unlisted:
            text += (f"; removed {_n(self.leftovers, 'already compacted shard')} and "
                     f"{_n(self.unlisted, 'unlisted file')} left by an interrupted compaction")
        if self.invalid:
            verb = "does" if self.invalid == 1 else "do"
            text += (f"; left {_n(self.invalid, 'shard')} in place that {verb} not validate "
                     "(a resumed sweep reruns them)")
        return text


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def check_sweep_folder(out: Loc) -> None:
    """OUT must be a sweep's output folder."""
    if not out.exists():
        raise FbenchError(f"{str(out)!r} does not exist; give a sweep's output folder "
                          "(the --out of fbench sweep)")
    if not out.is_dir():
        raise FbenchError(f"{str(out)!r} is a file; give a sweep's output folder")
    if not ((out / "sweep.json").is_file() or (out / SHARDS).is_dir()
            or (out / COMPACTED).is_dir()):
        raise FbenchError(f"{str(out)!r} is not a sweep's output folder: it has no sweep.json, "
                          f"{SHARDS}/ or {COMPACTED}/")


@contextmanager
def _locked(out: Loc) -> Iterator[None]:
    """An exclusive lock on OUT for the compaction (released if the process dies). An
    object store has no lock that a dead process releases: a remote OUT takes none, and
    two compactions of it at once are the user's to avoid."""
    if isinstance(out, ArrowPath):
        yield
        return
    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FbenchError(f"another fbench compact is running on {str(out)!r}; "
                              "wait for it to finish") from None
        yield
    finally:
        os.close(fd)


def _remove_if_unchanged(path: Loc, stamp: Stamp, out: Loc) -> bool:
    """Remove the shard if it is still the file that was read (a sweep may have rewritten
    it since: then it stays, and being a shard it is the copy that counts)."""
    try:
        if Stamp.of(path, out) != stamp:
            return False
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def compact(out: str | Loc, rows_per_part: int = ROWS_PER_PART) -> Compaction:
    """Merge OUT's shards into compacted parts; see the module docstring for the steps."""
    start = time.perf_counter()
    out = location(out)
    check_sweep_folder(out)
    if rows_per_part <= 0:
        raise FbenchError(f"rows per part must be positive, got {rows_per_part}")
    with _locked(out):
        lay = Layout(out)
        plan = _Plan.of(lay, out)
        # 1-2. read and validate the new shards, write them (and rewritten parts) as parts
        writer = PartWriter(out / COMPACTED, plan.next_number, rows_per_part)
        merged, merged_rows, invalid = _merge_shards(plan.fresh, writer)
        rewrite = _rewrite_parts(lay, {path.stem for path, _ in merged}, writer, rows_per_part)
        writer.flush()
        # 3. commit
        parts = [p for p in lay.parts if p not in rewrite] + writer.parts
        if writer.parts or rewrite:
            write_index(out, parts)
        # 4. remove what the committed parts now hold, and what no index lists
        for p, s in merged:
            _remove_if_unchanged(p, s, out)
        gone = sum(_remove_if_unchanged(p, s, out) for _, p, s in plan.leftovers)
        for part in rewrite:
            lay.part_path(part).unlink(missing_ok=True)
        for path in plan.unlisted:
            path.unlink(missing_ok=True)
    return Compaction(
        out, merged=len(merged), merged_rows=merged_rows, written=len(writer.parts),
        rows=writer.rows, seconds=time.perf_counter() - start,
        jobs=sum(len(p.jobs) for p in parts), parts=len(parts), replaced=len(rewrite),
        leftovers=gone, unlisted=len(plan.unlisted), invalid=plan.invalid + invalid,
    )


Shard = tuple[str, Loc, Stamp]  # job id, path, stamp


@dataclass(frozen=True)
class _Plan:
    """What a compaction starts from: the shards to merge (``fresh``), the shards a
    compaction that died committed but did not remove (``leftovers``), the shards left in
    place as sharing a job id (``invalid``), the files no index lists (``unlisted``) and
    the next part number."""

    fresh: list[Shard]
    leftovers: list[Shard]
    invalid: int
    unlisted: list[Loc]
    next_number: int

    @classmethod
    def of(cls, lay: Layout, out: Loc) -> _Plan:
        shards = [(path.stem, path, stamp) for path, stamp in
                  zip(lay.raw_files, lay.listing.stamp_list(), strict=True)]
        per_job = Counter(job for job, _, _ in shards)
        leftovers = _leftovers(lay, shards)
        done = {p for _, p, _ in leftovers}
        listed = {part.name for part in lay.parts}
        unlisted = _unlisted(out / COMPACTED, listed)
        numbers = [int(m.group(1)) for name in [*listed, *(u.name for u in unlisted)]
                   if (m := PART_NAME.fullmatch(name))]
        return cls(fresh=[(j, p, s) for j, p, s in shards if p not in done and per_job[j] == 1],
                   leftovers=leftovers,
                   invalid=sum(1 for j, p, _ in shards if p not in done and per_job[j] > 1),
                   unlisted=unlisted, next_number=max(numbers, default=0) + 1)


def _leftovers(lay: Layout, shards: list[Shard]) -> list[Shard]:
    """Shards with the stamp their index entry records, in a part that is whole: a
    compaction committed them and died before removing them."""
    where = {job: part for part in lay.parts for job in part.jobs}
    return [(j, p, s) for j, p, s in shards
            if j in where and where[j].jobs[j] == s and lay.part_ok(where[j])]


def _unlisted(folder: Loc, listed: set[str]) -> list[Loc]:
    """Part files and temporaries in ``folder`` that no index lists (interrupted runs)."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name not in listed
                  and (PART_NAME.fullmatch(p.name) or p.name.endswith(".tmp")))


def _merge_shards(fresh: list[Shard], writer: PartWriter
                  ) -> tuple[list[tuple[Loc, Stamp]], int, int]:
    """Add every shard that validates to ``writer``: those merged (path, stamp), their
    rows, and the count of those that do not validate (left in place)."""
    merged: list[tuple[Loc, Stamp]] = []
    rows = invalid = 0
    for (job, path, stamp), table in zip(fresh, read_all(fresh), strict=True):
        if table is None:
            invalid += 1
            continue
        if not merged:
            writer.folder.mkdir(exist_ok=True)
        writer.add(job, table, stamp)
        merged.append((path, stamp))
        rows += table.num_rows
    return merged, rows, invalid


def _rewrite_parts(lay: Layout, replaced: set[str], writer: PartWriter,
                   rows_per_part: int) -> list[Part]:
    """The committed parts to rewrite, their kept jobs added to ``writer``: a part holding
    a job a merged shard replaces (minus that job), and, when anything was merged, a part
    under half full (so that compacting after each resume still ends in a few full
    files). A part of an older schema is rewritten only to drop a replaced job, apart."""
    rewrite: list[Part] = []
    for part in lay.parts:
        hit = replaced & part.jobs.keys()
        if hit == part.jobs.keys():
            rewrite.append(part)  # every job rerun since: dropped unread
            continue
        if not hit and not (replaced and part.rows < rows_per_part // 2):
            continue
        table, runs = read_part(lay.part_path(part))
        current = is_shard_schema(table.schema)
        if not current and not hit:
            continue
        rewrite.append(part)
        kept = [(job, table.slice(first, n)) for job, first, n in runs if job not in replaced]
        if current:
            for job, rows in kept:
                writer.add(job, rows, part.jobs[job])
        else:  # kept apart, in its own schema, so that its jobs still do not validate
            writer.write(pa.concat_tables([rows for _, rows in kept]),
                         {job: part.jobs[job] for job, _ in kept})
    return rewrite


# --- part files -------------------------------------------------------------------------


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
        self.parts.append(Part(name, table.num_rows, PartJobs.of(jobs)))
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

"""``fbench compact OUT``: merge a sweep's per-job shards into a few large Parquet files.

Many small shards are slow to scan (each costs a file open and a footer). Compaction
moves their rows, unchanged, into ``OUT/compacted/part-NNNNNN.parquet`` files of up
to ``ROWS_PER_PART`` rows (whole jobs, sorted by workload, policy, job), listed in
``OUT/compacted/index.json`` (see ``runner.layout``). The steps, in this order:

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
folder at once are refused (a lock on OUT).
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
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from runner.atomic import write_json, write_parquet
from runner.errors import FbenchError
from runner.layout import (
    COMPACTED,
    PART_NAME,
    ROW_ORDER,
    SHARDS,
    Layout,
    Part,
    Stamp,
    index_doc,
    index_path,
)
from runner.shard import SCHEMA, read_valid_shard

ROWS_PER_PART = 100_000
READERS = 4  # threads reading shards (IO and parquet decoding release the GIL)
BATCH = 512  # shards read ahead


@dataclass(frozen=True)
class Compaction:
    """What one ``compact`` did, and the compacted state after it."""

    out: Path
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


def check_sweep_folder(out: Path) -> None:
    """OUT must be a sweep's output folder."""
    if not out.exists():
        raise FbenchError(f"{str(out)!r} does not exist; give a sweep's output folder "
                          "(the --out of fbench sweep)")
    if not out.is_dir():
        raise FbenchError(f"{str(out)!r} is a file; give a sweep's output folder")
    if not ((out / "sweep.json").is_file() or (out / SHARDS).is_dir()
            or index_path(out).is_file()):
        raise FbenchError(f"{str(out)!r} is not a sweep's output folder: it has no sweep.json, "
                          f"{SHARDS}/ or {COMPACTED}/{index_path(out).name}")


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    """An exclusive lock on OUT for the compaction (released if the process dies)."""
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


class _PartWriter:
    """Collects whole jobs' rows and writes them as parts of at most ``rows_per_part``
    rows (a larger job gets a part of its own), under fresh names."""

    def __init__(self, folder: Path, first_number: int, rows_per_part: int) -> None:
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
            self.write(pa.concat_tables([rows for _, rows in self.buffer]), self.jobs)
        self.buffer, self.jobs, self.buffered = [], {}, 0

    def write(self, table: pa.Table, jobs: dict[str, Stamp]) -> None:
        """Write one part now (temporary name, then rename)."""
        table = table.combine_chunks()
        name = f"part-{self.number:06d}.parquet"
        write_parquet(self.folder / name, table)
        self.parts.append(Part(name, table.num_rows, dict(jobs)))
        self.number += 1
        self.rows += table.num_rows


def _read_all(shards: list[tuple[str, Path, Stamp]]) -> Iterator[pa.Table | None]:
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


def _read_part(path: Path) -> tuple[pa.Table, list[tuple[str, int, int]]]:
    """A compacted part's rows, and each job's (job_id, first row, rows)."""
    try:
        table = pq.read_table(path).replace_schema_metadata(None)
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


def _remove_if_unchanged(path: Path, stamp: Stamp, out: Path) -> bool:
    """Remove the shard if it is still the file that was read (a sweep may have rewritten
    it since: then it stays, and being a shard it is the copy that counts)."""
    try:
        if Stamp.of(path, out) != stamp:
            return False
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def compact(out: Path, rows_per_part: int = ROWS_PER_PART) -> Compaction:
    """Merge OUT's shards into compacted parts; see the module docstring for the steps."""
    start = time.perf_counter()
    out = Path(out)
    check_sweep_folder(out)
    if rows_per_part <= 0:
        raise FbenchError(f"rows per part must be positive, got {rows_per_part}")
    with _locked(out):
        lay = Layout(out)
        folder = out / COMPACTED
        where = {job: part for part in lay.parts for job in part.jobs}
        per_job = Counter(path.stem for path in lay.raw_files)
        shards = [(path.stem, path, Stamp.of(path, out)) for path in lay.raw_files]
        # A shard with the stamp its index entry records was committed by a compaction
        # that died before removing it: remove it now (if its part is whole).
        leftovers = [(j, p, s) for j, p, s in shards
                     if j in where and where[j].jobs[j] == s and lay.part_ok(where[j])]
        done = {p for _, p, _ in leftovers}
        fresh = [(j, p, s) for j, p, s in shards if p not in done and per_job[j] == 1]
        invalid = sum(1 for j, p, _ in shards if p not in done and per_job[j] > 1)
        listed = {part.name for part in lay.parts}
        unlisted = sorted(
            p for p in (folder.iterdir() if folder.is_dir() else [])
            if p.is_file() and p.name not in listed
            and (PART_NAME.fullmatch(p.name) or p.name.endswith(".tmp"))
        )

        # 1-2. read and validate the new shards, write them (and rewritten parts) as parts
        numbers = [int(m.group(1)) for name in [*listed, *(u.name for u in unlisted)]
                   if (m := PART_NAME.fullmatch(name))]
        writer = _PartWriter(folder, max(numbers, default=0) + 1, rows_per_part)
        merged: list[tuple[Path, Stamp]] = []
        merged_rows = 0
        for (job, path, stamp), table in zip(fresh, _read_all(fresh), strict=True):
            if table is None:
                invalid += 1
                continue
            if not merged:
                folder.mkdir(exist_ok=True)
            writer.add(job, table, stamp)
            merged.append((path, stamp))
            merged_rows += table.num_rows
        replaced = {path.stem for path, _ in merged}
        rewrite: list[Part] = []
        for part in lay.parts:
            hit = replaced & part.jobs.keys()
            if hit == part.jobs.keys():
                rewrite.append(part)  # every job rerun since: drop the part unread
                continue
            if not hit and not (replaced and part.rows < rows_per_part // 2):
                continue
            table, runs = _read_part(lay.part_path(part))
            current = table.schema.equals(SCHEMA)
            if not current and not hit:
                continue  # an older schema's part is rewritten only to drop a rerun job
            rewrite.append(part)
            kept = [(job, table.slice(first, n)) for job, first, n in runs
                    if job not in replaced]
            if current:
                for job, rows in kept:
                    writer.add(job, rows, part.jobs[job])
            else:  # kept apart, in its own schema, so that its jobs still do not validate
                writer.write(pa.concat_tables([rows for _, rows in kept]),
                             {job: part.jobs[job] for job, _ in kept})
        writer.flush()

        # 3. commit
        parts = [p for p in lay.parts if p not in rewrite] + writer.parts
        if writer.parts or rewrite:
            write_json(index_path(out), index_doc(parts))

        # 4. remove what the committed parts now hold, and what no index lists
        for p, s in merged:
            _remove_if_unchanged(p, s, out)
        gone = sum(_remove_if_unchanged(p, s, out) for _, p, s in leftovers)
        for part in rewrite:
            lay.part_path(part).unlink(missing_ok=True)
        for path in unlisted:
            path.unlink(missing_ok=True)
    return Compaction(
        out, merged=len(merged), merged_rows=merged_rows, written=len(writer.parts),
        rows=writer.rows, seconds=time.perf_counter() - start,
        jobs=sum(len(p.jobs) for p in parts), parts=len(parts), replaced=len(rewrite),
        leftovers=gone, unlisted=len(unlisted), invalid=invalid,
    )

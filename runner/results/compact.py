"""``fbench compact OUT``: merge a sweep's per-job shards into a few large Parquet files.

Many small shards are slow to scan (each costs a file open and a footer). Compaction
moves their rows, unchanged, into ``OUT/compacted/part-NNNNNN.parquet`` files of up
to ``ROWS_PER_PART`` rows (whole jobs, sorted by workload, policy, job), listed in
``OUT/compacted/index.json`` (see ``runner.results.layout``). The steps, in this order:

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
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa

from runner.errors import FbenchError
from runner.results.atomic import write_json
from runner.results.layout import (
    COMPACTED,
    PART_NAME,
    SHARDS,
    Layout,
    Part,
    Stamp,
    index_doc,
    index_path,
)
from runner.results.parts import PartWriter, read_all, read_part
from runner.results.shard import is_shard_schema
from runner.results.where import ArrowPath, Loc, location

ROWS_PER_PART = 100_000


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
            or index_path(out).is_file()):
        raise FbenchError(f"{str(out)!r} is not a sweep's output folder: it has no sweep.json, "
                          f"{SHARDS}/ or {COMPACTED}/{index_path(out).name}")


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
        writer = PartWriter(folder, max(numbers, default=0) + 1, rows_per_part)
        merged: list[tuple[Loc, Stamp]] = []
        merged_rows = 0
        for (job, path, stamp), table in zip(fresh, read_all(fresh), strict=True):
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
            table, runs = read_part(lay.part_path(part))
            current = is_shard_schema(table.schema)
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

"""Where a sweep's rows live on disk, and which copy of a job's rows counts.

```
OUT/shards/workload=W/policy=P/JOB.parquet   one job's rows, written by `fbench sweep`
OUT/compacted/part-NNNNNN.parquet            many jobs' rows, written by `fbench compact`
OUT/compacted/index.parquet                  the committed parts: a row per compacted
                                             job, naming its part, the part's row count
                                             and the stamp of the shard its rows came from
OUT/commits/SEGMENT.json                     the size and mtime of shards known whole, so
                                             resume need not reopen them
                                             (``runner.results.commits``)
```

The index is the commit record, written atomically: a part file it does not list
(one an interrupted compaction renamed but never committed) is ignored. Every job
is read from exactly one place: its shard if it has one, else the part the index
names. A shard beside a committed copy is either one a crash kept compaction from
removing (the same rows) or a rerun made after compaction (the newer rows): both
times the shard is the right copy. So a crash at any point neither loses a row nor
counts one twice, and readers never have to dedupe.

OUT may be object storage (``runner.results.where``): the same rules hold there, since
every file is written whole (``runner.results.atomic``: one upload, shown by the store
only once complete) and the index is still the one commit record.

A ``Stamp`` (the shard's path relative to OUT, its size and mtime) identifies
what a job's rows were read from; the index keeps each compacted job's stamp, so a
summary's fingerprint is the same before and after compaction.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from pathlib import PurePosixPath

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from runner.errors import FbenchError
from runner.results.atomic import write_parquet
from runner.results.commits import Stamps, fold_commits, read_commits, same_stamp
from runner.results.validate import part_problem, shard_is_valid
from runner.results.where import (
    ArrowPath,
    Loc,
    arrow_source,
    files_stat,
    is_remote,
    location,
    relative,
    subfolders,
)

SHARDS = "shards"
COMPACTED = "compacted"
INDEX = "index.parquet"
LEGACY_INDEX = "index.json"  # the index format 1 (read, never written)
MEMORIES = "memories.json"  # what the report knows of each memory (runner.sweep.memories)
# A published folder's rows in place of its shards (runner.results.finals): every job's
# final row, and the columns of every checkpoint row that the report's plots read.
FINALS = "finals.parquet"
CHECKPOINTS = "checkpoints.parquet"
CHECKPOINT_COLUMNS = ("workload", "horizon", "k", "policy", "params", "job_id", "checkpoint",
                      "t", "final_size", "final_tokens")
INDEX_FORMAT = 2
INDEX_SCHEMA = pa.schema([("part", pa.string()), ("part_rows", pa.int64()),
                          ("job_id", pa.string()), ("shard", pa.string()),
                          ("size", pa.int64()), ("mtime_ns", pa.int64())],
                         metadata={"fbench.index_format": str(INDEX_FORMAT)})
PART_NAME = re.compile(r"part-(\d+)\.parquet")
# Canonical row order, whatever the layout: the order of the shard files' paths, then
# checkpoints (so every reader sees the same table from raw shards or compacted parts).
ROW_ORDER = ("workload", "policy", "job_id", "checkpoint")


@dataclass(frozen=True, order=True, slots=True)
class Stamp:
    """A shard as the sweep wrote it: path relative to OUT (posix), size, mtime."""

    shard: str
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Loc, out: Loc) -> Stamp:
        st = path.stat()
        return cls(relative(path, out).as_posix(), st.st_size, st.st_mtime_ns)

    def sort_key(self) -> tuple[str, ...]:
        """Path order (component by component), the order shard files are listed in."""
        return PurePosixPath(self.shard).parts


STAMPS = pa.schema([("shard", pa.string()), ("size", pa.int64()), ("mtime_ns", pa.int64())])
LIST_CHUNK = 1 << 12  # files turned into columns at a time (listing, hashing)


def in_path_order(stamps: pa.Table) -> pa.Table:
    """``stamps`` (``STAMPS``) sorted as ``Stamp.sort_key`` sorts: component by component,
    which is byte order once each "/" is a NUL (no name holds one, and NUL sorts first)."""
    key = pc.replace_substring(stamps.column("shard"), "/", "\x00")
    order = pc.sort_indices(pa.table({"k": key}), sort_keys=[("k", "ascending")])
    return stamps.take(order)


class Listing:
    """The ``*.parquet`` files below ``OUT/shards`` (names starting with "." skipped:
    temporaries) in one walk or one remote listing, held as columns, never an object
    per file: ``stamps`` (``STAMPS``: each file's ``Stamp``, in path order) and each
    file's job id (its stem, UTF-8) sorted, for lookups."""

    def __init__(self, out: Loc) -> None:
        self.out = location(out)
        chunks: list[pa.Table] = []
        stems: list[np.ndarray] = []
        found = files_stat(self.out / SHARDS)
        while batch := list(islice(found, LIST_CHUNK)):
            kept = [(p, st) for p, st in batch if p.name.endswith(".parquet")]
            chunks.append(pa.table([
                pa.array([relative(p, self.out).as_posix() for p, _ in kept], pa.string()),
                pa.array([st.st_size for _, st in kept], pa.int64()),
                pa.array([st.st_mtime_ns for _, st in kept], pa.int64())], schema=STAMPS))
        self.stamps = in_path_order(pa.concat_tables(chunks) if chunks
                                    else STAMPS.empty_table()).combine_chunks()
        names = pc.replace_substring_regex(self.stamps.column("shard"), r"^.*/|\.parquet$", "")
        for start in range(0, len(names), LIST_CHUNK):
            stems.append(np.array([s.encode() for s in
                                   names.slice(start, LIST_CHUNK).to_pylist()], dtype=bytes))
        jobs = np.concatenate(stems) if stems else np.array([], "S1")
        self._order = np.argsort(jobs, kind="stable")
        self._jobs = jobs[self._order]

    def __len__(self) -> int:
        return self.stamps.num_rows

    def locs(self, start: int = 0, stop: int | None = None) -> list[Loc]:
        """The files ``start:stop`` (in path order)."""
        names = self.stamps.column("shard").slice(start, None if stop is None
                                                 else stop - start).to_pylist()
        return [self.out / name for name in names]

    def stamp(self, i: int) -> Stamp:
        return self.stamp_list(i, i + 1)[0]

    def stamp_list(self, start: int = 0, stop: int | None = None) -> list[Stamp]:
        """The files ``start:stop``'s stamps, as objects."""
        rows = self.stamps.slice(start, None if stop is None else stop - start)
        return [Stamp(*row) for row in zip(*(rows.column(c).to_pylist() for c in STAMPS.names),
                                           strict=True)]

    def index(self, job_id: str) -> int | None:
        """The position (in path order) of a file of ``job_id``, or None."""
        key = job_id.encode()
        i = int(np.searchsorted(self._jobs, key))
        found = i < len(self._jobs) and self._jobs[i] == key
        return int(self._order[i]) if found else None

    def has(self, job_ids: np.ndarray) -> np.ndarray:
        """For each of ``job_ids`` (UTF-8 bytes), whether a file of that job is listed."""
        return np.isin(job_ids, self._jobs)


class PartJobs(Mapping[str, Stamp]):
    """A part's jobs, each with the stamp of the shard its rows came from, held as columns
    sorted by job id (``STAMPS`` and the ids), never an object per job."""

    def __init__(self, ids: pa.Array, stamps: pa.Table) -> None:
        order = pc.sort_indices(ids)
        self.stamps = stamps.take(order).combine_chunks()
        self.ids = ids.take(order)
        self.id_bytes = np.array(self.ids.to_numpy(zero_copy_only=False), dtype=bytes) \
            if len(ids) else np.array([], "S1")

    @classmethod
    def of(cls, jobs: Mapping[str, Stamp]) -> PartJobs:
        items = list(jobs.items())
        return cls(pa.array([j for j, _ in items], pa.string()), pa.table(
            [[s.shard for _, s in items], [s.size for _, s in items],
             [s.mtime_ns for _, s in items]], schema=STAMPS))

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self.ids), LIST_CHUNK):
            yield from self.ids.slice(start, LIST_CHUNK).to_pylist()

    def __getitem__(self, job_id: str) -> Stamp:
        key = job_id.encode()
        i = int(np.searchsorted(self.id_bytes, key))
        if i == len(self.id_bytes) or self.id_bytes[i] != key:
            raise KeyError(job_id)
        return Stamp(*(self.stamps.column(c)[i].as_py() for c in STAMPS.names))


@dataclass(frozen=True)
class Part:
    """One committed compacted file: its name in ``OUT/compacted``, rows, and jobs."""

    name: str
    rows: int
    jobs: PartJobs


def index_path(out: Loc) -> Loc:
    return location(out) / COMPACTED / INDEX


def _bad_index(path: Loc, why: object) -> FbenchError:
    return FbenchError(f"{path} is not a valid compaction index ({why}); remove "
                       f"{path.parent} and resume the sweep (it reruns the jobs it held)")


def read_index(out: Loc) -> list[Part]:
    """The committed parts (none when nothing was compacted), from ``index.parquet``, or
    from an ``index.json`` of format 1 when that is all there is."""
    path = index_path(out)
    if not path.is_file():
        legacy = location(out) / COMPACTED / LEGACY_INDEX
        return _read_legacy_index(legacy) if legacy.is_file() else []
    try:
        table = pq.read_table(arrow_source(path))
        meta = table.schema.metadata or {}
        if meta.get(b"fbench.index_format") != str(INDEX_FORMAT).encode():
            raise ValueError(f"format {meta.get(b'fbench.index_format')!r}, "
                             f"expected {INDEX_FORMAT}")
        table = table.select(INDEX_SCHEMA.names).cast(INDEX_SCHEMA.remove_metadata())
        parts = _index_parts(table)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as exc:
        raise _bad_index(path, exc) from None
    return parts


def _index_parts(table: pa.Table) -> list[Part]:
    """The parts of an index table, in the order they first appear; ``ValueError`` for a
    bad part name, a part with two row counts, or a job listed twice."""
    if pc.count_distinct(table.column("job_id")).as_py() != table.num_rows:
        raise ValueError("a job listed twice")
    names = table.column("part").combine_chunks()
    first = pc.index_in(names, pc.unique(names)).to_numpy()  # part number of each row
    order = np.argsort(first, kind="stable")
    bounds = np.flatnonzero(np.diff(first[order])) + 1
    parts = []
    for rows in np.split(order, bounds) if len(order) else []:
        part = table.take(rows)
        name = part.column("part")[0].as_py()
        counts = pc.unique(part.column("part_rows")).to_pylist()
        if not PART_NAME.fullmatch(name) or len(counts) != 1:
            raise ValueError(f"bad part {name!r}")
        parts.append(Part(name, int(counts[0]), PartJobs(
            part.column("job_id").combine_chunks(), part.select(STAMPS.names))))
    return parts


def _read_legacy_index(path: Loc) -> list[Part]:
    """The parts an index of format 1 lists (a JSON document, as earlier fbench wrote)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("format") != 1:
            raise ValueError(f"format {doc.get('format')!r}, expected 1")
        parts = [Part(p["name"], int(p["rows"]), PartJobs.of(
            {j: Stamp(s[0], int(s[1]), int(s[2])) for j, s in p["jobs"].items()}))
            for p in doc["parts"]]
        for part in parts:
            if not isinstance(part.name, str) or not PART_NAME.fullmatch(part.name):
                raise ValueError(f"bad part name {part.name!r}")
        if sum(len(p.jobs) for p in parts) != len({j for p in parts for j in p.jobs}):
            raise ValueError("a job listed twice")
        return parts
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise _bad_index(path, exc) from None


def index_table(parts: list[Part]) -> pa.Table:
    """The index of ``parts`` (``INDEX_SCHEMA``): a row per job, parts in order."""
    tables = [pa.table([pa.array([p.name] * len(p.jobs), pa.string()),
                        pa.array([p.rows] * len(p.jobs), pa.int64()), p.jobs.ids,
                        *p.jobs.stamps.columns], schema=INDEX_SCHEMA) for p in parts]
    return pa.concat_tables(tables) if tables else INDEX_SCHEMA.empty_table()


def write_index(out: Loc, parts: list[Part]) -> None:
    """Commit ``parts``: the index written whole (``runner.results.atomic``), then an index
    of format 1 removed (the new one is read first, so a crash between leaves no doubt)."""
    write_parquet(index_path(out), index_table(parts))
    (location(out) / COMPACTED / LEGACY_INDEX).unlink(missing_ok=True)


def partition_folders(out: Loc) -> list[str]:
    """The partition folders (``workload=W/policy=P``: ``runner.results.shard.partition``)
    below ``OUT/shards``, sorted."""
    root = location(out) / SHARDS
    return [f"{w}/{p}" for w in subfolders(root) for p in subfolders(root / w)]


def by_partition(parts: list[Part]) -> dict[str, dict[str, Part]]:
    """partition -> job -> the part holding its compacted rows (from the shard it was)."""
    out: dict[str, dict[str, Part]] = {}
    for part in parts:
        for job, stamp in part.jobs.items():
            parent = PurePosixPath(stamp.shard).parent.as_posix()
            # (a stamp outside shards/, hand-made: a folder that lists nothing)
            folder = parent.removeprefix(f"{SHARDS}/") if parent.startswith(f"{SHARDS}/") \
                else f"?/{parent}"
            out.setdefault(folder, {})[job] = part
    return out


class Layout:
    """A snapshot of OUT's shards and committed parts, resolved to one source per job
    (what aggregate and compaction read; resume reads OUT as a stream instead:
    ``runner.sweep.scan``). The shards are a ``Listing``: columns, not an object each."""

    def __init__(self, out: Loc) -> None:
        self.out = location(out)
        self.listing = Listing(self.out)
        self.parts = read_index(self.out)
        # each part's jobs that have a shard (a shard always wins; see the docstring)
        self._shadowed = {p.name: self.listing.has(p.jobs.id_bytes) for p in self.parts}
        self._compacted: dict[str, Part] | None = None
        self._committed: Stamps | None = None
        self._part_ok: dict[str, bool] = {}

    def part_path(self, part: Part) -> Loc:
        return self.out / COMPACTED / part.name

    @property
    def raw_files(self) -> list[Loc]:
        """Every shard, in path order."""
        return self.listing.locs()

    @property
    def compacted(self) -> dict[str, Part]:
        """job -> its part, for the jobs without a shard."""
        if self._compacted is None:
            self._compacted = {job: p for p in self.parts for job in p.jobs.ids.filter(
                pa.array(~self._shadowed[p.name])).to_pylist()}
        return self._compacted

    @property
    def live_parts(self) -> list[Part]:
        """Committed parts that still hold at least one job's counted rows."""
        return [p for p in self.parts if not self._shadowed[p.name].all()]

    @property
    def superseded(self) -> set[str]:
        """Jobs with rows in a committed part that a shard overrides."""
        return {job for p in self.parts
                for job in p.jobs.ids.filter(pa.array(self._shadowed[p.name])).to_pylist()}

    def files(self) -> list[Loc]:
        """Every file holding counted rows: the shards, then the live parts."""
        return self.raw_files + [self.part_path(p) for p in self.live_parts]

    def sources(self) -> dict[str, Loc]:
        """job_id -> the file its counted rows are in (a shard, or a compacted part)."""
        return {**{j: self.part_path(p) for j, p in self.compacted.items()},
                **{p.stem: p for p in self.raw_files}}

    def stamps(self) -> pa.Table:
        """One stamp per counted job (``STAMPS``), in path order: what a summary is
        computed from."""
        if not self.parts:
            return self.listing.stamps
        held = [p.jobs.stamps.filter(pa.array(~self._shadowed[p.name])) for p in self.parts]
        return in_path_order(pa.concat_tables([self.listing.stamps, *held])).combine_chunks()

    def is_valid(self, job_id: str) -> bool:
        """The job's counted rows are there and whole (a shard validates, or the part
        holding them reads with exactly the shard schema and the jobs the index names)."""
        i = self.listing.index(job_id)
        if i is not None:
            stamp = self.listing.stamp(i)
            path = self.out / stamp.shard
            if self._committed is None:
                self._committed = read_commits(self.out)
            return same_stamp(self._committed.get(job_id), (stamp.size, stamp.mtime_ns),
                              remote=is_remote(path)) or shard_is_valid(path, job_id)
        part = self.compacted.get(job_id)
        return part is not None and self.part_ok(part)  # (a part: read once, so cheap)

    def part_ok(self, part: Part) -> bool:
        """``part_is_valid``, checked once per part."""
        if part.name not in self._part_ok:
            self._part_ok[part.name] = part_is_valid(self.part_path(part), part)
        return self._part_ok[part.name]


def part_is_valid(path: Loc, part: Part) -> bool:
    """The part reads, has exactly the shard schema, and holds exactly the index's jobs."""
    return not part_problem(path, part.rows, set(part.jobs))


def remove_all(out: Loc) -> None:
    """Remove every shard and compacted part (``--overwrite always``): the index first,
    so that an interruption leaves only unlisted parts, which count for nothing."""
    lay = Layout(out)
    index_path(out).unlink(missing_ok=True)
    (location(out) / COMPACTED / LEGACY_INDEX).unlink(missing_ok=True)
    for part in lay.parts:
        lay.part_path(part).unlink(missing_ok=True)
    for path in lay.raw_files:
        path.unlink(missing_ok=True)
    fold_commits(out, Stamps.empty())  # (the commit log: no shard left to vouch for)



def remove_temporaries(out: Loc) -> None:
    """Remove the temporaries a killed writer left in the shard folders (``.NAME.tmp``;
    never a valid shard), each folder read as a stream. Object storage has none: an
    object is written in one upload."""
    root = location(out) / SHARDS
    if isinstance(root, ArrowPath):
        return
    for folder in partition_folders(out):
        with os.scandir(root / folder) as entries:
            for e in entries:
                if e.name.startswith(".") and e.name.endswith(".tmp") and e.is_file():
                    os.unlink(e.path)


QUARANTINE = "quarantine"
SUPERSEDED = "superseded"


def quarantine(out: Loc, paths: list[Loc], folder: str = QUARANTINE) -> list[Loc]:
    """Move files that do not validate to ``OUT/quarantine/`` (or shards of outdated
    plugin code to ``OUT/superseded/``; same relative path, a numbered suffix when a
    file of that name is there already), never deleting one: a corrupt shard is
    evidence, and a resumed sweep reruns its job."""
    out = location(out)
    moved = []
    for path in paths:
        target = out / folder / relative(path, out)
        target.parent.mkdir(parents=True, exist_ok=True)
        n = 0
        while target.exists():
            n += 1
            target = target.with_name(f"{path.name}.{n}")
        path.rename(target)  # type: ignore[arg-type]  # (same kind: both in OUT)
        moved.append(target)
    return moved

"""Where a sweep's rows live on disk, and which copy of a job's rows counts.

```
OUT/shards/workload=W/policy=P/JOB.parquet   one job's rows, written by `fbench sweep`
OUT/compacted/part-NNNNNN.parquet            many jobs' rows, written by `fbench compact`
OUT/compacted/index.json                     the committed parts: each part's row count,
                                             and for each of its jobs the stamp of the
                                             shard its rows came from
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from runner.errors import FbenchError
from runner.results.commits import Stamps, fold_commits, read_commits, same_stamp
from runner.results.validate import part_problem, shard_is_valid
from runner.results.where import (
    ArrowPath,
    Loc,
    files_stat,
    is_remote,
    location,
    relative,
    subfolders,
)

SHARDS = "shards"
COMPACTED = "compacted"
INDEX = "index.json"
MEMORIES = "memories.json"  # what the report knows of each memory (runner.sweep.memories)
INDEX_FORMAT = 1
PART_NAME = re.compile(r"part-(\d+)\.parquet")
# Canonical row order, whatever the layout: the order of the shard files' paths, then
# checkpoints (so every reader sees the same table from raw shards or compacted parts).
ROW_ORDER = ("workload", "policy", "job_id", "checkpoint")


@dataclass(frozen=True, order=True)
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


@dataclass(frozen=True)
class Part:
    """One committed compacted file: its name in ``OUT/compacted``, rows, and jobs."""

    name: str
    rows: int
    jobs: Mapping[str, Stamp]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "rows": self.rows,
                "jobs": {j: [s.shard, s.size, s.mtime_ns] for j, s in sorted(self.jobs.items())}}


def index_path(out: Loc) -> Loc:
    return location(out) / COMPACTED / INDEX


def read_index(out: Loc) -> list[Part]:
    """The committed parts (none when nothing was compacted)."""
    path = index_path(out)
    if not path.is_file():
        return []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("format") != INDEX_FORMAT:
            raise ValueError(f"format {doc.get('format')!r}, expected {INDEX_FORMAT}")
        parts = [Part(p["name"], int(p["rows"]),
                      {j: Stamp(s[0], int(s[1]), int(s[2])) for j, s in p["jobs"].items()})
                 for p in doc["parts"]]
        for part in parts:
            if not isinstance(part.name, str) or not PART_NAME.fullmatch(part.name):
                raise ValueError(f"bad part name {part.name!r}")
        if sum(len(p.jobs) for p in parts) != len({j for p in parts for j in p.jobs}):
            raise ValueError("a job listed twice")
        return parts
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise FbenchError(f"{path} is not a valid compaction index ({exc}); remove "
                          f"{path.parent} and resume the sweep (it reruns the jobs it held)"
                          ) from None


def index_doc(parts: list[Part]) -> dict[str, object]:
    return {"format": INDEX_FORMAT, "parts": [p.to_dict() for p in parts]}


def raw_shards(out: Loc) -> dict[Loc, tuple[int, int]]:
    """``OUT/shards/**/*.parquet`` -> (size, mtime_ns), sorted by path, skipping names
    that start with "." (temporaries): one walk, or one listing of a remote OUT."""
    root = location(out) / SHARDS
    return {p: (st.st_size, st.st_mtime_ns) for p, st in
            sorted(files_stat(root), key=lambda f: f[0]) if p.name.endswith(".parquet")}


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
    ``runner.sweep.scan``)."""

    def __init__(self, out: Loc) -> None:
        self.out = location(out)
        self.raw_stat = raw_shards(self.out)
        self.raw_files = list(self.raw_stat)
        self.raw: dict[str, Loc] = {p.stem: p for p in self.raw_files}
        self.committed = read_commits(self.out)
        self.parts = read_index(self.out)
        # job -> its part, for jobs without a shard (a shard always wins; see the docstring)
        self.compacted: dict[str, Part] = {
            job: part for part in self.parts for job in part.jobs if job not in self.raw}
        self._part_ok: dict[str, bool] = {}

    def part_path(self, part: Part) -> Loc:
        return self.out / COMPACTED / part.name

    @property
    def live_parts(self) -> list[Part]:
        """Committed parts that still hold at least one job's counted rows."""
        return [p for p in self.parts if any(j not in self.raw for j in p.jobs)]

    @property
    def superseded(self) -> set[str]:
        """Jobs with rows in a committed part that a shard overrides."""
        return {j for p in self.parts for j in p.jobs if j in self.raw}

    def files(self) -> list[Loc]:
        """Every file holding counted rows: the shards, then the live parts."""
        return self.raw_files + [self.part_path(p) for p in self.live_parts]

    def sources(self) -> dict[str, Loc]:
        """job_id -> the file its counted rows are in (a shard, or a compacted part)."""
        return {**{j: self.part_path(p) for j, p in self.compacted.items()}, **self.raw}

    def stamps(self) -> list[Stamp]:
        """One stamp per counted job, in path order: what a summary is computed from."""
        return sorted([Stamp.of(p, self.out) for p in self.raw_files]
                      + [p.jobs[j] for j, p in self.compacted.items()],
                      key=Stamp.sort_key)

    def is_valid(self, job_id: str) -> bool:
        """The job's counted rows are there and whole (a shard validates, or the part
        holding them reads with exactly the shard schema and the jobs the index names)."""
        if job_id in self.raw:
            path = self.raw[job_id]
            stamp = self.raw_stat[path]
            return same_stamp(self.committed.get(job_id), stamp, remote=is_remote(path)) \
                or shard_is_valid(path, job_id)
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
